// RUN: mini-opt %s -p 'te-conv-im2col{algorithm=im2col},te-conv-layout,te-channels-last,te-conv-winograd{convolutions=all}' | filecheck %s --check-prefix=CONV
// RUN: mini-opt %s -p 'te-conv-layout,te-channels-last,te-conv-winograd{convolutions=all}' | filecheck %s --check-prefix=CONV
// RUN: mini-opt %s -p te-inline | filecheck %s --check-prefix=INLINE

// A convolution over a run-time batch is planned as one image (`te/conv_batch.py`): its input goes channels-last,
// the copy keeping the batch extent outermost; im2col and Winograd leave it direct, and the ReLU stays as it is.
func.func @conv(%x: tensor<?x8x6x6xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<?x16x4x4xf32> {
  %b = te.dim %x[0] : tensor<?x8x6x6xf32>
  %y = te.compute "conv" (%n, %f, %h, %v) [%b] reduce sum (%c : 8, %kh : 3, %kw : 3) -> tensor<?x16x4x4xf32> {
    %ih = arith.addi %h, %kh : index
    %iw = arith.addi %v, %kw : index
    %a = te.read %x[%n, %c, %ih, %iw] : tensor<?x8x6x6xf32>
    %k = te.read %w[%f, %c, %kh, %kw] : tensor<16x8x3x3xf32>
    %p = arith.mulf %a, %k : f32
    te.yield %p : f32
  }
  %r = te.compute "relu" (%n, %f, %h, %v) [%b] -> tensor<?x16x4x4xf32> {
    %a = te.read %y[%n, %f, %h, %v] : tensor<?x16x4x4xf32>
    %z = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %z : f32
    te.yield %m : f32
  }
  func.return %r : tensor<?x16x4x4xf32>
}

// CONV-LABEL: func.func @conv(%x: tensor<?x8x6x6xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<?x16x4x4xf32> {
// CONV-NEXT:    %b = te.dim %x[0] : tensor<?x8x6x6xf32>
// CONV-NEXT:    %0 = te.compute "conv_input_nhwc" (%1, %2, %3, %4) [%b] -> tensor<?x6x6x8xf32> {
// CONV-NEXT:      %5 = te.read %x[%1, %4, %2, %3] : tensor<?x8x6x6xf32>
// CONV-NEXT:      te.yield %5 : f32
// CONV-NEXT:    }
// CONV-NEXT:    %y = te.compute "conv" (%n, %f, %h, %v) [%b] reduce sum (%c : 8, %kh : 3, %kw : 3) -> tensor<?x16x4x4xf32> {
// CONV-NEXT:      %ih = arith.addi %h, %kh : index
// CONV-NEXT:      %iw = arith.addi %v, %kw : index
// CONV-NEXT:      %a = te.read %0[%n, %ih, %iw, %c] : tensor<?x6x6x8xf32>
// CONV:         %r = te.compute "relu" (%n_1, %f_1, %h_1, %v_1) [%b] -> tensor<?x16x4x4xf32> {
// CONV-NEXT:      %a_1 = te.read %y[%n_1, %f_1, %h_1, %v_1] : tensor<?x16x4x4xf32>
// CONV-NOT:     te.compute
// CONV:         func.return %r : tensor<?x16x4x4xf32>

// (the te-inline case)

// te-inline substitutes a dynamic elementwise compute into its reader (which keeps its size operands) and an
// elementwise compute using an outside extent (%s) into the ReLU.
func.func @chain(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %n = te.dim %x[0] : tensor<?x?xf32>
  %s = te.dim %x[1] : tensor<?x?xf32>
  %e = te.compute "exp" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %x[%i, %j] : tensor<?x?xf32>
    %r = math.exp %v : f32
    te.yield %r : f32
  }
  %t = te.compute "sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %e[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  }
  %m = te.compute "mean" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %t[%i] : tensor<?xf32>
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.divf %v, %f : f32
    te.yield %r : f32
  }
  %y = te.compute "relu" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %m[%i] : tensor<?xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    te.yield %r : f32
  }
  func.return %y : tensor<?xf32>
}

// INLINE-LABEL: func.func @chain(%x: tensor<?x?xf32>) -> tensor<?xf32> {
// INLINE-NEXT:    %n = te.dim %x[0] : tensor<?x?xf32>
// INLINE-NEXT:    %s = te.dim %x[1] : tensor<?x?xf32>
// INLINE-NEXT:    %t = te.compute "sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
// INLINE-NEXT:      %v = te.read %x[%i, %k] : tensor<?x?xf32>
// INLINE-NEXT:      %r = math.exp %v : f32
// INLINE-NEXT:      te.yield %r : f32
// INLINE-NEXT:    }
// INLINE-NEXT:    %y = te.compute "relu" (%i_1) [%n] -> tensor<?xf32> {
// INLINE-NEXT:      %v_1 = te.read %t[%i_1] : tensor<?xf32>
// INLINE-NEXT:      %c = arith.index_cast %s : index to i64
// INLINE-NEXT:      %f = arith.sitofp %c : i64 to f32
// INLINE-NEXT:      %r_1 = arith.divf %v_1, %f : f32
// INLINE-NEXT:      %c_1 = arith.constant 0.000000e+00 : f32
// INLINE-NEXT:      %r_2 = arith.maximumf %r_1, %c_1 : f32
// INLINE-NEXT:      te.yield %r_2 : f32
// INLINE-NEXT:    }
// INLINE-NEXT:    func.return %y : tensor<?xf32>
