// RUN: mini-opt %s --mcpu aarch64-linux-gnu -p lower-to-llvm -t llvm | filecheck %s --check-prefix=NEON
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-n1' -p lower-to-llvm -t llvm | filecheck %s --check-prefix=NEON
// RUN: mini-opt %s --mcpu aarch64-linux-gnu -p lower-to-llvm -t llvm | not grep -E 'x86|<8 x float>|<32 x float>'
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu   -mcpu=neoverse-v1' | mini-opt | filecheck %s --check-prefix=ATTR
// RUN: not mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=pentium4' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: %python %S/../frontend/make_onnx.py mlp %t.onnx
// RUN: minimlc compile %t.onnx --target aarch64-linux-gnu 2>/dev/null | filecheck %s --check-prefix=COMPILE

// A target named by its triple: the LLVM IR carries AArch64's triple and data layout, the schedules tile for NEON
// (4 f32 lanes in 32 registers: a GEMM register tile four 128-bit vectors wide, not x86's two of 8 or 16 lanes), and
// nothing x86-specific is emitted. The canonical name survives printing and re-parsing.
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = graph.matmul %x, %w : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %r = graph.relu %y : tensor<16x64xf32>
  func.return %r : tensor<16x64xf32>
}

// NEON:      target triple = "aarch64-linux-gnu"
// NEON-NEXT: target datalayout = "e-m:e-{{.*}}-n32:64-S128-Fn32"
// NEON:      call <16 x float> @llvm.fma.v16f32(<16 x float>
// NEON:      call <16 x float> @llvm.maximum.v16f32(<16 x float>

// ATTR:      builtin.module attributes {minimlc.target = "aarch64-linux-gnu -mcpu=neoverse-v1"} {

// BAD:       argument --mcpu: LLVM {{[0-9.]+}} knows no aarch64 CPU 'pentium4' (for aarch64-linux-gnu); for example: neoverse-n1,

// COMPILE:      target triple = "aarch64-linux-gnu"
// COMPILE-NEXT: target datalayout = "e-m:e-{{.*}}-Fn32"
// COMPILE:      load <4 x float>
