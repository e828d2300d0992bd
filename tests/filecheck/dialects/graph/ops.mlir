// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @mlp(%x: tensor<1x1x4x4xf32>) -> tensor<1x10xf32> {
  %flat = graph.reshape %x : tensor<1x1x4x4xf32> -> tensor<1x16xf32>
  %w0 = graph.weight "fc0.weight" : tensor<8x16xf32>
  %b0 = graph.weight "fc0.bias" : tensor<8xf32>
  %h = graph.gemm %flat, %w0, %b0 {trans_b} : (tensor<1x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %a = graph.relu %h : tensor<1x8xf32>
  %w1 = graph.weight "fc1.weight" : tensor<8x10xf32>
  %l = graph.matmul %a, %w1 : (tensor<1x8xf32>, tensor<8x10xf32>) -> tensor<1x10xf32>
  %p = graph.softmax %l {axis = 1 : i64} : tensor<1x10xf32>
  func.return %p : tensor<1x10xf32>
}

// CHECK:      func.func @mlp(%x: tensor<1x1x4x4xf32>) -> tensor<1x10xf32> {
// CHECK-NEXT:   %flat = graph.reshape %x : tensor<1x1x4x4xf32> -> tensor<1x16xf32>
// CHECK-NEXT:   %w0 = graph.weight "fc0.weight" : tensor<8x16xf32>
// CHECK-NEXT:   %b0 = graph.weight "fc0.bias" : tensor<8xf32>
// CHECK-NEXT:   %h = graph.gemm %flat, %w0, %b0 {trans_b} : (tensor<1x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:   %a = graph.relu %h : tensor<1x8xf32>
// CHECK-NEXT:   %w1 = graph.weight "fc1.weight" : tensor<8x10xf32>
// CHECK-NEXT:   %l = graph.matmul %a, %w1 : (tensor<1x8xf32>, tensor<8x10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT:   %p = graph.softmax %l {axis = 1 : i64} : tensor<1x10xf32>
// CHECK-NEXT:   func.return %p : tensor<1x10xf32>
// CHECK-NEXT: }

func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<4x1x3xf32>) -> tensor<4x2x3xf32> {
  %add = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = graph.sub %add, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %mul = graph.mul %c, %sub : (tensor<4x1x3xf32>, tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %div = graph.div %mul, %b : (tensor<4x2x3xf32>, tensor<3xf32>) -> tensor<4x2x3xf32>
  %sig = graph.sigmoid %div : tensor<4x2x3xf32>
  %tanh = graph.tanh %sig : tensor<4x2x3xf32>
  %exp = graph.exp %tanh : tensor<4x2x3xf32>
  func.return %exp : tensor<4x2x3xf32>
}

// CHECK:      func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<4x1x3xf32>) -> tensor<4x2x3xf32> {
// CHECK-NEXT:   %add = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %sub = graph.sub %add, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %mul = graph.mul %c, %sub : (tensor<4x1x3xf32>, tensor<2x3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:   %div = graph.div %mul, %b : (tensor<4x2x3xf32>, tensor<3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:   %sig = graph.sigmoid %div : tensor<4x2x3xf32>
// CHECK-NEXT:   %tanh = graph.tanh %sig : tensor<4x2x3xf32>
// CHECK-NEXT:   %exp = graph.exp %tanh : tensor<4x2x3xf32>
// CHECK-NEXT:   func.return %exp : tensor<4x2x3xf32>
// CHECK-NEXT: }

func.func @gemm_variants(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %no_bias = graph.gemm %a, %b {trans_a, alpha = 5.000000e-01 : f32} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %full = graph.gemm %a, %b, %c {trans_a, alpha = 2.000000e+00 : f32, beta = 0.000000e+00 : f32} : (tensor<4x3xf32>, tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %no_bias, %full : tensor<3x5xf32>, tensor<3x5xf32>
}

// CHECK:      func.func @gemm_variants
// CHECK-NEXT:   %no_bias = graph.gemm %a, %b {trans_a, alpha = 5.000000e-01 : f32} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:   %full = graph.gemm %a, %b, %c {trans_a, alpha = 2.000000e+00 : f32, beta = 0.000000e+00 : f32} : (tensor<4x3xf32>, tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>

func.func @shapes(%x: tensor<2x3x4xf32>, %v: tensor<4xf32>, %m: tensor<2x4x5xf32>) -> (tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3xf32>, tensor<2x3x5xf32>) {
  %t = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %r = graph.reshape %t : tensor<4x2x3xf32> -> tensor<24xf32>
  %mv = graph.matmul %x, %v : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %bm = graph.matmul %x, %m : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %t, %r, %mv, %bm : tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3xf32>, tensor<2x3x5xf32>
}

// CHECK:      func.func @shapes
// CHECK-NEXT:   %t = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:   %r = graph.reshape %t : tensor<4x2x3xf32> -> tensor<24xf32>
// CHECK-NEXT:   %mv = graph.matmul %x, %v : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %bm = graph.matmul %x, %m : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>

func.func @constant() -> tensor<2x3xf32> {
  %c = graph.constant {value = 1.000000e-05 : f32} : tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// CHECK:      func.func @constant
// CHECK-NEXT:   %c = graph.constant {value = 1.000000e-05 : f32} : tensor<2x3xf32>

func.func @shrink(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.shrink %x {lambd = 1.5 : f32, bias = 0.5 : f32} : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK:      func.func @shrink
// CHECK-NEXT:   %y = graph.shrink %x {lambd = 1.500000e+00 : f32, bias = 5.000000e-01 : f32} : tensor<8xf32>
