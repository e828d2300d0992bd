// RUN: mini-opt %s --mcpu=znver4 -p graph-to-te,te-channels-last | filecheck %s

// Integer convolutions in the dot-product form: each one's output ("conv_integer_output") is stored channels-last,
// and so is the elementwise chain after it, to its end: the cast between them feeds the second convolution's
// packed input (read channels-last: four contiguous channels per word), and the cast after the second one, a
// function result, is copied back to NCHW once.
func.func @chain(%x: tensor<1x16x4x4xui8>, %xz: tensor<1xui8>) -> tensor<1x16x4x4xui8> {
  %w = graph.weight "w" : tensor<16x16x3x3xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %a = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x16x4x4xui8>, tensor<16x16x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  %qa = graph.cast %a : tensor<1x16x4x4xi32> -> tensor<1x16x4x4xui8>
  %b = graph.conv_integer %qa, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x16x4x4xui8>, tensor<16x16x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  %qb = graph.cast %b : tensor<1x16x4x4xi32> -> tensor<1x16x4x4xui8>
  func.return %qb : tensor<1x16x4x4xui8>
}

// CHECK-LABEL: func.func @chain
// CHECK:       %[[A:.*]] = te.compute "conv_integer_output" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x4x4x16xi32> {
// CHECK:       %[[QA:.*]] = te.compute "cast" (%[[N:[0-9]+]], %[[H:[0-9]+]], %[[W:[0-9]+]], %[[C:[0-9]+]]) -> tensor<1x4x4x16xui8> {
// CHECK-NEXT:    %{{[0-9]+}} = te.read %[[A]][%[[N]], %[[H]], %[[W]], %[[C]]] : tensor<1x4x4x16xi32>
// CHECK:       te.compute "conv_integer_input" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x6x6x4xi32> {
// CHECK:         te.read %[[QA]][%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}] : tensor<1x4x4x16xui8>
// CHECK:       %[[B:.*]] = te.compute "conv_integer_output" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x4x4x16xi32> {
// CHECK:       %[[QB:.*]] = te.compute "cast" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x4x4x16xui8> {
// CHECK:       %[[BACK:.*]] = te.compute "channels_last_to_nchw" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x16x4x4xui8> {
// CHECK:       func.return %[[BACK]] : tensor<1x16x4x4xui8>
