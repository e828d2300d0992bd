// RUN: mini-opt %s --mcpu=znver3 -p graph-to-te --split-input-file | filecheck %s --check-prefix=TE
// RUN: mini-opt %s --mcpu=znver3 -p lower-to-llvm -t llvm --split-input-file | filecheck %s --check-prefix=ZNVER3
// RUN: mini-opt %s --mcpu=znver4 -p lower-to-llvm -t llvm --split-input-file | filecheck %s --check-prefix=ZNVER4

// An int8 weight the importer found in 7 bits (`minimlc.value_bits = 7`, from its values) feeding an integer
// convolution in the dot-product form: its dot products state `rhs_bits = 7` and the module records the weight
// (`minimlc.weight_bits`, which the runtime checks weights against). On znver3 (AVX2, no VNNI) each 8-lane piece
// is then one vpmaddubsw and one vpmaddwd by ones; znver4 keeps vpdpbusd. The same weight without the attribute
// (second case) keeps the two exact vpmaddwd a piece and records nothing.
func.func @main(%x: tensor<1x8x6x6xui8>, %xz: tensor<1xui8>) -> tensor<1x16x4x4xi32> {
  %w = graph.weight "w" {minimlc.value_bits = 7 : i64} : tensor<16x8x3x3xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xui8>, tensor<16x8x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  func.return %y : tensor<1x16x4x4xi32>
}

// TE:       builtin.module attributes {minimlc.target = "znver3", minimlc.weight_bits = {w = 7 : i64}}
// TE:         te.compute "conv_integer" {{.*}} reduce sum
// TE:           llvmx.dot_u8s8 %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {rhs_bits = 7 : i64} : i32

// ZNVER3-LABEL: define void @main(
// ZNVER3:       call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8> %{{.*}}, <32 x i8> %{{.*}})
// ZNVER3-NEXT:  call <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16> %{{.*}}, <16 x i16> <i16 1, i16 1,
// ZNVER3-NOT:   vpdpbusd
// ZNVER3:       declare <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(

// ZNVER4-LABEL: define void @main(
// ZNVER4-NOT:   pmadd
// ZNVER4:       call <16 x i32> @llvm.x86.avx512.vpdpbusd.512(
// ZNVER4-NOT:   pmadd

// -----

func.func @main(%x: tensor<1x8x6x6xui8>, %xz: tensor<1xui8>) -> tensor<1x16x4x4xi32> {
  %w = graph.weight "w" : tensor<16x8x3x3xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xui8>, tensor<16x8x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  func.return %y : tensor<1x16x4x4xi32>
}

// TE:       builtin.module attributes {minimlc.target = "znver3"} {
// TE:         llvmx.dot_u8s8 %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i32

// ZNVER3-LABEL: define void @main(
// ZNVER3-NOT:   pmadd.ub.sw
// ZNVER3:       call <8 x i32> @llvm.x86.avx2.pmadd.wd(
// ZNVER3-NOT:   pmadd.ub.sw
