// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

// repeat_kv of a key cache (a decoder's grouped-query attention, as the ONNX importer gives it): unsqueeze, expand
// of the 2 kv heads to 2 x 2, reshape to 4 heads. Each -1 takes the cache's length %n itself (`reshape_rest` cancels
// the batch and the static 32 = 2 * 2 * 8 = 4 * 8), so the last reshape only splits the head index by 2: no division
// by a run-time extent inside the loop.

func.func @repeat_kv(%cache: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = graph.reshape %cache {shape = array<i64: 0, 2, 1, -1, 8>} : tensor<?x2x?x8xf32> -> tensor<?x2x1x?x8xf32>
  %1 = graph.expand %0 : tensor<?x2x1x?x8xf32> -> tensor<?x2x2x?x8xf32>
  %2 = graph.reshape %1 {shape = array<i64: 0, 4, -1, 8>} : tensor<?x2x2x?x8xf32> -> tensor<?x4x?x8xf32>
  func.return %2 : tensor<?x4x?x8xf32>
}

// CHECK-LABEL: func.func @repeat_kv
// CHECK-NEXT:  %[[B:[0-9]+]] = te.dim %cache[0]
// CHECK-NEXT:  %[[N:[0-9]+]] = te.dim %cache[2]
// CHECK-NEXT:  %[[U:[0-9]+]] = te.compute "reshape" (%[[I0:[0-9]+]], %[[I1:[0-9]+]], %{{[0-9]+}}, %[[I3:[0-9]+]], %[[I4:[0-9]+]]) [%[[B]], %[[N]]] -> tensor<?x2x1x?x8xf32> {
// CHECK-NEXT:    te.read %cache[%[[I0]], %[[I1]], %[[I3]], %[[I4]]]
// CHECK:       %[[E:[0-9]+]] = te.compute "expand" ({{.*}}) [%[[B]], %[[N]]] -> tensor<?x2x2x?x8xf32> {
// CHECK:       te.compute "reshape" (%[[J0:[0-9]+]], %[[J1:[0-9]+]], %[[J2:[0-9]+]], %[[J3:[0-9]+]]) [%[[B]], %[[N]]] -> tensor<?x4x?x8xf32> {
// CHECK-NEXT:    %[[TWO:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[KV:[0-9]+]] = arith.divui %[[J1]], %[[TWO]] : index
// CHECK-NEXT:    %[[TWO_AGAIN:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[REP:[0-9]+]] = arith.remui %[[J1]], %[[TWO_AGAIN]] : index
// CHECK-NEXT:    te.read %[[E]][%[[J0]], %[[KV]], %[[REP]], %[[J2]], %[[J3]]]
// CHECK-NEXT:    te.yield

// -----

// A shared run-time extent on another axis cancels too: [?a, ?b] -> {-1, 0} keeps ?a.

func.func @shared_elsewhere(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = graph.reshape %x {shape = array<i64: -1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @shared_elsewhere
// CHECK-NEXT:  %[[A:[0-9]+]] = te.dim %x[0]
// CHECK-NEXT:  %[[B:[0-9]+]] = te.dim %x[1]
// CHECK-NEXT:  te.compute "reshape" (%[[I:[0-9]+]], %[[J:[0-9]+]]) [%[[A]], %[[B]]] -> tensor<?x?xf32> {
// CHECK-NEXT:    te.read %x[%[[I]], %[[J]]]

// -----

// Static factors that do not divide keep the quotient: [?b, ?s, 2, 4] -> {0, -1, 16} is (8 * s) / 16, ?b cancelled.

func.func @quotient(%x: tensor<?x?x2x4xf32>) -> tensor<?x?x16xf32> {
  %0 = graph.reshape %x {shape = array<i64: 0, -1, 16>} : tensor<?x?x2x4xf32> -> tensor<?x?x16xf32>
  func.return %0 : tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @quotient
// CHECK-NEXT:  %[[B:[0-9]+]] = te.dim %x[0]
// CHECK-NEXT:  %[[S:[0-9]+]] = te.dim %x[1]
// CHECK-NEXT:  %[[C8:[0-9]+]] = arith.constant 8 : index
// CHECK-NEXT:  %[[COUNT:[0-9]+]] = arith.muli %[[C8]], %[[S]] : index
// CHECK-NEXT:  %[[C16:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:  %[[REST:[0-9]+]] = arith.divui %[[COUNT]], %[[C16]] : index
// CHECK-NEXT:  te.compute "reshape" ({{.*}}) [%[[B]], %[[REST]]] -> tensor<?x?x16xf32> {
