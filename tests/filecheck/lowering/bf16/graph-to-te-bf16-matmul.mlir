// RUN: mini-opt %s --mcpu=znver4 -p graph-to-te | filecheck %s

// A marked MatMul by a weight pairs its depth (7) into 4 words: element j of word w is k = w + 4j, the last word's
// high half past the depth (a select of 0.0: `pair_index`'s bound); A's words "matmul_bf16_lhs" (batch, rows, 4)
// and B's "matmul_bf16_rhs" (4, columns) are i32, and "matmul" sums `llvmx.dot_bf16` from 0.0 over the words.
// A Gemm with both transposes reads A and B transposed and keeps alpha and beta*C in "gemm_bias". Unmarked MatMuls
// (the pass leaves none unmarked; a user's pass list may) stay float32 products (`arith.mulf`), the one of the same
// signature as the marked one too (graph-to-te clones repeated ops: the mark is part of the signature).
func.func @main(%x: tensor<2x3x7xf32>, %a: tensor<7x5xf32>, %b: tensor<7x16xf32>) -> (tensor<2x3x16xf32>, tensor<5x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %w = graph.weight "w" : tensor<7x16xf32>
  %g = graph.weight "g" : tensor<16x7xf32>
  %c = graph.weight "c" : tensor<16xf32>
  %y = graph.matmul %x, %w {minimlc.bf16_products} : (tensor<2x3x7xf32>, tensor<7x16xf32>) -> tensor<2x3x16xf32>
  %z = graph.gemm %a, %g, %c {minimlc.bf16_products, trans_a, trans_b, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<7x5xf32>, tensor<16x7xf32>, tensor<16xf32>) -> tensor<5x16xf32>
  %v = graph.matmul %x, %b : (tensor<2x3x7xf32>, tensor<7x16xf32>) -> tensor<2x3x16xf32>
  %u = graph.matmul %x, %w : (tensor<2x3x7xf32>, tensor<7x16xf32>) -> tensor<2x3x16xf32>
  func.return %y, %z, %v, %u : tensor<2x3x16xf32>, tensor<5x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// CHECK:      %[[LHS:.*]] = te.compute "matmul_bf16_lhs" (%[[I:.*]], %[[J:.*]], %[[W:.*]]) -> tensor<2x3x4xi32> {
// CHECK-NEXT:   te.read %x[%[[I]], %[[J]], %[[W]]] : tensor<2x3x7xf32>
// CHECK-NEXT:   %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:   %[[HIGH:.*]] = arith.addi %[[W]], %[[FOUR]] : index
// CHECK-NEXT:   %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-NEXT:   %[[INSIDE:.*]] = arith.cmpi slt, %[[HIGH]], %[[SEVEN]] : index
// CHECK:        arith.minsi %[[HIGH]]
// CHECK:        %[[HIGH_OR_ZERO:.*]] = arith.select %[[INSIDE]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:   %[[WORD:.*]] = llvmx.pack_bf16 %{{.*}}, %[[HIGH_OR_ZERO]] : f32 -> i32
// CHECK-NEXT:   te.yield %[[WORD]] : i32
// CHECK:      %[[RHS:.*]] = te.compute "matmul_bf16_rhs" (%[[K:.*]], %[[N:.*]]) -> tensor<4x16xi32> {
// CHECK-NEXT:   te.read %w[%[[K]], %[[N]]] : tensor<7x16xf32>
// CHECK:        te.yield %{{.*}} : i32
// CHECK:      te.compute "matmul" (%[[B:.*]], %[[R:.*]], %[[C:.*]]) reduce sum (%[[S:.*]] : 4) -> tensor<2x3x16xf32> {
// CHECK-NEXT:   %[[A:.*]] = te.read %[[LHS]][%[[B]], %[[R]], %[[S]]] : tensor<2x3x4xi32>
// CHECK-NEXT:   %[[BW:.*]] = te.read %[[RHS]][%[[S]], %[[C]]] : tensor<4x16xi32>
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[DOT:.*]] = llvmx.dot_bf16 %[[ZERO]], %[[A]], %[[BW]] : f32, i32
// CHECK-NEXT:   te.yield %[[DOT]] : f32

