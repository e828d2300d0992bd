// RUN: mini-opt %s --mcpu=znver4 -p convert-to-llvm | filecheck %s --check-prefix=AVX512BF16
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm | filecheck %s --check-prefix=BFDOT
// RUN: mini-opt %s --mcpu=znver3 -p convert-to-llvm | filecheck %s --check-prefix=NOBF16
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm -t llvm | filecheck %s --check-prefix=BFDOT-IR

// With AVX512-BF16 a vector bfloat16 dot product is one vdpbf16ps per register-wide piece (two 16-lane halves),
// its i32 words reinterpreted as the bfloat16 pairs they hold, joined pairwise; AArch64 with BF16 has `bfdot` on 4
// lanes (eight pieces). Without either, and for a scalar, the definition: each word's low value is its bits shifted
// up 16, its high value its bits with the low 16 cleared, `acc + lo lo + hi hi` in float32.
func.func @dot(%acc: vector<32xf32>, %a: vector<32xi32>, %b: vector<32xi32>) -> vector<32xf32> {
  %r = llvmx.dot_bf16 %acc, %a, %b : vector<32xf32>, vector<32xi32>
  func.return %r : vector<32xf32>
}

// AVX512BF16-LABEL: llvm.func @dot
// AVX512BF16-NEXT:    %[[ACC:.*]] = llvm.shufflevector %acc, %acc [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xf32>
// AVX512BF16-NEXT:    %[[A:.*]] = llvm.shufflevector %a, %a [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xi32>
// AVX512BF16-NEXT:    %[[A16:.*]] = llvm.bitcast %[[A]] : vector<16xi32> to vector<32xbf16>
// AVX512BF16-NEXT:    %[[B:.*]] = llvm.shufflevector %b, %b [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xi32>
// AVX512BF16-NEXT:    %[[B16:.*]] = llvm.bitcast %[[B]] : vector<16xi32> to vector<32xbf16>
// AVX512BF16-NEXT:    %[[LOW:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%[[ACC]], %[[A16]], %[[B16]]) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// AVX512BF16:         %[[HIGH:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// AVX512BF16-NEXT:    %[[R:.*]] = llvm.shufflevector %[[LOW]], %[[HIGH]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>
// AVX512BF16-NEXT:    llvm.return %[[R]] : vector<32xf32>

// BFDOT-LABEL: llvm.func @dot
// BFDOT-NEXT:    %{{.*}} = llvm.shufflevector %acc, %acc [0, 1, 2, 3] : vector<32xf32>
// BFDOT-NEXT:    %[[A:.*]] = llvm.shufflevector %a, %a [0, 1, 2, 3] : vector<32xi32>
// BFDOT-NEXT:    %{{.*}} = llvm.bitcast %[[A]] : vector<4xi32> to vector<8xbf16>
// BFDOT:         llvm.call_intrinsic "llvm.aarch64.neon.bfdot.v4f32.v8bf16"(%{{.*}}) : (vector<4xf32>, vector<8xbf16>, vector<8xbf16>) -> vector<4xf32>
// BFDOT-COUNT-7: llvm.call_intrinsic "llvm.aarch64.neon.bfdot.v4f32.v8bf16"
// BFDOT-NOT:     llvm.call_intrinsic

// BFDOT-IR-LABEL: define <32 x float> @dot(
// BFDOT-IR:         bitcast <4 x i32> %{{.*}} to <8 x bfloat>
// BFDOT-IR:         call <4 x float> @llvm.aarch64.neon.bfdot.v4f32.v8bf16(<4 x float> %{{.*}}, <8 x bfloat> %{{.*}}, <8 x bfloat> %{{.*}})

// NOBF16-LABEL: llvm.func @dot
// NOBF16-NOT:   llvm.call_intrinsic
// NOBF16-COUNT-2: llvm.fmul %{{.*}}, %{{.*}} : vector<32xf32>
// NOBF16-NOT:   llvm.fmul

func.func @scalar(%sacc: f32, %sa: i32, %sb: i32) -> f32 {
  %r = llvmx.dot_bf16 %sacc, %sa, %sb : f32, i32
  func.return %r : f32
}

// NOBF16-LABEL: llvm.func @scalar
// NOBF16-COUNT-2: llvm.fmul %{{.*}}, %{{.*}} : f32

// AVX512BF16-LABEL: llvm.func @scalar
// AVX512BF16-NOT:     llvm.call_intrinsic
// AVX512BF16:         %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// AVX512BF16-NEXT:    %[[HIGH:.*]] = llvm.mlir.constant(-65536 : i32) : i32
// AVX512BF16-NEXT:    %[[AL:.*]] = llvm.shl %sa, %[[SIXTEEN]] : i32
// AVX512BF16-NEXT:    %[[ALF:.*]] = llvm.bitcast %[[AL]] : i32 to f32
// AVX512BF16-NEXT:    %[[BL:.*]] = llvm.shl %sb, %[[SIXTEEN]] : i32
// AVX512BF16-NEXT:    %[[BLF:.*]] = llvm.bitcast %[[BL]] : i32 to f32
// AVX512BF16-NEXT:    %[[PL:.*]] = llvm.fmul %[[ALF]], %[[BLF]] : f32
// AVX512BF16-NEXT:    %[[SL:.*]] = llvm.fadd %sacc, %[[PL]] : f32
// AVX512BF16-NEXT:    %[[AH:.*]] = llvm.and %sa, %[[HIGH]] : i32
// AVX512BF16-NEXT:    %[[AHF:.*]] = llvm.bitcast %[[AH]] : i32 to f32
// AVX512BF16-NEXT:    %[[BH:.*]] = llvm.and %sb, %[[HIGH]] : i32
// AVX512BF16-NEXT:    %[[BHF:.*]] = llvm.bitcast %[[BH]] : i32 to f32
// AVX512BF16-NEXT:    %[[PH:.*]] = llvm.fmul %[[AHF]], %[[BHF]] : f32
// AVX512BF16-NEXT:    %[[R:.*]] = llvm.fadd %[[SL]], %[[PH]] : f32
// AVX512BF16-NEXT:    llvm.return %[[R]] : f32
