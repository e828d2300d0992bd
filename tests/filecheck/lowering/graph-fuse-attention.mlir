// RUN: mini-opt %s --mcpu=x86-64-v3 --split-input-file -p graph-fuse-attention | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 --split-input-file -p 'graph-fuse-attention{aligned=true}' | filecheck %s --check-prefix=ALIGNED

// The chain matmul(softmax(matmul(q, transpose(k)) * c + b), v) becomes one graph.attention of q, k, the values
// transposed, the scale and the bias (either operand order of the add). 6 keys: not a multiple of x86-64-v3's 8
// lanes, so fused by default.

func.func @scaled_biased(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x5xf32>, %c: tensor<f32>, %b: tensor<8x6xf32>) -> tensor<1x2x8x5xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x6x4xf32> -> tensor<1x2x4x6xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x8x6xf32>
  %l = graph.mul %s, %c : (tensor<1x2x8x6xf32>, tensor<f32>) -> tensor<1x2x8x6xf32>
  %a = graph.add %b, %l : (tensor<8x6xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x8x6xf32>
  %p = graph.softmax %a {axis = 3 : i64} : tensor<1x2x8x6xf32>
  %y = graph.matmul %p, %v : (tensor<1x2x8x6xf32>, tensor<1x2x6x5xf32>) -> tensor<1x2x8x5xf32>
  func.return %y : tensor<1x2x8x5xf32>
}

// CHECK-LABEL: func.func @scaled_biased
// CHECK-NEXT:    %[[VT:.*]] = graph.transpose %v {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x6x5xf32> -> tensor<1x2x5x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.attention %q, %k, %[[VT]], %c, %b : (tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x5x6xf32>, tensor<f32>, tensor<8x6xf32>) -> tensor<1x2x8x5xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// A division by the scale becomes a multiplication by its reciprocal; a right operand that is not a transpose is
// transposed; no bias.

func.func @divided(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x5xf32>, %r: tensor<1xf32>) -> tensor<2x8x5xf32> {
  %s = graph.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<2x4x6xf32>) -> tensor<2x8x6xf32>
  %l = graph.div %s, %r : (tensor<2x8x6xf32>, tensor<1xf32>) -> tensor<2x8x6xf32>
  %p = graph.softmax %l {axis = 2 : i64} : tensor<2x8x6xf32>
  %y = graph.matmul %p, %v : (tensor<2x8x6xf32>, tensor<2x6x5xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// CHECK-LABEL: func.func @divided
// CHECK-NEXT:    %[[K:.*]] = graph.transpose %kt {perm = array<i64: 0, 2, 1>} : tensor<2x4x6xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[VT:.*]] = graph.transpose %v {perm = array<i64: 0, 2, 1>} : tensor<2x6x5xf32> -> tensor<2x5x6xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.reciprocal %r : tensor<1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.attention %q, %[[K]], %[[VT]], %[[S]] : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<2x8x5xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// 16 keys, a multiple of the vector width: the batched GEMMs stay, unless aligned=true; then an unscaled chain
// gets a unit scale.

func.func @aligned(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x16xf32>, %v: tensor<2x16x5xf32>) -> tensor<2x8x5xf32> {
  %s = graph.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<2x8x16xf32>
  %y = graph.matmul %p, %v : (tensor<2x8x16xf32>, tensor<2x16x5xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// CHECK-LABEL: func.func @aligned
// CHECK-NEXT:    %s = graph.matmul %q, %kt
// CHECK-NEXT:    %p = graph.softmax %s {axis = 2 : i64}
// CHECK-NEXT:    %y = graph.matmul %p, %v

// ALIGNED-LABEL: func.func @aligned
// ALIGNED:         %[[ONE:.*]] = graph.constant {value = 1.000000e+00 : f32} : tensor<1xf32>
// ALIGNED-NEXT:    %[[Y:.*]] = graph.attention %q, %{{.*}}, %{{.*}}, %[[ONE]] : (tensor<2x8x4xf32>, tensor<2x16x4xf32>, tensor<2x5x16xf32>, tensor<1xf32>) -> tensor<2x8x5xf32>

// -----

// Not fused: the scores have a second use, the softmax runs over another axis, a batch axis broadcasts.

func.func @second_use(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x5xf32>) -> (tensor<2x8x5xf32>, tensor<2x8x6xf32>) {
  %s = graph.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<2x4x6xf32>) -> tensor<2x8x6xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<2x8x6xf32>
  %y = graph.matmul %p, %v : (tensor<2x8x6xf32>, tensor<2x6x5xf32>) -> tensor<2x8x5xf32>
  func.return %y, %s : tensor<2x8x5xf32>, tensor<2x8x6xf32>
}

// CHECK-LABEL: func.func @second_use
// CHECK-NOT:     graph.attention

func.func @other_axis(%q: tensor<2x6x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x6x5xf32> {
  %s = graph.matmul %q, %kt : (tensor<2x6x4xf32>, tensor<2x4x6xf32>) -> tensor<2x6x6xf32>
  %p = graph.softmax %s {axis = 1 : i64} : tensor<2x6x6xf32>
  %y = graph.matmul %p, %v : (tensor<2x6x6xf32>, tensor<2x6x5xf32>) -> tensor<2x6x5xf32>
  func.return %y : tensor<2x6x5xf32>
}

// CHECK-LABEL: func.func @other_axis
// CHECK-NOT:     graph.attention

func.func @broadcast_batch(%q: tensor<2x8x4xf32>, %kt: tensor<1x4x6xf32>, %v: tensor<2x6x5xf32>) -> tensor<2x8x5xf32> {
  %s = graph.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<1x4x6xf32>) -> tensor<2x8x6xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<2x8x6xf32>
  %y = graph.matmul %p, %v : (tensor<2x8x6xf32>, tensor<2x6x5xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// CHECK-LABEL: func.func @broadcast_batch
// CHECK-NOT:     graph.attention
// CHECK:         func.return
