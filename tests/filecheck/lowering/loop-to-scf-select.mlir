// RUN: mini-opt %s -p loop-to-scf | filecheck %s
// RUN: mini-opt %s -p loop-to-scf,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts -t llvm | filecheck %s --check-prefix=LLVM

// A select whose condition differs per lane (PReLU: x < 0 ? slope * x : x) in a vectorize loop becomes a vector
// compare and LLVM's vector select (llvmx.fcmp, llvmx.select: arith's take and give one i1 only).

builtin.module {
  func.func @prelu(%x: memref<8xf32> {llvm.noalias}, %slope: memref<8xf32> {llvm.noalias}, %out: memref<8xf32> {llvm.noalias}) attributes {minimlc.entry} {
    loop.for "i" %i = 0 to 8 step 1 vectorize {
      %v = memref.load %x[%i] : memref<8xf32>
      %s = memref.load %slope[%i] : memref<8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %neg = arith.cmpf olt, %v, %zero : f32
      %scaled = arith.mulf %s, %v : f32
      %r = arith.select %neg, %scaled, %v : f32
      memref.store %r, %out[%i] : memref<8xf32>
    }
    func.return
  }
}

// CHECK:      %[[X:.*]] = vector.load %x[%[[C0:.*]]] : memref<8xf32>, vector<8xf32>
// CHECK-NEXT: %[[S:.*]] = vector.load %slope[%[[C0]]] : memref<8xf32>, vector<8xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZEROS:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<8xf32>
// CHECK-NEXT: %[[NEG:.*]] = llvmx.fcmp %[[X]], %[[ZEROS]] {predicate = 4 : i64} : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[S]], %[[X]] : vector<8xf32>
// CHECK-NEXT: %[[R:.*]] = llvmx.select %[[NEG]], %[[SCALED]], %[[X]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: vector.store %[[R]], %out[%[[C0]]] : memref<8xf32>, vector<8xf32>

// LLVM:      [[NEG:%.*]] = fcmp olt <8 x float> [[X:%.*]], [[ZEROS:%.*]]
// LLVM:      [[SCALED:%.*]] = fmul <8 x float> [[S:%.*]], [[X]]
// LLVM-NEXT: [[R:%.*]] = select {{ *}}<8 x i1> [[NEG]], <8 x float> [[SCALED]], <8 x float> [[X]]
