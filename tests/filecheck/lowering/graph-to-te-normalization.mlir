// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

// Each op becomes the stages of one kernel (kernel_group): reductions into statistics that keep the reduced axes
// as 1 (layer and RMS normalisation) or hold one value per (sample, group), the inverse standard deviation (or root
// mean square), then the result reading them broadcast. Sums are divided by the count where they are read.

func.func @layer_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = graph.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @layer_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "layer_norm_mean" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 8) -> tensor<2x1xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<2x8xf32>
// CHECK-NEXT: te.yield %[[V4]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V5:[0-9]+]] = te.compute "layer_norm_var" (%[[V6:[0-9]+]], %[[V7:[0-9]+]]) reduce sum (%[[V8:[0-9]+]] : 8) -> tensor<2x1xf32> {
// CHECK-NEXT: %[[V9:[0-9]+]] = te.read %x[%[[V6]], %[[V8]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[V10:[0-9]+]] = te.read %[[V0]][%[[V6]], %[[V7]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.mulf %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.subf %[[V9]], %[[V12]] : f32
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.mulf %[[V13]], %[[V13]] : f32
// CHECK-NEXT: te.yield %[[V14]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V15:[0-9]+]] = te.compute "layer_norm_inv_std" (%[[V16:[0-9]+]], %[[V17:[0-9]+]]) -> tensor<2x1xf32> {
// CHECK-NEXT: %[[V18:[0-9]+]] = te.read %[[V5]][%[[V16]], %[[V17]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.addf %[[V20]], %[[V21]] : f32
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V24:[0-9]+]] = math.sqrt %[[V22]] : f32
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.divf %[[V23]], %[[V24]] : f32
// CHECK-NEXT: te.yield %[[V25]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V26:[0-9]+]] = te.compute "layer_norm" (%[[V27:[0-9]+]], %[[V28:[0-9]+]]) -> tensor<2x8xf32> {
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V30:[0-9]+]] = te.read %x[%[[V27]], %[[V28]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[V31:[0-9]+]] = te.read %[[V0]][%[[V27]], %[[V29]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V32:[0-9]+]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[V33:[0-9]+]] = arith.mulf %[[V31]], %[[V32]] : f32
// CHECK-NEXT: %[[V34:[0-9]+]] = arith.subf %[[V30]], %[[V33]] : f32
// CHECK-NEXT: %[[V35:[0-9]+]] = te.read %[[V15]][%[[V27]], %[[V29]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V36:[0-9]+]] = arith.mulf %[[V34]], %[[V35]] : f32
// CHECK-NEXT: %[[V37:[0-9]+]] = te.read %s[%[[V28]]] : tensor<8xf32>
// CHECK-NEXT: %[[V38:[0-9]+]] = arith.mulf %[[V36]], %[[V37]] : f32
// CHECK-NEXT: %[[V39:[0-9]+]] = te.read %b[%[[V28]]] : tensor<8xf32>
// CHECK-NEXT: %[[V40:[0-9]+]] = arith.addf %[[V38]], %[[V39]] : f32
// CHECK-NEXT: te.yield %[[V40]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: func.return %[[V26]] : tensor<2x8xf32>
// CHECK-NEXT: }

// -----

func.func @rms_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = graph.rms_norm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @rms_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "rms_norm_square_sum" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 8) -> tensor<2x1xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.mulf %[[V4]], %[[V4]] : f32
// CHECK-NEXT: te.yield %[[V5]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V6:[0-9]+]] = te.compute "rms_norm_inv_rms" (%[[V7:[0-9]+]], %[[V8:[0-9]+]]) -> tensor<2x1xf32> {
// CHECK-NEXT: %[[V9:[0-9]+]] = te.read %[[V0]][%[[V7]], %[[V8]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.mulf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.addf %[[V11]], %[[V12]] : f32
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V15:[0-9]+]] = math.sqrt %[[V13]] : f32
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.divf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: te.yield %[[V16]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V17:[0-9]+]] = te.compute "rms_norm" (%[[V18:[0-9]+]], %[[V19:[0-9]+]]) -> tensor<2x8xf32> {
// CHECK-NEXT: %[[V20:[0-9]+]] = te.read %x[%[[V18]], %[[V19]]] : tensor<2x8xf32>
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V22:[0-9]+]] = te.read %[[V6]][%[[V18]], %[[V21]]] : tensor<2x1xf32>
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.mulf %[[V20]], %[[V22]] : f32
// CHECK-NEXT: %[[V24:[0-9]+]] = te.read %s[%[[V19]]] : tensor<8xf32>
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.mulf %[[V23]], %[[V24]] : f32
// CHECK-NEXT: te.yield %[[V25]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: func.return %[[V17]] : tensor<2x8xf32>
// CHECK-NEXT: }

