// RUN: mini-opt %s -p graph-simplify | filecheck %s

func.func @noop_reshape_and_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = graph.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %b = graph.transpose %a {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %b : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @noop_reshape_and_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>

func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %a = graph.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %b = graph.reshape %a : tensor<24xf32> -> tensor<6x4xf32>
  %c = graph.reshape %b : tensor<6x4xf32> -> tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @reshape_chain(
// CHECK-NEXT:    %{{.*}} = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return

func.func @reshape_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %b = graph.reshape %a : tensor<6xf32> -> tensor<2x3xf32>
  func.return %b : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape_roundtrip(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>

func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = graph.transpose %a {perm = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  %c = graph.transpose %b {perm = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  func.return %b, %c : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @transpose_chain(
// CHECK-NEXT:    %{{.*}} = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %{{.*}}, %x : tensor<4x2x3xf32>, tensor<2x3x4xf32>

func.func @kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %a : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK-NEXT:    graph.transpose %x {perm = array<i64: 1, 0>}
