// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-n1' -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mattr=+dotprod' -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-n1' -p convert-to-llvm -t llvm > %t.ll
// RUN: filecheck %s --check-prefix=IR < %t.ll
// RUN: %python %S/Inputs/llvm_to_asm.py %t.ll 'aarch64-linux-gnu -mcpu=neoverse-n1' | filecheck %s --check-prefix=ASM

// AArch64 with the dot product extension but no I8MM (neoverse-n1, cortex-a76, -mattr=+dotprod) has `udot` (u8 x u8)
// and `sdot` (s8 x s8), no u8 x s8. Each 4-lane piece of the u8 x s8 dot product is exact through two `udot`: the
// signed bytes plus 128 (`b ^ 0x80`) are unsigned, `sum a (b + 128) = udot(acc, a, b ^ 0x80)`, and 128 times the sum
// of a's bytes, `udot(0, a, 0x80)` (the same byte constant), is taken off again (modulo 2^32, as the portable i32
// arithmetic wraps).
func.func @dot(%acc: vector<8xi32>, %a: vector<8xi32>, %b: vector<8xi32>) -> vector<8xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<8xi32>
  func.return %r : vector<8xi32>
}

// CHECK-LABEL: llvm.func @dot
// CHECK:         %[[BYTE128:.*]] = llvm.mlir.constant(dense<-128> : vector<16xi8>) : vector<16xi8>
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(dense<0> : vector<4xi32>) : vector<4xi32>
// CHECK-NEXT:    %[[BU:.*]] = llvm.xor %[[B:.*]], %[[BYTE128]] : vector<16xi8>
// CHECK-NEXT:    %[[DOT:.*]] = llvm.call_intrinsic "llvm.aarch64.neon.udot.v4i32.v16i8"(%[[ACC:.*]], %[[A:.*]], %[[BU]]) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// CHECK-NEXT:    %[[SUM:.*]] = llvm.call_intrinsic "llvm.aarch64.neon.udot.v4i32.v16i8"(%[[ZERO]], %[[A]], %[[BYTE128]]) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// CHECK-NEXT:    %{{.*}} = llvm.sub %[[DOT]], %[[SUM]] : vector<4xi32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.aarch64.neon.udot.v4i32.v16i8"
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-NOT:     llvm.mul

// IR:      target triple = "aarch64-linux-gnu"
// IR:      %[[BU:.*]] = xor <16 x i8> %{{.*}}, <i8 -128, i8 -128, {{.*}}>
// IR-NEXT: %[[DOT:.*]] = call <4 x i32> @llvm.aarch64.neon.udot.v4i32.v16i8(<4 x i32> %{{.*}}, <16 x i8> %[[A:.*]], <16 x i8> %[[BU]])
// IR-NEXT: %[[SUM:.*]] = call <4 x i32> @llvm.aarch64.neon.udot.v4i32.v16i8(<4 x i32> <i32 0, i32 0, i32 0, i32 0>, <16 x i8> %[[A]], <16 x i8> <i8 -128, {{.*}}>)
// IR-NEXT: %{{.*}} = sub <4 x i32> %[[DOT]], %[[SUM]]
// IR-COUNT-2: call <4 x i32> @llvm.aarch64.neon.udot.v4i32.v16i8(
// IR-NOT:  usdot

// ASM-LABEL: dot:
// ASM-DAG:   eor v{{[0-9]+}}.16b, v{{[0-9]+}}.16b, v{{[0-9]+}}.16b
// ASM-DAG:   udot v{{[0-9]+}}.4s, v{{[0-9]+}}.16b, v{{[0-9]+}}.16b
// ASM-DAG:   sub v{{[0-9]+}}.4s, v{{[0-9]+}}.4s, v{{[0-9]+}}.4s
// ASM-NOT:   usdot
// ASM-NOT:   mul
// ASM-NOT:   shl
// ASM:       ret
