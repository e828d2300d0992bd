// RUN: mini-opt %s -p graph-to-te --split-input-file | filecheck %s

// Each 8-bit operand is widened to i32 (extui for ui8, extsi for i8) and less its zero point, then the product.

func.func @matmul_integer(%a: tensor<4x8xui8>, %b: tensor<8x3xi8>, %az: tensor<1xui8>, %bz: tensor<3xi8>) -> tensor<4x3xi32> {
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<3xi8>) -> tensor<4x3xi32>
  func.return %y : tensor<4x3xi32>
}

// CHECK-LABEL: func.func @matmul_integer
// CHECK-NEXT: %[[L:.*]] = te.compute "matmul_integer_lhs" (%[[I:[0-9]+]], %{{[0-9]+}}) -> tensor<4x8xi32> {
// CHECK-NEXT: %[[A:[0-9]+]] = te.read %a[%[[I]], %{{[0-9]+}}] : tensor<4x8xui8>
// CHECK-NEXT: %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[AZ:[0-9]+]] = te.read %az[%[[ZERO]]] : tensor<1xui8>
// CHECK-NEXT: %[[AZ32:[0-9]+]] = arith.extui %[[AZ]] : ui8 to i32
// CHECK-NEXT: %[[A32:[0-9]+]] = arith.extui %[[A]] : ui8 to i32
// CHECK-NEXT: %[[AS:[0-9]+]] = arith.subi %[[A32]], %[[AZ32]] : i32
// CHECK-NEXT: te.yield %[[AS]] : i32
// CHECK:      %[[R:.*]] = te.compute "matmul_integer_rhs" (%{{[0-9]+}}, %[[J:[0-9]+]]) -> tensor<8x3xi32> {
// CHECK-NEXT: %[[B:[0-9]+]] = te.read %b[%{{[0-9]+}}, %[[J]]] : tensor<8x3xi8>
// CHECK-NEXT: %[[BZ:[0-9]+]] = te.read %bz[%[[J]]] : tensor<3xi8>
// CHECK-NEXT: %[[BZ32:[0-9]+]] = arith.extsi %[[BZ]] : i8 to i32
// CHECK-NEXT: %[[B32:[0-9]+]] = arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: %[[BS:[0-9]+]] = arith.subi %[[B32]], %[[BZ32]] : i32
// CHECK-NEXT: te.yield %[[BS]] : i32
// CHECK:      %[[Y:.*]] = te.compute "matmul_integer" (%[[MI:[0-9]+]], %[[MJ:[0-9]+]]) reduce sum (%[[K:[0-9]+]] : 8) -> tensor<4x3xi32> {
// CHECK-NEXT: %[[LA:[0-9]+]] = te.read %[[L]][%[[MI]], %[[K]]] : tensor<4x8xi32>
// CHECK-NEXT: %[[RB:[0-9]+]] = te.read %[[R]][%[[K]], %[[MJ]]] : tensor<8x3xi32>
// CHECK-NEXT: %[[P:[0-9]+]] = arith.muli %[[LA]], %[[RB]] : i32
// CHECK-NEXT: te.yield %[[P]] : i32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<4x3xi32>

// -----

// Group 1 goes channels-last: the weight less its zero point, the input less its zero point padded with 0 and
// channels last, their i32 products summed over (KH, KW, C) into (N, OH, OW, Co), and a transpose back.

func.func @conv_integer(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<1xi8>) -> tensor<1x3x4x4xi32> {
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x3x4x4xi32>
  func.return %y : tensor<1x3x4x4xi32>
}

// CHECK-LABEL: func.func @conv_integer
// CHECK:      %[[W:.*]] = te.compute "conv_integer_weight" ({{.*}}) -> tensor<3x2x3x3xi32> {
// CHECK:        te.read %w[{{.*}}] : tensor<3x2x3x3xi8>
// CHECK:        %[[WS:[0-9]+]] = arith.subi
// CHECK-NEXT:   te.yield %[[WS]] : i32
// CHECK:      %[[X:.*]] = te.compute "conv_integer_input" ({{.*}}) -> tensor<1x6x6x2xi32> {
// CHECK:        te.read %x[{{.*}}] : tensor<1x2x4x4xui8>
// CHECK:        %[[XS:[0-9]+]] = arith.subi
// CHECK-NEXT:   %[[NONE:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:   %[[XV:[0-9]+]] = arith.select %{{[0-9]+}}, %[[XS]], %[[NONE]] : i32
// CHECK-NEXT:   te.yield %[[XV]] : i32
// CHECK:      %[[P:.*]] = te.compute "conv_integer" (%[[N:[0-9]+]], %[[OH:[0-9]+]], %[[OW:[0-9]+]], %[[CO:[0-9]+]]) reduce sum (%[[KH:[0-9]+]] : 3, %[[KW:[0-9]+]] : 3, %[[C:[0-9]+]] : 2) -> tensor<1x4x4x3xi32> {
// CHECK-NEXT:   %[[H:[0-9]+]] = arith.addi %[[OH]], %[[KH]] : index
// CHECK-NEXT:   %[[V:[0-9]+]] = arith.addi %[[OW]], %[[KW]] : index
// CHECK-NEXT:   %[[A:[0-9]+]] = te.read %[[W]][%[[CO]], %[[C]], %[[KH]], %[[KW]]] : tensor<3x2x3x3xi32>
// CHECK-NEXT:   %[[B:[0-9]+]] = te.read %[[X]][%[[N]], %[[H]], %[[V]], %[[C]]] : tensor<1x6x6x2xi32>
// CHECK-NEXT:   %[[M:[0-9]+]] = arith.muli %[[A]], %[[B]] : i32
// CHECK-NEXT:   te.yield %[[M]] : i32
// CHECK:      te.compute "transpose" ({{.*}}) -> tensor<1x3x4x4xi32> {
// CHECK-NEXT:   te.read %[[P]][{{.*}}] : tensor<1x4x4x3xi32>

// -----

// Other groups take one direct reduction; a tap in the padding reads as 0 after the zero point is subtracted.

func.func @conv_integer_grouped(%x: tensor<1x2x4x4xui8>, %w: tensor<2x1x3x3xi8>, %xz: tensor<1xui8>, %wz: tensor<2xi8>) -> tensor<1x2x4x4xi32> {
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x2x4x4xui8>, tensor<2x1x3x3xi8>, tensor<1xui8>, tensor<2xi8>) -> tensor<1x2x4x4xi32>
  func.return %y : tensor<1x2x4x4xi32>
}

// CHECK-LABEL: func.func @conv_integer_grouped
// CHECK: %y = te.compute "conv_integer" ({{.*}}) reduce sum ({{.*}} : 1, {{.*}} : 3, {{.*}} : 3) -> tensor<1x2x4x4xi32> {
// CHECK: te.read %w[{{.*}}] : tensor<2x1x3x3xi8>
// CHECK: %[[WS:[0-9]+]] = arith.subi
// CHECK: te.read %x[{{.*}}] : tensor<1x2x4x4xui8>
// CHECK: %[[XS:[0-9]+]] = arith.subi
// CHECK-NEXT: %[[NONE:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[X:[0-9]+]] = arith.select %{{[0-9]+}}, %[[XS]], %[[NONE]] : i32
// CHECK-NEXT: %[[P:[0-9]+]] = arith.muli %[[X]], %[[WS]] : i32
// CHECK-NEXT: te.yield %[[P]] : i32
