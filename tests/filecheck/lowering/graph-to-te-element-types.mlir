// RUN: mini-opt %s -p graph-to-te | filecheck %s

// Unsigned tensors pick the unsigned ops: division (0 for a zero divisor), comparison, and conversion to float.
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>) {
  %q = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %l = graph.less %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %f = graph.cast %a : tensor<4xui8> -> tensor<4xf32>
  func.return %q, %l, %f : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>
}

// CHECK-LABEL: func.func @unsigned
// CHECK:         %q = te.compute "div" (%{{.*}}) -> tensor<4xui8> {
// CHECK:           arith.divui %{{.*}}, %{{.*}} : ui8
// CHECK:         %l = te.compute "less" (%{{.*}}) -> tensor<4xi1> {
// CHECK:           arith.cmpi ult, %{{.*}}, %{{.*}} : ui8
// CHECK:         %f = te.compute "cast" (%{{.*}}) -> tensor<4xf32> {
// CHECK:           arith.uitofp %{{.*}} : ui8 to f32

// A cast to float8 E8M0 keeps float32's exponent field and rounds by round_mode: `up` on any mantissa bit
// (0x7FFFFF = 8388607), `nearest` on the guard bit (0x400000 = 4194304), `down` never; saturation keeps 254 from
// rounding into NaN (255). From E8M0, code 0 is 2^-127 (bits 0x400000) and code 255 NaN.
func.func @e8m0(%x: tensor<4xf32>) -> (tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf32>) {
  %up = graph.cast %x {round_mode = "up"} : tensor<4xf32> -> tensor<4xf8E8M0FNU>
  %near = graph.cast %x {round_mode = "nearest", no_saturate} : tensor<4xf32> -> tensor<4xf8E8M0FNU>
  %back = graph.cast %up : tensor<4xf8E8M0FNU> -> tensor<4xf32>
  func.return %up, %near, %back : tensor<4xf8E8M0FNU>, tensor<4xf8E8M0FNU>, tensor<4xf32>
}

// CHECK-LABEL: func.func @e8m0
// CHECK:         %up = te.compute "cast" (%{{.*}}) -> tensor<4xf8E8M0FNU> {
// CHECK:           arith.constant 8388607 : i32
// CHECK:           arith.constant 254 : i32
// CHECK:           arith.bitcast %{{.*}} : i8 to f8E8M0FNU
// CHECK:         %near = te.compute "cast" (%{{.*}}) -> tensor<4xf8E8M0FNU> {
// CHECK-NOT:       arith.constant 254 : i32
// CHECK:           arith.constant 4194304 : i32
// CHECK-NOT:       arith.constant 254 : i32
// CHECK:         %back = te.compute "cast" (%{{.*}}) -> tensor<4xf32> {
// CHECK:           arith.bitcast %{{.*}} : f8E8M0FNU to i8
// CHECK:           arith.constant 4194304 : i32
