// RUN: mini-opt %s --mcpu=znver4 -p graph-to-te --split-input-file | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p graph-to-te --split-input-file | filecheck %s --check-prefix=AVX2
// RUN: mini-opt %s --mcpu=x86-64-v2 -p graph-to-te --split-input-file | filecheck %s --check-prefix=NOVNNI

// On a target with the u8 x s8 dot product, a group-1 conv_integer with an int8 weight whose zero point is a static
// 0 (graph.cast of graph.constant 0.0, as the frontend writes an omitted or all-zero one) packs channels by four
// into i32 words: the weight's bytes (channels past C are 0), the input's bytes (an int8 input shifted by +128),
// the dot products summed channels-last, and the output less (input zero point) * (the channel's weight sum), a
// compute of its own (of weights where the zero point is one: computed at load time).
// AVX2 without VNNI takes the same form (two exact vpmaddwd a dot product, see llvm/dot_product.py) with 8-lane
// vectors; without either it stays the i32 multiply-add form.
func.func @signed_input(%x: tensor<1x4x4x4xi8>, %xz: tensor<1xi8>) -> tensor<1x16x4x4xi32> {
  %w = graph.weight "w" : tensor<16x4x1x1xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xi8>, tensor<16x4x1x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  func.return %y : tensor<1x16x4x4xi32>
}

// CHECK-LABEL: func.func @signed_input
// CHECK:       %[[W:.*]] = te.compute "conv_integer_weight" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<16x1x1x1xi32> {
// CHECK:         arith.extsi %{{[0-9]+}} : i8 to i32
// CHECK:         %[[EIGHT:[0-9]+]] = arith.constant 8 : i32
// CHECK-NEXT:    %[[S1:[0-9]+]] = arith.shli %{{[0-9]+}}, %[[EIGHT]] : i32
// CHECK-NEXT:    %{{[0-9]+}} = arith.ori %{{[0-9]+}}, %[[S1]] : i32
// CHECK:       %[[SUM:.*]] = te.compute "conv_integer_weight_sum" (%{{[0-9]+}}) reduce sum (%{{[0-9]+}} : 4, %{{[0-9]+}} : 1, %{{[0-9]+}} : 1) -> tensor<16xi32> {
// CHECK:       %[[SHARE:.*]] = te.compute "conv_integer_zero_share" (%[[SF:[0-9]+]]) -> tensor<16xi32> {
// CHECK:         %[[XZ:[0-9]+]] = arith.addi %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT:    %[[WS:[0-9]+]] = te.read %[[SUM]][%[[SF]]] : tensor<16xi32>
// CHECK-NEXT:    %[[S:[0-9]+]] = arith.muli %[[XZ]], %[[WS]] : i32
// CHECK-NEXT:    te.yield %[[S]] : i32
// CHECK:       %[[X:.*]] = te.compute "conv_integer_input" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) -> tensor<1x4x4x1xi32> {
// CHECK:         %[[XB:[0-9]+]] = arith.extsi %{{[0-9]+}} : i8 to i32
// CHECK-NEXT:    %[[SHIFT:[0-9]+]] = arith.constant 128 : i32
// CHECK-NEXT:    %{{[0-9]+}} = arith.addi %[[XB]], %[[SHIFT]] : i32
// CHECK:       %[[CONV:.*]] = te.compute "conv_integer" (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) reduce sum (%{{[0-9]+}} : 1, %{{[0-9]+}} : 1, %{{[0-9]+}} : 1) -> tensor<1x4x4x16xi32> {
// CHECK:         %[[XW:[0-9]+]] = te.read %[[X]][%{{.*}}] : tensor<1x4x4x1xi32>
// CHECK-NEXT:    %[[WW:[0-9]+]] = te.read %[[W]][%{{.*}}] : tensor<16x1x1x1xi32>
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[DOT:[0-9]+]] = llvmx.dot_u8s8 %[[ZERO]], %[[XW]], %[[WW]] : i32
// CHECK-NEXT:    te.yield %[[DOT]] : i32
// CHECK:       te.compute "conv_integer_output" (%[[N:[0-9]+]], %[[F:[0-9]+]], %[[H:[0-9]+]], %[[V:[0-9]+]]) -> tensor<1x16x4x4xi32> {
// CHECK-NEXT:    %[[Y:[0-9]+]] = te.read %[[CONV]][%[[N]], %[[H]], %[[V]], %[[F]]] : tensor<1x4x4x16xi32>
// CHECK-NEXT:    %[[FS:[0-9]+]] = te.read %[[SHARE]][%[[F]]] : tensor<16xi32>
// CHECK-NEXT:    %[[R:[0-9]+]] = arith.subi %[[Y]], %[[FS]] : i32
// CHECK-NEXT:    te.yield %[[R]] : i32

