// RUN: mini-opt %s --mcpu=znver4 -p convert-to-llvm | filecheck %s --check-prefix=VNNI
// RUN: mini-opt %s --mcpu=alderlake -p convert-to-llvm | filecheck %s --check-prefix=AVXVNNI
// RUN: mini-opt %s --mcpu=x86-64-v2 -p convert-to-llvm | filecheck %s --check-prefix=NOVNNI

// On a target with VNNI, a vector dot product is one vpdpbusd per register-wide piece (two 16-lane halves on
// AVX512-VNNI, four 8-lane quarters on AVX-VNNI), joined pairwise; without it, and for a scalar, the definition
// in shifts and multiplies: per byte, the unsigned byte of %a times the sign-extended byte of %b.
func.func @dot(%acc: vector<32xi32>, %a: vector<32xi32>, %b: vector<32xi32>) -> vector<32xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<32xi32>
  func.return %r : vector<32xi32>
}

// VNNI-LABEL: llvm.func @dot
// VNNI-NEXT:    %{{.*}} = llvm.shufflevector %acc, %acc [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xi32>
// VNNI-NEXT:    %{{.*}} = llvm.shufflevector %a, %a [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xi32>
// VNNI-NEXT:    %{{.*}} = llvm.shufflevector %b, %b [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xi32>
// VNNI-NEXT:    %[[LOW:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
// VNNI:         %[[HIGH:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI-NEXT:    %[[R:.*]] = llvm.shufflevector %[[LOW]], %[[HIGH]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
// VNNI-NEXT:    llvm.return %[[R]] : vector<32xi32>

// AVXVNNI-LABEL: llvm.func @dot
// AVXVNNI-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// AVXVNNI-NOT:   llvm.call_intrinsic

// NOVNNI-LABEL: llvm.func @dot
// NOVNNI-NOT:   llvm.call_intrinsic
// NOVNNI-COUNT-4: llvm.mul %{{.*}}, %{{.*}} : vector<32xi32>
// NOVNNI-NOT:   llvm.mul

func.func @scalar(%sacc: i32, %sa: i32, %sb: i32) -> i32 {
  %r = llvmx.dot_u8s8 %sacc, %sa, %sb : i32
  func.return %r : i32
}

// NOVNNI-LABEL: llvm.func @scalar
// VNNI-LABEL: llvm.func @scalar
// VNNI-NOT:     llvm.call_intrinsic
// VNNI:         %[[U:.*]] = llvm.lshr %sa, %{{.*}} : i32
// VNNI-NEXT:    %{{.*}} = llvm.mlir.constant(255 : i32) : i32
// VNNI-NEXT:    %[[UB:.*]] = llvm.and %[[U]], %{{.*}} : i32
// VNNI-NEXT:    %{{.*}} = llvm.mlir.constant(24 : i32) : i32
// VNNI-NEXT:    %[[S:.*]] = llvm.shl %sb, %{{.*}} : i32
// VNNI-NEXT:    %{{.*}} = llvm.mlir.constant(24 : i32) : i32
// VNNI-NEXT:    %[[SB:.*]] = llvm.ashr %[[S]], %{{.*}} : i32
// VNNI-NEXT:    %[[P:.*]] = llvm.mul %[[UB]], %[[SB]] : i32
// VNNI-NEXT:    %{{.*}} = llvm.add %sacc, %[[P]] : i32
// VNNI-COUNT-3: llvm.mul
// VNNI-NOT:     llvm.mul
