// RUN: mini-opt %s --mcpu=x86-64-v3 -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p convert-to-llvm -t llvm > %t.ll
// RUN: filecheck %s --check-prefix=IR < %t.ll
// RUN: %python %S/Inputs/llvm_to_asm.py %t.ll x86-64-v3 | filecheck %s --check-prefix=ASM
// RUN: mini-opt %s --mcpu=znver4 -p convert-to-llvm | filecheck %s --check-prefix=VPDPBUSD

// A dot product whose unsigned bytes are at most 15 (int4 codes: `lhs_max`) on x86 with AVX2 and without VNNI: each
// 8-lane piece is one vpmaddubsw (byte pairs summed into i16, exactly: |2 * 15 * -128| < 32768) and one vpmaddwd by
// ones (i16 pairs into i32), added onto the accumulator; no widening shifts. A bound over 128 keeps the two
// vpmaddwd of the general form; VNNI targets keep vpdpbusd.
func.func @dot(%acc: vector<16xi32>, %a: vector<16xi32>, %b: vector<16xi32>) -> vector<16xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b {lhs_max = 15 : i64} : vector<16xi32>
  func.return %r : vector<16xi32>
}

// CHECK-LABEL: llvm.func @dot
// CHECK:         %[[ACC:.*]] = llvm.shufflevector %acc, %acc [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[A:.*]] = llvm.shufflevector %a, %a [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[A8:.*]] = llvm.bitcast %[[A]] : vector<8xi32> to vector<32xi8>
// CHECK-NEXT:    %[[B:.*]] = llvm.shufflevector %b, %b [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[B8:.*]] = llvm.bitcast %[[B]] : vector<8xi32> to vector<32xi8>
// CHECK-NEXT:    %[[ONES:.*]] = llvm.mlir.constant(dense<1> : vector<16xi16>) : vector<16xi16>
// CHECK-NEXT:    %[[PAIRS:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[A8]], %[[B8]]) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK-NEXT:    %[[SUMS:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[PAIRS]], %[[ONES]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.add %[[ACC]], %[[SUMS]] : vector<8xi32>
// CHECK-COUNT-2: llvm.call_intrinsic
// CHECK-NEXT:    %[[SECOND:.*]] = llvm.add
// CHECK-NEXT:    %[[R:.*]] = llvm.shufflevector %[[FIRST]], %[[SECOND]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>
// CHECK-NEXT:    llvm.return %[[R]] : vector<16xi32>

// IR-LABEL: define <16 x i32> @dot
// IR-COUNT-2: call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8> %{{.*}}, <32 x i8> %{{.*}})
// IR-NOT:     shl
// IR:         ret <16 x i32>
// IR:         declare <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8> {{.*}}, <32 x i8> {{.*}})

// ASM-LABEL: dot:
// ASM-COUNT-2: vpmaddubsw %ymm{{[0-9]+}}, %ymm{{[0-9]+}}, %ymm{{[0-9]+}}
// ASM-NOT:   vpsllw
// ASM-NOT:   vpsraw
// ASM:       retq

// VPDPBUSD-LABEL: llvm.func @dot
// VPDPBUSD:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VPDPBUSD-NOT:     pmadd

func.func @wide_bound(%wacc: vector<8xi32>, %wa: vector<8xi32>, %wb: vector<8xi32>) -> vector<8xi32> {
  %r = llvmx.dot_u8s8 %wacc, %wa, %wb {lhs_max = 129 : i64} : vector<8xi32>
  func.return %r : vector<8xi32>
}

// CHECK-LABEL: llvm.func @wide_bound
// CHECK-NOT:     pmadd.ub.sw
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         llvm.return
