// RUN: mini-opt %s -p graph-simplify | filecheck %s

// Reshapes with `?` dimensions stay: `tensor<?x?xf32>` to `tensor<?x?xf32>` may swap the sizes ([b, s] to [s, b]), and
// a reshape of a reshape keeps its own ONNX target, which speaks of its own input's dimensions.

func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x8xf32>) {
  %0 = graph.reshape %x {shape = array<i64: -1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = graph.reshape %x {shape = array<i64: -1, 4>} : tensor<?x?xf32> -> tensor<?x4xf32>
  %2 = graph.reshape %1 {shape = array<i64: -1, 8>} : tensor<?x4xf32> -> tensor<?x8xf32>
  func.return %0, %2 : tensor<?x?xf32>, tensor<?x8xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x8xf32>) {
// CHECK-NEXT:     %0 = graph.reshape %x {shape = array<i64: -1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:     %1 = graph.reshape %x {shape = array<i64: -1, 4>} : tensor<?x?xf32> -> tensor<?x4xf32>
// CHECK-NEXT:     %2 = graph.reshape %1 {shape = array<i64: -1, 8>} : tensor<?x4xf32> -> tensor<?x8xf32>
// CHECK-NEXT:     func.return %0, %2 : tensor<?x?xf32>, tensor<?x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
