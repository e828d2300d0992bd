// RUN: mini-opt %s --mcpu=x86-64-v3 --split-input-file -p graph-pad-attention-keys | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 --split-input-file -p graph-pad-attention-keys,graph-fuse-attention | filecheck %s --check-prefix=THEN-FUSE

// 6 keys on x86-64-v3's 8 lanes: zero keys and value rows pad them to 8, the bias is padded along its keys, and a
// mask of -1e30 on the padded keys' logits makes their probabilities zero. graph-fuse-attention then finds aligned
// keys and keeps the two GEMMs.

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
// CHECK-NEXT:    %kt = graph.transpose %k
// CHECK-NEXT:    %keys_padded = graph.pad %kt {pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 2>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    %scores = graph.matmul %q, %keys_padded : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %scores_scaled = graph.mul %scores, %c
// CHECK-NEXT:    %bias_padded = graph.pad %b {pads = array<i64: 0, 0, 0, 2>, {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT:    %logits = graph.add %scores_scaled, %bias_padded
// CHECK-NEXT:    %keys = graph.constant {value = 0.000000e+00 : f32} : tensor<6xf32>
// CHECK-NEXT:    %padded_keys_mask = graph.pad %keys {pads = array<i64: 0, 2>, mode = "constant", value = -1.000000e+30 : f32} : (tensor<6xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %logits_masked = graph.add %logits, %padded_keys_mask : (tensor<1x2x8x8xf32>, tensor<8xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %probabilities = graph.softmax %logits_masked {axis = 3 : i64} : tensor<1x2x8x8xf32>
// CHECK-NEXT:    %values_padded = graph.pad %v {pads = array<i64: 0, 0, 0, 0, 0, 0, 2, 0>, {{.*}} -> tensor<1x2x8x5xf32>
// CHECK-NEXT:    %y = graph.matmul %probabilities, %values_padded : (tensor<1x2x8x8xf32>, tensor<1x2x8x5xf32>) -> tensor<1x2x8x5xf32>
// CHECK-NEXT:    func.return %y

// THEN-FUSE-LABEL: func.func @scaled_biased
// THEN-FUSE-NOT:   graph.attention
// THEN-FUSE:       graph.softmax
// THEN-FUSE-NOT:   graph.attention

// -----

// Unscaled, no bias, a one-element bias is not padded; keys already a multiple of 8 are left alone.

func.func @one_element_bias(%q: tensor<3x5x4xf32>, %kt: tensor<3x4x13xf32>, %v: tensor<3x13x2xf32>, %b: tensor<1xf32>) -> tensor<3x5x2xf32> {
  %s = graph.matmul %q, %kt : (tensor<3x5x4xf32>, tensor<3x4x13xf32>) -> tensor<3x5x13xf32>
  %a = graph.add %s, %b : (tensor<3x5x13xf32>, tensor<1xf32>) -> tensor<3x5x13xf32>
  %p = graph.softmax %a {axis = 2 : i64} : tensor<3x5x13xf32>
  %y = graph.matmul %p, %v : (tensor<3x5x13xf32>, tensor<3x13x2xf32>) -> tensor<3x5x2xf32>
  func.return %y : tensor<3x5x2xf32>
}

// CHECK-LABEL: func.func @one_element_bias
// CHECK-NEXT:    %keys_padded = graph.pad %kt {pads = array<i64: 0, 0, 0, 0, 0, 3>, {{.*}} -> tensor<3x4x16xf32>
// CHECK-NEXT:    %scores = graph.matmul %q, %keys_padded
// CHECK-NEXT:    %logits = graph.add %scores, %b : (tensor<3x5x16xf32>, tensor<1xf32>) -> tensor<3x5x16xf32>
// CHECK-NEXT:    %keys = graph.constant {value = 0.000000e+00 : f32} : tensor<13xf32>
// CHECK-NEXT:    %padded_keys_mask = graph.pad %keys {pads = array<i64: 0, 3>, {{.*}} value = -1.000000e+30 : f32} : (tensor<13xf32>) -> tensor<16xf32>
// CHECK:         %probabilities = graph.softmax %logits_masked {axis = 2 : i64} : tensor<3x5x16xf32>
// CHECK-NEXT:    %values_padded = graph.pad %v {pads = array<i64: 0, 0, 0, 0, 3, 0>, {{.*}} -> tensor<3x16x2xf32>
// CHECK-NEXT:    %y = graph.matmul %probabilities, %values_padded : (tensor<3x5x16xf32>, tensor<3x16x2xf32>) -> tensor<3x5x2xf32>

// -----

func.func @aligned(%q: tensor<3x5x4xf32>, %kt: tensor<3x4x16xf32>, %v: tensor<3x16x2xf32>) -> tensor<3x5x2xf32> {
  %s = graph.matmul %q, %kt : (tensor<3x5x4xf32>, tensor<3x4x16xf32>) -> tensor<3x5x16xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<3x5x16xf32>
  %y = graph.matmul %p, %v : (tensor<3x5x16xf32>, tensor<3x16x2xf32>) -> tensor<3x5x2xf32>
  func.return %y : tensor<3x5x2xf32>
}

// CHECK-LABEL: func.func @aligned
// CHECK-NEXT:    %s = graph.matmul %q, %kt
// CHECK-NEXT:    %p = graph.softmax %s
// CHECK-NEXT:    %y = graph.matmul %p, %v
