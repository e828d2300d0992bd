// RUN: mini-opt %s --split-input-file -p te-clamped-casts | filecheck %s

// QuantizeLinear to uint8 with zero point 0: clamp to [0, 255] and the range-guarded conversion, read as 8 bits.
// The guard can only fail on NaN; `x > 0 ? x : 0` sends NaN to 0, whose conversion truncates to NaN's 0.
func.func @uint8(%x: tensor<8xf32>) -> tensor<8xui8> {
  %q = te.compute "cast" (%i) -> tensor<8xui8> {
    %v = te.read %x[%i] : tensor<8xf32>
    %c0 = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %c0 : f32
    %c255 = arith.constant 2.550000e+02 : f32
    %c = arith.minimumf %m, %c255 : f32
    %lo = arith.constant -2.14748365e+09 : f32
    %ge = arith.cmpf oge, %c, %lo : f32
    %hi = arith.constant 2.14748365e+09 : f32
    %lt = arith.cmpf olt, %c, %hi : f32
    %in = arith.andi %ge, %lt : i1
    %z = arith.constant 0.000000e+00 : f32
    %s = arith.select %in, %c, %z : f32
    %n = arith.fptosi %s : f32 to i32
    %min = arith.constant -2147483648 : i32
    %r = arith.select %in, %n, %min : i32
    %t = arith.trunci %r : i32 to ui8
    te.yield %t : ui8
  }
  func.return %q : tensor<8xui8>
}

// CHECK-LABEL: func.func @uint8(
// CHECK:         %v = te.read %x[%i] : tensor<8xf32>
// CHECK-NEXT:    %[[LOW:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[HIGH:.*]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:    %[[ABOVE:.*]] = arith.cmpf ogt, %v, %[[LOW]] : f32
// CHECK-NEXT:    %[[RAISED:.*]] = arith.select %[[ABOVE]], %v, %[[LOW]] : f32
// CHECK-NEXT:    %[[OVER:.*]] = arith.cmpf olt, %[[HIGH]], %[[RAISED]] : f32
// CHECK-NEXT:    %[[CLAMPED:.*]] = arith.select %[[OVER]], %[[HIGH]], %[[RAISED]] : f32
// CHECK-NEXT:    %[[N:.*]] = arith.fptosi %[[CLAMPED]] : f32 to i32
// CHECK-NEXT:    %t = arith.trunci %[[N]] : i32 to ui8
// CHECK-NEXT:    te.yield %t : ui8

// -----

// int8: the low bound is -128, so NaN must not become it: both selects keep NaN and one ordered test guards the
// conversion.
func.func @int8(%x: tensor<8xf32>) -> tensor<8xi8> {
  %q = te.compute "cast" (%i) -> tensor<8xi8> {
    %v = te.read %x[%i] : tensor<8xf32>
    %c0 = arith.constant -1.280000e+02 : f32
    %m = arith.maximumf %c0, %v : f32
    %c255 = arith.constant 1.270000e+02 : f32
    %c = arith.minimumf %m, %c255 : f32
    %lo = arith.constant -2.14748365e+09 : f32
    %ge = arith.cmpf oge, %c, %lo : f32
    %hi = arith.constant 2.14748365e+09 : f32
    %lt = arith.cmpf olt, %c, %hi : f32
    %in = arith.andi %ge, %lt : i1
    %z = arith.constant 0.000000e+00 : f32
    %s = arith.select %in, %c, %z : f32
    %n = arith.fptosi %s : f32 to i32
    %min = arith.constant -2147483648 : i32
    %r = arith.select %in, %n, %min : i32
    %t = arith.trunci %r : i32 to i8
    te.yield %t : i8
  }
  func.return %q : tensor<8xi8>
}

