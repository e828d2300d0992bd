// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=im2col}' | filecheck %s
// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=direct}' | filecheck %s --check-prefix=DIRECT
// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=direct},te-conv-layout' | filecheck %s --check-prefix=LAYOUT

// A 3x3 stride-2 convolution becomes a gather of its input expression into an im2col matrix (k = c, kh, kw by
// rows; n, oh, ow after), a weight matrix (k x output channels, padded to 16 columns with the last filter), a GEMM
// over 8 rows (the 4 output pixels, padded: rows past the last repeat it) and a read back into NCHW. The 1x1
// stride-1 convolution needs no gather: its GEMM reads the input itself (its input expression at kh = kw = 0).
// `algorithm=direct` leaves both alone: DIRECT checks each convolution body unchanged (input read at
// (n, c, oh * 2 + kh, ow * 2 + kw), resp. (n, c, oh + kh, ow + kw), weight read at (f, c, kh, kw)). LAYOUT runs
// te-conv-layout after it, as the pipelines do: each direct convolution then reads a channels-last copy of its input
// (conv_input_nhwc[n, h, w, c] = x[n, c, h, w]) at (n, ih, iw, c), the weight read unchanged.
//
// im2col, by index: the gather splits k into c = k / 9, kh = (k / 3) % 3, kw = k % 3 and reads x at the
// convolution's own input expression; the weight matrix reads w[min(j, 2), c, kh, kw] (columns 3..15 repeat filter
// 2); the GEMM row m is the pixel (oh, ow) = (m' / 2, m' % 2) of m' = min(m, 3) (rows 4..7 repeat pixel 3); the
// output reads gemm[oh * 2 + ow, f]. The 1x1 weight matrix needs no clamp (16 filters already fill 16 columns)
// and its GEMM needs none either (16 pixels fill 16 rows).

