// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @matmul_integer(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xui8>, %bz: tensor<3xi8>) -> tensor<4x3xi32> {
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<3xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// CHECK:      func.func @matmul_integer(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xui8>, %bz: tensor<3xi8>) -> tensor<4x3xi32> {
// CHECK-NEXT:   %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<3xi8>) -> tensor<4x3xi32>
// CHECK-NEXT:   func.return %y : tensor<4x3xi32>

func.func @conv_integer(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<4xi8>) -> tensor<1x4x8x8xi32> {
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>, tensor<4xi8>) -> tensor<1x4x8x8xi32>
  func.return %y : tensor<1x4x8x8xi32>
}

// CHECK:      %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>, tensor<4xi8>) -> tensor<1x4x8x8xi32>
