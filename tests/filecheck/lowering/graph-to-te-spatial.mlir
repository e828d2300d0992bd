// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

// Col2im sums over the block taps that reach the image position; with stride 2 and dilation 1 those are the taps
// b = (o + pad) % 2 + 2 * j, j < ceil(3 / 2), read from column (o + pad) / 2 - j where b < 3 and the column exists,
// else 0. The row is c * prod(block) + b.

func.func @col2im_strided(%cols: tensor<1x6x3xf32>) -> tensor<1x2x4xf32> {
  %y = graph.col2im %cols {block_shape = array<i64: 3>, columns = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : tensor<1x6x3xf32> -> tensor<1x2x4xf32>
  func.return %y : tensor<1x2x4xf32>
}

// CHECK-LABEL: func.func @col2im_strided(%cols: tensor<1x6x3xf32>) -> tensor<1x2x4xf32> {
// CHECK-NEXT: %y = te.compute "col2im" (%[[V0:[0-9]+]], %[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 2) -> tensor<1x2x4xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.addi %[[V2]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.remui %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.muli %[[V3]], %[[V6]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.addi %[[V7]], %[[V8]] : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.cmpi ule, %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.minui %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.divui %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.cmpi uge, %[[V13]], %[[V3]] : index
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.maxui %[[V13]], %[[V3]] : index
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.subi %[[V15]], %[[V3]] : index
// CHECK-NEXT: %[[V17:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V18:[0-9]+]] = arith.cmpi ule, %[[V16]], %[[V17]] : index
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.minui %[[V16]], %[[V17]] : index
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.muli %[[V1]], %[[V20]] : index
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.addi %[[V21]], %[[V12]] : index
// CHECK-NEXT: %[[V23:[0-9]+]] = te.read %cols[%[[V0]], %[[V22]], %[[V19]]] : tensor<1x6x3xf32>
// CHECK-NEXT: %[[V24:[0-9]+]] = arith.andi %[[V11]], %[[V14]] : i1
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.andi %[[V24]], %[[V18]] : i1
// CHECK-NEXT: %[[V26:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.select %[[V25]], %[[V23]], %[[V26]] : f32
// CHECK-NEXT: te.yield %[[V27]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y : tensor<1x2x4xf32>

// -----

// With dilation 2 the taps are not in phase: every tap b is tried, at column (o + pad - 2 * b) / stride where that
// divides exactly.

func.func @col2im_dilated(%cols: tensor<1x2x3xf32>) -> tensor<1x1x5xf32> {
  %y = graph.col2im %cols {block_shape = array<i64: 2>, columns = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 0, 2>, dilations = array<i64: 2>} : tensor<1x2x3xf32> -> tensor<1x1x5xf32>
  func.return %y : tensor<1x1x5xf32>
}

// CHECK-LABEL: func.func @col2im_dilated(%cols: tensor<1x2x3xf32>) -> tensor<1x1x5xf32> {
// CHECK-NEXT: %y = te.compute "col2im" (%[[V0:[0-9]+]], %[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 2) -> tensor<1x1x5xf32> {
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.muli %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.cmpi uge, %[[V2]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.maxui %[[V2]], %[[V5]] : index
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.subi %[[V7]], %[[V5]] : index
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.remui %[[V8]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V12:[0-9]+]] = arith.cmpi eq, %[[V10]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.divui %[[V8]], %[[V9]] : index
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.cmpi ule, %[[V13]], %[[V14]] : index
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.minui %[[V13]], %[[V14]] : index
// CHECK-NEXT: %[[V17:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: %[[V18:[0-9]+]] = arith.muli %[[V1]], %[[V17]] : index
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.addi %[[V18]], %[[V3]] : index
// CHECK-NEXT: %[[V20:[0-9]+]] = te.read %cols[%[[V0]], %[[V19]], %[[V16]]] : tensor<1x2x3xf32>
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.andi %[[V6]], %[[V12]] : i1
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.andi %[[V21]], %[[V15]] : i1
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V24:[0-9]+]] = arith.select %[[V22]], %[[V20]], %[[V23]] : f32
// CHECK-NEXT: te.yield %[[V24]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y : tensor<1x1x5xf32>

// -----

// Grid sample: the grid's x (last) coordinate is denormalised to the input's last axis, rounded half to even
// (nearest), and read at its clamped index; a tap outside the image reads 0 (zeros padding).

func.func @grid_sample_nearest(%x: tensor<1x1x4xf32>, %grid: tensor<1x3x1xf32>) -> tensor<1x1x3xf32> {
  %y = graph.grid_sample %x, %grid {mode = "nearest", padding_mode = "zeros"} : (tensor<1x1x4xf32>, tensor<1x3x1xf32>) -> tensor<1x1x3xf32>
  func.return %y : tensor<1x1x3xf32>
}

// CHECK-LABEL: func.func @grid_sample_nearest(%x: tensor<1x1x4xf32>, %grid: tensor<1x3x1xf32>) -> tensor<1x1x3xf32> {
// CHECK-NEXT: %y = te.compute "grid_sample" (%[[V0:[0-9]+]], %[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<1x1x3xf32> {
// CHECK-NEXT: %[[V3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[V4:[0-9]+]] = te.read %grid[%[[V0]], %[[V2]], %[[V3]]] : tensor<1x3x1xf32>
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V6:[0-9]+]] = arith.addf %[[V4]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.mulf %[[V6]], %[[V7]] : f32
// CHECK-NEXT: %[[V9:[0-9]+]] = arith.subf %[[V8]], %[[V5]] : f32
// CHECK-NEXT: %[[V10:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V11:[0-9]+]] = arith.mulf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V12:[0-9]+]] = math.roundeven %[[V11]] : f32
// CHECK-NEXT: %[[V13:[0-9]+]] = arith.constant -3.000000e+00 : f32
// CHECK-NEXT: %[[V14:[0-9]+]] = arith.maxnumf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V15:[0-9]+]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT: %[[V16:[0-9]+]] = arith.minnumf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V17:[0-9]+]] = arith.fptosi %[[V16]] : f32 to i64
// CHECK-NEXT: %[[V18:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V19:[0-9]+]] = arith.cmpi sge, %[[V17]], %[[V18]] : i64
// CHECK-NEXT: %[[V20:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[V21:[0-9]+]] = arith.cmpi slt, %[[V17]], %[[V20]] : i64
// CHECK-NEXT: %[[V22:[0-9]+]] = arith.andi %[[V19]], %[[V21]] : i1
// CHECK-NEXT: %[[V23:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V24:[0-9]+]] = arith.maxsi %[[V17]], %[[V23]] : i64
// CHECK-NEXT: %[[V25:[0-9]+]] = arith.constant 3 : i64
// CHECK-NEXT: %[[V26:[0-9]+]] = arith.minsi %[[V24]], %[[V25]] : i64
// CHECK-NEXT: %[[V27:[0-9]+]] = arith.index_cast %[[V26]] : i64 to index
// CHECK-NEXT: %[[V28:[0-9]+]] = te.read %x[%[[V0]], %[[V1]], %[[V27]]] : tensor<1x1x4xf32>
// CHECK-NEXT: %[[V29:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V30:[0-9]+]] = arith.select %[[V22]], %[[V28]], %[[V29]] : f32
// CHECK-NEXT: te.yield %[[V30]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y : tensor<1x1x3xf32>
