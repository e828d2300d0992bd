// RUN: mini-opt %s --mcpu=x86-64-v3 -p graph-pad-gemm-columns | filecheck %s
// RUN: mini-opt %S/Inputs/matmul-head.mlir --mcpu=x86-64-v3 -p graph-pad-gemm-columns | filecheck %s --check-prefix=MATMUL

// MATMUL:      %weight_padded = graph.pad %w {pads = array<i64: 0, 0, 0, 4>, {{.*}}} : (tensor<8x20xf32>) -> tensor<8x24xf32>
// MATMUL-NEXT: %padded_columns = graph.matmul %x, %weight_padded : (tensor<1x3x8xf32>, tensor<8x24xf32>) -> tensor<1x3x24xf32>
// MATMUL-NEXT: %y = graph.slice %padded_columns {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<1x3x24xf32> -> tensor<1x3x20xf32>
// MATMUL-NEXT: %z = graph.matmul %x, %act : (tensor<1x3x8xf32>, tensor<8x20xf32>) -> tensor<1x3x20xf32>
// MATMUL-NEXT: %w16 = graph.weight "w16" : tensor<8x16xf32>
// MATMUL-NEXT: %v = graph.matmul %x, %w16 : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x3x16xf32>

// 8 lanes. A classifier Gemm with 20 output columns (B transposed, a bias of 20) gets 4 zero columns of B and of the
// bias, and a slice keeps its 20 real columns; B not transposed (12 columns, a broadcast scalar bias) pads its
// second dimension and leaves the bias alone. Left alone: 16 columns, a B that is not a weight (padding it would
// copy it on every call), and a bias computed per call.

builtin.module {
  func.func @main(%x: tensor<2x8xf32>, %act: tensor<20x8xf32>, %bias: tensor<20xf32>) -> (tensor<2x20xf32>, tensor<2x12xf32>, tensor<2x16xf32>, tensor<2x20xf32>, tensor<2x20xf32>) {
    %w = graph.weight "w" : tensor<20x8xf32>
    %b = graph.weight "b" : tensor<20xf32>
    %y = graph.gemm %x, %w, %b {trans_b} : (tensor<2x8xf32>, tensor<20x8xf32>, tensor<20xf32>) -> tensor<2x20xf32>
    %w12 = graph.weight "w12" : tensor<8x12xf32>
    %s = graph.weight "s" : tensor<1xf32>
    %v = graph.gemm %x, %w12, %s {alpha = 2.000000e+00 : f32} : (tensor<2x8xf32>, tensor<8x12xf32>, tensor<1xf32>) -> tensor<2x12xf32>
    %w16 = graph.weight "w16" : tensor<16x8xf32>
    %z = graph.gemm %x, %w16 {trans_b} : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
    %a = graph.gemm %x, %act {trans_b} : (tensor<2x8xf32>, tensor<20x8xf32>) -> tensor<2x20xf32>
    %c = graph.gemm %x, %w, %bias {trans_b} : (tensor<2x8xf32>, tensor<20x8xf32>, tensor<20xf32>) -> tensor<2x20xf32>
    func.return %y, %v, %z, %a, %c : tensor<2x20xf32>, tensor<2x12xf32>, tensor<2x16xf32>, tensor<2x20xf32>, tensor<2x20xf32>
  }
}

// CHECK:      %weight_padded = graph.pad %w {pads = array<i64: 0, 0, 4, 0>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<20x8xf32>) -> tensor<24x8xf32>
// CHECK-NEXT: %bias_padded = graph.pad %b {pads = array<i64: 0, 4>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<20xf32>) -> tensor<24xf32>
// CHECK-NEXT: %padded_columns = graph.gemm %x, %weight_padded, %bias_padded {{{.*}}trans_b{{.*}}} : (tensor<2x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<2x24xf32>
// CHECK-NEXT: %y = graph.slice %padded_columns {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x24xf32> -> tensor<2x20xf32>
// CHECK:      %weight_padded_1 = graph.pad %w12 {pads = array<i64: 0, 0, 0, 4>, {{.*}}} : (tensor<8x12xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %padded_columns_1 = graph.gemm %x, %weight_padded_1, %s {alpha = 2.000000e+00 : f32{{.*}}} : (tensor<2x8xf32>, tensor<8x16xf32>, tensor<1xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %v = graph.slice %padded_columns_1 {{.*}} : tensor<2x16xf32> -> tensor<2x12xf32>
// CHECK:      %z = graph.gemm %x, %w16 {{.*}} -> tensor<2x16xf32>
// CHECK-NEXT: %a = graph.gemm %x, %act {{.*}} -> tensor<2x20xf32>
// CHECK-NEXT: %c = graph.gemm %x, %w, %bias {{.*}} -> tensor<2x20xf32>
// CHECK-NEXT: func.return %y, %v, %z, %a, %c
