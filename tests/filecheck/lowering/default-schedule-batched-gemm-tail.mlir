// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A batched MatMul of 49 rows (a 7x7 window's pixels, Winograd's tiles of a 14x14 map) built for AVX2: 6-row tiles
// and a tail row. The rows are split inside the column panels, so the tail runs in each panel after its full tiles
// (on the panel of B they read) and the batch loop's body stays one nest: the parallel band takes the batch loop, the
// depth loop of one block and the panels (4 x 1 x 2 tasks), not the batch loop alone.
func.func @window(%x: tensor<4x49x64xf32>, %y: tensor<4x64x32xf32>) -> tensor<4x49x32xf32> {
  %s = graph.matmul %x, %y : (tensor<4x49x64xf32>, tensor<4x64x32xf32>) -> tensor<4x49x32xf32>
  func.return %s : tensor<4x49x32xf32>
}

// CHECK-LABEL: func.func private @matmul_0(
// CHECK-DAG:     %{{.*}} = loop.alloc "local" : memref<1x1x16xf32>
// CHECK-DAG:     %{{.*}} = loop.alloc "local" : memref<1x6x16xf32>
// CHECK-NOT:     _init"
// CHECK:         loop.for "i0" %i0 = 0 to 4 step 1 parallel {
// CHECK-NEXT:      loop.for "k3_o" %k3_o = 0 to 64 step 64 parallel {
// CHECK-NEXT:        loop.for "i2_o" %i2_o = 0 to 32 step 16 parallel {
// CHECK-NEXT:          loop.for "i1_o" %i1_o = 0 to 48 step 6 serial {
// CHECK:                 loop.for "k3_i" %k3_i = 0 to 64 step 1 serial {
// CHECK-NEXT:              loop.for "i1_i" %i1_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:                loop.for "i2_i" %i2_i = 0 to 16 step 1 vectorize {
// CHECK:                 loop.for "i1_o_st0"
// CHECK:               loop.for "i1_t_o" %i1_t_o = 48 to 49 step 1 serial {
// CHECK:                 loop.for "k3_i_in_i1_t" %k3_i_in_i1_t = 0 to 64 step 1 serial {
// CHECK-NEXT:              loop.for "i1_t_i" %i1_t_i = 0 to 1 step 1 unroll {
// CHECK-NEXT:                loop.for "i2_i_in_i1_t" %i2_i_in_i1_t = 0 to 16 step 1 vectorize {
// CHECK:                 loop.for "i1_t_o_st0"
