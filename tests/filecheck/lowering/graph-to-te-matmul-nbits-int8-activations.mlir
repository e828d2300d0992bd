// RUN: mini-opt %s -p graph-to-te | filecheck %s

// graph.matmul_nbits with accuracy_level = 4 (int4, blocks of 32): A's block peaks, A's int8 codes as i32 words
// (even k, odd k per eight), their block sums, B's bytes as words, and the sum over blocks whose step splits each
// weight word's nibbles and takes integer dot products in two chains, then subtracts the zero point (8) times the
// code sum and scales by scale * peak / 127. The default level keeps the float form (no dot products).

func.func @int8_activations(%a: tensor<1x64xf32>, %b: tensor<16x2x16xui8>, %s: tensor<16x2xf32>) -> tensor<1x16xf32> {
  %y = graph.matmul_nbits %a, %b, %s {bits = 4 : i64, accuracy_level = 4 : i64} : (tensor<1x64xf32>, tensor<16x2x16xui8>, tensor<16x2xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}

// CHECK-LABEL: func.func @int8_activations
// CHECK:       %[[PEAK:.*]] = te.compute "matmul_nbits_a_peak" {{.*}} reduce max {{.*}} -> tensor<1x2xf32>
// CHECK:         math.absf
// CHECK:       %[[A:.*]] = te.compute "matmul_nbits_a_words" {{.*}} -> tensor<1x2x4x2xi32>
// CHECK:         math.roundeven
// CHECK:       %[[SUMS:.*]] = te.compute "matmul_nbits_a_code_sums" {{.*}} reduce sum {{.*}} -> tensor<1x2xi32>
// CHECK:       %[[B:.*]] = te.compute "matmul_nbits_b_words" {{.*}} -> tensor<16x2x4xi32>
// CHECK:       te.compute "matmul_nbits" {{.*}} reduce sum {{.*}} -> tensor<1x16xf32>
// CHECK:         %[[W:.*]] = te.read %[[B]]
// CHECK:         %[[NIBBLES:.*]] = arith.constant 252645135 : i32
// CHECK-NEXT:    %[[LOW:.*]] = arith.andi %[[W]], %[[NIBBLES]] : i32
// CHECK:         arith.shrui %[[W]]
// CHECK:         %[[EVEN:.*]] = te.read %[[A]]
// CHECK:         %[[D0:.*]] = llvmx.dot_u8s8 %{{.*}}, %[[LOW]], %[[EVEN]] {lhs_max = 15 : i64} : i32
// CHECK-COUNT-7: llvmx.dot_u8s8
// CHECK:         %[[EXACT:.*]] = arith.subi
// CHECK:         te.read %[[PEAK]]
// CHECK:         arith.divf
// CHECK:         arith.sitofp %[[EXACT]] : i32 to f32

func.func @float_activations(%a: tensor<1x64xf32>, %b: tensor<16x2x16xui8>, %s: tensor<16x2xf32>) -> tensor<1x16xf32> {
  %y = graph.matmul_nbits %a, %b, %s {bits = 4 : i64} : (tensor<1x64xf32>, tensor<16x2x16xui8>, tensor<16x2xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}

// CHECK-LABEL: func.func @float_activations
// CHECK-NOT:   llvmx.dot_u8s8
// CHECK:       te.compute "matmul_nbits"
// CHECK-NOT:   llvmx.dot_u8s8
// CHECK:       func.return
