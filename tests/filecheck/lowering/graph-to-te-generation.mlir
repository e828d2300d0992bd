// RUN: mini-opt %s -p graph-to-te | filecheck %s

// EyeLike reads nothing: each element is 1 where its column is its row plus k, else 0.

func.func @eye() -> tensor<2x3xi64> {
  %0 = graph.eye {k = -1 : i64} : tensor<2x3xi64>
  func.return %0 : tensor<2x3xi64>
}

// CHECK-LABEL: func.func @eye() -> tensor<2x3xi64> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "eye" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xi64> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant -1 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.addi %[[V1]], %[[V3]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpi eq, %[[V2]], %[[V4]] : index
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V6]], %[[V7]] : i64
// CHECK-NEXT:     te.yield %[[V8]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xi64>
// CHECK-NEXT: }
