// RUN: mini-opt %s --split-input-file -p te-expand-math | filecheck %s

// exp: clamp to [-104, 89] (NaN passes), n = round(x log2 e) by adding 1.5 * 2^23, r = x - n ln 2 in two parts, a
// degree-6 polynomial, then 2^n as two powers of two built in the exponent field.
func.func @exp(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = te.compute "exp" (%i) -> tensor<64xf32> {
    %v = te.read %x[%i] : tensor<64xf32>
    %w = math.exp %v : f32
    te.yield %w : f32
  }
  func.return %e : tensor<64xf32>
}

// CHECK-LABEL: func.func @exp(
// CHECK-NEXT:    %e = te.compute "exp" (%i) -> tensor<64xf32> {
// CHECK-NEXT:      %v = te.read %x[%i] : tensor<64xf32>
// CHECK-NEXT:      %[[HIGH:.*]] = arith.constant 8.900000e+01 : f32
// CHECK-NEXT:      %[[OVER:.*]] = arith.cmpf ogt, %v, %[[HIGH]] : f32
// CHECK-NEXT:      %[[X1:.*]] = arith.select %[[OVER]], %[[HIGH]], %v : f32
// CHECK-NEXT:      %[[LOW:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:      %[[UNDER:.*]] = arith.cmpf olt, %[[X1]], %[[LOW]] : f32
// CHECK-NEXT:      %[[X:.*]] = arith.select %[[UNDER]], %[[LOW]], %[[X1]] : f32
// CHECK-NEXT:      %[[ROUNDER:.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT:      %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT:      %[[XL:.*]] = arith.mulf %[[X]], %[[LOG2E]] fastmath<contract> : f32
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.addf %[[XL]], %[[ROUNDER]] fastmath<contract> : f32
// CHECK-NEXT:      %[[N:.*]] = arith.subf %[[SHIFTED]], %[[ROUNDER]] : f32
// CHECK-NEXT:      %[[LN2HI:.*]] = arith.constant -0.693359375 : f32
// CHECK-NEXT:      %[[NHI:.*]] = arith.mulf %[[N]], %[[LN2HI]] fastmath<contract> : f32
// CHECK-NEXT:      %[[R1:.*]] = arith.addf %[[NHI]], %[[X]] fastmath<contract> : f32
// CHECK-NEXT:      %[[LN2LO:.*]] = arith.constant {{.*}} : f32
// CHECK-NEXT:      %[[NLO:.*]] = arith.mulf %[[N]], %[[LN2LO]] fastmath<contract> : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[NLO]], %[[R1]] fastmath<contract> : f32
// CHECK-NEXT:      %[[R2:.*]] = arith.mulf %[[R]], %[[R]] fastmath<contract> : f32
// CHECK:           %[[BITS:.*]] = arith.bitcast %[[SHIFTED]] : f32 to i32
// CHECK-NEXT:      %[[RBITS:.*]] = arith.bitcast %[[ROUNDER]] : f32 to i32
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[BITS]], %[[RBITS]] : i32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[HALF:.*]] = arith.shrsi %[[K]], %[[ONE]] : i32
// CHECK:           %[[S1:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[P:.*]], %[[S1]] : f32
// CHECK-NEXT:      %[[REST:.*]] = arith.subi %[[K]], %[[HALF]] : i32
// CHECK:           %[[S2:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[SCALED]], %[[S2]] : f32
// CHECK-NEXT:      te.yield %[[Y]] : f32
// CHECK-NOT:   math.exp

// -----

// erf: |x| clamped to 3.92, a + a R(a^2) below 1, 1 - P(a - 2.25) above (no exponential), the sign of x; f64
// stays a math op.
func.func @erf(%x: tensor<64xf32>, %y: tensor<64xf64>) -> (tensor<64xf32>, tensor<64xf64>) {
  %e = te.compute "erf" (%i) -> tensor<64xf32> {
    %v = te.read %x[%i] : tensor<64xf32>
    %w = math.erf %v : f32
    te.yield %w : f32
  }
  %d = te.compute "erf64" (%i) -> tensor<64xf64> {
    %v = te.read %y[%i] : tensor<64xf64>
    %w = math.erf %v : f64
    te.yield %w : f64
  }
  func.return %e, %d : tensor<64xf32>, tensor<64xf64>
}

