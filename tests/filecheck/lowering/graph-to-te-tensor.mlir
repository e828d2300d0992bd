// RUN: mini-opt %s -p graph-to-te | filecheck %s

// Tensor-family ops become te.computes with index arithmetic; reductions become te reductions plus
// elementwise pre/post steps.

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x2xf32>) -> tensor<2x6xf32> {
  %0 = graph.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// CHECK-LABEL: func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x2xf32>) -> tensor<2x6xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "concat" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x6xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.minsi %[[V2]], %[[V3]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %a[%[[V1]], %[[V4]]] : tensor<2x3xf32>
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %b[%[[V1]], %[[V6]]] : tensor<2x1xf32>
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.cmpi slt, %[[V2]], %[[V8]] : index
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.select %[[V9]], %[[V5]], %[[V7]] : f32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.subi %[[V2]], %[[V11]] : index
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.maxsi %[[V12]], %[[V13]] : index
// CHECK-NEXT:     %[[V15:[0-9]+]] = te.read %c[%[[V1]], %[[V14]]] : tensor<2x2xf32>
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:     %[[V17:[0-9]+]] = arith.cmpi slt, %[[V2]], %[[V16]] : index
// CHECK-NEXT:     %[[V18:[0-9]+]] = arith.select %[[V17]], %[[V10]], %[[V15]] : f32
// CHECK-NEXT:     te.yield %[[V18]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x6xf32>
// CHECK-NEXT: }

func.func @slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = graph.slice %x {starts = array<i64: 1, 5>, steps = array<i64: 1, -2>} : tensor<4x6xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @slice(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "slice" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.addi %[[V1]], %[[V3]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant -2 : index
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.muli %[[V2]], %[[V5]] : index
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.addi %[[V6]], %[[V7]] : index
// CHECK-NEXT:     %[[V9:[0-9]+]] = te.read %x[%[[V4]], %[[V8]]] : tensor<4x6xf32>
// CHECK-NEXT:     te.yield %[[V9]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @gather_progression(%x: tensor<5x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.gather %x {axis = 0 : i64, indices = array<i64: 4, 2>} : tensor<5x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @gather_progression(%x: tensor<5x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "gather" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant -2 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.muli %[[V1]], %[[V3]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.addi %[[V4]], %[[V5]] : index
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %x[%[[V6]], %[[V2]]] : tensor<5x3xf32>
// CHECK-NEXT:     te.yield %[[V7]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @gather_table(%x: tensor<2x4xf32>) -> tensor<2x1x3xf32> {
  %0 = graph.gather %x {axis = 1 : i64, indices = array<i64: 3, 0, 2>} : tensor<2x4xf32> -> tensor<2x1x3xf32>
  func.return %0 : tensor<2x1x3xf32>
}

// CHECK-LABEL: func.func @gather_table(%x: tensor<2x4xf32>) -> tensor<2x1x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "gather" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<2x1x3xf32> {
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V5]] : index
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V6]], %[[V7]], %[[V4]] : index
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V9]] : index
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.select %[[V10]], %[[V11]], %[[V8]] : index
// CHECK-NEXT:     %[[V13:[0-9]+]] = te.read %x[%[[V1]], %[[V12]]] : tensor<2x4xf32>
// CHECK-NEXT:     te.yield %[[V13]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x1x3xf32>
// CHECK-NEXT: }

