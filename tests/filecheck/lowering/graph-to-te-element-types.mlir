// RUN: mini-opt %s -p graph-to-te | filecheck %s

// Unsigned tensors pick the unsigned ops: division (0 for a zero divisor), comparison, and conversion to float.
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %q = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %l = graph.less %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %f = graph.cast %a : tensor<4xui8> -> tensor<4xf32>
  func.return %q, %l, %f : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// CHECK-LABEL: func.func @unsigned
// CHECK:         %q = te.compute "div" (%{{.*}}) -> tensor<4xui8> {
// CHECK:           arith.divui %{{.*}}, %{{.*}} : ui8
// CHECK:         %l = te.compute "less" (%{{.*}}) -> tensor<4xi1> {
// CHECK:           arith.cmpi ult, %{{.*}}, %{{.*}} : ui8
// CHECK:         %f = te.compute "cast" (%{{.*}}) -> tensor<4xf32> {
// CHECK:           arith.uitofp %{{.*}} : ui8 to f32
