// RUN: mini-opt %s -p graph-to-te,te-inline,te-to-loop | filecheck %s

// A product marked `exact` (DequantizeLinear's) keeps its mark through graph-to-te and gets no `contract` in
// te-to-loop, so LLVM cannot fuse it into the add that reads it; the unmarked product does get `contract`.
func.func @dequantized_sum(%a: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %x = graph.mul %a, %s {exact} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = graph.mul %b, %s : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %z = graph.add %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %z : tensor<8xf32>
}

// CHECK:      %[[X:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} {exact} : f32
// CHECK:      %[[Y:[0-9]+]] = arith.mulf %{{[0-9]+}}, %{{[0-9]+}} fastmath<contract> : f32
// CHECK-NEXT: arith.addf %[[X]], %[[Y]] fastmath<contract> : f32