// CHECK-LABEL: func.func @int8(
// CHECK:         %v = te.read %x[%i] : tensor<8xf32>
// CHECK-NEXT:    %[[LOW:.*]] = arith.constant -1.280000e+02 : f32
// CHECK-NEXT:    %[[HIGH:.*]] = arith.constant 1.270000e+02 : f32
// CHECK-NEXT:    %[[ABOVE:.*]] = arith.cmpf ogt, %[[LOW]], %v : f32
// CHECK-NEXT:    %[[RAISED:.*]] = arith.select %[[ABOVE]], %[[LOW]], %v : f32
// CHECK-NEXT:    %[[OVER:.*]] = arith.cmpf olt, %[[HIGH]], %[[RAISED]] : f32
// CHECK-NEXT:    %[[CLAMPED:.*]] = arith.select %[[OVER]], %[[HIGH]], %[[RAISED]] : f32
// CHECK-NEXT:    %[[ORDERED:.*]] = arith.cmpf ord, %[[CLAMPED]], %[[CLAMPED]] : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[SAFE:.*]] = arith.select %[[ORDERED]], %[[CLAMPED]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[N:.*]] = arith.fptosi %[[SAFE]] : f32 to i32
// CHECK-NEXT:    %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[ORDERED]], %[[N]], %[[MIN]] : i32
// CHECK-NEXT:    %t = arith.trunci %[[R]] : i32 to i8
// CHECK-NEXT:    te.yield %t : i8

// -----

// A bound outside the guard's range (3e9 >= 2^31): the guard is not redundant, nothing changes.
func.func @wide(%x: tensor<8xf32>) -> tensor<8xi32> {
  %q = te.compute "cast" (%i) -> tensor<8xi32> {
    %v = te.read %x[%i] : tensor<8xf32>
    %c0 = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %c0 : f32
    %c3e9 = arith.constant 3.000000e+09 : f32
    %c = arith.minimumf %m, %c3e9 : f32
    %lo = arith.constant -2.14748365e+09 : f32
    %ge = arith.cmpf oge, %c, %lo : f32
    %hi = arith.constant 2.14748365e+09 : f32
    %lt = arith.cmpf olt, %c, %hi : f32
    %in = arith.andi %ge, %lt : i1
    %z = arith.constant 0.000000e+00 : f32
    %s = arith.select %in, %c, %z : f32
    %n = arith.fptosi %s : f32 to i32
    %min = arith.constant -2147483648 : i32
    %r = arith.select %in, %n, %min : i32
    te.yield %r : i32
  }
  func.return %q : tensor<8xi32>
}

// CHECK-LABEL: func.func @wide(
// CHECK:         arith.maximumf
// CHECK-NEXT:    arith.constant 3.000000e+09 : f32
// CHECK-NEXT:    arith.minimumf
// CHECK:         arith.andi
// CHECK:         arith.fptosi

// -----

// [0, 255] read as a whole i32: NaN's INT_MIN differs from 0 there, so the ordered test stays (the selects still
// keep NaN, as `lo > x ? lo : x`).
func.func @int32(%x: tensor<8xf32>) -> tensor<8xi32> {
  %q = te.compute "cast" (%i) -> tensor<8xi32> {
    %v = te.read %x[%i] : tensor<8xf32>
    %c0 = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %c0 : f32
    %c255 = arith.constant 2.550000e+02 : f32
    %c = arith.minimumf %m, %c255 : f32
    %lo = arith.constant -2.14748365e+09 : f32
    %ge = arith.cmpf oge, %c, %lo : f32
    %hi = arith.constant 2.14748365e+09 : f32
    %lt = arith.cmpf olt, %c, %hi : f32
    %in = arith.andi %ge, %lt : i1
    %z = arith.constant 0.000000e+00 : f32
    %s = arith.select %in, %c, %z : f32
    %n = arith.fptosi %s : f32 to i32
    %min = arith.constant -2147483648 : i32
    %r = arith.select %in, %n, %min : i32
    te.yield %r : i32
  }
  func.return %q : tensor<8xi32>
}

// CHECK-LABEL: func.func @int32(
// CHECK-NOT:     arith.maximumf
// CHECK:         %[[ABOVE:.*]] = arith.cmpf ogt, %{{.*}}, %v : f32
// CHECK:         %[[ORDERED:.*]] = arith.cmpf ord
// CHECK:         %[[R:.*]] = arith.select %[[ORDERED]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    te.yield %[[R]] : i32
