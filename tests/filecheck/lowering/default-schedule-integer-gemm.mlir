// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s

// An integer matmul reaches the schedules as its operands less their zero points and an i32 GEMM: the integer GEMM
// rule gives it the GEMM's register tile (4 rows x 16 columns in two 8-lane vectors) of i32 multiply-adds, B (a
// weight, less its zero point at load time) packed into 16-column panels. One depth block: each tile is stored
// into the output once, not added to a zeroed output.
func.func @matmul_integer(%a: tensor<8x64xui8>, %az: tensor<1xui8>) -> tensor<8x32xi32> {
  %b = graph.weight "b" : tensor<64x32xi8>
  %bz = graph.weight "bz" : tensor<1xi8>
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<8x64xui8>, tensor<64x32xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<8x32xi32>
  func.return %y : tensor<8x32xi32>
}

// CHECK:         loop.precompute @matmul_integer_2_pack1(%{{.*}}) : (memref<64x32xi32>) -> memref<2x64x16xi32>
// CHECK-LABEL: func.func private @matmul_integer_2(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<4x16xi32>
// CHECK-NOT:     _init"
// CHECK:         loop.for "k2_o" %k2_o = 0 to 64 step 64 serial {
// CHECK-NEXT:      loop.for "i0_o" %i0_o = 0 to 8 step 4 serial {
// CHECK-NEXT:        loop.for "i1_o" %i1_o = 0 to 32 step 16 serial {
// CHECK:               loop.for "k2_i" %k2_i = 0 to 64 step 1 serial {
// CHECK-NEXT:            loop.for "i0_i" %i0_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:              loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK:                     %[[P:[0-9]+]] = arith.muli %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK:                     arith.addi %{{[0-9]+}}, %[[P]] : i32
// CHECK:             loop.for "i1_o_st1" %i1_o_st1 = 0 to 16 step 1 vectorize {
// CHECK-NOT:             : i32
// CHECK:                 %[[T:[0-9]+]] = memref.load %tile[%i1_o_st0, %i1_o_st1] : memref<4x16xi32>
// CHECK-NEXT:            memref.store %[[T]], %out[
