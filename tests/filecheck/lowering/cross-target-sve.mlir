// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p lower-to-llvm -t llvm > %t.ll
// RUN: filecheck %s --check-prefix=IR < %t.ll
// RUN: %python %S/Inputs/llvm_to_asm.py %t.ll 'aarch64-linux-gnu -mcpu=neoverse-v1' | filecheck %s --check-prefix=ASM
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mattr=+sve -msve-vector-bits=256' -p lower-to-llvm -t llvm > %t2.ll
// RUN: filecheck %s --check-prefix=IR < %t2.ll
// RUN: %python %S/Inputs/llvm_to_asm.py %t2.ll 'aarch64-linux-gnu -mattr=+sve -msve-vector-bits=256' | filecheck %s --check-prefix=ASM
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-sve' -p lower-to-llvm -t llvm | filecheck %s --check-prefix=NOSVE
// RUN: not mini-opt %s --mcpu 'aarch64-linux-gnu -msve-vector-bits=256' 2>&1 | filecheck %s --check-prefix=BAD

// SVE at a fixed vector length (neoverse-v1's 256 bits, or -mattr=+sve -msve-vector-bits=N): the target's vectors are
// 8 f32 lanes, the GEMM register tile 6 rows x 4 such vectors (24 accumulators, 4 vectors of B and a broadcast of A:
// 29 of the 32 registers), and every function carries `vscale_range(2,2)`, from which LLVM's AArch64 back end lowers
// the fixed-width vectors (a row's <32 x float>: four registers) to predicated SVE: `fmla z.s, p/m`. Without SVE the same CPU gets NEON's 4 lanes.
func.func @main(%x: tensor<24x64xf32>, %w: tensor<64x64xf32>) -> tensor<24x64xf32> {
  %y = graph.matmul %x, %w : (tensor<24x64xf32>, tensor<64x64xf32>) -> tensor<24x64xf32>
  %r = graph.relu %y : tensor<24x64xf32>
  func.return %r : tensor<24x64xf32>
}

// IR:       target triple = "aarch64-linux-gnu"
// IR:       define void @main_packed(ptr %{{.*}}) vscale_range(2,2)
// IR:       define void @main(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}) vscale_range(2,2)
// IR:       define internal void @fused_matmul_relu_0({{.*}}) vscale_range(2,2)
// IR:       define internal void @fused_matmul_relu_0_i0_o_body({{.*}}) vscale_range(2,2)
// IR-COUNT-6: call <32 x float> @llvm.fma.v32f32(<32 x float>

// ASM-LABEL: fused_matmul_relu_0_i0_o_body:
// ASM-COUNT-24: fmla z{{[0-9]+}}.s, p{{[0-7]}}/m, z{{[0-9]+}}.s, z{{[0-9]+}}.s
// ASM-NOT:   fmla v
// ASM:       .size fused_matmul_relu_0_i0_o_body

// NOSVE-NOT: vscale_range
// NOSVE:     call <16 x float> @llvm.fma.v16f32(<16 x float>

// BAD: argument --mcpu: target 'aarch64-linux-gnu -msve-vector-bits=256': -msve-vector-bits needs SVE: add -mattr=+sve or name a CPU with it
