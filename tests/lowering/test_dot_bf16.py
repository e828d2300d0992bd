"""`llvmx.dot_bf16`: the direct emitter gives the pass path's LLVM IR on every form (`vdpbf16ps`, `bfdot`, the
expansion); the expansion computes its definition exactly (JIT on this host); `bfdot` computes the pair dot product
of the words' halves, low half first (built for neoverse-v1, run under qemu-aarch64), within a bfloat16 tolerance;
the verifier refuses words and lanes of different lengths."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvm_paths import both_llvm_ir
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.target import initialize_llvm, target_from_name, target_machine
from minimlc.runtime.jit import JitModule

LANES = 8
KERNEL = f"""
func.func @dot(%acc: vector<{LANES}xf32>, %a: vector<{LANES}xi32>, %b: vector<{LANES}xi32>) -> vector<{LANES}xf32> {{
  %r = llvmx.dot_bf16 %acc, %a, %b : vector<{LANES}xf32>, vector<{LANES}xi32>
  func.return %r : vector<{LANES}xf32>
}}
func.func @scalar(%acc: f32, %a: i32, %b: i32) -> f32 {{
  %r = llvmx.dot_bf16 %acc, %a, %b : f32, i32
  func.return %r : f32
}}
"""
RUN = f"""
define void @run(ptr %acc, ptr %a, ptr %b, ptr %out) {{
  %x = load <{LANES} x float>, ptr %acc, align 4
  %y = load <{LANES} x i32>, ptr %a, align 4
  %z = load <{LANES} x i32>, ptr %b, align 4
  %r = call <{LANES} x float> @dot(<{LANES} x float> %x, <{LANES} x i32> %y, <{LANES} x i32> %z)
  store <{LANES} x float> %r, ptr %out, align 4
  ret void
}}
"""
"""A wrapper taking pointers (to float32 arrays: 4-byte alignment): C callers (ctypes, the qemu harness) cannot pass
LLVM vectors by value."""

FORMS = {
    "znver4": "llvm.x86.avx512bf16.dpbf16ps.256",  # 8 lanes: AVX512-BF16 with VL on a ymm register
    "aarch64-linux-gnu -mcpu=neoverse-v1": "llvm.aarch64.neon.bfdot.v4f32.v8bf16",
    "znver3": None,  # no bfloat16 dot product: the expansion
}


def _llvm_ir(target: str) -> tuple[str, str]:
    """(the pass path's LLVM IR, the direct emitter's) of `KERNEL` built for `target`."""
    return both_llvm_ir(KERNEL, target)


@pytest.mark.parametrize("target", FORMS)
def test_the_direct_emitter_gives_the_pass_paths_llvm_ir(target: str) -> None:
    passes, direct = _llvm_ir(target)
    assert canonical_llvm_ir(direct) == canonical_llvm_ir(passes)
    intrinsic = FORMS[target]
    calls = re.findall(r"call <\d+ x float> @([\w.]+)\(", passes)
    assert calls == ([intrinsic] * (2 if "aarch64" in target else 1) if intrinsic else [])
    if intrinsic:
        assert "bitcast <4 x i32>" in passes or "bitcast <8 x i32>" in passes
        assert " x bfloat>" in passes


INSTRUCTIONS = [
    ("znver4", "vdpbf16ps\t%ymm"),
    ("sapphirerapids", "vdpbf16ps\t%ymm"),
    ("aarch64-linux-gnu -mcpu=neoverse-v1", "bfdot\tv"),
]


@pytest.mark.parametrize(("target", "instruction"), INSTRUCTIONS)
def test_the_code_is_the_targets_bfloat16_instruction(target: str, instruction: str) -> None:
    """`@dot`'s code (up to `@scalar`'s, which is the expansion): the instruction, no float multiplies."""
    passes, _ = _llvm_ir(target)
    initialize_llvm()
    assembly = target_machine(target_from_name(target)).emit_assembly(llvm.parse_assembly(passes))
    dot = assembly[assembly.index("dot:") : assembly.index("scalar:")]
    calls = 2 if "aarch64" in target else 1  # per vector of 8 lanes: NEON's 4-lane bfdot twice
    assert dot.count(instruction) == calls
    assert "vmulps" not in dot
    assert "fmul" not in dot


def _words(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`count` words of two bfloat16 values (random normals rounded by truncation), and the two values as float32."""
    values = rng.standard_normal((count, 2)).astype(np.float32)
    halves = values.view(np.uint32) >> 16
    words = (halves[:, 0] | (halves[:, 1] << 16)).astype(np.uint32)
    as_f32 = (halves << 16).astype(np.uint32).view(np.float32)
    return words.view(np.int32), as_f32[:, 0], as_f32[:, 1]


