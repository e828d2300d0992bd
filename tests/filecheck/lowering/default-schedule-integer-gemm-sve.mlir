// RUN: mini-opt %s --mcpu='aarch64-linux-gnu -mcpu=neoverse-v1' -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s

// On 256-bit SVE the int8 GEMM's tile takes NEON's 4-lane dot product in pieces (`in_pieces`), and its zeroing
// loop, which holds no dot product, stays whole: a 64-deep product (16 words, one depth block) used to leave the
// kernel unscheduled, a scalar loop, because a piece step named the zeroing loop the cache write had replaced.
func.func @main(%x: tensor<8x64xui8>) -> tensor<8x32xi32> {
  %w = graph.weight "w" : tensor<64x32xi8>
  %xz = graph.weight "xz" : tensor<1xui8>
  %wz0 = graph.constant {value = 0.000000e+00 : f32} : tensor<1xf32>
  %wz = graph.cast %wz0 : tensor<1xf32> -> tensor<1xi8>
  %y = graph.matmul_integer %x, %w, %xz, %wz : (tensor<8x64xui8>, tensor<64x32xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<8x32xi32>
  func.return %y : tensor<8x32xi32>
}

// CHECK-LABEL: func.func private @matmul_integer_4(
// CHECK:         %tile = loop.alloc "local" : memref<4x16xi32>
// CHECK:         loop.for "k2_i" %k2_i = 0 to 16 step 1 serial {
// CHECK-NEXT:      loop.for "i0_i" %i0_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:        loop.for "i1_i_o" %i1_i_o = 0 to 16 step 4 unroll {
// CHECK-NEXT:          loop.for "i1_i_i" %i1_i_i = 0 to 4 step 1 vectorize {
// CHECK:                 llvmx.dot_u8s8
// CHECK:         func.return
