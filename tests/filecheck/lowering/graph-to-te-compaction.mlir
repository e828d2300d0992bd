// RUN: mini-opt %s -p graph-to-te | filecheck %s

// A data-dependent extent: each kept position goes to the slot counting the kept positions before it; the count is
// a second result, and the result reads each slot's source position (0 past the count).

func.func @compress(%x: tensor<3x2xf32>, %c: tensor<2xi1>) -> (tensor<2x2xf32>, tensor<1xi64>) {
  %y, %n = graph.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi1>) -> (tensor<2x2xf32>, tensor<1xi64>)
  func.return %y, %n : tensor<2x2xf32>, tensor<1xi64>
}

// CHECK-LABEL: func.func @compress(%x: tensor<3x2xf32>, %c: tensor<2xi1>) -> (tensor<2x2xf32>, tensor<1xi64>) {
// CHECK-NEXT:   %[[V0:[0-9]+]] = te.compute "compress_rank" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 2) -> tensor<2xi64> {
// CHECK-NEXT:     %[[V3:[0-9]+]] = te.read %c[%[[V2]]] : tensor<2xi1>
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.cmpi ult, %[[V2]], %[[V1]] : index
// CHECK-NEXT:     %[[V5:[0-9]+]] = arith.andi %[[V3]], %[[V4]] : i1
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[V7:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V8:[0-9]+]] = arith.select %[[V5]], %[[V6]], %[[V7]] : i64
// CHECK-NEXT:     te.yield %[[V8]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %n = te.compute "compress_count" (%[[V9:[0-9]+]]) reduce sum (%[[V10:[0-9]+]] : 2) -> tensor<1xi64> {
// CHECK-NEXT:     %[[V11:[0-9]+]] = te.read %c[%[[V10]]] : tensor<2xi1>
// CHECK-NEXT:     %[[V12:[0-9]+]] = arith.constant 1 : i64
// CHECK-NEXT:     %[[V13:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V14:[0-9]+]] = arith.select %[[V11]], %[[V12]], %[[V13]] : i64
// CHECK-NEXT:     te.yield %[[V14]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[V15:[0-9]+]] = te.compute "compress_source" (%[[V16:[0-9]+]]) reduce max (%[[V17:[0-9]+]] : 2) -> tensor<2xi64> {
// CHECK-NEXT:     %[[V18:[0-9]+]] = te.read %[[V0]][%[[V17]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V19:[0-9]+]] = arith.index_cast %[[V16]] : index to i64
// CHECK-NEXT:     %[[V20:[0-9]+]] = arith.cmpi eq, %[[V18]], %[[V19]] : i64
// CHECK-NEXT:     %[[V21:[0-9]+]] = te.read %c[%[[V17]]] : tensor<2xi1>
// CHECK-NEXT:     %[[V22:[0-9]+]] = arith.andi %[[V21]], %[[V20]] : i1
// CHECK-NEXT:     %[[V23:[0-9]+]] = arith.index_cast %[[V17]] : index to i64
// CHECK-NEXT:     %[[V24:[0-9]+]] = arith.constant -1 : i64
// CHECK-NEXT:     %[[V25:[0-9]+]] = arith.select %[[V22]], %[[V23]], %[[V24]] : i64
// CHECK-NEXT:     te.yield %[[V25]] : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   %y = te.compute "compress" (%[[V26:[0-9]+]], %[[V27:[0-9]+]]) -> tensor<2x2xf32> {
// CHECK-NEXT:     %[[V28:[0-9]+]] = te.read %[[V15]][%[[V26]]] : tensor<2xi64>
// CHECK-NEXT:     %[[V29:[0-9]+]] = arith.constant 0 : i64
// CHECK-NEXT:     %[[V30:[0-9]+]] = arith.maxsi %[[V28]], %[[V29]] : i64
// CHECK-NEXT:     %[[V31:[0-9]+]] = arith.index_cast %[[V30]] : i64 to index
// CHECK-NEXT:     %[[V32:[0-9]+]] = te.read %x[%[[V31]], %[[V27]]] : tensor<3x2xf32>
// CHECK-NEXT:     te.yield %[[V32]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %y, %n : tensor<2x2xf32>, tensor<1xi64>
// CHECK-NEXT: }