// NOVNNI-LABEL: func.func @signed_input
// NOVNNI-NOT:   llvmx.dot_u8s8
// NOVNNI:       te.compute "conv_integer" {{.*}} reduce sum (%{{[0-9]+}} : 1, %{{[0-9]+}} : 1, %{{[0-9]+}} : 4) -> tensor<1x4x4x16xi32> {
// NOVNNI:         arith.muli %{{[0-9]+}}, %{{[0-9]+}} : i32
// NOVNNI:       te.compute "transpose"

// -----

// Channels not a multiple of four: byte j of word w is channel w + 2j (two words), so only the last byte can be past
// the channels: 0 in the weight there, so the input's is a clamped read of any channel (no select).
func.func @six_channels(%x: tensor<1x6x4x4xui8>, %xz: tensor<1xui8>) -> tensor<1x16x4x4xi32> {
  %w = graph.weight "w" : tensor<16x6x1x1xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x6x4x4xui8>, tensor<16x6x1x1xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x16x4x4xi32>
  func.return %y : tensor<1x16x4x4xi32>
}

// CHECK-LABEL: func.func @six_channels
// CHECK:       te.compute "conv_integer_weight" ({{%[0-9]+}}, %[[WORD:[0-9]+]], {{.*}} -> tensor<16x2x1x1xi32> {
// CHECK-NOT:     arith.cmpi
// CHECK:         %[[SIXTH:[0-9]+]] = arith.constant 6 : index
// CHECK-NEXT:    %[[C:[0-9]+]] = arith.addi %[[WORD]], %[[SIXTH]] : index
// CHECK-NEXT:    %[[SIX:[0-9]+]] = arith.constant 6 : index
// CHECK-NEXT:    %[[IN:[0-9]+]] = arith.cmpi slt, %[[C]], %[[SIX]] : index
// CHECK:         arith.select %[[IN]], %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK:       te.compute "conv_integer_input" ({{.*}}, %[[XWORD:[0-9]+]]) -> tensor<1x4x4x2xi32> {
// CHECK:         te.read %x[%{{[0-9]+}}, %[[XWORD]], %{{[0-9]+}}, %{{[0-9]+}}] : tensor<1x6x4x4xui8>
// CHECK:         %[[LAST:[0-9]+]] = arith.constant 6 : index
// CHECK-NEXT:    %[[C4:[0-9]+]] = arith.addi %[[XWORD]], %[[LAST]] : index
// CHECK-NEXT:    %[[FIVE:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT:    %[[C5:[0-9]+]] = arith.minsi %[[C4]], %[[FIVE]] : index
// CHECK-NEXT:    te.read %x[%{{[0-9]+}}, %[[C5]], %{{[0-9]+}}, %{{[0-9]+}}] : tensor<1x6x4x4xui8>
// CHECK-NOT:     arith.select
// CHECK:       te.compute "conv_integer" 
// CHECK:       llvmx.dot_u8s8

// -----

// A weight zero point that is a weight (its values unknown here) keeps the i32 multiply-add form.
func.func @weight_zero_point(%x: tensor<1x4x4x4xui8>, %xz: tensor<1xui8>) -> tensor<1x16x4x4xi32> {
  %w = graph.weight "w" : tensor<16x4x1x1xi8>
  %wz = graph.weight "wz" : tensor<16xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xui8>, tensor<16x4x1x1xi8>, tensor<1xui8>, tensor<16xi8>) -> tensor<1x16x4x4xi32>
  func.return %y : tensor<1x16x4x4xi32>
}

// CHECK-LABEL: func.func @weight_zero_point
// CHECK-NOT:   llvmx.dot_u8s8
// CHECK:       te.compute "transpose"

// -----

