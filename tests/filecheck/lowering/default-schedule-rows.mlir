// RUN: mini-opt %s --mcpu=x86-64-v3 --split-input-file -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// The rows rule: every stage of a layer normalisation moves into the last stage's row loop (loop-compute-at), the
// row rewrite is one vector operation per 8 elements, the reductions stay for LLVM.
func.func @layer_norm(%x: tensor<16x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %y = graph.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  func.return %y : tensor<16x64xf32>
}

// CHECK-LABEL: func.func private @layer_norm_0(
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    %acc_1 = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    loop.for "i0" %i0 = 0 to 16 step 1 serial {
// CHECK-NEXT:      loop.for "i1___" %i1___ = 0 to 1 step 1 serial {
// CHECK:             loop.for "k2_" %k2_ = 0 to 64 step 1 serial {
// CHECK-NEXT:          %{{.*}} = memref.load %in0[%i0, %k2_] : memref<16x64xf32>
// CHECK:             memref.store %{{.*}}, %in3[%i0, %i1___] : memref<16x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for "i1__" %i1__ = 0 to 1 step 1 serial {
// CHECK:             loop.for "k2" %k2 = 0 to 64 step 1 serial {
// CHECK:             memref.store %{{.*}}, %in4[%i0, %i1__] : memref<16x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for "i1_" %i1_ = 0 to 1 step 1 serial {
// CHECK:             memref.store %{{.*}}, %in5[%i0, %i1_] : memref<16x1xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for "i1_o" %i1_o = 0 to 64 step 8 serial {
// CHECK-NEXT:        loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
// CHECK:               memref.store %{{.*}}, %out[%i0, %i1] : memref<16x64xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Enough rows and work: parallel placement then takes the row loop of the fused nest.
func.func @layer_norm_rows(%x: tensor<1x512x64xf32>, %s: tensor<64xf32>) -> tensor<1x512x64xf32> {
  %y = graph.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x512x64xf32>, tensor<64xf32>) -> tensor<1x512x64xf32>
  func.return %y : tensor<1x512x64xf32>
}

// CHECK-LABEL: func.func private @layer_norm_0(
// CHECK:         loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 512 step 1 parallel {
// CHECK-NEXT:        loop.for "i2___" %i2___ = 0 to 1 step 1 serial {
// CHECK:             loop.for "i2_o" %i2_o = 0 to 64 step 8 serial {
// CHECK-NEXT:          loop.for "i2_i" %i2_i = 0 to 8 step 1 vectorize {

// -----

// Softmax along the first axis: the stages share no row loop, so they stay one after the other in the kernel; the
// exp and the division are vectorized along the rows they keep.
func.func @softmax_first_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %y = graph.softmax %x {axis = 0 : i64} : tensor<4x32xf32>
  func.return %y : tensor<4x32xf32>
}

// CHECK-LABEL: func.func private @softmax_div_0(
// CHECK:         loop.for "i0___" %i0___ = 0 to 1 step 1 serial {
// CHECK:         loop.for "i0__" %i0__ = 0 to 4 step 1 serial {
// CHECK-NEXT:      loop.for "i1___o" %i1___o = 0 to 32 step 8 serial {
// CHECK-NEXT:        loop.for "i1___i" %i1___i = 0 to 8 step 1 vectorize {
// CHECK:         loop.for "i0_" %i0_ = 0 to 1 step 1 serial {
// CHECK:         loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:      loop.for "i1_o" %i1_o = 0 to 32 step 8 serial {
// CHECK-NEXT:        loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
