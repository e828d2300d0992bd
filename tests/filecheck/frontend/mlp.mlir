// RUN: %python %S/make_onnx.py mlp %t.onnx
// RUN: mini-opt %t.onnx | filecheck %s
// RUN: mini-opt %t.onnx | mini-opt | filecheck %s

// The ONNX importer: weights become graph.weight handles named after their initializers, value names come from
// ONNX names ("input.1" -> %input, "fc0/weight:0" -> %fc0_weight), Flatten and Reshape (with a Constant shape) become
// graph.reshape, and every shape is static.

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%input: tensor<2x3x4xf32>) -> tensor<2x2x3xf32> {
// CHECK-NEXT:     %flat = graph.reshape %input : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK-NEXT:     %fc0_weight = graph.weight "fc0/weight:0" : tensor<8x12xf32>
// CHECK-NEXT:     %fc0_bias = graph.weight "fc0.bias" : tensor<8xf32>
// CHECK-NEXT:     %hidden = graph.gemm %flat, %fc0_weight, %fc0_bias {trans_b} : (tensor<2x12xf32>, tensor<8x12xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:     %act = graph.relu %hidden : tensor<2x8xf32>
// CHECK-NEXT:     %fc1_weight = graph.weight "fc1.weight" : tensor<8x6xf32>
// CHECK-NEXT:     %mm = graph.matmul %act, %fc1_weight : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:     %fc1_bias = graph.weight "fc1.bias" : tensor<6xf32>
// CHECK-NEXT:     %logits = graph.add %mm, %fc1_bias : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:     %grid = graph.reshape %logits : tensor<2x6xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:     %swapped = graph.transpose %grid {perm = array<i64: 0, 2, 1>} : tensor<2x3x2xf32> -> tensor<2x2x3xf32>
// CHECK-NEXT:     %probs = graph.softmax %swapped {axis = 1 : i64} : tensor<2x2x3xf32>
// CHECK-NEXT:     func.return %probs : tensor<2x2x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
