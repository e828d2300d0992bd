// RUN: not mini-opt %s 2>&1 | filecheck %s
// RUN: not mini-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=SPLIT

// Verifier errors point at the op's `file:line:col` (lines counted in the whole file, also with
// --split-input-file) and print the op.

func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %c = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// -----

func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      mini-opt: error: {{.*}}verifier-locations.mlir:8:3: graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible
// CHECK-NEXT: note: see current operation: %c = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>

// SPLIT:      mini-opt: error: {{.*}}verifier-locations.mlir:8:3: graph.add: operand shapes
// SPLIT:      mini-opt: error: {{.*}}verifier-locations.mlir:15:3: graph.softmax: axis 2 is out of range for rank 2
// SPLIT-NEXT: note: see current operation: %y = "graph.softmax"(%x) <{axis = 2 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