func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "expand" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<2x3x4xf32> {
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %x[%[[V2]], %[[V4]]] : tensor<3x1xf32>
// CHECK-NEXT:     te.yield %[[V5]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3x4xf32>
// CHECK-NEXT: }

func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "tile" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<4x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.remui %[[V1]], %[[V3]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %x[%[[V4]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:     te.yield %[[V5]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<4x3xf32>
// CHECK-NEXT: }

func.func @where(%c: tensor<2x1xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @where(%c: tensor<2x1xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "where" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %c[%[[V1]], %[[V3]]] : tensor<2x1xi1>
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:     %[[V6:[0-9]+]] = te.read %y[%[[V2]]] : tensor<3xf32>
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.select %[[V4]], %[[V5]], %[[V6]] : f32
// CHECK-NEXT:     te.yield %[[V7]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  func.return %0 : tensor<2x1x4xf32>
}

// CHECK-LABEL: func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "reduce_sum" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce sum (%[[V4:[0-9]+]] : 3) -> tensor<2x1x4xf32> {
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %x[%[[V1]], %[[V4]], %[[V3]]] : tensor<2x3x4xf32>
// CHECK-NEXT:     te.yield %[[V5]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x1x4xf32>
// CHECK-NEXT: }

func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = graph.reduce_mean %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "reduce_mean_sum" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 2, %[[V3:[0-9]+]] : 4) -> tensor<3xf32> {
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %x[%[[V2]], %[[V1]], %[[V3]]] : tensor<2x3x4xf32>
// CHECK-NEXT:     te.yield %[[V4]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.compute "reduce_mean" (%[[V6:[0-9]+]]) -> tensor<3xf32> {
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %[[V0]][%[[V6]]] : tensor<3xf32>
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.divf %[[V7]], %[[V8]] : f32
// CHECK-NEXT:     te.yield %[[V9]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V5]] : tensor<3xf32>
// CHECK-NEXT: }

func.func @reduce_l2(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = graph.reduce_l2 %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @reduce_l2(%x: tensor<2x3xf32>) -> tensor<2xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "reduce_l2_sum" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 3) -> tensor<2xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.mulf %[[V3]], %[[V3]] : f32
// CHECK-NEXT:     te.yield %[[V4]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.compute "reduce_l2" (%[[V6:[0-9]+]]) -> tensor<2xf32> {
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %[[V0]][%[[V6]]] : tensor<2xf32>
// CHECK-NEXT:     %[[V8:[0-9]+]] = math.sqrt %[[V7]] : f32
// CHECK-NEXT:     te.yield %[[V8]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V5]] : tensor<2xf32>
// CHECK-NEXT: }

func.func @reduce_log_sum_exp(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = graph.reduce_log_sum_exp %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @reduce_log_sum_exp(%x: tensor<2x3xf32>) -> tensor<f32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "reduce_log_sum_exp_max" () reduce max_nnan (%[[V1:[0-9]+]] : 2, %[[V2:[0-9]+]] : 3) -> tensor<f32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:     te.yield %[[V3]] : f32
// CHECK-NEXT:   }
// The shift is the max where it is finite, else 0 (a row holding +inf sums to +inf, one of -inf to 0).
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.compute "reduce_log_sum_exp_sum" () reduce sum (%[[V5:[0-9]+]] : 2, %[[V6:[0-9]+]] : 3) -> tensor<f32> {
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %x[%[[V5]], %[[V6]]] : tensor<2x3xf32>
// CHECK-NEXT:     %[[V8:[0-9]+]] = te.read %[[V0]][] : tensor<f32>
// CHECK-NEXT:     %[[V9:[0-9]+]] = math.absf %[[V8]] : f32
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.cmpf olt, %[[V9]], %[[V10]] : f32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.select %[[V11]], %[[V8]], %[[V12]] : f32
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.subf %[[V7]], %[[V13]] : f32
// CHECK-NEXT:     %[[V15:[0-9]+]] = math.exp %[[V14]] : f32
// CHECK-NEXT:     te.yield %[[V15]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V16:[0-9]+]] = te.compute "reduce_log_sum_exp" () -> tensor<f32> {
// CHECK-NEXT:     %[[V17:[0-9]+]] = te.read %[[V4]][] : tensor<f32>
// CHECK-NEXT:     %[[V18:[0-9]+]] = math.log %[[V17]] : f32
// CHECK-NEXT:     %[[V19:[0-9]+]] = te.read %[[V0]][] : tensor<f32>
// CHECK:          %[[V24:[0-9]+]] = arith.select %{{.*}}, %[[V19]], %{{.*}} : f32
// CHECK-NEXT:     %[[V25:[0-9]+]] = arith.addf %[[V18]], %[[V24]] : f32
// CHECK-NEXT:     te.yield %[[V25]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V16]] : tensor<f32>
// CHECK-NEXT: }

func.func @reduce_l1_over_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reduce_l1 %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reduce_l1_over_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "reduce_l1" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = math.absf %[[V3]] : f32
// CHECK-NEXT:     te.yield %[[V4]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @less_and_cast(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = graph.cast %0 : tensor<4xi1> -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// CHECK-LABEL: func.func @less_and_cast(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "less" (%[[V1:[0-9]+]]) -> tensor<4xi1> {
// CHECK-NEXT:     %[[V2:[0-9]+]] = te.read %a[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %b[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.cmpf olt, %[[V2]], %[[V3]] : f32
// CHECK-NEXT:     te.yield %[[V4]] : i1
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.compute "cast" (%[[V6:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT:     %[[V7:[0-9]+]] = te.read %[[V0]][%[[V6]]] : tensor<4xi1>
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.uitofp %[[V7]] : i1 to f32
// CHECK-NEXT:     te.yield %[[V8]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V5]] : tensor<4xf32>
// CHECK-NEXT: }

// Trilu keeps an element where its column is at least its row plus k (upper; at most, lower), else 0.
func.func @trilu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = graph.trilu %x {k = -1 : i64, upper} : tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @trilu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "trilu" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<3x4xf32> {
// CHECK-NEXT: %[[V3:[0-9]+]] = arith.constant -1 : index
// CHECK-NEXT: %[[V4:[0-9]+]] = arith.addi %[[V1]], %[[V3]] : index
// CHECK-NEXT: %[[V5:[0-9]+]] = arith.cmpi sge, %[[V2]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<3x4xf32>
// CHECK-NEXT: %[[V7:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V6]], %[[V7]] : f32
// CHECK-NEXT: te.yield %[[V8]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x4xf32>
// CHECK-NEXT: }
