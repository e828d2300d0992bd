// RUN: mini-opt %s --mcpu=znver4 -p convert-to-llvm | filecheck %s --check-prefix=AVX512BF16
// RUN: mini-opt %s --mcpu=znver4 -p convert-to-llvm -t llvm | filecheck %s --check-prefix=AVX512BF16-IR
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm | filecheck %s --check-prefix=ROUNDED
// RUN: mini-opt %s --mcpu=znver3 -p convert-to-llvm | filecheck %s --check-prefix=ROUNDED

// With AVX512-BF16 the words of two float32 vectors rounded to bfloat16 are two `fptrunc`s to bfloat16
// (`vcvtneps2bf16`), their bits widened, the high half's shifted up 16 and or-ed in. Elsewhere (AArch64, a CPU
// without the instruction) each value is rounded in integer ops: bits + 0x7FFF + its lowest kept bit, a NaN's bits
// with the quiet bit (0x400000) instead, the top 16 bits.
func.func @pack(%lo: vector<16xf32>, %hi: vector<16xf32>) -> vector<16xi32> {
  %w = llvmx.pack_bf16 %lo, %hi : vector<16xf32> -> vector<16xi32>
  func.return %w : vector<16xi32>
}

// AVX512BF16-LABEL: llvm.func @pack
// AVX512BF16-NEXT:    %[[L:.*]] = llvm.fptrunc %lo : vector<16xf32> to vector<16xbf16>
// AVX512BF16-NEXT:    %[[LB:.*]] = llvm.bitcast %[[L]] : vector<16xbf16> to vector<16xi16>
// AVX512BF16-NEXT:    %[[LW:.*]] = llvm.zext %[[LB]] : vector<16xi16> to vector<16xi32>
// AVX512BF16-NEXT:    %[[H:.*]] = llvm.fptrunc %hi : vector<16xf32> to vector<16xbf16>
// AVX512BF16-NEXT:    %[[HB:.*]] = llvm.bitcast %[[H]] : vector<16xbf16> to vector<16xi16>
// AVX512BF16-NEXT:    %[[HW:.*]] = llvm.zext %[[HB]] : vector<16xi16> to vector<16xi32>
// AVX512BF16:         %[[UP:.*]] = llvm.shl %[[HW]], %{{.*}} : vector<16xi32>
// AVX512BF16-NEXT:    %w = llvm.or %[[LW]], %[[UP]] : vector<16xi32>
// AVX512BF16-NEXT:    llvm.return %w : vector<16xi32>
// AVX512BF16-NOT:     llvm.add

// AVX512BF16-IR:      fptrunc <16 x float> %{{.*}} to <16 x bfloat>
// AVX512BF16-IR-NEXT: bitcast <16 x bfloat> %{{.*}} to <16 x i16>

// ROUNDED-LABEL: llvm.func @pack
// ROUNDED-NOT:     llvm.fptrunc
// ROUNDED:         %[[BITS:.*]] = llvm.bitcast %lo : vector<16xf32> to vector<16xi32>
// ROUNDED:         llvm.lshr %[[BITS]]
// ROUNDED:         llvm.mlir.constant(32767 : i32) : i32
// ROUNDED:         llvm.mlir.constant(4194304 : i32) : i32
// ROUNDED:         llvmx.fcmp %lo, %lo {predicate = 14 : i64} : vector<16xf32> -> vector<16xi1>
// ROUNDED:         llvm.or
// ROUNDED:         llvm.return