// CHECK-LABEL: func.func @erf(
// CHECK-NEXT:    %e = te.compute "erf" (%i) -> tensor<64xf32> {
// CHECK-NEXT:      %v = te.read %x[%i] : tensor<64xf32>
// CHECK-NEXT:      %[[ABS:.*]] = math.absf %v : f32
// CHECK-NEXT:      %[[HIGHEST:.*]] = arith.constant 3.920000e+00 : f32
// CHECK-NEXT:      %[[OVER:.*]] = arith.cmpf ogt, %[[ABS]], %[[HIGHEST]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.select %[[OVER]], %[[HIGHEST]], %[[ABS]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK:           %[[SMALL:.*]] = arith.addf %{{.*}}, %[[A]] fastmath<contract> : f32
// CHECK-NEXT:      %[[CENTRE:.*]] = arith.constant 2.250000e+00 : f32
// CHECK-NEXT:      %[[T:.*]] = arith.subf %[[A]], %[[CENTRE]] : f32
// CHECK-NOT:       math.
// CHECK-NOT:       arith.bitcast
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[LARGE:.*]] = arith.subf %[[ONE]], %{{[0-9]+}} : f32
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpf olt, %[[A]], %[[ONE2]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.select %[[BELOW]], %[[SMALL]], %[[LARGE]] : f32
// CHECK-NEXT:      %[[Y:.*]] = math.copysign %[[M]], %v : f32
// CHECK-NEXT:      te.yield %[[Y]] : f32
// CHECK:         %d = te.compute "erf64" (%i_1) -> tensor<64xf64> {
// CHECK-NEXT:      %v_1 = te.read %y[%i_1] : tensor<64xf64>
// CHECK-NEXT:      %w_1 = math.erf %v_1 : f64

// -----

// A power to a constant 0.75 (LRN's beta): `sqrt(b) * sqrt(sqrt(b))` of the base taken as `x + 0.0` with -inf as
// +inf (`pow`'s values at -0 and -inf); 0.5 is one root, 0.25 two. Another exponent (or one read from a tensor)
// keeps `math.powf`.
func.func @quarter_powers(%x: tensor<64xf32>, %e: tensor<f32>) -> tensor<64xf32> {
  %p = te.compute "pow" (%i) -> tensor<64xf32> {
    %v = te.read %x[%i] : tensor<64xf32>
    %three_quarters = arith.constant 7.500000e-01 : f32
    %a = math.powf %v, %three_quarters : f32
    %half = arith.constant 5.000000e-01 : f32
    %b = math.powf %a, %half : f32
    %third = arith.constant 0.333333343 : f32
    %c = math.powf %b, %third : f32
    %w = te.read %e[] : tensor<f32>
    %d = math.powf %c, %w : f32
    te.yield %d : f32
  }
  func.return %p : tensor<64xf32>
}

// CHECK-LABEL: func.func @quarter_powers(
// CHECK:           %v = te.read %x[%i] : tensor<64xf32>
// CHECK:           %[[MINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[IS_MINF:.*]] = arith.cmpf oeq, %v, %[[MINF]] : f32
// CHECK-NEXT:      %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[PLUS:.*]] = arith.addf %v, %[[ZERO]] : f32
// CHECK-NEXT:      %[[BASE:.*]] = arith.select %[[IS_MINF]], %[[INF]], %[[PLUS]] : f32
// CHECK-NEXT:      %[[ROOT:.*]] = math.sqrt %[[BASE]] : f32
// CHECK-NEXT:      %[[FOURTH:.*]] = math.sqrt %[[ROOT]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.mulf %[[ROOT]], %[[FOURTH]] : f32
// CHECK:           %[[B:.*]] = math.sqrt %{{.*}} : f32
// CHECK-NOT:       math.sqrt
// CHECK:           %[[C:.*]] = math.powf %[[B]], %third : f32
// CHECK:           %{{.*}} = math.powf %[[C]], %w : f32
