// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A group-1 integer convolution reaches the schedules as im2col and an i32 GEMM: the integer GEMM rule gives it the
// GEMM's register tile (rows of output channels, 16 pixels in two 8-lane vectors) with i32 multiply-adds.
func.func @conv_integer(%x: tensor<1x8x8x8xui8>, %w: tensor<16x8x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<1xi8>) -> tensor<1x16x8x8xi32> {
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x8x8xui8>, tensor<16x8x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x8x8xi32>
  func.return %y : tensor<1x16x8x8xi32>
}

// CHECK-LABEL: func.func private @conv_integer_2(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x4x16xi32>
// CHECK:         loop.for "k3_o" %k3_o = 0 to 72 step 72 serial {
// CHECK-NEXT:      loop.for "i1_o" %i1_o = 0 to 16 step 4 parallel {
// CHECK-NEXT:        loop.for "i2_o" %i2_o = 0 to 64 step 16 parallel {
// CHECK:               loop.for "k3_i" %k3_i = 0 to 72 step 1 serial {
// CHECK-NEXT:            loop.for "i1_i" %i1_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:              loop.for "i2_i" %i2_i = 0 to 16 step 1 vectorize {
// CHECK:                     %[[P:[0-9]+]] = arith.muli %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK:                     arith.addi %{{[0-9]+}}, %[[P]] : i32
// CHECK:               loop.for "i2_o_st2" %i2_o_st2 = 0 to 16 step 1 vectorize {
// CHECK:                 arith.addi %{{[0-9]+}}, %{{[0-9]+}} : i32
