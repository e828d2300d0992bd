// RUN: mini-opt %s -p graph-to-te | filecheck %s

// graph.attention becomes the six stages of one kernel (kernel_group), all indexed by the rows (batch axes and
// query) first: the scores (a dot product over the head size), the row maximum and the exponentials of the scaled,
// biased scores, their sum, the context (a dot product over the keys with the transposed values) and the context
// divided by the sum.

func.func @attention(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>, %b: tensor<8x6xf32>) -> tensor<2x8x5xf32> {
  %y = graph.attention %q, %k, %vt, %s, %b : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>, tensor<8x6xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// CHECK-LABEL: func.func @attention(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>, %b: tensor<8x6xf32>) -> tensor<2x8x5xf32> {
// CHECK-NEXT: %y = te.compute "attention_scores" (%[[V0:[0-9]+]], %[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<2x8x6xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = te.read %q[%[[V0]], %[[V1]], %[[V3]]] : tensor<2x8x4xf32>
// CHECK-NEXT: %[[V5:[0-9]+]] = te.read %k[%[[V0]], %[[V2]], %[[V3]]] : tensor<2x6x4xf32>
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT: te.yield %[[V6]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %y_1 = te.compute "attention_max" (%[[V7:[0-9]+]], %[[V8:[0-9]+]], %[[V9:[0-9]+]]) reduce max_nnan (%[[V10:[0-9]+]] : 6) -> tensor<2x8x1xf32> {
// CHECK-NEXT: %[[V11:[0-9]+]] = te.read %y[%[[V7]], %[[V8]], %[[V10]]] : tensor<2x8x6xf32>
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V13:[0-9]+]] = te.read %s[%[[V12]]] : tensor<1xf32>
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.mulf %[[V11]], %[[V13]] : f32
// CHECK-NEXT: %[[V15:[0-9]+]] = te.read %b[%[[V8]], %[[V10]]] : tensor<8x6xf32>
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.addf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: te.yield %[[V16]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %y_2 = te.compute "attention_exp" (%[[V17:[0-9]+]], %[[V18:[0-9]+]], %[[V19:[0-9]+]]) -> tensor<2x8x6xf32> {
// CHECK-NEXT: %[[V20:[0-9]+]] = te.read %y[%[[V17]], %[[V18]], %[[V19]]] : tensor<2x8x6xf32>
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V22:[0-9]+]] = te.read %s[%[[V21]]] : tensor<1xf32>
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.mulf %[[V20]], %[[V22]] : f32
// CHECK-NEXT: %[[V24:[0-9]+]] = te.read %b[%[[V18]], %[[V19]]] : tensor<8x6xf32>
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.addf %[[V23]], %[[V24]] : f32
// CHECK-NEXT: %[[V26:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V27:[0-9]+]] = te.read %y_1[%[[V17]], %[[V18]], %[[V26]]] : tensor<2x8x1xf32>
// CHECK-NEXT: %[[V28:[0-9]+]] = arith.subf %[[V25]], %[[V27]] : f32
// CHECK-NEXT: %[[V29:[0-9]+]] = math.exp %[[V28]] : f32
// CHECK-NEXT: te.yield %[[V29]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %y_3 = te.compute "attention_sum" (%[[V30:[0-9]+]], %[[V31:[0-9]+]], %[[V32:[0-9]+]]) reduce sum (%[[V33:[0-9]+]] : 6) -> tensor<2x8x1xf32> {
// CHECK-NEXT: %[[V34:[0-9]+]] = te.read %y_2[%[[V30]], %[[V31]], %[[V33]]] : tensor<2x8x6xf32>
// CHECK-NEXT: te.yield %[[V34]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %y_4 = te.compute "attention_context" (%[[V35:[0-9]+]], %[[V36:[0-9]+]], %[[V37:[0-9]+]]) reduce sum (%[[V38:[0-9]+]] : 6) -> tensor<2x8x5xf32> {
// CHECK-NEXT: %[[V39:[0-9]+]] = te.read %y_2[%[[V35]], %[[V36]], %[[V38]]] : tensor<2x8x6xf32>
// CHECK-NEXT: %[[V40:[0-9]+]] = te.read %vt[%[[V35]], %[[V37]], %[[V38]]] : tensor<2x5x6xf32>
// CHECK-NEXT: %[[V41:[0-9]+]] = arith.mulf %[[V39]], %[[V40]] : f32
// CHECK-NEXT: te.yield %[[V41]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %y_5 = te.compute "attention" (%[[V42:[0-9]+]], %[[V43:[0-9]+]], %[[V44:[0-9]+]]) -> tensor<2x8x5xf32> {
// CHECK-NEXT: %[[V45:[0-9]+]] = te.read %y_4[%[[V42]], %[[V43]], %[[V44]]] : tensor<2x8x5xf32>
// CHECK-NEXT: %[[V46:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V47:[0-9]+]] = te.read %y_3[%[[V42]], %[[V43]], %[[V46]]] : tensor<2x8x1xf32>
// CHECK-NEXT: %[[V48:[0-9]+]] = arith.divf %[[V45]], %[[V47]] : f32
// CHECK-NEXT: te.yield %[[V48]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: func.return %y_5 : tensor<2x8x5xf32>
// CHECK-NEXT: }
