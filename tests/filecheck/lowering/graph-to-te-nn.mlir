// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

func.func @conv_padded_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = graph.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}

// CHECK-LABEL: func.func @conv_padded_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "conv" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]], %[[V4:[0-9]+]]) reduce sum (%[[V5:[0-9]+]] : 2, %[[V6:[0-9]+]] : 3, %[[V7:[0-9]+]] : 3) -> tensor<1x4x2x2xf32> {
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.muli %[[V3]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.subi %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.addi %[[V11]], %[[V6]] : index
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.cmpi sge, %[[V12]], %[[V13]] : index
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.maxsi %[[V12]], %[[V15]] : index
// CHECK-NEXT: %[[V17:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V18:[0-9]+]] = arith.muli %[[V4]], %[[V17]] : index
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.addi %[[V18]], %[[V7]] : index
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.cmpi slt, %[[V19]], %[[V20]] : index
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.andi %[[V14]], %[[V21]] : i1
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V24:[0-9]+]] = arith.minsi %[[V19]], %[[V23]] : index
// CHECK-NEXT: %[[V25:[0-9]+]] = te.read %x[%[[V1]], %[[V5]], %[[V16]], %[[V24]]] : tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[V26:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.select %[[V22]], %[[V25]], %[[V26]] : f32
// CHECK-NEXT: %[[V28:[0-9]+]] = te.read %w[%[[V2]], %[[V5]], %[[V6]], %[[V7]]] : tensor<4x2x3x3xf32>
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.mulf %[[V27]], %[[V28]] : f32
// CHECK-NEXT: te.yield %[[V29]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V30:[0-9]+]] = te.compute "conv_bias" (%[[V31:[0-9]+]], %[[V32:[0-9]+]], %[[V33:[0-9]+]], %[[V34:[0-9]+]]) -> tensor<1x4x2x2xf32> {
// CHECK-NEXT: %[[V35:[0-9]+]] = te.read %[[V0]][%[[V31]], %[[V32]], %[[V33]], %[[V34]]] : tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[V36:[0-9]+]] = te.read %b[%[[V32]]] : tensor<4xf32>
// CHECK-NEXT: %[[V37:[0-9]+]] = arith.addf %[[V35]], %[[V36]] : f32
// CHECK-NEXT: te.yield %[[V37]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V30]] : tensor<1x4x2x2xf32>
// CHECK-NEXT: }

// -----

func.func @conv_grouped(%x: tensor<1x4x5xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x6x3xf32> {
  %0 = graph.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 2 : i64} : (tensor<1x4x5xf32>, tensor<6x2x3xf32>) -> tensor<1x6x3xf32>
  func.return %0 : tensor<1x6x3xf32>
}

