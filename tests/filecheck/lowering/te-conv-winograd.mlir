// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-im2col{algorithm=direct},te-conv-layout,te-channels-last,te-conv-winograd{convolutions=all}' | filecheck %s
// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-im2col{algorithm=direct},te-conv-layout,te-channels-last,te-conv-winograd{convolutions=all},te-inline' | filecheck %s --check-prefix=INLINE
// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-im2col{algorithm=direct},te-conv-layout,te-channels-last,te-conv-winograd' | filecheck %s --check-prefix=NONE
// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-im2col{algorithm=direct},te-conv-layout,te-channels-last,te-conv-winograd{convolutions=none}' | filecheck %s --check-prefix=NONE
// RUN: not mini-opt %s -p 'te-conv-winograd{convolutions=some}' 2>&1 | filecheck %s --check-prefix=ERROR

// @main: a padded 3x3 convolution (4 -> 8 channels over a 4x4 map), a ReLU and a 1x1 convolution. te-channels-last
// stores the 3x3 convolution channels-last, so Winograd F(2x2, 3x3) takes it: 2x2 = 4 tiles of 2x2 pixels, 16
// transform points. The input transform reads the padded input through its channels-last copy (the network input
// stays NCHW) four times per point (two non-zero entries per row of B^T, squared), the weight transform the 3x3
// filter nine times, the batched GEMM sums over the 4 input channels per point, and the output transform reads nine
// GEMM results per pixel, at its tile (row / 2 * 2 + col / 2) and at points picked by the pixel's row and column in
// its tile (row % 2, col % 2). The 1x1 convolution is no 3x3 one, and it stays NCHW (it feeds the result).
// te-inline then folds the output transform into the ReLU and the padding into the channels-last copy, which stays
// its own compute: the input transform, an elementwise consumer, would otherwise read the NCHW input across channels.
// @odd: a 3x3 convolution over a 5x5 map takes 3x3 = 9 tiles; the last row and column of tiles reach one past the
// padded 7x7 input, so every input-transform read is clamped to its last row and column (6): the clamped reads feed
// only the tiles' second row and column of outputs, beyond the map. `auto` leaves both convolutions of under 64
// channels direct, as does `none`.

builtin.module {
  func.func @main(%x: tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32> {
    %w = graph.weight "w" : tensor<8x4x3x3xf32>
    %c = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
    %r = graph.relu %c : tensor<1x8x4x4xf32>
    %w1 = graph.weight "w1" : tensor<8x8x1x1xf32>
    %y = graph.conv %r, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    func.return %y : tensor<1x8x4x4xf32>
  }
  func.func @odd(%x: tensor<1x4x5x5xf32>) -> tensor<1x8x5x5xf32> {
    %w = graph.weight "w" : tensor<8x4x3x3xf32>
    %c = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
    %r = graph.relu %c : tensor<1x8x5x5xf32>
    %w1 = graph.weight "w1" : tensor<8x8x1x1xf32>
    %y = graph.conv %r, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x5x5xf32>
    func.return %y : tensor<1x8x5x5xf32>
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[COPY:.*]] = te.compute "conv_input_nhwc" ({{.*}}) -> tensor<1x6x6x4xf32>
// CHECK:         %[[V:.*]] = te.compute "winograd_input" ({{.*}}) -> tensor<16x4x4xf32>
// CHECK-COUNT-4:   te.read %[[COPY]][{{.*}}] : tensor<1x6x6x4xf32>
// CHECK-NOT:       te.read
// CHECK:           te.yield
// CHECK:         %[[U:.*]] = te.compute "winograd_weight" ({{.*}}) -> tensor<16x4x8xf32>
// CHECK-COUNT-9:   te.read %w[{{.*}}] : tensor<8x4x3x3xf32>
// CHECK-NOT:       te.read
// CHECK:           te.yield
// CHECK:         %[[M:.*]] = te.compute "winograd_gemm" (%[[E:.*]], %[[T:.*]], %[[F:.*]]) reduce sum (%[[C:.*]] : 4) -> tensor<16x4x8xf32>
// CHECK-NEXT:      te.read %[[V]][%[[E]], %[[T]], %[[C]]] : tensor<16x4x4xf32>
// CHECK-NEXT:      te.read %[[U]][%[[E]], %[[C]], %[[F]]] : tensor<16x4x8xf32>
// CHECK:         %[[Y:.*]] = te.compute "winograd_output" (%{{.*}}, %[[H:.*]], %[[W:.*]], %[[O:.*]]) -> tensor<1x4x4x8xf32>
// CHECK-DAG:       %[[TH:.*]] = arith.divui %[[H]], %{{.*}} : index
// CHECK-DAG:       %[[TW:.*]] = arith.divui %[[W]], %{{.*}} : index
// CHECK-DAG:       arith.remui %[[H]], %{{.*}} : index
// CHECK-DAG:       arith.remui %[[W]], %{{.*}} : index
// CHECK:           %[[ROW:.*]] = arith.muli %[[TH]], %{{.*}} : index
// CHECK-NEXT:      %[[TILE:.*]] = arith.addi %[[ROW]], %[[TW]] : index
// CHECK-COUNT-9:   te.read %[[M]][%{{.*}}, %[[TILE]], %[[O]]] : tensor<16x4x8xf32>
// CHECK:         te.compute "relu"
// CHECK-NEXT:      te.read %[[Y]]
// CHECK:         te.compute "conv" ({{.*}}) reduce sum ({{.*}} : 8, {{.*}} : 1, {{.*}} : 1) -> tensor<1x8x4x4xf32>
// CHECK-LABEL: func.func @odd
// CHECK:         %[[COPY:.*]] = te.compute "conv_input_nhwc" ({{.*}}) -> tensor<1x7x7x4xf32>
// CHECK:         te.compute "winograd_input" ({{.*}}, %[[CH:.*]]) -> tensor<16x9x4xf32>
// CHECK-COUNT-4:   %[[ROW:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK-NOT:       te.read
// CHECK:           %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[COL:.*]] = arith.minui %{{.*}}, %[[SIX]] : index
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      te.read %[[COPY]][%{{.*}}, %[[ROW]], %[[COL]], %[[CH]]] : tensor<1x7x7x4xf32>
// CHECK:           te.yield
// CHECK:         te.compute "winograd_gemm" ({{.*}}) reduce sum ({{.*}} : 4) -> tensor<16x9x8xf32>
// CHECK:         te.compute "winograd_output" ({{.*}}) -> tensor<1x5x5x8xf32>
// CHECK-NOT:     te.compute "conv" ({{.*}}) reduce sum ({{.*}} : 4, {{.*}} : 3, {{.*}} : 3)

// INLINE-LABEL: func.func @main
// INLINE:         te.compute "conv_input_nhwc" ({{.*}}) -> tensor<1x6x6x4xf32>
// INLINE:         te.compute "winograd_input"
// INLINE:         te.compute "winograd_weight"
// INLINE:         %[[M:.*]] = te.compute "winograd_gemm"
// INLINE-NOT:     te.compute "winograd_output"
// INLINE:         te.compute "relu" ({{.*}}) -> tensor<1x4x4x8xf32>
// INLINE-COUNT-9:   te.read %[[M]]
// INLINE:           arith.maximumf

// NONE-NOT: winograd

// ERROR: te-conv-winograd: convolutions must be one of auto, all, none, got 'some'
