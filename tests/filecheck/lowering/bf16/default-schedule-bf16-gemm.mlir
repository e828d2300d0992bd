// RUN: mini-opt %s --mcpu=znver4 -p 'graph-bf16-products,graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=ZNVER4
// RUN: mini-opt %s --mcpu='aarch64-linux-gnu -mcpu=neoverse-v1' -p 'graph-bf16-products,graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=SVE

// The bf16 GEMM rule gives a bfloat16 MatMul (64 deep: 32 words) the GEMM's register tile on the dot product's
// vectors. B's words are computed at load time and packed there into column panels. znver4 (AVX512-BF16): 8 rows x
// 32 columns, two 16-lane vectors of f32 accumulators, one `vdpbf16ps` each; neoverse-v1 (256-bit SVE, NEON
// `bfdot`): 4 rows x 16 columns in 4-lane pieces of 128-bit `bfdot`, the tile's loads and stores in SVE's 8 lanes.
// One depth block: the tile starts at zero and is stored once.
func.func @main(%x: tensor<8x64xf32>) -> tensor<8x32xf32> {
  %w = graph.weight "w" : tensor<64x32xf32>
  %y = graph.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// ZNVER4:       func.call @matmul_bf16_lhs_0(%x, %y) : (memref<8x64xf32>, memref<8x32xi32>) -> ()
// ZNVER4-NEXT:  %y_1 = loop.precompute @matmul_bf16_rhs_1(%w) : (memref<64x32xf32>) -> memref<32x32xi32>
// ZNVER4-NEXT:  %y_packed = loop.precompute @matmul_2_pack1(%y_1) : (memref<32x32xi32>) -> memref<1x32x32xi32>
// ZNVER4-LABEL: func.func private @matmul_2(
// ZNVER4-NEXT:    %tile = loop.alloc "local" : memref<8x32xf32>
// ZNVER4-NEXT:    loop.for "k2_o" %k2_o = 0 to 32 step 32 serial {
// ZNVER4-NEXT:      loop.for "i0_o" %i0_o = 0 to 8 step 8 serial {
// ZNVER4-NEXT:        loop.for "i1_o" %i1_o = 0 to 32 step 32 serial {
// ZNVER4:               loop.for "k2_i" %k2_i = 0 to 32 step 1 serial {
// ZNVER4-NEXT:            loop.for "i0_i" %i0_i = 0 to 8 step 1 unroll {
// ZNVER4-NEXT:              loop.for "i1_i" %i1_i = 0 to 32 step 1 vectorize {
// ZNVER4:                     %[[A:.*]] = memref.load %in0[%i0, %k2] : memref<8x32xi32>
// ZNVER4:                     %[[B:.*]] = memref.load %in1[%{{.*}}, %k2, %i1_i] : memref<1x32x32xi32>
// ZNVER4-NEXT:                %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// ZNVER4-NEXT:                %[[DOT:.*]] = llvmx.dot_bf16 %[[ZERO]], %[[A]], %[[B]] : f32, i32
// ZNVER4-NEXT:                %[[ACC:.*]] = memref.load %tile[%i0_i, %i1_i] : memref<8x32xf32>
// ZNVER4-NEXT:                arith.addf %[[ACC]], %[[DOT]]
// ZNVER4:               loop.for "i1_o_st1" %i1_o_st1 = 0 to 32 step 1 vectorize {

// SVE-LABEL: func.func private @matmul_2(
// SVE-NEXT:    %tile = loop.alloc "local" : memref<4x16xf32>
// SVE-NEXT:    loop.for "k2_o" %k2_o = 0 to 32 step 32 serial {
// SVE-NEXT:      loop.for "i0_o" %i0_o = 0 to 8 step 4 serial {
// SVE-NEXT:        loop.for "i1_o" %i1_o = 0 to 32 step 16 serial {
// SVE:               loop.for "k2_i" %k2_i = 0 to 32 step 1 serial {
// SVE-NEXT:            loop.for "i0_i" %i0_i = 0 to 4 step 1 unroll {
// SVE-NEXT:              loop.for "i1_i_o" %i1_i_o = 0 to 16 step 4 unroll {
// SVE-NEXT:                loop.for "i1_i_i" %i1_i_i = 0 to 4 step 1 vectorize {
// SVE:                       llvmx.dot_bf16
// SVE:               loop.for "i1_o_st1" %i1_o_st1 = 0 to 16 step 1 vectorize {
