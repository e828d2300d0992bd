// RUN: mini-opt %s --mcpu aarch64-linux-gnu -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v' -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm | filecheck %s --check-prefix=USDOT
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mattr=+i8mm' -p convert-to-llvm | filecheck %s --check-prefix=USDOT
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm -t llvm | filecheck %s --check-prefix=USDOT-IR

// Off x86 there is no VNNI. AArch64 with I8MM (neoverse-v1, or -mattr=+i8mm) has its counterpart, `usdot`: four
// u8 x s8 products summed into each i32 lane of a 128-bit vector, its byte operands as <16 x i8>; so a 32-lane dot
// product is eight 4-lane pieces. Without it (generic AArch64, RISC-V) the u8 x s8 dot product gets its definition in
// shifts and multiplies (the portable lowering), never an intrinsic.
func.func @dot(%acc: vector<32xi32>, %a: vector<32xi32>, %b: vector<32xi32>) -> vector<32xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<32xi32>
  func.return %r : vector<32xi32>
}

// CHECK-LABEL: llvm.func @dot
// CHECK-NOT:   llvm.call_intrinsic
// CHECK-COUNT-4: llvm.mul %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK-NOT:   llvm.call_intrinsic
// CHECK:       llvm.return

// USDOT-LABEL: llvm.func @dot
// USDOT-NEXT:    %[[ACC:.*]] = llvm.shufflevector %acc, %acc [0, 1, 2, 3] : vector<32xi32>
// USDOT-NEXT:    %[[A:.*]] = llvm.shufflevector %a, %a [0, 1, 2, 3] : vector<32xi32>
// USDOT-NEXT:    %[[A8:.*]] = llvm.bitcast %[[A]] : vector<4xi32> to vector<16xi8>
// USDOT-NEXT:    %[[B:.*]] = llvm.shufflevector %b, %b [0, 1, 2, 3] : vector<32xi32>
// USDOT-NEXT:    %[[B8:.*]] = llvm.bitcast %[[B]] : vector<4xi32> to vector<16xi8>
// USDOT-NEXT:    %{{.*}} = llvm.call_intrinsic "llvm.aarch64.neon.usdot.v4i32.v16i8"(%[[ACC]], %[[A8]], %[[B8]]) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// USDOT-COUNT-7: llvm.call_intrinsic "llvm.aarch64.neon.usdot.v4i32.v16i8"
// USDOT-NOT:     llvm.call_intrinsic
// USDOT-NOT:     llvm.mul

// USDOT-IR:      target triple = "aarch64-linux-gnu"
// USDOT-IR-COUNT-8: call <4 x i32> @llvm.aarch64.neon.usdot.v4i32.v16i8(<4 x i32> %{{.*}}, <16 x i8> %{{.*}}, <16 x i8> %{{.*}})
// USDOT-IR:      declare <4 x i32> @llvm.aarch64.neon.usdot.v4i32.v16i8(<4 x i32> {{.*}}, <16 x i8> {{.*}}, <16 x i8> {{.*}})
