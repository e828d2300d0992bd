// RUN: mini-opt %s -p graph-to-te | filecheck %s

// Ops on run-time indices and integer data: a run-time index is wrapped if negative and clamped into its axis
// before it is read at; integer division and remainder never divide by 0 or -1; float-to-int casts convert as ONNX
// Runtime (x86-64) does, NaN and out-of-range values giving INT_MIN.

func.func @take(%t: tensor<5x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
  %0 = graph.take %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @take(%t: tensor<5x4xf32>, %ids: tensor<2xi64>) -> tensor<2x4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "take" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x4xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %ids[%[[V1]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpi slt, %[[V3]], %[[V4]] : i64
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 5 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.addi %[[V3]], %[[V6]] : i64
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V7]], %[[V3]] : i64
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.maxsi %[[V8]], %[[V4]] : i64
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.minsi %[[V9]], %[[V10]] : i64
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.index_cast %[[V11]] : i64 to index
// CHECK-NEXT:     %[[V13:[0-9]+]] = te.read %t[%[[V12]], %[[V2]]] : tensor<5x4xf32>
// CHECK-NEXT:     te.yield %[[V13]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x4xf32>
// CHECK-NEXT: }

func.func @take_along_axis(%x: tensor<3x4xi64>, %i: tensor<3x2xi32>) -> tensor<3x2xi64> {
  %0 = graph.take_along_axis %x, %i {axis = 1 : i64} : (tensor<3x4xi64>, tensor<3x2xi32>) -> tensor<3x2xi64>
  func.return %0 : tensor<3x2xi64>
}

// CHECK-LABEL: func.func @take_along_axis(%x: tensor<3x4xi64>, %i: tensor<3x2xi32>) -> tensor<3x2xi64> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "take_along_axis" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<3x2xi64> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %i[%[[V1]], %[[V2]]] : tensor<3x2xi32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpi slt, %[[V3]], %[[V4]] : i32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 4 : i32
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.addi %[[V3]], %[[V6]] : i32
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V7]], %[[V3]] : i32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.maxsi %[[V8]], %[[V4]] : i32
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.minsi %[[V9]], %[[V10]] : i32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.index_cast %[[V11]] : i32 to index
// CHECK-NEXT:     %[[V13:[0-9]+]] = te.read %x[%[[V1]], %[[V12]]] : tensor<3x4xi64>
// CHECK-NEXT:     te.yield %[[V13]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<3x2xi64>
// CHECK-NEXT: }

func.func @cumsum_exclusive(%x: tensor<2x5xi64>) -> tensor<2x5xi64> {
  %0 = graph.cumsum %x {axis = 1 : i64, exclusive} : tensor<2x5xi64> -> tensor<2x5xi64>
  func.return %0 : tensor<2x5xi64>
}

// CHECK-LABEL: func.func @cumsum_exclusive(%x: tensor<2x5xi64>) -> tensor<2x5xi64> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "cumsum" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 5) -> tensor<2x5xi64> {
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<2x5xi64>
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpi ult, %[[V3]], %[[V2]] : index
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.select %[[V5]], %[[V4]], %[[V6]] : i64
// CHECK-NEXT:     te.yield %[[V7]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x5xi64>
// CHECK-NEXT: }

