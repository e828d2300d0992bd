// RUN: mini-opt %s -p graph-to-te | filecheck %s

// Scatters, gathers and selections at run-time positions: every index is wrapped if negative and clamped before it
// is read at; a scatter is a reduction over the updates that may land on each element, then the combined result.

func.func @gather_nd(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
  %0 = graph.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @gather_nd(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "gather_nd" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x4xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %i[%[[V1]], %[[V3]]] : tensor<2x1xi32>
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpi slt, %[[V4]], %[[V5]] : i32
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.addi %[[V4]], %[[V7]] : i32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.select %[[V6]], %[[V8]], %[[V4]] : i32
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.maxsi %[[V9]], %[[V5]] : i32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 2 : i32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.minsi %[[V10]], %[[V11]] : i32
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.index_cast %[[V12]] : i32 to index
// CHECK-NEXT:     %[[V14:[0-9]+]] = te.read %x[%[[V13]], %[[V2]]] : tensor<3x4xf32>
// CHECK-NEXT:     te.yield %[[V14]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x4xf32>
// CHECK-NEXT: }

func.func @scatter_nd_add(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = graph.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @scatter_nd_add(%x: tensor<4xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "scatter_nd_updates" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 2) -> tensor<4xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %u[%[[V2]]] : tensor<2xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = te.read %i[%[[V2]], %[[V4]]] : tensor<2x1xi64>
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.cmpi slt, %[[V5]], %[[V6]] : i64
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.addi %[[V5]], %[[V8]] : i64
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.select %[[V7]], %[[V9]], %[[V5]] : i64
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.maxsi %[[V10]], %[[V6]] : i64
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.constant 3 : i64
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.minsi %[[V11]], %[[V12]] : i64
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.index_cast %[[V13]] : i64 to index
// CHECK-NEXT:     %[[V15:[0-9]+]] = arith.cmpi eq, %[[V14]], %[[V1]] : index
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[V17:[0-9]+]] = arith.select %[[V15]], %[[V3]], %[[V16]] : f32
// CHECK-NEXT:     te.yield %[[V17]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V18:[0-9]+]] = te.compute "scatter_nd" (%[[V19:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT:     %[[V20:[0-9]+]] = te.read %x[%[[V19]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V21:[0-9]+]] = te.read %[[V0]][%[[V19]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V22:[0-9]+]] = arith.addf %[[V20]], %[[V21]] : f32
// CHECK-NEXT:     te.yield %[[V22]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V18]] : tensor<4xf32>
// CHECK-NEXT: }

func.func @scatter_elements(%x: tensor<3xi64>, %i: tensor<2xi32>, %u: tensor<2xi64>) -> tensor<3xi64> {
  %0 = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3xi64>, tensor<2xi32>, tensor<2xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @scatter_elements(%x: tensor<3xi64>, %i: tensor<2xi32>, %u: tensor<2xi64>) -> tensor<3xi64> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "scatter_elements_source" (%[[V1:[0-9]+]]) reduce max (%[[V2:[0-9]+]] : 2) -> tensor<3xi64> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = arith.index_cast %[[V2]] : index to i64
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %i[%[[V2]]] : tensor<2xi32>
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpi slt, %[[V4]], %[[V5]] : i32
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 3 : i32
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.addi %[[V4]], %[[V7]] : i32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.select %[[V6]], %[[V8]], %[[V4]] : i32
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.maxsi %[[V9]], %[[V5]] : i32
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 2 : i32
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.minsi %[[V10]], %[[V11]] : i32
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.index_cast %[[V12]] : i32 to index
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.cmpi eq, %[[V13]], %[[V1]] : index
// CHECK-NEXT:     %[[V15:[0-9]+]] = arith.constant -1 : i64
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.select %[[V14]], %[[V3]], %[[V15]] : i64
// CHECK-NEXT:     te.yield %[[V16]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V17:[0-9]+]] = te.compute "scatter_elements" (%[[V18:[0-9]+]]) -> tensor<3xi64> {
// CHECK-NEXT:     %[[V19:[0-9]+]] = te.read %[[V0]][%[[V18]]] : tensor<3xi64>
// CHECK-NEXT:     %[[V20:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V21:[0-9]+]] = arith.cmpi sge, %[[V19]], %[[V20]] : i64
// CHECK-NEXT:     %[[V22:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V23:[0-9]+]] = arith.maxsi %[[V19]], %[[V22]] : i64
// CHECK-NEXT:     %[[V24:[0-9]+]] = arith.index_cast %[[V23]] : i64 to index
// CHECK-NEXT:     %[[V25:[0-9]+]] = te.read %u[%[[V24]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V26:[0-9]+]] = te.read %x[%[[V18]]] : tensor<3xi64>
// CHECK-NEXT:     %[[V27:[0-9]+]] = arith.select %[[V21]], %[[V25]], %[[V26]] : i64
// CHECK-NEXT:     te.yield %[[V27]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V17]] : tensor<3xi64>
// CHECK-NEXT: }

func.func @one_hot(%i: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = graph.one_hot %i, %v {axis = 1 : i64, depth = 3 : i64} : (tensor<2xi64>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @one_hot(%i: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "one_hot" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %i[%[[V1]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpi slt, %[[V3]], %[[V4]] : i64
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 3 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.addi %[[V3]], %[[V6]] : i64
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V7]], %[[V3]] : i64
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[V10:[0-9]+]] = te.read %v[%[[V9]]] : tensor<2xf32>
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[V12:[0-9]+]] = te.read %v[%[[V11]]] : tensor<2xf32>
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.index_cast %[[V2]] : index to i64
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.cmpi eq, %[[V8]], %[[V13]] : i64
// CHECK-NEXT:     %[[V15:[0-9]+]] = arith.select %[[V14]], %[[V10]], %[[V12]] : f32
// CHECK-NEXT:     te.yield %[[V15]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @top_k(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %v, %i = graph.top_k %x {axis = 0 : i64, k = 2 : i64, largest} : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi64>)
  func.return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @top_k(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "top_k_rank" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 4) -> tensor<4xi64> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %x[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V4:[0-9]+]] = te.read %x[%[[V2]]] : tensor<4xf32>
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.cmpf oeq, %[[V4]], %[[V3]] : f32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.cmpi ult, %[[V2]], %[[V1]] : index
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.andi %[[V5]], %[[V6]] : i1
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.cmpf ogt, %[[V4]], %[[V3]] : f32
// CHECK-NEXT:     %[[V9:[0-9]+]] = arith.ori %[[V8]], %[[V7]] : i1
// CHECK-NEXT:     %[[V10:[0-9]+]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[V11:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.select %[[V9]], %[[V10]], %[[V11]] : i64
// CHECK-NEXT:     te.yield %[[V12]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %i = te.compute "top_k_indices" (%[[V13:[0-9]+]]) reduce max (%[[V14:[0-9]+]] : 4) -> tensor<2xi64> {
// CHECK-NEXT:     %[[V15:[0-9]+]] = te.read %[[V0]][%[[V14]]] : tensor<4xi64>
// CHECK-NEXT:     %[[V16:[0-9]+]] = arith.index_cast %[[V13]] : index to i64
// CHECK-NEXT:     %[[V17:[0-9]+]] = arith.cmpi eq, %[[V15]], %[[V16]] : i64
// CHECK-NEXT:     %[[V18:[0-9]+]] = arith.index_cast %[[V14]] : index to i64
// CHECK-NEXT:     %[[V19:[0-9]+]] = arith.constant -1 : i64
// CHECK-NEXT:     %[[V20:[0-9]+]] = arith.select %[[V17]], %[[V18]], %[[V19]] : i64
// CHECK-NEXT:     te.yield %[[V20]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %v = te.compute "top_k" (%[[V21:[0-9]+]]) -> tensor<2xf32> {
// CHECK-NEXT:     %[[V22:[0-9]+]] = te.read %i[%[[V21]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V23:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V24:[0-9]+]] = arith.cmpi slt, %[[V22]], %[[V23]] : i64
// CHECK-NEXT:     %[[V25:[0-9]+]] = arith.constant 4 : i64
// CHECK-NEXT:     %[[V26:[0-9]+]] = arith.addi %[[V22]], %[[V25]] : i64
// CHECK-NEXT:     %[[V27:[0-9]+]] = arith.select %[[V24]], %[[V26]], %[[V22]] : i64
// CHECK-NEXT:     %[[V28:[0-9]+]] = arith.maxsi %[[V27]], %[[V23]] : i64
// CHECK-NEXT:     %[[V29:[0-9]+]] = arith.constant 3 : i64
// CHECK-NEXT:     %[[V30:[0-9]+]] = arith.minsi %[[V28]], %[[V29]] : i64
// CHECK-NEXT:     %[[V31:[0-9]+]] = arith.index_cast %[[V30]] : i64 to index
// CHECK-NEXT:     %[[V32:[0-9]+]] = te.read %x[%[[V31]]] : tensor<4xf32>
// CHECK-NEXT:     te.yield %[[V32]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %v, %i : tensor<2xf32>, tensor<2xi64>
// CHECK-NEXT: }
