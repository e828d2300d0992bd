// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @bits(%a: tensor<2x4xui8>, %b: tensor<4xui8>, %s: tensor<4xi32>, %f: tensor<4xf32>, %h: tensor<4xf16>) -> tensor<4xi1> {
  %and = graph.and %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
  %or = graph.or %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
  %xor = graph.xor %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
  %not = graph.not %s : tensor<4xi32>
  %left = graph.shift_left %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
  %right = graph.shift_right %s, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %bits = graph.bitcast %f : tensor<4xf32> -> tensor<4xi32>
  %half = graph.bitcast %h : tensor<4xf16> -> tensor<4xui16>
  %nan = graph.is_nan %f : tensor<4xf32> -> tensor<4xi1>
  %inf = graph.is_inf %f {positive} : tensor<4xf32> -> tensor<4xi1>
  func.return %inf : tensor<4xi1>
}

// CHECK:      %and = graph.and %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
// CHECK-NEXT: %or = graph.or %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
// CHECK-NEXT: %xor = graph.xor %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
// CHECK-NEXT: %not = graph.not %s : tensor<4xi32>
// CHECK-NEXT: %left = graph.shift_left %a, %b : (tensor<2x4xui8>, tensor<4xui8>) -> tensor<2x4xui8>
// CHECK-NEXT: %right = graph.shift_right %s, %s : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %bits = graph.bitcast %f : tensor<4xf32> -> tensor<4xi32>
// CHECK-NEXT: %half = graph.bitcast %h : tensor<4xf16> -> tensor<4xui16>
// CHECK-NEXT: %nan = graph.is_nan %f : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT: %inf = graph.is_inf %f {positive} : tensor<4xf32> -> tensor<4xi1>
