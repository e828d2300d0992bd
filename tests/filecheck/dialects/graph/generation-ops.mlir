// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @generation() -> (tensor<3x4xf32>, tensor<2x2xi1>) {
  %eye = graph.eye {k = 1 : i64} : tensor<3x4xf32>
  %diagonal = graph.eye {k = 0 : i64} : tensor<2x2xi1>
  func.return %eye, %diagonal : tensor<3x4xf32>, tensor<2x2xi1>
}

// CHECK:      func.func @generation
// CHECK-NEXT:   %eye = graph.eye {k = 1 : i64} : tensor<3x4xf32>
// CHECK-NEXT:   %diagonal = graph.eye {k = 0 : i64} : tensor<2x2xi1>
// CHECK-NEXT:   func.return %eye, %diagonal
