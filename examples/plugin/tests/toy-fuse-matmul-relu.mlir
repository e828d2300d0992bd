// RUN: mini-opt --load-plugin minimlc_toy %s -p toy-fuse-matmul-relu | filecheck %s
// RUN: mini-opt --load-plugin minimlc_toy %s -p toy-fuse-matmul-relu,toy-to-graph | filecheck %s --check-prefix=BACK

func.func @fused(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %m = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %y = graph.relu %m : tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @fused
// CHECK-NEXT:  %[[Y:.+]] = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x8xf32>

// BACK-LABEL: func.func @fused
// BACK-NEXT:  %[[M:.+]] = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
// BACK-NEXT:  %[[R:.+]] = graph.relu %[[M]] : tensor<2x8xf32>
// BACK-NEXT:  func.return %[[R]] : tensor<2x8xf32>

// The matmul has a second user: fusing would compute it twice, so nothing changes.
func.func @shared(%a: tensor<2x4xf32>, %b: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %m = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %y = graph.relu %m : tensor<2x8xf32>
  func.return %y, %m : tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:  %m = graph.matmul %a, %b
// CHECK-NEXT:  %y = graph.relu %m
// CHECK-NEXT:  func.return %y, %m
