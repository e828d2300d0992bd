// RUN: mini-opt %s --split-input-file -p 'graph-partition{target=c}' | filecheck %s
// RUN: not mini-opt %s --split-input-file -p 'graph-partition{target=tpu}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// What is offloaded: the C target's ops (conv, add, relu, matmul, gemm on f32) join one region; the softmax it does
// not support stays, and the weights the region reads become its inputs.

func.func @offload(%x: tensor<1x3x8x8xf32>) -> tensor<1x256xf32> {
  %w = graph.weight "w" : tensor<4x3x3x3xf32>
  %b = graph.weight "b" : tensor<4xf32>
  %c = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = graph.add %c, %c : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %s : tensor<1x4x8x8xf32>
  %f = graph.reshape %r : tensor<1x4x8x8xf32> -> tensor<1x256xf32>
  %p = graph.softmax %f {axis = 1 : i64} : tensor<1x256xf32>
  func.return %p : tensor<1x256xf32>
}

// CHECK:      func.func @offload(%x: tensor<1x3x8x8xf32>) -> tensor<1x256xf32> {
// CHECK-NEXT:   %w = graph.weight "w" : tensor<4x3x3x3xf32>
// CHECK-NEXT:   %b = graph.weight "b" : tensor<4xf32>
// CHECK-NEXT:   %r = func.call @c_region_0(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:   %f = graph.reshape %r : tensor<1x4x8x8xf32> -> tensor<1x256xf32>
// CHECK-NEXT:   %p = graph.softmax %f {axis = 1 : i64} : tensor<1x256xf32>
// CHECK-NEXT:   func.return %p : tensor<1x256xf32>
// CHECK:      func.func private @c_region_0(%0: tensor<1x3x8x8xf32>, %1: tensor<4x3x3x3xf32>, %2: tensor<4xf32>) -> tensor<1x4x8x8xf32> attributes {minimlc.external_target = "c"} {
// CHECK-NEXT:   %c = graph.conv %0, %1, %2
// CHECK-NEXT:   %s = graph.add %c, %c
// CHECK-NEXT:   %r = graph.relu %s
// CHECK-NEXT:   func.return %r : tensor<1x4x8x8xf32>

// -----

// Merging across an unsupported op: the sigmoid does not depend on the convolution, so conv, add and relu are one
// region that reads the sigmoid's result.

func.func @across(%x: tensor<1x3x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = graph.weight "w" : tensor<4x3x3x3xf32>
  %a = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %u = graph.sigmoid %y : tensor<1x4x8x8xf32>
  %s = graph.add %a, %u : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %s : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// CHECK:      func.func @across(%x: tensor<1x3x8x8xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:   %w = graph.weight "w" : tensor<4x3x3x3xf32>
// CHECK-NEXT:   %u = graph.sigmoid %y : tensor<1x4x8x8xf32>
// CHECK-NEXT:   %r = func.call @c_region_0(%x, %w, %u)
// CHECK-NEXT:   func.return %r : tensor<1x4x8x8xf32>
// CHECK:      func.func private @c_region_0(%0: tensor<1x3x8x8xf32>, %1: tensor<4x3x3x3xf32>, %2: tensor<1x4x8x8xf32>)
// CHECK-NEXT:   %a = graph.conv %0, %1
// CHECK-NEXT:   %s = graph.add %a, %2
// CHECK-NEXT:   %r = graph.relu %s
// CHECK-NEXT:   func.return %r

// -----

// A merge that would make a cycle is refused: the sigmoid reads the convolution and feeds the add, so one region of
// conv and add would both feed and read it. Two regions, the sigmoid between them.

func.func @cycle(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = graph.weight "w" : tensor<4x3x3x3xf32>
  %a = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %u = graph.sigmoid %a : tensor<1x4x8x8xf32>
  %s = graph.add %a, %u : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %s : tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// CHECK:      func.func @cycle(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:   %w = graph.weight "w" : tensor<4x3x3x3xf32>
// CHECK-NEXT:   %a = func.call @c_region_0(%x, %w)
// CHECK-NEXT:   %u = graph.sigmoid %a : tensor<1x4x8x8xf32>
// CHECK-NEXT:   %r = func.call @c_region_1(%a, %u)
// CHECK-NEXT:   func.return %r : tensor<1x4x8x8xf32>
// CHECK:      func.func private @c_region_0(
// CHECK-NEXT:   %a = graph.conv
// CHECK-NEXT:   func.return %a
// CHECK:      func.func private @c_region_1(
// CHECK-NEXT:   %s = graph.add
// CHECK-NEXT:   %r = graph.relu %s
// CHECK-NEXT:   func.return %r

// -----

// An unsupported reader of a region's value that sat before the region's last op moves after the call; the region
// returns every value read outside it.

func.func @reader(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = graph.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = graph.tanh %m : tensor<4x4xf32>
  %s = graph.add %m, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %s, %t : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK:      func.func @reader(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
// CHECK-NEXT:   %m, %s = func.call @c_region_0(%x, %y) : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:   %t = graph.tanh %m : tensor<4x4xf32>
// CHECK-NEXT:   func.return %s, %t : tensor<4x4xf32>, tensor<4x4xf32>

// -----

// Interleaved regions: the add %p cannot join the matmul's region (through the sigmoid it would both feed and read
// it), so it starts another, which the relus join; the ops end up ordered so that each follows what it reads.

func.func @interleaved(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %z: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %a = graph.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = graph.sigmoid %a : tensor<4x4xf32>
  %p = graph.add %a, %s : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = graph.relu %y : tensor<4x4xf32>
  %w = graph.add %p, %q : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = graph.relu %q : tensor<4x4xf32>
  %b = graph.add %a, %z : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %w, %l, %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK:      func.func @interleaved(
// CHECK-NEXT:   %a, %b = func.call @c_region_0(%x, %z)
// CHECK-NEXT:   %s = graph.sigmoid %a : tensor<4x4xf32>
// CHECK-NEXT:   %w, %l = func.call @c_region_1(%a, %s, %y)
// CHECK-NEXT:   func.return %w, %l, %b
// CHECK:      func.func private @c_region_0(
// CHECK-NEXT:   %a = graph.matmul
// CHECK-NEXT:   %b = graph.add
// CHECK-NEXT:   func.return %a, %b
// CHECK:      func.func private @c_region_1(
// CHECK-NEXT:   %p = graph.add
// CHECK-NEXT:   %q = graph.relu
// CHECK-NEXT:   %w = graph.add %p, %q
// CHECK-NEXT:   %l = graph.relu %q
// CHECK-NEXT:   func.return %w, %l

// UNKNOWN: graph-partition: unknown target 'tpu' (registered: c, onnxruntime)
