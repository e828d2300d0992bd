// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s

// A group-1 integer convolution reaches the schedules channels-last: the integer convolution rule gives it the
// direct convolution's register tile (4 output columns x 16 output channels in two 8-lane vectors) of i32
// multiply-adds, the channels innermost, the weight (less its zero point) packed at load time.
func.func @conv_integer(%x: tensor<1x8x8x8xui8>, %xz: tensor<1xui8>) -> tensor<1x16x8x8xi32> {
  %w = graph.weight "w" : tensor<16x8x3x3xi8>
  %wz = graph.weight "wz" : tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x8x8xui8>, tensor<16x8x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x8x8xi32>
  func.return %y : tensor<1x16x8x8xi32>
}

// CHECK:         %[[PACKED:.*]] = loop.precompute @conv_integer_2_pack0(%{{.*}}) : (memref<16x8x3x3xi32>) -> memref<1x3x3x8x16xi32>
// CHECK-LABEL: func.func private @conv_integer_2(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x1x4x16xi32>
// CHECK:         loop.for "i3_o" %i3_o = 0 to 16 step 16 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 8 step 1 parallel {
// CHECK-NEXT:        loop.for "i2_o" %i2_o = 0 to 8 step 4 parallel {
// CHECK:               loop.for "k4" %k4 = 0 to 3 step 1 serial {
// CHECK-NEXT:            loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:              loop.for "k6" %k6 = 0 to 8 step 1 serial {
// CHECK-NEXT:                loop.for "i2_i" %i2_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:                  loop.for "i3_i" %i3_i = 0 to 16 step 1 vectorize {
// CHECK:                         %[[P:[0-9]+]] = arith.muli %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK:                         arith.addi %{{[0-9]+}}, %[[P]] : i32
