// RUN: mini-opt %s -p 'graph-pad-conv,graph-to-te,te-conv-layout,te-channels-last' | filecheck %s

// Convolutions under a run-time batch (`te/conv_batch.py`): the padding, the channels-last copy and the
// channels-last convolution and ReLU keep the batch extent %n, outermost, as their size operand; the rest is the
// static plan of one image (the second convolution reads the first's channels-last output, no copy in between).

builtin.module {
  func.func @main(%x: tensor<?x8x6x6xf32>) -> tensor<?x16x6x6xf32> attributes {minimlc.input_symbols = ["batch"]} {
    %w = graph.weight "w" : tensor<16x8x3x3xf32>
    %v = graph.weight "v" : tensor<16x16x1x1xf32>
    %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<?x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<?x16x6x6xf32>
    %r = graph.relu %y : tensor<?x16x6x6xf32>
    %z = graph.conv %r, %v {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<?x16x6x6xf32>, tensor<16x16x1x1xf32>) -> tensor<?x16x6x6xf32>
    func.return %z : tensor<?x16x6x6xf32>
  }
}

// CHECK:      %[[N:.*]] = te.dim %x[0] : tensor<?x8x6x6xf32>
// CHECK:      %[[PAD:.*]] = te.compute "pad" ({{.*}}) [%[[N]]] -> tensor<?x8x8x8xf32>
// CHECK:      %[[COPY:.*]] = te.compute "conv_input_nhwc" ({{.*}}) [%[[N]]] -> tensor<?x8x8x8xf32>
// CHECK-NEXT:   te.read %[[PAD]][%{{.*}}] : tensor<?x8x8x8xf32>
// CHECK:      %[[CONV:.*]] = te.compute "conv" ({{.*}}) [%[[N]]] reduce sum ({{.*}} : 8, {{.*}} : 3, {{.*}} : 3) -> tensor<?x6x6x16xf32>
// CHECK:        te.read %[[COPY]]
// CHECK:      %[[RELU:.*]] = te.compute "relu" ({{.*}}) [%[[N]]] -> tensor<?x6x6x16xf32>
// CHECK:      te.compute "conv" ({{.*}}) [%[[N]]] reduce sum ({{.*}} : 16, {{.*}} : 1, {{.*}} : 1) -> tensor<?x16x6x6xf32>
// CHECK-NOT:  conv_input_nhwc
// CHECK:        te.read %[[RELU]]
