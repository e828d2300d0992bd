// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

// A `?` extent of an argument is one te.dim at the start of the function, per (argument, axis); a compute's `?`
// extents are its size operands, which the computes reading it reuse. A `?` broadcast against a `?` is assumed equal
// to it; a `?` against a static 8 is 8 or 1 at run time, read at min(index, extent - 1).

func.func @broadcast(%x: tensor<?x?x8xf32>, %b: tensor<8xf32>, %m: tensor<?x1x?xf32>) -> tensor<?x?x8xf32> {
  %0 = graph.add %x, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %1 = graph.mul %0, %m : (tensor<?x?x8xf32>, tensor<?x1x?xf32>) -> tensor<?x?x8xf32>
  func.return %1 : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT: %[[B:[0-9]+]] = te.dim %x[0] : tensor<?x?x8xf32>
// CHECK-NEXT: %[[S:[0-9]+]] = te.dim %x[1] : tensor<?x?x8xf32>
// CHECK-NEXT: %[[M:[0-9]+]] = te.dim %m[2] : tensor<?x1x?xf32>
// CHECK-NEXT: %[[ADD:[0-9]+]] = te.compute "add" (%{{.*}}, %{{.*}}, %{{.*}}) [%[[B]], %[[S]]] -> tensor<?x?x8xf32> {
// CHECK:      te.compute "mul" (%[[I:[0-9]+]], %{{.*}}, %[[K:[0-9]+]]) [%[[B]], %[[S]]] -> tensor<?x?x8xf32> {
// CHECK-NEXT: te.read %[[ADD]]
// CHECK-NEXT: %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:[0-9]+]] = arith.subi %[[M]], %[[ONE]] : index
// CHECK-NEXT: %[[AT:[0-9]+]] = arith.minui %[[K]], %[[LAST]] : index
// CHECK-NEXT: te.read %m[%[[I]], %[[ZERO]], %[[AT]]] : tensor<?x1x?xf32>

// -----

// A reduction over a run-time axis is `?` in the op and a size operand after the result's; a mean divides by the
// run-time count, converted in the body.

func.func @mean(%x: tensor<?x4xf32>) -> tensor<1x4xf32> {
  %0 = graph.reduce_mean %x {axes = array<i64: 0>, keepdims} : tensor<?x4xf32> -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}

// CHECK-LABEL: func.func @mean
// CHECK-NEXT: %[[N:[0-9]+]] = te.dim %x[0] : tensor<?x4xf32>
// CHECK-NEXT: %[[SUM:[0-9]+]] = te.compute "reduce_mean_sum" (%{{.*}}, %{{.*}}) reduce sum (%{{.*}} : ?) [%[[N]]] -> tensor<1x4xf32> {
// CHECK:      te.compute "reduce_mean" (%{{.*}}, %{{.*}}) -> tensor<1x4xf32> {
// CHECK-NEXT: %[[V:[0-9]+]] = te.read %[[SUM]]
// CHECK-NEXT: %[[I:[0-9]+]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT: %[[F:[0-9]+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT: arith.divf %[[V]], %[[F]] : f32

// -----

// Reshape: 0 copies the input's extent (the same value), -1 is the element count over the others with the extents
// both sides share cancelled (`reshape_rest`: here x's own second extent); a concatenation's extent along its axis is
// the sum of its inputs'.

func.func @reshape(%x: tensor<?x?x2x4xf32>, %y: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %0 = graph.reshape %x {shape = array<i64: 0, -1, 8>} : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
  %1 = graph.concat %0, %y {axis = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  func.return %1 : tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @reshape
// CHECK-NEXT: %[[B:[0-9]+]] = te.dim %x[0] : tensor<?x?x2x4xf32>
// CHECK-NEXT: %[[REST:[0-9]+]] = te.dim %x[1] : tensor<?x?x2x4xf32>
// CHECK-NEXT: %[[T:[0-9]+]] = te.dim %y[1] : tensor<?x?x8xf32>
// CHECK-NEXT: %[[R:[0-9]+]] = te.compute "reshape" (%{{.*}}, %{{.*}}, %{{.*}}) [%[[B]], %[[REST]]] -> tensor<?x?x8xf32> {
// CHECK:      %[[TOTAL:[0-9]+]] = arith.addi %[[REST]], %[[T]] : index
// CHECK:      te.compute "concat" (%{{.*}}, %{{.*}}, %{{.*}}) [%[[B]], %[[TOTAL]]] -> tensor<?x?x8xf32> {
