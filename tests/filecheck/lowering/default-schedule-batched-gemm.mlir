// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A batched MatMul (attention's Q @ K^T) gets the GEMM schedule inside its batch loops: a 4 x 16 register tile
// over the one depth block (a loop of one iteration, which a parallel band takes along with the batch loops and the
// row tiles), B (not a weight, read along its rows) unpacked; each tile starts at zero and is stored
// into the output once (no zeroing pass over the output first, no read of it).
func.func @attention_scores(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x16x32xf32>) -> tensor<1x2x8x32xf32> {
  %s = graph.matmul %q, %k : (tensor<1x2x8x16xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x8x32xf32>
  func.return %s : tensor<1x2x8x32xf32>
}

// CHECK-LABEL: func.func private @matmul_0(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x1x4x16xf32>
// CHECK-NOT:     _init"
// CHECK:         loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 2 step 1 serial {
// CHECK-NEXT:        loop.for "k4_o" %k4_o = 0 to 16 step 16 serial {
// CHECK-NEXT:          loop.for "i2_o" %i2_o = 0 to 8 step 4 serial {
// CHECK-NEXT:            loop.for "i3_o" %i3_o = 0 to 32 step 16 serial {
// CHECK:                   loop.for "k4_i" %k4_i = 0 to 16 step 1 serial {
// CHECK-NEXT:                loop.for "i2_i" %i2_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:                  loop.for "i3_i" %i3_i = 0 to 16 step 1 vectorize {
// CHECK:                   loop.for "i3_o_st3" %i3_o_st3 = 0 to 16 step 1 vectorize {
// CHECK-NOT:                 arith.addf
// CHECK:                     memref.store %{{[0-9]+}}, %out[
// CHECK-NOT:     loop.precompute
