// RUN: %python %S/make_qdq_onnx.py %t.onnx
// RUN: mini-opt %t.onnx | filecheck %s

// QDQ fusion at import (frontend/onnx_qdq_fusion.py): DQ(x_q), DQ(W int8), DQ(b int32) -> Conv -> Relu -> Q becomes
// one graph.conv_integer on the 8-bit input and weight (the weight stays int8, its zero point a static 0), the int32
// bias added, and one requantization by (s_x * s_w) / s_y; the Relu is dropped (the Q's zero point is uint8's 0).
// No float convolution, no dequantized weight, no Relu is left.

// CHECK:      func.func @main(%x: tensor<1x3x6x6xf32>) -> tensor<1x4x6x6xf32> {
// CHECK:        %[[XQ:.*]] = graph.cast %{{.*}} : tensor<1x3x6x6xf32> -> tensor<1x3x6x6xui8>
// CHECK:        %[[W:.*]] = graph.weight "w" : tensor<4x3x3x3xi8>
// CHECK:        %[[ACC:.*]] = graph.conv_integer %[[XQ]], %[[W]], %{{.*}}, %{{.*}} {{{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}}} : (tensor<1x3x6x6xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x4x6x6xi32>
// CHECK:        %[[B:.*]] = graph.weight "b" : tensor<4xi32>
// CHECK:        %[[BIAS:.*]] = graph.reshape %[[B]] : tensor<4xi32> -> tensor<4x1x1xi32>
// CHECK:        %[[SUM:.*]] = graph.add %[[ACC]], %[[BIAS]] : (tensor<1x4x6x6xi32>, tensor<4x1x1xi32>) -> tensor<1x4x6x6xi32>
// CHECK:        %[[FLOAT:.*]] = graph.cast %[[SUM]] : tensor<1x4x6x6xi32> -> tensor<1x4x6x6xf32>
// CHECK:        graph.mul %[[FLOAT]], %{{.*}} : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
// CHECK:        graph.round
// CHECK:        graph.cast %{{.*}} : tensor<1x4x6x6xf32> -> tensor<1x4x6x6xui8>
// CHECK:        func.return
// CHECK-NOT:  graph.conv {{.*}}f32
// CHECK-NOT:  graph.relu

// The same checks on the whole output: no float convolution and no Relu anywhere.
// RUN: mini-opt %t.onnx | filecheck %s --check-prefix=NONE
// NONE-NOT:   graph.conv %
// NONE-NOT:   graph.relu
// NONE-NOT:   tensor<4x3x3x3xf32>
