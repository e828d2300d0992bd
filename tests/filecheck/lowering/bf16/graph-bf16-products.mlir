// RUN: mini-opt %s --mcpu=znver4 -p graph-bf16-products | filecheck %s
// RUN: mini-opt %s --mcpu='aarch64-linux-gnu -mcpu=neoverse-v1' -p graph-bf16-products | filecheck %s
// RUN: not mini-opt %s --mcpu=znver3 -p graph-bf16-products 2>&1 | filecheck %s --check-prefix=REFUSED

// graph-bf16-products marks the (float32) MatMuls, the Gemms whose B is computed from weights alone and the group-1
// Convs; a MatMul of two activations is marked too (both sides' words are computed per run), a grouped Conv stays
// unmarked. A target without a bfloat16 dot product (znver3) fails the pass in one line.
func.func @main(%x: tensor<4x8xf32>, %a: tensor<8x16xf32>, %img: tensor<1x4x6x6xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %w = graph.weight "w" : tensor<8x16xf32>
  %g = graph.weight "g" : tensor<16x8xf32>
  %k = graph.weight "k" : tensor<4x4x3x3xf32>
  %kg = graph.weight "kg" : tensor<4x2x3x3xf32>
  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %z = graph.gemm %x, %g {trans_b} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %n = graph.matmul %x, %a : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = graph.conv %img, %k {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32>
  %d = graph.conv %img, %kg {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y, %z, %n, %c, %d : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// CHECK:      graph.matmul %x, %w {minimlc.bf16_products} :
// CHECK-NEXT: graph.gemm %x, %g {minimlc.bf16_products, trans_b} :
// CHECK-NEXT: graph.matmul %x, %a {minimlc.bf16_products} :
// CHECK-NEXT: graph.conv %img, %k {minimlc.bf16_products,
// CHECK-NEXT: graph.conv %img, %kg {strides

// REFUSED:     graph-bf16-products: target 'znver3' has no bfloat16 dot product (x86: avx512bf16; AArch64: bf16)
// REFUSED-NOT: Traceback

