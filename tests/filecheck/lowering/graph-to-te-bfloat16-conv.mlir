// RUN: mini-opt %s --mcpu=znver4 -p graph-to-te --split-input-file | filecheck %s

// A group-1 float32 conv marked for bfloat16 products pairs its input channels into i32 words of two bfloat16
// values (element j of word w is channel w + j * ceil(C / 2): with 3 channels, word 0 holds channels 0 and 2, word 1
// channel 1 and, past C, 0.0): the weight's words (a weight alone: computed at load time), the input's words
// channels-last and padded spatially with 0.0 (a 3x3 window of stride 2 over 6 columns, padded by 1, reaches 7),
// and "conv" summing llvmx.dot_bf16 from 0.0 over (KH, KW, C/2) in float32, its output NCHW as the float
// convolution's; the bias is the float path's "conv_bias".
func.func @odd_channels(%x: tensor<1x3x6x6xf32>, %b: tensor<16xf32>) -> tensor<1x16x3x3xf32> {
  %w = graph.weight "w" : tensor<16x3x3x3xf32>
  %y = graph.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, minimlc.bf16_products} : (tensor<1x3x6x6xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x3x3xf32>
  func.return %y : tensor<1x16x3x3xf32>
}

// CHECK-LABEL: func.func @odd_channels
// CHECK:       %[[W:.*]] = te.compute "conv_bf16_weight" (%[[F:[0-9]+]], %[[C:[0-9]+]], %[[KH:[0-9]+]], %[[KW:[0-9]+]]) -> tensor<16x2x3x3xi32> {
// CHECK-NEXT:    %[[LO:[0-9]+]] = te.read %w[%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<16x3x3x3xf32>
// CHECK-NEXT:    %[[TWO:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[C2:[0-9]+]] = arith.addi %[[C]], %[[TWO]] : index
// CHECK-NEXT:    %[[THREE:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:    %[[INSIDE:[0-9]+]] = arith.cmpi slt, %[[C2]], %[[THREE]] : index
// CHECK-NEXT:    %[[LAST:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[CLAMPED:[0-9]+]] = arith.minsi %[[C2]], %[[LAST]] : index
// CHECK-NEXT:    %[[HIGH:[0-9]+]] = te.read %w[%[[F]], %[[CLAMPED]], %[[KH]], %[[KW]]] : tensor<16x3x3x3xf32>
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[HIGH_OR_ZERO:[0-9]+]] = arith.select %[[INSIDE]], %[[HIGH]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[WORD:[0-9]+]] = llvmx.pack_bf16 %[[LO]], %[[HIGH_OR_ZERO]] : f32 -> i32
// CHECK-NEXT:    te.yield %[[WORD]] : i32
// CHECK:       %[[X:.*]] = te.compute "conv_bf16_input" (%[[N:[0-9]+]], %[[H:[0-9]+]], %[[V:[0-9]+]], %[[XC:[0-9]+]]) -> tensor<1x7x7x2xi32> {
// CHECK-NEXT:    %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ROW:[0-9]+]] = arith.subi %[[H]], %[[ONE]] : index
// CHECK:         %[[IN_ROW:[0-9]+]] = arith.cmpi sge, %[[ROW]], %{{[0-9]+}} : index
// CHECK:         %[[R:[0-9]+]] = arith.maxsi %[[ROW]], %{{[0-9]+}} : index
// CHECK:         %[[COL:[0-9]+]] = arith.subi %[[V]], %{{[0-9]+}} : index
// CHECK:         %[[IN_COL:[0-9]+]] = arith.cmpi sge, %[[COL]], %{{[0-9]+}} : index
// CHECK-NEXT:    %[[IN:[0-9]+]] = arith.andi %[[IN_ROW]], %[[IN_COL]] : i1
// CHECK:         %[[K:[0-9]+]] = arith.maxsi %[[COL]], %{{[0-9]+}} : index
// CHECK-NEXT:    %[[PIXEL:[0-9]+]] = te.read %x[%[[N]], %[[XC]], %[[R]], %[[K]]] : tensor<1x3x6x6xf32>
// CHECK-NEXT:    %[[PAD:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %{{[0-9]+}} = arith.select %[[IN]], %[[PIXEL]], %[[PAD]] : f32
// CHECK:         te.yield %{{[0-9]+}} : i32
// CHECK:       %[[CONV:.*]] = te.compute "conv" (%[[CN:[0-9]+]], %[[CF:[0-9]+]], %[[CH:[0-9]+]], %[[CV:[0-9]+]]) reduce sum (%[[CKH:[0-9]+]] : 3, %[[CKW:[0-9]+]] : 3, %[[CW:[0-9]+]] : 2) -> tensor<1x16x3x3xf32> {
// CHECK:         %[[XW:[0-9]+]] = te.read %[[X]][%[[CN]], %{{[0-9]+}}, %{{[0-9]+}}, %[[CW]]] : tensor<1x7x7x2xi32>
// CHECK-NEXT:    %[[WW:[0-9]+]] = te.read %[[W]][%[[CF]], %[[CW]], %[[CKH]], %[[CKW]]] : tensor<16x2x3x3xi32>
// CHECK-NEXT:    %[[FROM:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[DOT:[0-9]+]] = llvmx.dot_bf16 %[[FROM]], %[[XW]], %[[WW]] : f32, i32
// CHECK-NEXT:    te.yield %[[DOT]] : f32
// CHECK:       te.compute "conv_bias" (%[[BN:[0-9]+]], %[[BF:[0-9]+]], %[[BH:[0-9]+]], %[[BV:[0-9]+]]) -> tensor<1x16x3x3xf32> {
// CHECK-NEXT:    %[[SUM:[0-9]+]] = te.read %[[CONV]][%[[BN]], %[[BF]], %[[BH]], %[[BV]]] : tensor<1x16x3x3xf32>
// CHECK-NEXT:    %[[BIAS:[0-9]+]] = te.read %b[%[[BF]]] : tensor<16xf32>
// CHECK-NEXT:    %{{[0-9]+}} = arith.addf %[[SUM]], %[[BIAS]] : f32

