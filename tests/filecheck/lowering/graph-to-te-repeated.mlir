// RUN: mini-opt %s -p graph-to-te | filecheck %s

// %n1 has %n0's signature, so it is %n0's lowering cloned (lowering/graph_to_te/repeated.py): its own name, kernel
// group and operands (%v and %w swapped); %again is %square's, reading its own operand twice.
func.func @layers(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<2x8xf32> {
  %n0 = graph.layer_norm %x, %w, %v {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %n1 = graph.layer_norm %n0, %v, %w {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %square = graph.mul %n0, %n0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %again = graph.mul %n1, %n1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = graph.add %square, %again : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %sum : tensor<2x8xf32>
}

// CHECK:      %n0 = te.compute "layer_norm_mean"
// CHECK-NEXT:   te.read %x
// CHECK:      } attributes {kernel_group = 0 : i64}
// CHECK:      %n0_3 = te.compute "layer_norm"
// CHECK:        te.read %w
// CHECK:        te.read %v
// CHECK:      } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %n1 = te.compute "layer_norm_mean"
// CHECK-NEXT:   te.read %n0_3
// CHECK:      } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: %n1_1 = te.compute "layer_norm_var"
// CHECK:      %n1_3 = te.compute "layer_norm"
// CHECK:        te.read %v
// CHECK:        te.read %w
// CHECK:      } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: %square = te.compute "mul"
// CHECK-NEXT:   te.read %n0_3
// CHECK-NEXT:   te.read %n0_3
// CHECK:      %again = te.compute "mul"
// CHECK-NEXT:   te.read %n1_3
// CHECK-NEXT:   te.read %n1_3
// CHECK:      %sum = te.compute "add"
