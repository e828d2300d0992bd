// RUN: mini-opt --load-plugin minimlc_toy %s -p toy-to-graph | filecheck %s
// RUN: mini-opt --load-plugin minimlc_toy %s -p 'toy-to-graph{expand-gelu=true}' | filecheck %s --check-prefix=EXPAND

func.func @toy(%x: tensor<2x8xf32>, %a: tensor<2x4xf32>, %b: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %g = toy.gelu %x : tensor<2x8xf32>
  %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  func.return %g, %y : tensor<2x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @toy
// CHECK-NEXT:  %[[G:.+]] = graph.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
// CHECK-NEXT:  %[[M:.+]] = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:  %[[R:.+]] = graph.relu %[[M]] : tensor<2x8xf32>
// CHECK-NEXT:  func.return %[[G]], %[[R]] : tensor<2x8xf32>, tensor<2x8xf32>

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), one graph op at a time.
// EXPAND-LABEL: func.func @toy
// EXPAND-NEXT:  %[[X2:.+]] = graph.mul %x, %x
// EXPAND-NEXT:  %[[X3:.+]] = graph.mul %[[X2]], %x
// EXPAND-NEXT:  %[[C0:.+]] = graph.constant {value = 4.471500e-02 : f32} : tensor<2x8xf32>
// EXPAND-NEXT:  %[[T0:.+]] = graph.mul %[[C0]], %[[X3]]
// EXPAND-NEXT:  %[[T1:.+]] = graph.add %x, %[[T0]]
// EXPAND-NEXT:  %[[C1:.+]] = graph.constant {value = 0.797884583 : f32} : tensor<2x8xf32>
// EXPAND-NEXT:  %[[T2:.+]] = graph.mul %[[C1]], %[[T1]]
// EXPAND-NEXT:  %[[T3:.+]] = graph.tanh %[[T2]] : tensor<2x8xf32>
// EXPAND-NEXT:  %[[C2:.+]] = graph.constant {value = 1.000000e+00 : f32} : tensor<2x8xf32>
// EXPAND-NEXT:  %[[T4:.+]] = graph.add %[[C2]], %[[T3]]
// EXPAND-NEXT:  %[[C3:.+]] = graph.constant {value = 5.000000e-01 : f32} : tensor<2x8xf32>
// EXPAND-NEXT:  %[[T5:.+]] = graph.mul %[[C3]], %x
// EXPAND-NEXT:  %[[G:.+]] = graph.mul %[[T5]], %[[T4]]
// EXPAND-NEXT:  %[[M:.+]] = graph.matmul %a, %b
// EXPAND-NEXT:  %[[R:.+]] = graph.relu %[[M]]
// EXPAND-NEXT:  func.return %[[G]], %[[R]]