// -----

// Even channels, no padding: every element of a word lies inside the channels, no select; the input's words read
// it unclamped.
func.func @even_channels(%x: tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = graph.weight "w" : tensor<16x4x1x1xf32>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, minimlc.bf16_products} : (tensor<1x4x4x4xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @even_channels
// CHECK:       te.compute "conv_bf16_weight" {{.*}} -> tensor<16x2x1x1xi32> {
// CHECK-NOT:     arith.select {{.*}} : f32
// CHECK:       te.compute "conv_bf16_input" (%[[N:[0-9]+]], %[[H:[0-9]+]], %[[V:[0-9]+]], %[[C:[0-9]+]]) -> tensor<1x4x4x2xi32> {
// CHECK-NEXT:    te.read %x[%[[N]], %[[C]], %[[H]], %[[V]]] : tensor<1x4x4x4xf32>
// CHECK-NEXT:    %[[TWO:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[HIGH:[0-9]+]] = arith.addi %[[C]], %[[TWO]] : index
// CHECK-NEXT:    te.read %x[%[[N]], %[[HIGH]], %[[H]], %[[V]]] : tensor<1x4x4x4xf32>
// CHECK-NOT:     arith.select {{.*}} : f32
// CHECK:       te.compute "conv" {{.*}} reduce sum (%{{[0-9]+}} : 1, %{{[0-9]+}} : 1, %{{[0-9]+}} : 2) -> tensor<1x16x4x4xf32> {
// CHECK:         llvmx.dot_bf16
// CHECK-NOT:   te.compute "conv_bias"

// -----

// Grouped (here depthwise) convolutions and convolutions without the mark stay float32 multiply-adds.
func.func @float_ones(%x: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>) {
  %d = graph.weight "d" : tensor<4x1x3x3xf32>
  %w = graph.weight "w" : tensor<8x4x1x1xf32>
  %y = graph.conv %x, %d {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64, minimlc.bf16_products} : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %z = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %y, %z : tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @float_ones
// CHECK-NOT:   llvmx.dot_bf16
// CHECK:       te.compute "depthwise_conv" {{.*}} -> tensor<1x4x4x4xf32> {
// CHECK:         arith.mulf
// CHECK:       te.compute "conv" {{.*}} reduce sum (%{{[0-9]+}} : 4, %{{[0-9]+}} : 1, %{{[0-9]+}} : 1) -> tensor<1x8x4x4xf32> {
// CHECK:         arith.mulf
// CHECK-NOT:   llvmx.dot_bf16

// -----

// A marked conv with a run-time batch keeps the float32 form (the bfloat16 form takes static shapes).
func.func @run_time_batch(%x: tensor<?x4x4x4xf32>) -> tensor<?x16x4x4xf32> {
  %w = graph.weight "w" : tensor<16x4x1x1xf32>
  %y = graph.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64, minimlc.bf16_products} : (tensor<?x4x4x4xf32>, tensor<16x4x1x1xf32>) -> tensor<?x16x4x4xf32>
  func.return %y : tensor<?x16x4x4xf32>
}

// CHECK-LABEL: func.func @run_time_batch
// CHECK-NOT:   llvmx.dot_bf16
// CHECK:       te.compute "conv" {{.*}} [%{{[0-9]+}}] reduce sum (%{{[0-9]+}} : 4, %{{[0-9]+}} : 1, %{{[0-9]+}} : 1) -> tensor<?x16x4x4xf32> {
// CHECK:         arith.mulf
// CHECK-NOT:   llvmx.dot_bf16
