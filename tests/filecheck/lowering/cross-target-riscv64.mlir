// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v' -p lower-to-llvm -t llvm | filecheck %s --check-prefix=RVV128
// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v,+zvl256b' -p lower-to-llvm -t llvm | filecheck %s --check-prefix=RVV256
// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v' -p lower-to-llvm -t llvm | not grep -E 'x86|<8 x float>|<32 x float>'
// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v,+zvl256b' | mini-opt | filecheck %s --check-prefix=ATTR
// RUN: not mini-opt %s --mcpu 'riscv64-linux-gnu -O3' 2>&1 | filecheck %s --check-prefix=BAD

// RISC-V with the vector extension: vectors of the VLEN that -mattr=+zvlNb gives (128 bits without it), tiles four
// 4-lane vectors wide at VLEN 128 (32 registers: lowering/schedule/gemm.py), two 8-lane ones at 256; RISC-V's triple
// and data layout; nothing x86-specific.
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = graph.matmul %x, %w : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %r = graph.relu %y : tensor<16x64xf32>
  func.return %r : tensor<16x64xf32>
}

// RVV128:      target triple = "riscv64-linux-gnu"
// RVV128-NEXT: target datalayout = "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128"
// RVV128:      call <16 x float> @llvm.fma.v16f32(<16 x float>

// RVV256:      target triple = "riscv64-linux-gnu"
// RVV256:      call <16 x float> @llvm.fma.v16f32(<16 x float>

// ATTR:        builtin.module attributes {minimlc.target = "riscv64-linux-gnu -mattr=+v,+zvl256b"} {

// BAD:         argument --mcpu: target 'riscv64-linux-gnu -O3': cannot read '-O3'; expected -mcpu=CPU or -mattr=+FEATURE,...
