// RUN: mini-opt %s -p graph-fold-batch-norm | filecheck %s

func.func @conv_bias(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = graph.weight "w" : tensor<4x3x3x3xf32>
  %b = graph.weight "b" : tensor<4xf32>
  %gamma = graph.weight "gamma" : tensor<4xf32>
  %beta = graph.weight "beta" : tensor<4xf32>
  %mean = graph.weight "mean" : tensor<4xf32>
  %var = graph.weight "var" : tensor<4xf32>
  %y = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %n = graph.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 1.000000e-03 : f32} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %n : tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @conv_bias(
// CHECK:         %var = graph.weight "var" : tensor<4xf32>
// CHECK-NEXT:    %[[EPS:.*]] = graph.constant {value = 1.000000e-03 : f32} : tensor<4xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = graph.add %var, %[[EPS]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[ROOT:.*]] = graph.sqrt %[[SHIFTED]] : tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.div %gamma, %[[ROOT]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[COLUMN:.*]] = graph.reshape %[[S]] : tensor<4xf32> -> tensor<4x1x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.mul %w, %[[COLUMN]] : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK-NEXT:    %[[CENTRED:.*]] = graph.sub %b, %mean : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = graph.mul %[[CENTRED]], %[[S]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.add %[[SCALED]], %beta : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.conv %x, %[[W]], %[[B]] {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:    %r = graph.relu %[[N]] : tensor<1x4x6x6xf32>
// CHECK-NEXT:    func.return %r : tensor<1x4x6x6xf32>

// Without a bias the new bias is `-mean * s + beta`; a grouped, strided, padded conv keeps its attributes.
func.func @conv_no_bias(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.weight "w" : tensor<4x2x3x3xf32>
  %gamma = graph.weight "gamma" : tensor<4xf32>
  %beta = graph.weight "beta" : tensor<4xf32>
  %mean = graph.weight "mean" : tensor<4xf32>
  %var = graph.weight "var" : tensor<4xf32>
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  %n = graph.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 1.000000e-05 : f32} : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %n : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @conv_no_bias(
// CHECK:         %[[S:.*]] = graph.div %gamma
// CHECK-NEXT:    %[[COLUMN:.*]] = graph.reshape %[[S]] : tensor<4xf32> -> tensor<4x1x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.mul %w, %[[COLUMN]] : (tensor<4x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x2x3x3xf32>
// CHECK-NEXT:    %[[CENTRED:.*]] = graph.neg %mean : tensor<4xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = graph.mul %[[CENTRED]], %[[S]]
// CHECK-NEXT:    %[[B:.*]] = graph.add %[[SCALED]], %beta
// CHECK-NEXT:    %[[N:.*]] = graph.conv %x, %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64}
// CHECK-NEXT:    func.return %[[N]]

// A GEMM with a transposed weight scales its rows; a bias with beta != 1 is scaled first and beta becomes 1.
func.func @gemm(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = graph.weight "w" : tensor<4x8xf32>
  %c = graph.weight "c" : tensor<1x4xf32>
  %gamma = graph.weight "gamma" : tensor<4xf32>
  %beta = graph.weight "beta" : tensor<4xf32>
  %mean = graph.weight "mean" : tensor<4xf32>
  %var = graph.weight "var" : tensor<4xf32>
  %y = graph.gemm %x, %w, %c {trans_b, alpha = 2.000000e+00 : f32, beta = 5.000000e-01 : f32} : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %n = graph.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %n : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @gemm(
// CHECK:         %[[S:.*]] = graph.div %gamma
// CHECK-NEXT:    %[[ROW:.*]] = graph.reshape %[[S]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[W:.*]] = graph.mul %w, %[[ROW]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[HALF:.*]] = graph.constant {value = 5.000000e-01 : f32} : tensor<1x4xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.mul %c, %[[HALF]] : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[CENTRED:.*]] = graph.sub %[[C]], %mean : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = graph.mul %[[CENTRED]], %[[S]] : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.add %[[SCALED]], %beta : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.gemm %x, %[[W]], %[[B]] {alpha = 2.000000e+00 : f32, trans_b} : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[N]]

// A matmul scales the columns of its right operand and gains a bias.
func.func @matmul(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = graph.weight "w" : tensor<8x4xf32>
  %gamma = graph.weight "gamma" : tensor<4xf32>
  %beta = graph.weight "beta" : tensor<4xf32>
  %mean = graph.weight "mean" : tensor<4xf32>
  %var = graph.weight "var" : tensor<4xf32>
  %y = graph.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %n = graph.batch_norm %y, %gamma, %beta, %mean, %var {epsilon = 1.000000e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %n : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[S:.*]] = graph.div %gamma
// CHECK-NEXT:    %[[W:.*]] = graph.mul %w, %[[S]] : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:    %[[PRODUCT:.*]] = graph.matmul %x, %[[W]] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[CENTRED:.*]] = graph.neg %mean
// CHECK-NEXT:    %[[SCALED:.*]] = graph.mul %[[CENTRED]], %[[S]]
// CHECK-NEXT:    %[[B:.*]] = graph.add %[[SCALED]], %beta
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[PRODUCT]], %[[B]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[N]]

// Not folded: the conv has another use, its weight is a run-time input, the batch norm's parameters are run-time
// inputs, or the batch norm's input comes from an op that is no linear layer.
func.func @kept(%x: tensor<1x3x8x8xf32>, %wx: tensor<4x3x3x3xf32>, %vx: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %w = graph.weight "w" : tensor<4x3x3x3xf32>
  %p = graph.weight "p" : tensor<4xf32>
  %shared = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %n0 = graph.batch_norm %shared, %p, %p, %p, %p {epsilon = 1.000000e-05 : f32} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %dynamic = graph.conv %x, %wx {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %n1 = graph.batch_norm %dynamic, %p, %p, %p, %p {epsilon = 1.000000e-05 : f32} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %n2 = graph.batch_norm %y, %p, %p, %p, %vx {epsilon = 1.000000e-05 : f32} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %n2 : tensor<1x4x6x6xf32>
  %n3 = graph.batch_norm %r, %p, %p, %p, %p {epsilon = 1.000000e-05 : f32} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return %shared, %n0, %n1, %n2, %n3 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK-NEXT:    %w = graph.weight "w"
// CHECK-NEXT:    %p = graph.weight "p"
// CHECK-NEXT:    %shared = graph.conv %x, %w
// CHECK-NEXT:    %n0 = graph.batch_norm %shared
// CHECK-NEXT:    %dynamic = graph.conv %x, %wx
// CHECK-NEXT:    %n1 = graph.batch_norm %dynamic
// CHECK-NEXT:    %y = graph.conv %x, %w
// CHECK-NEXT:    %n2 = graph.batch_norm %y, %p, %p, %p, %vx
// CHECK-NEXT:    %r = graph.relu %n2
// CHECK-NEXT:    %n3 = graph.batch_norm %r
// CHECK-NEXT:    func.return
