// RUN: mini-opt %s --mcpu znver4 -p 'graph-to-te,te-conv-layout,te-channels-last,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu znver4 -p 'graph-to-te,te-conv-layout,te-channels-last,te-inline,te-to-loop,loop-hoist-constants,default-schedule,loop-to-scf' | filecheck %s --check-prefix=VECTOR
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p 'graph-to-te,te-conv-layout,te-channels-last,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=NEON
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p 'graph-to-te,te-conv-layout,te-channels-last,te-inline,te-to-loop,loop-hoist-constants,default-schedule,loop-to-scf' | filecheck %s --check-prefix=NEON-VECTOR

// A convolution in the bfloat16 form (6 channels: 3 words of two) gets the bfloat16 convolution rule: the float
// convolution's register tile on the dot product's vectors. With AVX512-BF16 (znver4: 16 f32 lanes) 8 columns x 32
// output channels, the weight's words packed [f/32][kh][kw][c/2][32] at load time after the words themselves; the
// vectorizer folds the tile's add into the dot product (one vdpbf16ps per 16 channels, column and word).
// On neoverse-v1 (256-bit SVE, 128-bit bfdot: 4 lanes) 8 columns x 8 channels, each channel vector in two unrolled
// pieces of 4 lanes.
func.func @conv(%x: tensor<1x6x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.weight "w" : tensor<32x6x3x3xf32>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, minimlc.bf16_products} : (tensor<1x6x8x8xf32>, tensor<32x6x3x3xf32>) -> tensor<1x32x8x8xf32>
  func.return %y : tensor<1x32x8x8xf32>
}

// CHECK:         %[[WORDS:.*]] = loop.precompute @conv_bf16_weight_0(%w) : (memref<32x6x3x3xf32>) -> memref<32x3x3x3xi32>
// CHECK:         loop.precompute @conv_2_pack1(%[[WORDS]]) : (memref<32x3x3x3xi32>) -> memref<1x3x3x3x32xi32>
// CHECK-LABEL: func.func private @conv_2(
// CHECK-SAME:    %in0: memref<1x10x10x3xi32> {llvm.noalias}, %in1: memref<1x3x3x3x32xi32> {llvm.noalias}, %out: memref<1x32x8x8xf32> {llvm.noalias}
// CHECK:         %tile = loop.alloc "local" : memref<1x1x8x32xf32>
// CHECK:         loop.for "k4" %k4 = 0 to 3 step 1 serial {
// CHECK-NEXT:      loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:        loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK-NEXT:          loop.for "i3_i" %i3_i = 0 to 8 step 1 unroll {
// CHECK-NEXT:            loop.for "i1_i" %i1_i = 0 to 32 step 1 vectorize {
// CHECK:                   %[[X:[0-9]+]] = memref.load %in0[%i0, %{{[0-9]+}}, %{{[0-9]+}}, %k6] : memref<1x10x10x3xi32>
// CHECK:                   %[[W:[0-9]+]] = memref.load %in1[%{{[0-9]+}}, %k4, %k5, %k6, %i1_i] : memref<1x3x3x3x32xi32>
// CHECK-NEXT:              %[[ZERO:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:              %[[DOT:[0-9]+]] = llvmx.dot_bf16 %[[ZERO]], %[[X]], %[[W]] : f32, i32
// CHECK:                   %[[ACC:[0-9]+]] = memref.load %tile[%{{[0-9]+}}, %{{[0-9]+}}, %i3_i, %i1_i] : memref<1x1x8x32xf32>
// CHECK-NEXT:              %{{[0-9]+}} = arith.addf %[[ACC]], %[[DOT]] fastmath<reassoc,contract> : f32

// VECTOR-LABEL: func.func private @conv_2(
// VECTOR:         %[[ACC:[0-9]+]] = vector.load %tile[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<1x1x8x32xf32>, vector<32xf32>
// VECTOR-NEXT:    %[[SUM:[0-9]+]] = llvmx.dot_bf16 %[[ACC]], %{{[0-9]+}}, %{{[0-9]+}} : vector<32xf32>, vector<32xi32>
// VECTOR:         vector.store %[[SUM]], %tile[%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : memref<1x1x8x32xf32>, vector<32xf32>

// NEON:         loop.precompute @conv_2_pack1(%{{.*}}) : (memref<32x3x3x3xi32>) -> memref<4x3x3x3x8xi32>
// NEON-LABEL: func.func private @conv_2(
// NEON:         %tile = loop.alloc "local" : memref<1x1x8x8xf32>
// NEON:         loop.for "k6" %k6 = 0 to 3 step 1 serial {
// NEON-NEXT:      loop.for "i3_i" %i3_i = 0 to 8 step 1 unroll {
// NEON-NEXT:        loop.for "i1_i_o" %i1_i_o = 0 to 8 step 4 unroll {
// NEON-NEXT:          loop.for "i1_i_i" %i1_i_i = 0 to 4 step 1 vectorize {
// NEON:                 llvmx.dot_bf16 %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : f32, i32

// NEON-VECTOR-LABEL: func.func private @conv_2(
// NEON-VECTOR:         %[[ACC:[0-9]+]] = vector.load %tile[{{.*}}] : memref<1x1x8x8xf32>, vector<4xf32>
// NEON-VECTOR-NEXT:    %{{[0-9]+}} = llvmx.dot_bf16 %[[ACC]], %{{[0-9]+}}, %{{[0-9]+}} : vector<4xf32>, vector<4xi32>
