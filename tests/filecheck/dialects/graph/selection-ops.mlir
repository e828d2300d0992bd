// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @selection(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>, %n: tensor<2x1xi32>, %r: tensor<2x4xf32>, %v: tensor<2xf32>, %c: tensor<5xi64>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<5x3xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<5xi64>) {
  %se = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %sn = graph.scatter_nd %x, %n, %r {reduction = "none"} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %gn = graph.gather_nd %x, %n {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  %oh = graph.one_hot %c, %v {axis = 1 : i64, depth = 3 : i64} : (tensor<5xi64>, tensor<2xf32>) -> tensor<5x3xf32>
  %tv, %ti = graph.top_k %x {axis = 1 : i64, k = 2 : i64, largest} : tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %cp = graph.cumprod %c {axis = 0 : i64, exclusive} : tensor<5xi64> -> tensor<5xi64>
  func.return %se, %sn, %gn, %oh, %tv, %ti, %cp : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<5x3xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<5xi64>
}

// CHECK:      func.func @selection
// CHECK-NEXT:   %se = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:   %sn = graph.scatter_nd %x, %n, %r {reduction = "none"} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:   %gn = graph.gather_nd %x, %n {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %oh = graph.one_hot %c, %v {axis = 1 : i64, depth = 3 : i64} : (tensor<5xi64>, tensor<2xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:   %tv, %ti = graph.top_k %x {axis = 1 : i64, k = 2 : i64, largest} : tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK-NEXT:   %cp = graph.cumprod %c {axis = 0 : i64, exclusive} : tensor<5xi64> -> tensor<5xi64>
// CHECK-NEXT:   func.return %se, %sn, %gn, %oh, %tv, %ti, %cp : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<5x3xf32>, tensor<3x2xf32>, tensor<3x2xi64>, tensor<5xi64>