// CHECK:      te.compute "gemm_bf16_lhs" (%[[GI:.*]], %[[GW:.*]]) -> tensor<5x4xi32> {
// CHECK-NEXT:   te.read %a[%[[GW]], %[[GI]]] : tensor<7x5xf32>
// CHECK:      te.compute "gemm_bf16_rhs" (%[[GK:.*]], %[[GN:.*]]) -> tensor<4x16xi32> {
// CHECK-NEXT:   te.read %g[%[[GN]], %[[GK]]] : tensor<16x7xf32>
// CHECK:      %[[GEMM:.*]] = te.compute "gemm" ({{.*}}) reduce sum ({{.*}} : 4) -> tensor<5x16xf32> {
// CHECK:        llvmx.dot_bf16
// CHECK:      te.compute "gemm_bias" (%[[BI:.*]], %[[BJ:.*]]) -> tensor<5x16xf32> {
// CHECK-NEXT:   %[[SUM:.*]] = te.read %[[GEMM]][%[[BI]], %[[BJ]]] : tensor<5x16xf32>
// CHECK-NEXT:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[SCALED:.*]] = arith.mulf %[[SUM]], %[[HALF]] : f32
// CHECK-NEXT:   %[[BIAS:.*]] = te.read %c[%[[BJ]]] : tensor<16xf32>
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:   %[[BETA:.*]] = arith.mulf %[[BIAS]], %[[TWO]] : f32
// CHECK-NEXT:   arith.addf %[[SCALED]], %[[BETA]] : f32

// CHECK-NOT:  _bf16_
// CHECK:      te.compute "matmul" ({{.*}}) reduce sum ({{.*}} : 7) -> tensor<2x3x16xf32> {
// CHECK:        te.read %b
// CHECK-NEXT:   arith.mulf
// CHECK:      te.compute "matmul" ({{.*}}) reduce sum ({{.*}} : 7) -> tensor<2x3x16xf32> {
// CHECK:        te.read %w
// CHECK-NEXT:   arith.mulf
// CHECK-NOT:  llvmx.dot_bf16

// A MatMul of two activations (attention's scores: queries by keys, per batch and head) takes the form too: B's
// words "matmul_bf16_rhs" keep B's batch axes (computed per run: B is no weight), and "matmul" reads them at A's batch
// indices. A B batch broadcast against A's (1 against 2) stays float32.
func.func @batched(%q: tensor<2x3x5x7xf32>, %k: tensor<2x3x7x4xf32>, %s: tensor<1x3x7x4xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) {
  %t = graph.matmul %q, %k {minimlc.bf16_products} : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  %u = graph.matmul %q, %s {minimlc.bf16_products} : (tensor<2x3x5x7xf32>, tensor<1x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  func.return %t, %u : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK:       %[[LHS:.*]] = te.compute "matmul_bf16_lhs" ({{.*}}) -> tensor<2x3x5x4xi32> {
// CHECK:         llvmx.pack_bf16
// CHECK:       %[[RHS:.*]] = te.compute "matmul_bf16_rhs" (%[[B:[0-9]+]], %[[H:[0-9]+]], %[[W:[0-9]+]], %[[N:[0-9]+]]) -> tensor<2x3x4x4xi32> {
// CHECK-NEXT:    te.read %k[%[[B]], %[[H]], %[[W]], %[[N]]] : tensor<2x3x7x4xf32>
// CHECK:         llvmx.pack_bf16
// CHECK:       te.compute "matmul" (%[[I:[0-9]+]], %[[J:[0-9]+]], %[[R:[0-9]+]], %[[C:[0-9]+]]) reduce sum (%[[S:[0-9]+]] : 4) -> tensor<2x3x5x4xf32> {
// CHECK-NEXT:    %[[A:[0-9]+]] = te.read %[[LHS]][%[[I]], %[[J]], %[[R]], %[[S]]] : tensor<2x3x5x4xi32>
// CHECK-NEXT:    %[[BW:[0-9]+]] = te.read %[[RHS]][%[[I]], %[[J]], %[[S]], %[[C]]] : tensor<2x3x4x4xi32>
// CHECK:         llvmx.dot_bf16 %{{[0-9]+}}, %[[A]], %[[BW]] : f32, i32
// CHECK:       te.compute "matmul" ({{.*}}) reduce sum ({{.*}} : 7) -> tensor<2x3x5x4xf32> {
// CHECK-NOT:     llvmx
// CHECK:         arith.mulf
