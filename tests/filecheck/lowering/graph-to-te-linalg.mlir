// RUN: mini-opt %s -p graph-to-te | filecheck %s

// det reads its matrix, widened to f64: the lower row is swapped in where its |entry| beats the pivot's (flipping
// the sign), the row below is reduced (a zero pivot gives factor 0), and the signed product of the pivots is rounded
// once to f32.
func.func @det(%m: tensor<2x2xf32>) -> tensor<f32> {
  %d = graph.det %m : tensor<2x2xf32> -> tensor<f32>
  func.return %d : tensor<f32>
}

// CHECK:      %d = te.compute "det" () -> tensor<f32> {
// CHECK-NEXT:   %0 = arith.constant 0 : index
// CHECK-NEXT:   %1 = arith.constant 1 : index
// CHECK-NEXT:   %2 = te.read %m[%0, %0] : tensor<2x2xf32>
// CHECK-NEXT:   %3 = arith.extf %2 : f32 to f64
// CHECK-NEXT:   %4 = te.read %m[%0, %1] : tensor<2x2xf32>
// CHECK-NEXT:   %5 = arith.extf %4 : f32 to f64
// CHECK-NEXT:   %6 = te.read %m[%1, %0] : tensor<2x2xf32>
// CHECK-NEXT:   %7 = arith.extf %6 : f32 to f64
// CHECK-NEXT:   %8 = te.read %m[%1, %1] : tensor<2x2xf32>
// CHECK-NEXT:   %9 = arith.extf %8 : f32 to f64
// CHECK-NEXT:   %10 = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %11 = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:   %12 = math.absf %3 : f64
// CHECK-NEXT:   %13 = math.absf %7 : f64
// CHECK-NEXT:   %14 = arith.cmpf ogt, %13, %12 : f64
// CHECK-NEXT:   %15 = arith.select %14, %7, %3 : f64
// CHECK-NEXT:   %16 = arith.select %14, %9, %5 : f64
// CHECK-NEXT:   %17 = arith.select %14, %3, %7 : f64
// CHECK-NEXT:   %18 = arith.select %14, %5, %9 : f64
// CHECK-NEXT:   %19 = arith.negf %11 : f64
// CHECK-NEXT:   %20 = arith.select %14, %19, %11 : f64
// CHECK-NEXT:   %21 = arith.cmpf oeq, %15, %10 : f64
// CHECK-NEXT:   %22 = arith.divf %17, %15 : f64
// CHECK-NEXT:   %23 = arith.select %21, %10, %22 : f64
// CHECK-NEXT:   %24 = arith.mulf %23, %16 : f64
// CHECK-NEXT:   %25 = arith.subf %18, %24 : f64
// CHECK-NEXT:   %26 = arith.mulf %15, %25 : f64
// CHECK-NEXT:   %27 = arith.mulf %20, %26 : f64
// CHECK-NEXT:   %28 = arith.truncf %27 : f64 to f32
// CHECK-NEXT:   te.yield %28 : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %d : tensor<f32>
