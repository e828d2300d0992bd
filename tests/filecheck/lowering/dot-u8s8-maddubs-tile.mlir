// RUN: mini-opt %s --mcpu=znver3 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=ZNVER3
// RUN: mini-opt %s --mcpu=alderlake -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=AVXVNNI
// RUN: mini-opt %s --mcpu=znver4 -p 'graph-to-te,te-inline,te-to-loop,loop-hoist-constants,default-schedule' | filecheck %s --check-prefix=ZNVER4
// RUN: mini-opt %s --mcpu=znver3 -p lower-to-llvm -t llvm > %t.ll
// RUN: %python %S/Inputs/llvm_to_asm.py %t.ll znver3 > %t.s
// RUN: %python %S/Inputs/inner_loop_spills.py %t.s vpmaddubsw | filecheck %s --check-prefix=ASM

// 7-bit weights (`minimlc.value_bits = 7`) take AVX2's vpmaddubsw + vpmaddwd-by-ones form on znver3, which holds two
// ymm registers beside the float tile's (the ones and the i16 pair sums): the integer rules size their register
// tile for it, 4 columns x 16 channels for this 12-wide convolution and 4 rows x 16 columns for the GEMM, where the
// float-sized 6 x 16 tiles (12 accumulators + 2 weight vectors + broadcast + 2 = 17 of 16 registers) spilled an
// accumulator every reduction step. The same GEMM on an 8-bit weight (the exact two-vpmaddwd form) and every VNNI
// target, whose vpdpbusd accumulates in place (AVX-VNNI's 16 registers, AVX-512's 32), keep the float tile.
func.func @main(%x: tensor<1x64x8x14xui8>, %xz: tensor<1xui8>, %a: tensor<24x64xui8>, %az: tensor<1xui8>) -> (tensor<1x16x6x12xi32>, tensor<24x32xi32>, tensor<24x32xi32>) {
  %w = graph.weight "w" {minimlc.value_bits = 7 : i64} : tensor<16x64x3x3xi8>
  %b = graph.weight "b" {minimlc.value_bits = 7 : i64} : tensor<64x32xi8>
  %b8 = graph.weight "b8" : tensor<64x32xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %z = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %z {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x8x14xui8>, tensor<16x64x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x6x12xi32>
  %m = graph.matmul_integer %a, %b, %az, %z : (tensor<24x64xui8>, tensor<64x32xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<24x32xi32>
  %m8 = graph.matmul_integer %a, %b8, %az, %z : (tensor<24x64xui8>, tensor<64x32xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<24x32xi32>
  func.return %y, %m, %m8 : tensor<1x16x6x12xi32>, tensor<24x32xi32>, tensor<24x32xi32>
}

// ZNVER3-LABEL: func.func private @conv_integer_4(
// ZNVER3:         %tile = loop.alloc "local" : memref<1x1x4x16xi32>
// ZNVER3-LABEL: func.func private @matmul_integer_9(
// ZNVER3:         %tile = loop.alloc "local" : memref<4x16xi32>
// ZNVER3-LABEL: func.func private @matmul_integer_11(
// ZNVER3:         %tile = loop.alloc "local" : memref<6x16xi32>

// AVXVNNI-LABEL: func.func private @conv_integer_4(
// AVXVNNI:         %tile = loop.alloc "local" : memref<1x1x6x16xi32>
// AVXVNNI-LABEL: func.func private @matmul_integer_9(
// AVXVNNI:         %tile = loop.alloc "local" : memref<6x16xi32>

// ZNVER4-LABEL: func.func private @conv_integer_4(
// ZNVER4:         %tile = loop.alloc "local" : memref<1x1x12x16xi32>
// ZNVER4-LABEL: func.func private @matmul_integer_9(
// ZNVER4:         %tile = loop.alloc "local" : memref<8x32xi32>

// The compiled inner loops (the convolution's, unrolled into its tiles and tail, and the GEMM's) never touch the
// stack: no accumulator spilled.
// ASM:     innermost loop: {{[1-9][0-9]*}} vpmaddubsw, 0 stack accesses
// ASM-NOT: {{[1-9][0-9]*}} stack accesses
