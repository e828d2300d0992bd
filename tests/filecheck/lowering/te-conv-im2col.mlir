// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=im2col}' | filecheck %s
// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=direct}' | filecheck %s --check-prefix=DIRECT

// A 3x3 stride-2 convolution becomes a gather of its input expression into an im2col matrix (k = c, kh, kw by
// rows; n, oh, ow after), a weight matrix (k x output channels, padded to 16 columns with the last filter), a GEMM
// over 8 rows (the 4 output pixels, padded: rows past the last repeat it) and a read back into NCHW. The 1x1
// stride-1 convolution needs no gather: its GEMM reads the input itself (its input expression at kh = kw = 0).
// `algorithm=direct` leaves both alone.

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
// CHECK-NEXT:     %w = graph.weight "w" : tensor<3x2x3x3xf32>
// CHECK-NEXT:     %y = te.compute "conv_im2col" (%0, %1, %2, %3) -> tensor<18x1x2x2xf32> {
// CHECK-NEXT:       %4 = arith.constant 9 : index
// CHECK-NEXT:       %5 = arith.divui %0, %4 : index
// CHECK-NEXT:       %6 = arith.constant 3 : index
// CHECK-NEXT:       %7 = arith.divui %0, %6 : index
// CHECK-NEXT:       %8 = arith.constant 3 : index
// CHECK-NEXT:       %9 = arith.remui %7, %8 : index
// CHECK-NEXT:       %10 = arith.constant 3 : index
// CHECK-NEXT:       %11 = arith.remui %0, %10 : index
// CHECK-NEXT:       %12 = arith.constant 2 : index
// CHECK-NEXT:       %13 = arith.muli %2, %12 : index
// CHECK-NEXT:       %14 = arith.addi %13, %9 : index
// CHECK-NEXT:       %15 = arith.constant 2 : index
// CHECK-NEXT:       %16 = arith.muli %3, %15 : index
// CHECK-NEXT:       %17 = arith.addi %16, %11 : index
// CHECK-NEXT:       %18 = te.read %x[%1, %5, %14, %17] : tensor<1x2x5x5xf32>
// CHECK-NEXT:       te.yield %18 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_1 = te.compute "conv_weight_matrix" (%19, %20) -> tensor<18x16xf32> {
// CHECK-NEXT:       %21 = arith.constant 9 : index
// CHECK-NEXT:       %22 = arith.divui %19, %21 : index
// CHECK-NEXT:       %23 = arith.constant 3 : index
// CHECK-NEXT:       %24 = arith.divui %19, %23 : index
// CHECK-NEXT:       %25 = arith.constant 3 : index
// CHECK-NEXT:       %26 = arith.remui %24, %25 : index
// CHECK-NEXT:       %27 = arith.constant 3 : index
// CHECK-NEXT:       %28 = arith.remui %19, %27 : index
// CHECK-NEXT:       %29 = arith.constant 2 : index
// CHECK-NEXT:       %30 = arith.minui %20, %29 : index
// CHECK-NEXT:       %31 = te.read %w[%30, %22, %26, %28] : tensor<3x2x3x3xf32>
// CHECK-NEXT:       te.yield %31 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_2 = te.compute "conv_gemm" (%32, %33) reduce sum (%34 : 18) -> tensor<8x16xf32> {
// CHECK-NEXT:       %35 = arith.constant 3 : index
// CHECK-NEXT:       %36 = arith.minui %32, %35 : index
// CHECK-NEXT:       %37 = arith.constant 0 : index
// CHECK-NEXT:       %38 = arith.constant 2 : index
// CHECK-NEXT:       %39 = arith.divui %36, %38 : index
// CHECK-NEXT:       %40 = arith.constant 2 : index
// CHECK-NEXT:       %41 = arith.remui %36, %40 : index
// CHECK-NEXT:       %42 = te.read %y[%34, %37, %39, %41] : tensor<18x1x2x2xf32>
// CHECK-NEXT:       %43 = te.read %y_1[%34, %33] : tensor<18x16xf32>
// CHECK-NEXT:       %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT:       te.yield %44 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_3 = te.compute "conv_output" (%45, %46, %47, %48) -> tensor<1x3x2x2xf32> {
// CHECK-NEXT:       %49 = arith.constant 2 : index
// CHECK-NEXT:       %50 = arith.muli %47, %49 : index
// CHECK-NEXT:       %51 = arith.addi %48, %50 : index
// CHECK-NEXT:       %52 = te.read %y_2[%51, %46] : tensor<8x16xf32>
// CHECK-NEXT:       te.yield %52 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %y_3 : tensor<1x3x2x2xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @pointwise(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
// CHECK-NEXT:     %w = graph.weight "v" : tensor<16x4x1x1xf32>
// CHECK-NEXT:     %y = te.compute "conv_weight_matrix" (%0, %1) -> tensor<4x16xf32> {
// CHECK-NEXT:       %2 = arith.constant 0 : index
// CHECK-NEXT:       %3 = arith.constant 0 : index
// CHECK-NEXT:       %4 = te.read %w[%1, %0, %2, %3] : tensor<16x4x1x1xf32>
// CHECK-NEXT:       te.yield %4 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_1 = te.compute "conv_gemm" (%5, %6) reduce sum (%7 : 4) -> tensor<16x16xf32> {
// CHECK-NEXT:       %8 = arith.constant 0 : index
// CHECK-NEXT:       %9 = arith.constant 4 : index
// CHECK-NEXT:       %10 = arith.divui %5, %9 : index
// CHECK-NEXT:       %11 = arith.constant 4 : index
// CHECK-NEXT:       %12 = arith.remui %5, %11 : index
// CHECK-NEXT:       %13 = arith.constant 0 : index
// CHECK-NEXT:       %14 = arith.constant 0 : index
// CHECK-NEXT:       %15 = arith.addi %10, %13 : index
// CHECK-NEXT:       %16 = arith.addi %12, %14 : index
// CHECK-NEXT:       %17 = te.read %x[%8, %7, %15, %16] : tensor<1x4x4x4xf32>
// CHECK-NEXT:       %18 = te.read %y[%7, %6] : tensor<4x16xf32>
// CHECK-NEXT:       %19 = arith.mulf %17, %18 : f32
// CHECK-NEXT:       te.yield %19 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_2 = te.compute "conv_output" (%20, %21, %22, %23) -> tensor<1x16x4x4xf32> {
// CHECK-NEXT:       %24 = arith.constant 4 : index
// CHECK-NEXT:       %25 = arith.muli %22, %24 : index
// CHECK-NEXT:       %26 = arith.addi %23, %25 : index
// CHECK-NEXT:       %27 = te.read %y_1[%26, %21] : tensor<16x16xf32>
// CHECK-NEXT:       te.yield %27 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %y_2 : tensor<1x16x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:

// DIRECT: te.compute "conv"
// DIRECT: te.compute "conv"
// DIRECT-NOT: conv_gemm