def _operands(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(acc, a words, b words, the float32 reference in the expansion's order: `acc + lo lo`, then `+ hi hi`)."""
    rng = np.random.default_rng(seed)
    acc = rng.standard_normal(LANES).astype(np.float32)
    (a, a_lo, a_hi), (b, b_lo, b_hi) = _words(rng, LANES), _words(rng, LANES)
    return acc, a, b, (acc + a_lo * b_lo) + a_hi * b_hi


def test_the_expansion_computes_the_definition_exactly() -> None:
    """On this host's build for znver3 (no bfloat16 instruction: shifts, masks, multiplies and adds in float32), in
    the order the expansion states, so exactly."""
    passes, _ = _llvm_ir("znver3")
    if target_from_name("znver3").missing_on_host():
        pytest.skip("this host cannot run code for znver3")
    jit = JitModule(passes + RUN, target=target_from_name("znver3"))
    run = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4)(jit.function_address("run"))
    acc, a, b, expected = _operands(0)
    out = np.empty(LANES, np.float32)
    run(*(array.ctypes.data for array in (acc, a, b, out)))
    np.testing.assert_array_equal(out, expected)


HARNESS = f"""
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
void run(float *, int32_t *, int32_t *, float *);
int main(int argc, char **argv) {{
    float acc[{LANES}], out[{LANES}];
    int32_t a[{LANES}], b[{LANES}];
    for (int i = 0; i < {LANES}; i++) acc[i] = strtof(argv[1 + i], 0);
    for (int i = 0; i < {LANES}; i++) a[i] = (int32_t)strtoll(argv[1 + {LANES} + i], 0, 10);
    for (int i = 0; i < {LANES}; i++) b[i] = (int32_t)strtoll(argv[1 + 2 * {LANES} + i], 0, 10);
    run(acc, a, b, out);
    for (int i = 0; i < {LANES}; i++) printf("%.9g\\n", out[i]);
    return 0;
}}
"""


def test_bfdot_sums_the_low_and_the_high_pairs(tmp_path: Path) -> None:
    """Built for neoverse-v1 and run under qemu-aarch64 (`-cpu max` has BF16): each lane is `acc + lo lo + hi hi`
    within 1e-6 of the sum of the magnitudes (BFDOT rounds its products and sums otherwise than float32 FMAs; the
    low half is the first value, as the op states)."""
    if shutil.which("aarch64-linux-gnu-gcc") is None or shutil.which("qemu-aarch64") is None:
        pytest.skip("aarch64-linux-gnu-gcc or qemu-aarch64 not installed")
    passes, _ = _llvm_ir("aarch64-linux-gnu -mcpu=neoverse-v1")
    initialize_llvm()
    module = llvm.parse_assembly(passes + RUN)
    machine = target_machine(target_from_name("aarch64-linux-gnu -mcpu=neoverse-v1"), reloc="pic")
    (tmp_path / "dot.o").write_bytes(machine.emit_object(module))
    (tmp_path / "main.c").write_text(HARNESS)
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O1", "-static", "main.c", "dot.o", "-o", "dot"], cwd=tmp_path, check=True
    )
    acc, a, b, expected = _operands(1)
    arguments = [repr(float(x)) for x in acc] + [str(int(x)) for x in (*a, *b)]
    ran = subprocess.run(
        ["qemu-aarch64", "-cpu", "max", str(tmp_path / "dot"), *arguments],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    out = np.array(ran.stdout.split(), dtype=np.float32)
    scale = np.abs(acc) + 8.0  # |terms| of normals: well under 8 each
    assert np.all(np.abs(out - expected) <= 1e-6 * scale), (out, expected)


def test_words_and_lanes_of_different_lengths_are_refused() -> None:
    source = """
    %acc, %w = "test.op"() : () -> (vector<16xf32>, vector<8xi32>)
    %r = llvmx.dot_bf16 %acc, %w, %w : vector<16xf32>, vector<8xi32>
    """
    module = Parser(make_context(), source).parse_module()
    with pytest.raises(VerifyException, match=r"words vector<8xi32> and lanes vector<16xf32> differ in length"):
        module.verify()
