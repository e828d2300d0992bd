// RUN: mini-opt %s --mcpu=znver4 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=znver4 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule,loop-to-scf' | filecheck %s --check-prefix=VECTOR

// An integer convolution in the dot-product form (VNNI target, int8 weight whose zero point is a static 0) gets
// the integer convolution rule's register tile over i32 words of four channels (6 channels: 2 words, the last
// padded): 8 columns x 16 output channels, the packed weight [f/16][kh][kw][c/4][16] computed at load time; the
// vectorizer folds the tile's add into the dot product, one vpdpbusd per column and word.
func.func @conv_integer(%x: tensor<1x6x8x8xui8>, %xz: tensor<1xui8>) -> tensor<1x16x8x8xi32> {
  %w = graph.weight "w" : tensor<16x6x3x3xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x6x8x8xui8>, tensor<16x6x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x8x8xi32>
  func.return %y : tensor<1x16x8x8xi32>
}

// CHECK:         loop.precompute @conv_integer_4_pack1(%{{.*}}) : (memref<16x2x3x3xi32>) -> memref<1x3x3x2x16xi32>
// CHECK-LABEL: func.func private @conv_integer_4(
// CHECK-SAME:    %in0: memref<1x10x10x2xi32> {llvm.noalias}, %in1: memref<1x3x3x2x16xi32> {llvm.noalias}, %out: memref<1x8x8x16xi32> {llvm.noalias}
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x1x8x16xi32>
// CHECK:         loop.for "k4" %k4 = 0 to 3 step 1 serial {
// CHECK-NEXT:      loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:        loop.for "k6" %k6 = 0 to 2 step 1 serial {
// CHECK-NEXT:          loop.for "i2_i" %i2_i = 0 to 8 step 1 unroll {
// CHECK-NEXT:            loop.for "i3_i" %i3_i = 0 to 16 step 1 vectorize {
// CHECK:                   %[[X:[0-9]+]] = memref.load %in0[%i0, %{{[0-9]+}}, %{{[0-9]+}}, %k6] : memref<1x10x10x2xi32>
// CHECK:                   %[[W:[0-9]+]] = memref.load %in1[%{{[0-9]+}}, %k4, %k5, %k6, %i3_i] : memref<1x3x3x2x16xi32>
// CHECK-NEXT:              %[[ZERO:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:              %[[DOT:[0-9]+]] = llvmx.dot_u8s8 %[[ZERO]], %[[X]], %[[W]] : i32
// CHECK:                   %[[ACC:[0-9]+]] = memref.load %tile[%{{[0-9]+}}, %{{[0-9]+}}, %i2_i, %i3_i] : memref<1x1x8x16xi32>
// CHECK-NEXT:              %{{[0-9]+}} = arith.addi %[[ACC]], %[[DOT]] : i32

// VECTOR-LABEL: func.func private @conv_integer_4(
// VECTOR:         %[[ACC:[0-9]+]] = vector.load %tile[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<1x1x8x16xi32>, vector<16xi32>
// VECTOR-NEXT:    %[[SUM:[0-9]+]] = llvmx.dot_u8s8 %[[ACC]], %{{[0-9]+}}, %{{[0-9]+}} : vector<16xi32>
// VECTOR:         vector.store %[[SUM]], %tile[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<1x1x8x16xi32>, vector<16xi32>