func.func @argmax_last(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  %0 = graph.argmax %x {axis = 1 : i64, select_last_index} : tensor<2x5xf32> -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @argmax_last(%x: tensor<2x5xf32>) -> tensor<2xi64> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "argmax_value" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce max (%[[V3:[0-9]+]] : 5) -> tensor<2x1xf32> {
// CHECK-NEXT:     %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[FIRST:[0-9]+]] = te.read %x[%[[V1]], %[[Z]]] : tensor<2x5xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<2x5xf32>
// CHECK-NEXT:     %[[NEG_INF:[0-9]+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:     %[[IS_NAN:[0-9]+]] = arith.cmpf uno, %[[V4]], %[[V4]] : f32
// CHECK-NEXT:     %[[TERM:[0-9]+]] = arith.select %[[IS_NAN]], %[[NEG_INF]], %[[V4]] : f32
// CHECK-NEXT:     %[[FIRST_NAN:[0-9]+]] = arith.cmpf uno, %[[FIRST]], %[[FIRST]] : f32
// CHECK-NEXT:     %[[PICKED:[0-9]+]] = arith.select %[[FIRST_NAN]], %[[FIRST]], %[[TERM]] : f32
// CHECK-NEXT:     te.yield %[[PICKED]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.compute "argmax" (%[[V6:[0-9]+]]) reduce max (%[[V7:[0-9]+]] : 5) -> tensor<2xi64> {
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V9:[0-9]+]] = te.read %x[%[[V6]], %[[V7]]] : tensor<2x5xf32>
// CHECK-NEXT:     %[[V10:[0-9]+]] = te.read %[[V0]][%[[V6]], %[[V8]]] : tensor<2x1xf32>
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.cmpf oeq, %[[V9]], %[[V10]] : f32
// CHECK-NEXT:     %[[Z2:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[AT_FIRST:[0-9]+]] = arith.cmpi eq, %[[V7]], %[[Z2]] : index
// CHECK-NEXT:     %[[BEST_NAN:[0-9]+]] = arith.cmpf uno, %[[V10]], %[[V10]] : f32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.andi %[[AT_FIRST]], %[[BEST_NAN]] : i1
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.ori %[[V11]], %[[V12]] : i1
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.index_cast %[[V7]] : index to i64
// CHECK-NEXT:     %[[V15:[0-9]+]] = arith.constant -1 : i64
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.select %[[V13]], %[[V14]], %[[V15]] : i64
// CHECK-NEXT:     te.yield %[[V16]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V5]] : tensor<2xi64>
// CHECK-NEXT: }

func.func @integer_div_and_mod(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = graph.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = graph.mod %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @integer_div_and_mod(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "div" (%[[V1:[0-9]+]]) -> tensor<4xi32> {
// CHECK-NEXT:     %[[V2:[0-9]+]] = te.read %a[%[[V1]]] : tensor<4xi32>
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %b[%[[V1]]] : tensor<4xi32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V5]] : i32
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V7]] : i32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.ori %[[V6]], %[[V8]] : i1
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.constant 1 : i32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.select %[[V9]], %[[V10]], %[[V3]] : i32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.divsi %[[V2]], %[[V11]] : i32
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V13]] : i32
// CHECK-NEXT:     %[[V15:[0-9]+]] = arith.subi %[[V4]], %[[V2]] : i32
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.select %[[V14]], %[[V15]], %[[V12]] : i32
// CHECK-NEXT:     %[[V17:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V18:[0-9]+]] = arith.cmpi eq, %[[V3]], %[[V17]] : i32
// CHECK-NEXT:     %[[V19:[0-9]+]] = arith.select %[[V18]], %[[V4]], %[[V16]] : i32
// CHECK-NEXT:     te.yield %[[V19]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V20:[0-9]+]] = te.compute "mod" (%[[V21:[0-9]+]]) -> tensor<4xi32> {
// CHECK-NEXT:     %[[V22:[0-9]+]] = te.read %a[%[[V21]]] : tensor<4xi32>
// CHECK-NEXT:     %[[V23:[0-9]+]] = te.read %b[%[[V21]]] : tensor<4xi32>
// CHECK-NEXT:     %[[V24:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V25:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V26:[0-9]+]] = arith.cmpi eq, %[[V23]], %[[V25]] : i32
// CHECK-NEXT:     %[[V27:[0-9]+]] = arith.constant -1 : i32
// CHECK-NEXT:     %[[V28:[0-9]+]] = arith.cmpi eq, %[[V23]], %[[V27]] : i32
// CHECK-NEXT:     %[[V29:[0-9]+]] = arith.ori %[[V26]], %[[V28]] : i1
// CHECK-NEXT:     %[[V30:[0-9]+]] = arith.constant 1 : i32
// CHECK-NEXT:     %[[V31:[0-9]+]] = arith.select %[[V29]], %[[V30]], %[[V23]] : i32
// CHECK-NEXT:     %[[V32:[0-9]+]] = arith.remsi %[[V22]], %[[V31]] : i32
// CHECK-NEXT:     %[[V33:[0-9]+]] = arith.cmpi slt, %[[V32]], %[[V24]] : i32
// CHECK-NEXT:     %[[V34:[0-9]+]] = arith.cmpi slt, %[[V23]], %[[V24]] : i32
// CHECK-NEXT:     %[[V35:[0-9]+]] = arith.cmpi ne, %[[V33]], %[[V34]] : i1
// CHECK-NEXT:     %[[V36:[0-9]+]] = arith.cmpi ne, %[[V32]], %[[V24]] : i32
// CHECK-NEXT:     %[[V37:[0-9]+]] = arith.andi %[[V36]], %[[V35]] : i1
// CHECK-NEXT:     %[[V38:[0-9]+]] = arith.addi %[[V32]], %[[V23]] : i32
// CHECK-NEXT:     %[[V39:[0-9]+]] = arith.select %[[V37]], %[[V38]], %[[V32]] : i32
// CHECK-NEXT:     %[[V40:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V41:[0-9]+]] = arith.cmpi eq, %[[V23]], %[[V40]] : i32
// CHECK-NEXT:     %[[V42:[0-9]+]] = arith.select %[[V41]], %[[V24]], %[[V39]] : i32
// CHECK-NEXT:     te.yield %[[V42]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]], %[[V20]] : tensor<4xi32>, tensor<4xi32>
// CHECK-NEXT: }

