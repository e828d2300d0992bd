// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-im2col{algorithm=direct},te-conv-layout,te-channels-last,te-conv-winograd{convolutions=all}' | filecheck %s

// Winograd F(2x2, 3x3) under a run-time batch (`te/conv_batch.py`): the convolution is planned as one image, 2x2 = 4
// tiles of its 4x4 map, and the batch stays the outermost axis of the transformed input, the GEMM and the output
// transform, each sized by the batch extent %b; the weight transform has no batch. Per image, the GEMM is the one of
// batch 1 (16 points x 4 tiles x 8 channels, summed over 4), which the static GEMM rule schedules inside the batch loop.

builtin.module {
  func.func @main(%x: tensor<?x4x4x4xf32>) -> tensor<?x8x4x4xf32> {
    %w = graph.weight "w" : tensor<8x4x3x3xf32>
    %c = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<?x4x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32>
    %r = graph.relu %c : tensor<?x8x4x4xf32>
    %w1 = graph.weight "w1" : tensor<8x8x1x1xf32>
    %y = graph.conv %r, %w1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<?x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x4x4xf32>
    func.return %y : tensor<?x8x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.*]] = te.dim %x[0] : tensor<?x4x4x4xf32>
// CHECK:         %[[COPY:.*]] = te.compute "conv_input_nhwc" ({{.*}}) [%[[B]]] -> tensor<?x6x6x4xf32>
// CHECK:         %[[V:.*]] = te.compute "winograd_input" (%[[N:.*]], %{{.*}}, %{{.*}}, %{{.*}}) [%[[B]]] -> tensor<?x16x4x4xf32>
// CHECK-COUNT-4:   te.read %[[COPY]][%[[N]], {{.*}}] : tensor<?x6x6x4xf32>
// CHECK-NOT:       te.read
// CHECK:           te.yield
// CHECK:         %[[U:.*]] = te.compute "winograd_weight" ({{.*}}) -> tensor<16x4x8xf32>
// CHECK:         %[[M:.*]] = te.compute "winograd_gemm" (%[[GN:.*]], %[[E:.*]], %[[T:.*]], %[[F:.*]]) [%[[B]]] reduce sum (%[[C:.*]] : 4) -> tensor<?x16x4x8xf32>
// CHECK-NEXT:      te.read %[[V]][%[[GN]], %[[E]], %[[T]], %[[C]]] : tensor<?x16x4x4xf32>
// CHECK-NEXT:      te.read %[[U]][%[[E]], %[[C]], %[[F]]] : tensor<16x4x8xf32>
// CHECK:         te.compute "winograd_output" (%[[ON:.*]], %{{.*}}, %{{.*}}, %[[O:.*]]) [%[[B]]] -> tensor<?x4x4x8xf32>
// CHECK-COUNT-9:   te.read %[[M]][%[[ON]], %{{.*}}, %{{.*}}, %[[O]]] : tensor<?x16x4x8xf32>