// CHECK-LABEL: func.func @conv_grouped(%x: tensor<1x4x5xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x6x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "conv" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce sum (%[[V4:[0-9]+]] : 2, %[[V5:[0-9]+]] : 3) -> tensor<1x6x3xf32> {
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.divui %[[V2]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.muli %[[V7]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.addi %[[V9]], %[[V4]] : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.addi %[[V3]], %[[V5]] : index
// CHECK-NEXT: %[[V12:[0-9]+]] = te.read %x[%[[V1]], %[[V10]], %[[V11]]] : tensor<1x4x5xf32>
// CHECK-NEXT: %[[V13:[0-9]+]] = te.read %w[%[[V2]], %[[V4]], %[[V5]]] : tensor<6x2x3xf32>
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: te.yield %[[V14]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<1x6x3xf32>
// CHECK-NEXT: }

// -----

func.func @conv_depthwise(%x: tensor<1x3x5xf32>, %w: tensor<3x1x3xf32>) -> tensor<1x3x2xf32> {
  %0 = graph.conv %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 3 : i64} : (tensor<1x3x5xf32>, tensor<3x1x3xf32>) -> tensor<1x3x2xf32>
  func.return %0 : tensor<1x3x2xf32>
}

// CHECK-LABEL: func.func @conv_depthwise(%x: tensor<1x3x5xf32>, %w: tensor<3x1x3xf32>) -> tensor<1x3x2xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "depthwise_conv" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce sum (%[[V4:[0-9]+]] : 1, %[[V5:[0-9]+]] : 3) -> tensor<1x3x2xf32> {
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.muli %[[V3]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.addi %[[V7]], %[[V5]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = te.read %x[%[[V1]], %[[V2]], %[[V8]]] : tensor<1x3x5xf32>
// CHECK-NEXT: %[[V10:[0-9]+]] = te.read %w[%[[V2]], %[[V4]], %[[V5]]] : tensor<3x1x3xf32>
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.mulf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: te.yield %[[V11]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<1x3x2xf32>
// CHECK-NEXT: }

// -----

func.func @max_pool(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
  %0 = graph.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @max_pool(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "max_pool" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce maxnum (%[[V4:[0-9]+]] : 3) -> tensor<1x2x3xf32> {
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.muli %[[V3]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.subi %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.addi %[[V8]], %[[V4]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.cmpi sge, %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.cmpi slt, %[[V9]], %[[V12]] : index
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.andi %[[V11]], %[[V13]] : i1
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.maxsi %[[V9]], %[[V15]] : index
// CHECK-NEXT: %[[V17:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V18:[0-9]+]] = arith.minsi %[[V16]], %[[V17]] : index
// CHECK-NEXT: %[[V19:[0-9]+]] = te.read %x[%[[V1]], %[[V2]], %[[V18]]] : tensor<1x2x5xf32>
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.select %[[V14]], %[[V19]], %[[V20]] : f32
// CHECK-NEXT: te.yield %[[V21]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<1x2x3xf32>
// CHECK-NEXT: }

// -----

func.func @average_pool_uniform(%x: tensor<1x2x4xf32>) -> tensor<1x2x2xf32> {
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : tensor<1x2x4xf32> -> tensor<1x2x2xf32>
  func.return %0 : tensor<1x2x2xf32>
}

// CHECK-LABEL: func.func @average_pool_uniform(%x: tensor<1x2x4xf32>) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "avg_pool_sum" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce sum (%[[V4:[0-9]+]] : 2) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.muli %[[V3]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.addi %[[V6]], %[[V4]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = te.read %x[%[[V1]], %[[V2]], %[[V7]]] : tensor<1x2x4xf32>
// CHECK-NEXT: te.yield %[[V8]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V9:[0-9]+]] = te.compute "avg_pool" (%[[V10:[0-9]+]], %[[V11:[0-9]+]], %[[V12:[0-9]+]]) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V13:[0-9]+]] = te.read %[[V0]][%[[V10]], %[[V11]], %[[V12]]] : tensor<1x2x2xf32>
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.divf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: te.yield %[[V15]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V9]] : tensor<1x2x2xf32>
// CHECK-NEXT: }

// -----

func.func @average_pool_counted(%x: tensor<1x2x4xf32>) -> tensor<1x2x2xf32> {
  %0 = graph.average_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 0>, dilations = array<i64: 1>} : tensor<1x2x4xf32> -> tensor<1x2x2xf32>
  func.return %0 : tensor<1x2x2xf32>
}

// CHECK-LABEL: func.func @average_pool_counted(%x: tensor<1x2x4xf32>) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "avg_pool_sum" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce sum (%[[V4:[0-9]+]] : 3) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.muli %[[V3]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.subi %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.addi %[[V8]], %[[V4]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.cmpi sge, %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.maxsi %[[V9]], %[[V12]] : index
// CHECK-NEXT: %[[V14:[0-9]+]] = te.read %x[%[[V1]], %[[V2]], %[[V13]]] : tensor<1x2x4xf32>
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.select %[[V11]], %[[V14]], %[[V15]] : f32
// CHECK-NEXT: te.yield %[[V16]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V17:[0-9]+]] = te.compute "avg_pool_count" (%[[V18:[0-9]+]]) reduce sum (%[[V19:[0-9]+]] : 3) -> tensor<2xf32> {
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.muli %[[V18]], %[[V20]] : index
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.subi %[[V21]], %[[V22]] : index
// CHECK-NEXT: %[[V24:[0-9]+]] = arith.addi %[[V23]], %[[V19]] : index
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V26:[0-9]+]] = arith.cmpi sge, %[[V24]], %[[V25]] : index
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V28:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.select %[[V26]], %[[V27]], %[[V28]] : f32
// CHECK-NEXT: te.yield %[[V29]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V30:[0-9]+]] = te.compute "avg_pool" (%[[V31:[0-9]+]], %[[V32:[0-9]+]], %[[V33:[0-9]+]]) -> tensor<1x2x2xf32> {
// CHECK-NEXT: %[[V34:[0-9]+]] = te.read %[[V0]][%[[V31]], %[[V32]], %[[V33]]] : tensor<1x2x2xf32>
// CHECK-NEXT: %[[V35:[0-9]+]] = te.read %[[V17]][%[[V33]]] : tensor<2xf32>
// CHECK-NEXT: %[[V36:[0-9]+]] = arith.divf %[[V34]], %[[V35]] : f32
// CHECK-NEXT: te.yield %[[V36]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V30]] : tensor<1x2x2xf32>
// CHECK-NEXT: }

// -----

func.func @batch_norm(%x: tensor<1x2x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3xf32> {
  %0 = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.000000e-05 : f32} : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @batch_norm(%x: tensor<1x2x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3xf32> {
// The per-channel factor is a compute of its own (of weights alone in a model: run once, at load time).
// CHECK-NEXT: %[[F:[0-9]+]] = te.compute "batch_norm_factor" (%[[C:[0-9]+]]) -> tensor<2xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = te.read %v[%[[C]]] : tensor<2xf32>
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.addf %[[V4]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[0-9]+]] = te.read %s[%[[C]]] : tensor<2xf32>
// CHECK-NEXT: %[[V8:[0-9]+]] = math.sqrt %[[V6]] : f32
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.divf %[[V7]], %[[V8]] : f32
// CHECK-NEXT: te.yield %[[V9]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "batch_norm" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<1x2x3xf32> {
// CHECK-NEXT: %[[V10:[0-9]+]] = te.read %x[%[[V1]], %[[V2]], %[[V3]]] : tensor<1x2x3xf32>
// CHECK-NEXT: %[[V11:[0-9]+]] = te.read %m[%[[V2]]] : tensor<2xf32>
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.subf %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V13:[0-9]+]] = te.read %[[F]][%[[V2]]] : tensor<2xf32>
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V15:[0-9]+]] = te.read %b[%[[V2]]] : tensor<2xf32>
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.addf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: te.yield %[[V16]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<1x2x3xf32>
// CHECK-NEXT: }

// -----

func.func @pad_reflect(%x: tensor<3xf32>) -> tensor<6xf32> {
  %0 = graph.pad %x {pads = array<i64: 2, 1>, mode = "reflect"} : (tensor<3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// CHECK-LABEL: func.func @pad_reflect(%x: tensor<3xf32>) -> tensor<6xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "pad" (%[[V1:[0-9]+]]) -> tensor<6xf32> {
// CHECK-NEXT: %[[V2:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V3:[0-9]+]] = arith.subi %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.subi %[[V4]], %[[V3]] : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.maxsi %[[V3]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.subi %[[V7]], %[[V6]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.minsi %[[V6]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = te.read %x[%[[V9]]] : tensor<3xf32>
// CHECK-NEXT: te.yield %[[V10]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<6xf32>
// CHECK-NEXT: }

// -----

// An integer pad: the fill is an operand of the data's type.
func.func @pad_constant_int(%x: tensor<3xi32>, %v: tensor<1xi32>) -> tensor<5xi32> {
  %0 = graph.pad %x, %v {pads = array<i64: 1, 1>, mode = "constant"} : (tensor<3xi32>, tensor<1xi32>) -> tensor<5xi32>
  func.return %0 : tensor<5xi32>
}

// CHECK-LABEL: func.func @pad_constant_int(%x: tensor<3xi32>, %v: tensor<1xi32>) -> tensor<5xi32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "pad" (%[[V1:[0-9]+]]) -> tensor<5xi32> {
// CHECK:      %[[V8:[0-9]+]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:      %[[V13:[0-9]+]] = te.read %x[%{{.*}}] : tensor<3xi32>
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V15:[0-9]+]] = te.read %v[%[[V14]]] : tensor<1xi32>
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.select %[[V8]], %[[V13]], %[[V15]] : i32
// CHECK-NEXT: te.yield %[[V16]] : i32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<5xi32>
// CHECK-NEXT: }

// -----

func.func @clip_runtime_low(%x: tensor<4xf32>, %lo: tensor<f32>) -> tensor<4xf32> {
  %0 = graph.clip %x low %lo : tensor<f32> {max = 6.000000e+00 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @clip_runtime_low(%x: tensor<4xf32>, %lo: tensor<f32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "clip" (%[[V1:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT: %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT: %[[V3:[0-9]+]] = te.read %lo[] : tensor<f32>
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.maximumf %[[V2]], %[[V3]] : f32
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.minimumf %[[V4]], %[[V5]] : f32
// CHECK-NEXT: te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4xf32>
// CHECK-NEXT: }

// -----

func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "leaky_relu" (%[[V1:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT: %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT: %[[V3:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.cmpf olt, %[[V2]], %[[V3]] : f32
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.mulf %[[V2]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.select %[[V4]], %[[V6]], %[[V2]] : f32
// CHECK-NEXT: te.yield %[[V7]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4xf32>
// CHECK-NEXT: }

// -----

// MaxPool's indices: the first window element equal to the max (min of the row-major flat index, INT64_MAX in
// the padding), then reordered column-major (storage_order=1) within each (N, C) plane.
func.func @max_pool_indices_column_major(%x: tensor<1x1x3x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %y = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x3x4xf32> -> tensor<1x1x2x2xf32>
  %i = graph.max_pool_indices %x, %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, column_major} : (tensor<1x1x3x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xi64>
  func.return %y, %i : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// CHECK-LABEL: func.func @max_pool_indices_column_major(
// CHECK: %y = te.compute "max_pool"
// CHECK: %i = te.compute "max_pool_indices" (%[[V21:[0-9]+]], %[[V22:[0-9]+]], %[[V23:[0-9]+]], %[[V24:[0-9]+]]) reduce min (%[[V25:[0-9]+]] : 2, %[[V26:[0-9]+]] : 2) -> tensor<1x1x2x2xi64> {
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V28:[0-9]+]] = arith.muli %[[V23]], %[[V27]] : index
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V30:[0-9]+]] = arith.subi %[[V28]], %[[V29]] : index
// CHECK-NEXT: %[[V31:[0-9]+]] = arith.addi %[[V30]], %[[V25]] : index
// CHECK-NEXT: %[[V32:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V33:[0-9]+]] = arith.cmpi sge, %[[V31]], %[[V32]] : index
// CHECK-NEXT: %[[V34:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V35:[0-9]+]] = arith.maxsi %[[V31]], %[[V34]] : index
// CHECK-NEXT: %[[V36:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V37:[0-9]+]] = arith.muli %[[V24]], %[[V36]] : index
// CHECK-NEXT: %[[V38:[0-9]+]] = arith.addi %[[V37]], %[[V26]] : index
// CHECK-NEXT: %[[V39:[0-9]+]] = te.read %x[%[[V21]], %[[V22]], %[[V35]], %[[V38]]] : tensor<1x1x3x4xf32>
// CHECK-NEXT: %[[V40:[0-9]+]] = te.read %y[%[[V21]], %[[V22]], %[[V23]], %[[V24]]] : tensor<1x1x2x2xf32>
// CHECK-NEXT: %[[V41:[0-9]+]] = arith.cmpf oeq, %[[V39]], %[[V40]] : f32
// CHECK-NEXT: %[[V42:[0-9]+]] = arith.andi %[[V41]], %[[V33]] : i1
// CHECK-NEXT: %[[V43:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V44:[0-9]+]] = arith.muli %[[V35]], %[[V43]] : index
// CHECK-NEXT: %[[V45:[0-9]+]] = arith.addi %[[V38]], %[[V44]] : index
// CHECK-NEXT: %[[V46:[0-9]+]] = arith.index_cast %[[V45]] : index to i64
// CHECK-NEXT: %[[V47:[0-9]+]] = arith.constant 9223372036854775807 : i64
// CHECK-NEXT: %[[V48:[0-9]+]] = arith.select %[[V42]], %[[V46]], %[[V47]] : i64
// CHECK-NEXT: te.yield %[[V48]] : i64
// CHECK-NEXT: }
// CHECK-NEXT: %i_1 = te.compute "max_pool_indices_column_major" (%[[V49:[0-9]+]], %[[V50:[0-9]+]], %[[V51:[0-9]+]], %[[V52:[0-9]+]]) -> tensor<1x1x2x2xi64> {
// CHECK-NEXT: %[[V53:[0-9]+]] = te.read %i[%[[V49]], %[[V50]], %[[V51]], %[[V52]]] : tensor<1x1x2x2xi64>
// CHECK-NEXT: %[[V54:[0-9]+]] = arith.constant 12 : i64
// CHECK-NEXT: %[[V55:[0-9]+]] = arith.divsi %[[V53]], %[[V54]] : i64
// CHECK-NEXT: %[[V56:[0-9]+]] = arith.muli %[[V55]], %[[V54]] : i64
// CHECK-NEXT: %[[V57:[0-9]+]] = arith.remsi %[[V53]], %[[V54]] : i64
// CHECK-NEXT: %[[V58:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[V59:[0-9]+]] = arith.divsi %[[V57]], %[[V58]] : i64
// CHECK-NEXT: %[[V60:[0-9]+]] = arith.addi %[[V56]], %[[V59]] : i64
// CHECK-NEXT: %[[V61:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[V62:[0-9]+]] = arith.remsi %[[V57]], %[[V61]] : i64
// CHECK-NEXT: %[[V63:[0-9]+]] = arith.constant 3 : i64
// CHECK-NEXT: %[[V64:[0-9]+]] = arith.muli %[[V62]], %[[V63]] : i64
// CHECK-NEXT: %[[V65:[0-9]+]] = arith.addi %[[V60]], %[[V64]] : i64
// CHECK-NEXT: te.yield %[[V65]] : i64
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y, %i_1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
// CHECK-NEXT: }

// -----

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between (the thresholds themselves included).
func.func @shrink(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.shrink %x {lambd = 1.5 : f32, bias = 0.5 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @shrink(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "shrink" (%[[V1:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT: %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT: %[[V3:[0-9]+]] = arith.constant -1.500000e+00 : f32
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.cmpf olt, %[[V2]], %[[V3]] : f32
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.cmpf ogt, %[[V2]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.addf %[[V2]], %[[V7]] : f32
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.subf %[[V2]], %[[V9]] : f32
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.select %[[V6]], %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.select %[[V4]], %[[V8]], %[[V12]] : f32
// CHECK-NEXT: te.yield %[[V13]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4xf32>
// CHECK-NEXT: }
