// RUN: mini-opt %s --mcpu=x86-64-v3 -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p convert-to-llvm -t llvm | filecheck %s --check-prefix=IR
// RUN: mini-opt %s --mcpu=x86-64-v2 -p convert-to-llvm | filecheck %s --check-prefix=SSE

// On x86 with AVX2 and without VNNI, each 8-lane piece of a u8 x s8 dot product is two exact vpmaddwd: the words
// read as i16 halves, the even bytes (`& 255` unsigned, `<< 8 >>s 8` signed) and the odd ones (`>> 8`, `>>s 8`)
// multiplied and summed in pairs in place, the two added onto the accumulator; a 4-lane vector takes SSE2's
// vpmaddwd. Without AVX2 (x86-64-v2) the shifts-and-multiplies definition stays.
func.func @dot(%acc: vector<16xi32>, %a: vector<16xi32>, %b: vector<16xi32>) -> vector<16xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<16xi32>
  func.return %r : vector<16xi32>
}

// CHECK-LABEL: llvm.func @dot
// CHECK:         %[[ACC:.*]] = llvm.shufflevector %acc, %acc [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[A:.*]] = llvm.shufflevector %a, %a [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[B:.*]] = llvm.shufflevector %b, %b [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// CHECK-NEXT:    %[[EIGHT:.*]] = llvm.mlir.constant(dense<8> : vector<16xi16>) : vector<16xi16>
// CHECK-NEXT:    %[[LOW:.*]] = llvm.mlir.constant(dense<255> : vector<16xi16>) : vector<16xi16>
// CHECK-NEXT:    %[[A16:.*]] = llvm.bitcast %[[A]] : vector<8xi32> to vector<16xi16>
// CHECK-NEXT:    %[[B16:.*]] = llvm.bitcast %[[B]] : vector<8xi32> to vector<16xi16>
// CHECK-NEXT:    %[[AE:.*]] = llvm.and %[[A16]], %[[LOW]] : vector<16xi16>
// CHECK-NEXT:    %[[AO:.*]] = llvm.lshr %[[A16]], %[[EIGHT]] : vector<16xi16>
// CHECK-NEXT:    %[[BS:.*]] = llvm.shl %[[B16]], %[[EIGHT]] : vector<16xi16>
// CHECK-NEXT:    %[[BE:.*]] = llvm.ashr %[[BS]], %[[EIGHT]] : vector<16xi16>
// CHECK-NEXT:    %[[BO:.*]] = llvm.ashr %[[B16]], %[[EIGHT]] : vector<16xi16>
// CHECK-NEXT:    %[[EVEN:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[AE]], %[[BE]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-NEXT:    %[[ODD:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[AO]], %[[BO]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-NEXT:    %[[PAIRS:.*]] = llvm.add %[[EVEN]], %[[ODD]] : vector<8xi32>
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.add %[[ACC]], %[[PAIRS]] : vector<8xi32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NEXT:    llvm.add
// CHECK-NEXT:    %[[SECOND:.*]] = llvm.add
// CHECK-NEXT:    %[[R:.*]] = llvm.shufflevector %[[FIRST]], %[[SECOND]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>
// CHECK-NEXT:    llvm.return %[[R]] : vector<16xi32>

// IR-LABEL: define <16 x i32> @dot
// IR-COUNT-4: call <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16> %{{.*}}, <16 x i16> %{{.*}})
// IR-NOT:     mul
// IR:         declare <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16> {{.*}}, <16 x i16> {{.*}})

// SSE-LABEL: llvm.func @dot
// SSE-NOT:   llvm.call_intrinsic
// SSE-COUNT-4: llvm.mul %{{.*}}, %{{.*}} : vector<16xi32>
// SSE-NOT:   llvm.call_intrinsic

func.func @quarter(%qacc: vector<4xi32>, %qa: vector<4xi32>, %qb: vector<4xi32>) -> vector<4xi32> {
  %r = llvmx.dot_u8s8 %qacc, %qa, %qb : vector<4xi32>
  func.return %r : vector<4xi32>
}

// CHECK-LABEL: llvm.func @quarter
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.sse2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<8xi16>, vector<8xi16>) -> vector<4xi32>
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         llvm.return