// -----

func.func @group_norm(%x: tensor<1x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x3xf32> {
  %0 = graph.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3xf32>
  func.return %0 : tensor<1x4x3xf32>
}

// CHECK-LABEL: func.func @group_norm(%x: tensor<1x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "group_norm_mean" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 2, %[[V4:[0-9]+]] : 3) -> tensor<1x2xf32> {
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.muli %[[V2]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.addi %[[V6]], %[[V3]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = te.read %x[%[[V1]], %[[V7]], %[[V4]]] : tensor<1x4x3xf32>
// CHECK-NEXT: te.yield %[[V8]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V9:[0-9]+]] = te.compute "group_norm_var" (%[[V10:[0-9]+]], %[[V11:[0-9]+]]) reduce sum (%[[V12:[0-9]+]] : 2, %[[V13:[0-9]+]] : 3) -> tensor<1x2xf32> {
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.muli %[[V11]], %[[V14]] : index
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.addi %[[V15]], %[[V12]] : index
// CHECK-NEXT: %[[V17:[0-9]+]] = te.read %x[%[[V10]], %[[V16]], %[[V13]]] : tensor<1x4x3xf32>
// CHECK-NEXT: %[[V18:[0-9]+]] = te.read %[[V0]][%[[V10]], %[[V11]]] : tensor<1x2xf32>
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.constant 0.166666672 : f32
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.subf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.mulf %[[V21]], %[[V21]] : f32
// CHECK-NEXT: te.yield %[[V22]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V23:[0-9]+]] = te.compute "group_norm_inv_std" (%[[V24:[0-9]+]], %[[V25:[0-9]+]]) -> tensor<1x2xf32> {
// CHECK-NEXT: %[[V26:[0-9]+]] = te.read %[[V9]][%[[V24]], %[[V25]]] : tensor<1x2xf32>
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.constant 0.166666672 : f32
// CHECK-NEXT: %[[V28:[0-9]+]] = arith.mulf %[[V26]], %[[V27]] : f32
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT: %[[V30:[0-9]+]] = arith.addf %[[V28]], %[[V29]] : f32
// CHECK-NEXT: %[[V31:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V32:[0-9]+]] = math.sqrt %[[V30]] : f32
// CHECK-NEXT: %[[V33:[0-9]+]] = arith.divf %[[V31]], %[[V32]] : f32
// CHECK-NEXT: te.yield %[[V33]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V34:[0-9]+]] = te.compute "group_norm" (%[[V35:[0-9]+]], %[[V36:[0-9]+]], %[[V37:[0-9]+]]) -> tensor<1x4x3xf32> {
// CHECK-NEXT: %[[V38:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V39:[0-9]+]] = arith.divui %[[V36]], %[[V38]] : index
// CHECK-NEXT: %[[V40:[0-9]+]] = te.read %x[%[[V35]], %[[V36]], %[[V37]]] : tensor<1x4x3xf32>
// CHECK-NEXT: %[[V41:[0-9]+]] = te.read %[[V0]][%[[V35]], %[[V39]]] : tensor<1x2xf32>
// CHECK-NEXT: %[[V42:[0-9]+]] = arith.constant 0.166666672 : f32
// CHECK-NEXT: %[[V43:[0-9]+]] = arith.mulf %[[V41]], %[[V42]] : f32
// CHECK-NEXT: %[[V44:[0-9]+]] = arith.subf %[[V40]], %[[V43]] : f32
// CHECK-NEXT: %[[V45:[0-9]+]] = te.read %[[V23]][%[[V35]], %[[V39]]] : tensor<1x2xf32>
// CHECK-NEXT: %[[V46:[0-9]+]] = arith.mulf %[[V44]], %[[V45]] : f32
// CHECK-NEXT: %[[V47:[0-9]+]] = te.read %s[%[[V36]]] : tensor<4xf32>
// CHECK-NEXT: %[[V48:[0-9]+]] = arith.mulf %[[V46]], %[[V47]] : f32
// CHECK-NEXT: %[[V49:[0-9]+]] = te.read %b[%[[V36]]] : tensor<4xf32>
// CHECK-NEXT: %[[V50:[0-9]+]] = arith.addf %[[V48]], %[[V49]] : f32
// CHECK-NEXT: te.yield %[[V50]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: func.return %[[V34]] : tensor<1x4x3xf32>
// CHECK-NEXT: }