// Eight output channels do not fill a 16-lane vector: the i32 multiply-add form.
func.func @eight_outputs(%x: tensor<1x4x4x4xui8>, %xz: tensor<1xui8>) -> tensor<1x8x4x4xi32> {
  %w = graph.weight "w" : tensor<8x4x1x1xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %wz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xui8>, tensor<8x4x1x1xi8>, tensor<1xui8>, tensor<1xi8>) -> tensor<1x8x4x4xi32>
  func.return %y : tensor<1x8x4x4xi32>
}

// CHECK-LABEL: func.func @eight_outputs
// CHECK-NOT:   llvmx.dot_u8s8
// CHECK:       te.compute "transpose"

// AVX2-LABEL: func.func @signed_input
// AVX2:         llvmx.dot_u8s8
// AVX2-LABEL: func.func @eight_outputs
// AVX2:         llvmx.dot_u8s8
// AVX2-LABEL: func.func @matmul
// AVX2:         llvmx.dot_u8s8

// -----

// A matmul_integer with a 2-D int8 B whose zero point is a static 0 and 16 columns: A's rows and B's columns as
// words of four along k (30 -> 8 words, the last two bytes 0), the dot products summed, and the result less
// a_zero[row] * (B's column sum).
func.func @matmul(%a: tensor<12x30xui8>, %az: tensor<12xui8>) -> tensor<12x16xi32> {
  %b = graph.weight "b" : tensor<30x16xi8>
  %zero = graph.constant {value = 0.0 : f32} : tensor<1xf32>
  %bz = graph.cast %zero : tensor<1xf32> -> tensor<1xi8>
  %y = graph.matmul_integer %a, %b, %az, %bz : (tensor<12x30xui8>, tensor<30x16xi8>, tensor<12xui8>, tensor<1xi8>) -> tensor<12x16xi32>
  func.return %y : tensor<12x16xi32>
}

// CHECK-LABEL: func.func @matmul
// CHECK:       %[[A:.*]] = te.compute "matmul_integer_lhs" (%{{[0-9]+}}, %{{[0-9]+}}) -> tensor<12x8xi32> {
// CHECK:       %[[B:.*]] = te.compute "matmul_integer_rhs" (%{{[0-9]+}}, %{{[0-9]+}}) -> tensor<8x16xi32> {
// CHECK:       %[[SUM:.*]] = te.compute "matmul_integer_rhs_sum" (%{{[0-9]+}}) reduce sum (%{{[0-9]+}} : 30) -> tensor<16xi32> {
// CHECK:       %[[Y:.*]] = te.compute "matmul_integer" (%[[I:[0-9]+]], %[[J:[0-9]+]]) reduce sum (%[[K:[0-9]+]] : 8) -> tensor<12x16xi32> {
// CHECK-NEXT:    %[[AW:[0-9]+]] = te.read %[[A]][%[[I]], %[[K]]] : tensor<12x8xi32>
// CHECK-NEXT:    %[[BW:[0-9]+]] = te.read %[[B]][%[[K]], %[[J]]] : tensor<8x16xi32>
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[DOT:[0-9]+]] = llvmx.dot_u8s8 %[[ZERO]], %[[AW]], %[[BW]] : i32
// CHECK:       te.compute "matmul_integer_output" (%[[R:[0-9]+]], %[[C:[0-9]+]]) -> tensor<12x16xi32> {
// CHECK-NEXT:    %[[AZ:[0-9]+]] = te.read %az[%[[R]]] : tensor<12xui8>
// CHECK-NEXT:    %[[AZ32:[0-9]+]] = arith.extui %[[AZ]] : ui8 to i32
// CHECK-NEXT:    %[[S:[0-9]+]] = te.read %[[SUM]][%[[C]]] : tensor<16xi32>
// CHECK-NEXT:    %[[SHARE:[0-9]+]] = arith.muli %[[AZ32]], %[[S]] : i32
// CHECK-NEXT:    %[[V:[0-9]+]] = te.read %[[Y]][%[[R]], %[[C]]] : tensor<12x16xi32>
// CHECK-NEXT:    %{{[0-9]+}} = arith.subi %[[V]], %[[SHARE]] : i32

// NOVNNI-LABEL: func.func @matmul
// NOVNNI-NOT:   llvmx.dot_u8s8
// NOVNNI:       arith.muli