func.func @cast_float_to_int(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = graph.cast %x : tensor<4xf32> -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @cast_float_to_int(%x: tensor<4xf32>) -> tensor<4xi32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "cast" (%[[V1:[0-9]+]]) -> tensor<4xi32> {
// CHECK-NEXT:     %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant -2.14748365e+09 : f32
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.cmpf oge, %[[V2]], %[[V3]] : f32
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 2.14748365e+09 : f32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpf olt, %[[V2]], %[[V5]] : f32
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.andi %[[V4]], %[[V6]] : i1
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.select %[[V7]], %[[V2]], %[[V8]] : f32
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.fptosi %[[V9]] : f32 to i32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant -2147483648 : i32
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.select %[[V7]], %[[V10]], %[[V11]] : i32
// CHECK-NEXT:     te.yield %[[V14]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<4xi32>
// CHECK-NEXT: }

// reverse_sequence reads time index `t < len ? len - 1 - t : t` of its batch entry, `len` clamped to the time axis.
func.func @reverse(%x: tensor<3x5xf32>, %lens: tensor<3xi64>) -> tensor<3x5xf32> {
  %y = graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// CHECK:      %y = te.compute "reverse_sequence" (%0, %1) -> tensor<3x5xf32> {
// CHECK-NEXT:   %2 = te.read %lens[%0] : tensor<3xi64>
// CHECK-NEXT:   %3 = arith.constant 5 : i64
// CHECK-NEXT:   %4 = arith.minsi %2, %3 : i64
// CHECK-NEXT:   %5 = arith.index_cast %1 : index to i64
// CHECK-NEXT:   %6 = arith.constant 1 : i64
// CHECK-NEXT:   %7 = arith.subi %4, %6 : i64
// CHECK-NEXT:   %8 = arith.subi %7, %5 : i64
// CHECK-NEXT:   %9 = arith.cmpi slt, %5, %4 : i64
// CHECK-NEXT:   %10 = arith.select %9, %8, %5 : i64
// CHECK-NEXT:   %11 = arith.index_cast %10 : i64 to index
// CHECK-NEXT:   %12 = te.read %x[%0, %11] : tensor<3x5xf32>
// CHECK-NEXT:   te.yield %12 : f32