builtin.module {
  func.func @main(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x2x2xf32> {
    %w = graph.weight "w" : tensor<3x2x3x3xf32>
    %y = te.compute "conv" (%0, %1, %2, %3) reduce sum (%4 : 2, %5 : 3, %6 : 3) -> tensor<1x3x2x2xf32> {
      %7 = arith.constant 2 : index
      %8 = arith.muli %2, %7 : index
      %9 = arith.addi %8, %5 : index
      %10 = arith.constant 2 : index
      %11 = arith.muli %3, %10 : index
      %12 = arith.addi %11, %6 : index
      %13 = te.read %x[%0, %4, %9, %12] : tensor<1x2x5x5xf32>
      %14 = te.read %w[%1, %4, %5, %6] : tensor<3x2x3x3xf32>
      %15 = arith.mulf %13, %14 : f32
      te.yield %15 : f32
    }
    func.return %y : tensor<1x3x2x2xf32>
  }
  func.func @pointwise(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
    %w = graph.weight "v" : tensor<16x4x1x1xf32>
    %y = te.compute "conv" (%0, %1, %2, %3) reduce sum (%4 : 4, %5 : 1, %6 : 1) -> tensor<1x16x4x4xf32> {
      %7 = arith.addi %2, %5 : index
      %8 = arith.addi %3, %6 : index
      %9 = te.read %x[%0, %4, %7, %8] : tensor<1x4x4x4xf32>
      %10 = te.read %w[%1, %4, %5, %6] : tensor<16x4x1x1xf32>
      %11 = arith.mulf %9, %10 : f32
      te.yield %11 : f32
    }
    func.return %y : tensor<1x16x4x4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x2x2xf32> {
// CHECK-NEXT:     %[[W:.*]] = graph.weight "w" : tensor<3x2x3x3xf32>
// CHECK-NEXT:     %[[COL:.*]] = te.compute "conv_im2col" (%[[K:[a-z0-9_]+]], %[[N:[a-z0-9_]+]], %[[OH:[a-z0-9_]+]], %[[OW:[a-z0-9_]+]]) -> tensor<18x1x2x2xf32> {
// CHECK-NEXT:       %[[V4:.*]] = arith.constant 9 : index
// CHECK-NEXT:       %[[CH:.*]] = arith.divui %[[K]], %[[V4]] : index
// CHECK-NEXT:       %[[V6:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[V7:.*]] = arith.divui %[[K]], %[[V6]] : index
// CHECK-NEXT:       %[[V8:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[KH:.*]] = arith.remui %[[V7]], %[[V8]] : index
// CHECK-NEXT:       %[[V10:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[KW:.*]] = arith.remui %[[K]], %[[V10]] : index
// CHECK-NEXT:       %[[V12:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[V13:.*]] = arith.muli %[[OH]], %[[V12]] : index
// CHECK-NEXT:       %[[IH:.*]] = arith.addi %[[V13]], %[[KH]] : index
// CHECK-NEXT:       %[[V15:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[V16:.*]] = arith.muli %[[OW]], %[[V15]] : index
// CHECK-NEXT:       %[[IW:.*]] = arith.addi %[[V16]], %[[KW]] : index
// CHECK-NEXT:       %[[PIXEL:.*]] = te.read %x[%[[N]], %[[CH]], %[[IH]], %[[IW]]] : tensor<1x2x5x5xf32>
// CHECK-NEXT:       te.yield %[[PIXEL]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[WM:.*]] = te.compute "conv_weight_matrix" (%[[WK:[a-z0-9_]+]], %[[WJ:[a-z0-9_]+]]) -> tensor<18x16xf32> {
// CHECK-NEXT:       %[[V21:.*]] = arith.constant 9 : index
// CHECK-NEXT:       %[[WC:.*]] = arith.divui %[[WK]], %[[V21]] : index
// CHECK-NEXT:       %[[V23:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[V24:.*]] = arith.divui %[[WK]], %[[V23]] : index
// CHECK-NEXT:       %[[V25:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[WKH:.*]] = arith.remui %[[V24]], %[[V25]] : index
// CHECK-NEXT:       %[[V27:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[WKW:.*]] = arith.remui %[[WK]], %[[V27]] : index
// CHECK-NEXT:       %[[V29:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[FILTER:.*]] = arith.minui %[[WJ]], %[[V29]] : index
// CHECK-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[FILTER]], %[[WC]], %[[WKH]], %[[WKW]]] : tensor<3x2x3x3xf32>
// CHECK-NEXT:       te.yield %[[WEIGHT]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[GEMM:.*]] = te.compute "conv_gemm" (%[[M:[a-z0-9_]+]], %[[J:[a-z0-9_]+]]) reduce sum (%[[GK:[a-z0-9_]+]] : 18) -> tensor<8x16xf32> {
// CHECK-NEXT:       %[[V35:.*]] = arith.constant 3 : index
// CHECK-NEXT:       %[[ROW:.*]] = arith.minui %[[M]], %[[V35]] : index
// CHECK-NEXT:       %[[BATCH:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[V38:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[GOH:.*]] = arith.divui %[[ROW]], %[[V38]] : index
// CHECK-NEXT:       %[[V40:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[GOW:.*]] = arith.remui %[[ROW]], %[[V40]] : index
// CHECK-NEXT:       %[[A:.*]] = te.read %[[COL]][%[[GK]], %[[BATCH]], %[[GOH]], %[[GOW]]] : tensor<18x1x2x2xf32>
// CHECK-NEXT:       %[[B:.*]] = te.read %[[WM]][%[[GK]], %[[J]]] : tensor<18x16xf32>
// CHECK-NEXT:       %[[PROD:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:       te.yield %[[PROD]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[RES:.*]] = te.compute "conv_output" (%[[ON:[a-z0-9_]+]], %[[OF:[a-z0-9_]+]], %[[OOH:[a-z0-9_]+]], %[[OOW:[a-z0-9_]+]]) -> tensor<1x3x2x2xf32> {
// CHECK-NEXT:       %[[V49:.*]] = arith.constant 2 : index
// CHECK-NEXT:       %[[V50:.*]] = arith.muli %[[OOH]], %[[V49]] : index
// CHECK-NEXT:       %[[OM:.*]] = arith.addi %[[OOW]], %[[V50]] : index
// CHECK-NEXT:       %[[OUT:.*]] = te.read %[[GEMM]][%[[OM]], %[[OF]]] : tensor<8x16xf32>
// CHECK-NEXT:       te.yield %[[OUT]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %[[RES]] : tensor<1x3x2x2xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @pointwise(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
// CHECK-NEXT:     %[[W:.*]] = graph.weight "v" : tensor<16x4x1x1xf32>
// CHECK-NEXT:     %[[WM:.*]] = te.compute "conv_weight_matrix" (%[[WK:[a-z0-9_]+]], %[[WJ:[a-z0-9_]+]]) -> tensor<4x16xf32> {
// CHECK-NEXT:       %[[V2:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[V3:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[WJ]], %[[WK]], %[[V2]], %[[V3]]] : tensor<16x4x1x1xf32>
// CHECK-NEXT:       te.yield %[[WEIGHT]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[GEMM:.*]] = te.compute "conv_gemm" (%[[M:[a-z0-9_]+]], %[[J:[a-z0-9_]+]]) reduce sum (%[[GK:[a-z0-9_]+]] : 4) -> tensor<16x16xf32> {
// CHECK-NEXT:       %[[BATCH:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[V9:.*]] = arith.constant 4 : index
// CHECK-NEXT:       %[[GOH:.*]] = arith.divui %[[M]], %[[V9]] : index
// CHECK-NEXT:       %[[V11:.*]] = arith.constant 4 : index
// CHECK-NEXT:       %[[GOW:.*]] = arith.remui %[[M]], %[[V11]] : index
// CHECK-NEXT:       %[[V13:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[V14:.*]] = arith.constant 0 : index
// CHECK-NEXT:       %[[IH:.*]] = arith.addi %[[GOH]], %[[V13]] : index
// CHECK-NEXT:       %[[IW:.*]] = arith.addi %[[GOW]], %[[V14]] : index
// CHECK-NEXT:       %[[A:.*]] = te.read %x[%[[BATCH]], %[[GK]], %[[IH]], %[[IW]]] : tensor<1x4x4x4xf32>
// CHECK-NEXT:       %[[B:.*]] = te.read %[[WM]][%[[GK]], %[[J]]] : tensor<4x16xf32>
// CHECK-NEXT:       %[[PROD:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:       te.yield %[[PROD]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[RES:.*]] = te.compute "conv_output" (%[[ON:[a-z0-9_]+]], %[[OF:[a-z0-9_]+]], %[[OOH:[a-z0-9_]+]], %[[OOW:[a-z0-9_]+]]) -> tensor<1x16x4x4xf32> {
// CHECK-NEXT:       %[[V24:.*]] = arith.constant 4 : index
// CHECK-NEXT:       %[[V25:.*]] = arith.muli %[[OOH]], %[[V24]] : index
// CHECK-NEXT:       %[[OM:.*]] = arith.addi %[[OOW]], %[[V25]] : index
// CHECK-NEXT:       %[[OUT:.*]] = te.read %[[GEMM]][%[[OM]], %[[OF]]] : tensor<16x16xf32>
// CHECK-NEXT:       te.yield %[[OUT]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %[[RES]] : tensor<1x16x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:

// DIRECT:      builtin.module {
// DIRECT-NEXT:   func.func @main(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x2x2xf32> {
// DIRECT-NEXT:     %[[W:.*]] = graph.weight "w" : tensor<3x2x3x3xf32>
// DIRECT-NEXT:     %[[Y:.*]] = te.compute "conv" (%[[N:[a-z0-9_]+]], %[[F:[a-z0-9_]+]], %[[OH:[a-z0-9_]+]], %[[OW:[a-z0-9_]+]]) reduce sum (%[[C:[a-z0-9_]+]] : 2, %[[KH:[a-z0-9_]+]] : 3, %[[KW:[a-z0-9_]+]] : 3) -> tensor<1x3x2x2xf32> {
// DIRECT-NEXT:       %[[S2:.*]] = arith.constant 2 : index
// DIRECT-NEXT:       %[[OH2:.*]] = arith.muli %[[OH]], %[[S2]] : index
// DIRECT-NEXT:       %[[IH:.*]] = arith.addi %[[OH2]], %[[KH]] : index
// DIRECT-NEXT:       %[[S2B:.*]] = arith.constant 2 : index
// DIRECT-NEXT:       %[[OW2:.*]] = arith.muli %[[OW]], %[[S2B]] : index
// DIRECT-NEXT:       %[[IW:.*]] = arith.addi %[[OW2]], %[[KW]] : index
// DIRECT-NEXT:       %[[PIXEL:.*]] = te.read %x[%[[N]], %[[C]], %[[IH]], %[[IW]]] : tensor<1x2x5x5xf32>
// DIRECT-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<3x2x3x3xf32>
// DIRECT-NEXT:       %[[PROD:.*]] = arith.mulf %[[PIXEL]], %[[WEIGHT]] : f32
// DIRECT-NEXT:       te.yield %[[PROD]] : f32
// DIRECT-NEXT:     }
// DIRECT-NEXT:     func.return %[[Y]] : tensor<1x3x2x2xf32>
// DIRECT-NEXT:   }
// DIRECT-NEXT:   func.func @pointwise(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
// DIRECT-NEXT:     %[[W:.*]] = graph.weight "v" : tensor<16x4x1x1xf32>
// DIRECT-NEXT:     %[[Y:.*]] = te.compute "conv" (%[[N:[a-z0-9_]+]], %[[F:[a-z0-9_]+]], %[[OH:[a-z0-9_]+]], %[[OW:[a-z0-9_]+]]) reduce sum (%[[C:[a-z0-9_]+]] : 4, %[[KH:[a-z0-9_]+]] : 1, %[[KW:[a-z0-9_]+]] : 1) -> tensor<1x16x4x4xf32> {
// DIRECT-NEXT:       %[[IH:.*]] = arith.addi %[[OH]], %[[KH]] : index
// DIRECT-NEXT:       %[[IW:.*]] = arith.addi %[[OW]], %[[KW]] : index
// DIRECT-NEXT:       %[[PIXEL:.*]] = te.read %x[%[[N]], %[[C]], %[[IH]], %[[IW]]] : tensor<1x4x4x4xf32>
// DIRECT-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<16x4x1x1xf32>
// DIRECT-NEXT:       %[[PROD:.*]] = arith.mulf %[[PIXEL]], %[[WEIGHT]] : f32
// DIRECT-NEXT:       te.yield %[[PROD]] : f32
// DIRECT-NEXT:     }
// DIRECT-NEXT:     func.return %[[Y]] : tensor<1x16x4x4xf32>
// DIRECT-NEXT:   }
// DIRECT-NEXT: }
// DIRECT-EMPTY:

// LAYOUT:      builtin.module {
// LAYOUT-NEXT:   func.func @main(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x2x2xf32> {
// LAYOUT-NEXT:     %[[W:.*]] = graph.weight "w" : tensor<3x2x3x3xf32>
// LAYOUT-NEXT:     %[[NHWC:.*]] = te.compute "conv_input_nhwc" (%[[TN:[a-z0-9_]+]], %[[TH:[a-z0-9_]+]], %[[TW:[a-z0-9_]+]], %[[TC:[a-z0-9_]+]]) -> tensor<1x5x5x2xf32> {
// LAYOUT-NEXT:       %[[TV:.*]] = te.read %x[%[[TN]], %[[TC]], %[[TH]], %[[TW]]] : tensor<1x2x5x5xf32>
// LAYOUT-NEXT:       te.yield %[[TV]] : f32
// LAYOUT-NEXT:     }
// LAYOUT-NEXT:     %[[Y:.*]] = te.compute "conv" (%[[N:[a-z0-9_]+]], %[[F:[a-z0-9_]+]], %[[OH:[a-z0-9_]+]], %[[OW:[a-z0-9_]+]]) reduce sum (%[[C:[a-z0-9_]+]] : 2, %[[KH:[a-z0-9_]+]] : 3, %[[KW:[a-z0-9_]+]] : 3) -> tensor<1x3x2x2xf32> {
// LAYOUT-NEXT:       %[[S2:.*]] = arith.constant 2 : index
// LAYOUT-NEXT:       %[[OH2:.*]] = arith.muli %[[OH]], %[[S2]] : index
// LAYOUT-NEXT:       %[[IH:.*]] = arith.addi %[[OH2]], %[[KH]] : index
// LAYOUT-NEXT:       %[[S2B:.*]] = arith.constant 2 : index
// LAYOUT-NEXT:       %[[OW2:.*]] = arith.muli %[[OW]], %[[S2B]] : index
// LAYOUT-NEXT:       %[[IW:.*]] = arith.addi %[[OW2]], %[[KW]] : index
// LAYOUT-NEXT:       %[[PIXEL:.*]] = te.read %[[NHWC]][%[[N]], %[[IH]], %[[IW]], %[[C]]] : tensor<1x5x5x2xf32>
// LAYOUT-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<3x2x3x3xf32>
// LAYOUT-NEXT:       %[[PROD:.*]] = arith.mulf %[[PIXEL]], %[[WEIGHT]] : f32
// LAYOUT-NEXT:       te.yield %[[PROD]] : f32
// LAYOUT-NEXT:     }
// LAYOUT-NEXT:     func.return %[[Y]] : tensor<1x3x2x2xf32>
// LAYOUT-NEXT:   }
// LAYOUT-NEXT:   func.func @pointwise(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
// LAYOUT-NEXT:     %[[W:.*]] = graph.weight "v" : tensor<16x4x1x1xf32>
// LAYOUT-NEXT:     %[[NHWC:.*]] = te.compute "conv_input_nhwc" (%[[TN:[a-z0-9_]+]], %[[TH:[a-z0-9_]+]], %[[TW:[a-z0-9_]+]], %[[TC:[a-z0-9_]+]]) -> tensor<1x4x4x4xf32> {
// LAYOUT-NEXT:       %[[TV:.*]] = te.read %x[%[[TN]], %[[TC]], %[[TH]], %[[TW]]] : tensor<1x4x4x4xf32>
// LAYOUT-NEXT:       te.yield %[[TV]] : f32
// LAYOUT-NEXT:     }
// LAYOUT-NEXT:     %[[Y:.*]] = te.compute "conv" (%[[N:[a-z0-9_]+]], %[[F:[a-z0-9_]+]], %[[OH:[a-z0-9_]+]], %[[OW:[a-z0-9_]+]]) reduce sum (%[[C:[a-z0-9_]+]] : 4, %[[KH:[a-z0-9_]+]] : 1, %[[KW:[a-z0-9_]+]] : 1) -> tensor<1x16x4x4xf32> {
// LAYOUT-NEXT:       %[[IH:.*]] = arith.addi %[[OH]], %[[KH]] : index
// LAYOUT-NEXT:       %[[IW:.*]] = arith.addi %[[OW]], %[[KW]] : index
// LAYOUT-NEXT:       %[[PIXEL:.*]] = te.read %[[NHWC]][%[[N]], %[[IH]], %[[IW]], %[[C]]] : tensor<1x4x4x4xf32>
// LAYOUT-NEXT:       %[[WEIGHT:.*]] = te.read %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<16x4x1x1xf32>
// LAYOUT-NEXT:       %[[PROD:.*]] = arith.mulf %[[PIXEL]], %[[WEIGHT]] : f32
// LAYOUT-NEXT:       te.yield %[[PROD]] : f32
// LAYOUT-NEXT:     }
// LAYOUT-NEXT:     func.return %[[Y]] : tensor<1x16x4x4xf32>
// LAYOUT-NEXT:   }
// LAYOUT-NEXT: }
// LAYOUT-EMPTY:
