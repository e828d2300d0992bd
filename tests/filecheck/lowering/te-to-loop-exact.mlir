// RUN: mini-opt %s -p graph-to-te,te-inline,te-to-loop | filecheck %s

// A product marked `exact` (DequantizeLinear's) keeps its mark through graph-to-te and gets no `contract` in
// te-to-loop, and neither does the add that reads it: a code generator may fuse on the add's flag alone (AArch64's
// machine combiner does), which would round once where x86 rounds twice. Unmarked products and their adds contract.
func.func @dequantized_sum(%a: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %x = graph.mul %a, %s {exact} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = graph.mul %b, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %z = graph.add %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %z : tensor<8xf32>
}

// CHECK-LABEL: func.func private @add_
// CHECK:      %[[X:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} {exact} : f32
// CHECK:      %[[Y:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: arith.addf %[[X]], %[[Y]] : f32

func.func @scaled_sum(%a: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %x = graph.mul %a, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %z = graph.add %x, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %z : tensor<8xf32>
}

// CHECK-LABEL: func.func private @add_
// CHECK:      %[[P:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} fastmath<contract> : f32
// CHECK:      arith.addf %[[P]], %{{[0-9]+}} fastmath<contract> : f32
