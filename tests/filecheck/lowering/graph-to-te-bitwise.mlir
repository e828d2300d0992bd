// RUN: mini-opt %s -p graph-to-te | filecheck %s

// A shift by an amount outside [0, width) (unsigned compare) shifts every bit out: the signed right shift gives its
// sign fill; the amount is clamped first so that no shift sees an out-of-range one.
func.func @shifts(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  %y = graph.shift_right %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// CHECK:      %y = te.compute "shift_right" (%0) -> tensor<4xi8> {
// CHECK-NEXT:   %1 = te.read %a[%0] : tensor<4xi8>
// CHECK-NEXT:   %2 = te.read %b[%0] : tensor<4xi8>
// CHECK-NEXT:   %3 = arith.constant 8 : i8
// CHECK-NEXT:   %4 = arith.cmpi ult, %2, %3 : i8
// CHECK-NEXT:   %5 = arith.constant 0 : i8
// CHECK-NEXT:   %6 = arith.select %4, %2, %5 : i8
// CHECK-NEXT:   %7 = arith.constant 7 : i8
// CHECK-NEXT:   %8 = arith.shrsi %1, %7 : i8
// CHECK-NEXT:   %9 = arith.shrsi %1, %6 : i8
// CHECK-NEXT:   %10 = arith.select %4, %9, %8 : i8
// CHECK-NEXT:   te.yield %10 : i8

// A bool bitcasts to its byte (0 or 1); other types reinterpret their bits; is_inf compares with the infinities.
func.func @bitcast(%b: tensor<4xi1>, %f: tensor<4xf64>) -> (tensor<4xui8>, tensor<4xi64>, tensor<4xi1>) {
  %u = graph.bitcast %b : tensor<4xi1> -> tensor<4xui8>
  %i = graph.bitcast %f : tensor<4xf64> -> tensor<4xi64>
  %inf = graph.is_inf %f {positive, negative} : tensor<4xf64> -> tensor<4xi1>
  func.return %u, %i, %inf : tensor<4xui8>, tensor<4xi64>, tensor<4xi1>
}

// CHECK:      %u = te.compute "bitcast" (%0) -> tensor<4xui8> {
// CHECK-NEXT:   %1 = te.read %b[%0] : tensor<4xi1>
// CHECK-NEXT:   %2 = arith.extui %1 : i1 to ui8
// CHECK:      %i = te.compute "bitcast" (%3) -> tensor<4xi64> {
// CHECK-NEXT:   %4 = te.read %f[%3] : tensor<4xf64>
// CHECK-NEXT:   %5 = arith.bitcast %4 : f64 to i64
// CHECK:      %inf = te.compute "is_inf" (%6) -> tensor<4xi1> {
// CHECK-NEXT:   %7 = te.read %f[%6] : tensor<4xf64>
// CHECK-NEXT:   %8 = arith.constant 0x7ff0000000000000 : f64
// CHECK-NEXT:   %9 = arith.cmpf oeq, %7, %8 : f64
// CHECK-NEXT:   %10 = arith.constant 0xfff0000000000000 : f64
// CHECK-NEXT:   %11 = arith.cmpf oeq, %7, %10 : f64
// CHECK-NEXT:   %12 = arith.ori %9, %11 : i1
// CHECK-NEXT:   te.yield %12 : i1
