"""Targets: a model built for another CPU than the host (AVX2 on an AVX-512 host) runs and matches ONNX Runtime;
targets the host cannot run and unknown names are refused before any work, with a message naming the problem."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from model_builder import ModelBuilder

from minimlc import InferenceSession
from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering import target as target_module
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule

HOST_HAS_AVX2 = not target_from_name("x86-64-v3").missing_on_host()


def conv_gemm_model() -> onnx.ModelProto:
    """Conv 3x3 (8 -> 32 channels, 12x12) + ReLU + global average pool + Gemm (32 -> 24): a conv, a pool and a
    GEMM kernel, all vectorized by the default schedule."""
    b = ModelBuilder(seed=3)
    y = b.node("Relu", [b.conv("x", 8, 32, "conv")], "relu")
    y = b.node("GlobalAveragePool", [y], "pool")
    y = b.node("Flatten", [y], "flat")
    y = b.node("Gemm", [y, b.weight("fc.w", (24, 32)), b.weight("fc.b", (24,))], "fc", transB=1)
    return b.model([1, 8, 12, 12], "fc", [1, 24])


def onnxruntime_output(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.skipif(not HOST_HAS_AVX2, reason="the host cannot run AVX2 code")
@pytest.mark.parametrize("target", ["x86-64-v3", "haswell", "host"])
def test_model_built_for_a_target_runs_and_matches_onnxruntime(target: str) -> None:
    model = conv_gemm_model()
    x = np.random.default_rng(0).standard_normal((1, 8, 12, 12)).astype(np.float32)
    session = InferenceSession(model, target=target, num_threads=1)
    (result,) = session.run(None, {"x": x})
    np.testing.assert_allclose(result, onnxruntime_output(model, x), rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not HOST_HAS_AVX2, reason="the host cannot run AVX2 code")
def test_avx2_build_uses_no_avx512_registers() -> None:
    compiled = compile_model(import_model(conv_gemm_model()), target="x86-64-v3")
    assembly = JitModule(compiled.llvm_ir, target=compiled.jit.target).asm()
    assert "%ymm" in assembly
    assert "%zmm" not in assembly
    assert compiled.jit.target.vector_lanes == 8


@pytest.mark.parametrize(("target", "lanes"), [("x86-64-v3", 8), ("skylake-avx512", 16), ("x86-64-v2", 4)])
def test_schedules_vectorize_for_the_target_not_the_host(target: str, lanes: int) -> None:
    module = import_model(conv_gemm_model()).module
    run_pipeline(module, 3, stop_after="scf", target=target)
    widths = {int(width) for width in re.findall(r"vector\.fma[^\n]*vector<(\d+)xf32>", str(module))}
    # The register tiles' multiply-adds are one register's lanes or two vectors, never a wider target's. (A pool's
    # vectorized channel loop may be wider, up to `MAX_LANES`: LLVM splits it into the target's registers.)
    assert widths
    assert max(widths) in (lanes, 2 * lanes), widths


def test_unknown_target_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown target CPU 'pentium-9000'; known: host, x86-64, .*znver4"):
        InferenceSession(conv_gemm_model(), target="pentium-9000")


def test_target_the_host_cannot_run_is_refused_before_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    features = {name: True for name in ("sse4.2", "avx", "avx2", "fma")}
    monkeypatch.setattr(target_module, "_host_features", lambda: features)
    with pytest.raises(ValueError, match=r"cannot run code for target 'x86-64-v4': it lacks avx512f, avx512vl"):
        compile_model(import_model(conv_gemm_model()), target="x86-64-v4")


@pytest.mark.parametrize(
    ("target", "host_features", "host_sve_bits", "missing"),
    [
        # SVE without I8MM or BF16: usdot and bfdot would trap
        ("aarch64-linux-gnu -mcpu=neoverse-v1", ("sve",), 256, ["i8mm", "bf16"]),
        (
            "aarch64-linux-gnu -mcpu=neoverse-v1",
            ("sve", "i8mm", "bf16"),
            128,
            ["256-bit SVE vectors (the host's are 128 bits)"],
        ),
        ("aarch64-linux-gnu -mcpu=neoverse-v1", ("sve", "i8mm", "bf16"), 256, []),
        ("aarch64-linux-gnu -mattr=+bf16", ("i8mm",), 0, ["bf16"]),
        ("aarch64-linux-gnu -mcpu=neoverse-n1", (), 0, ["dotprod"]),
        ("aarch64-linux-gnu", (), 0, []),
    ],
)
def test_aarch64_code_runs_only_where_its_kernels_instructions_and_sve_length_are(
    monkeypatch: pytest.MonkeyPatch, target: str, host_features: tuple[str, ...], host_sve_bits: int, missing: list[str]
) -> None:
    """On an AArch64 host, code whose kernels chose `udot`, `usdot` or SVE at a fixed length (a `.mlc` built on a
    Graviton3 and loaded on a Graviton4, whose SVE is 128 bits) is refused, naming what the host lacks. The host's
    features and SVE length are given here, as an AArch64 host would report them."""
    monkeypatch.setattr(target_module, "host_arch", lambda: "aarch64")
    monkeypatch.setattr(
        target_module, "_host_features", lambda: dict.fromkeys(("neon", "fp-armv8", *host_features), True)
    )
    monkeypatch.setattr(target_module, "host_sve_bits", lambda: host_sve_bits)
    assert target_from_name(target).missing_on_host() == missing


def test_named_targets_describe_their_vector_unit() -> None:
    assert target_from_name("x86-64-v3").describe() == "x86-64-v3 (avx2, 8 f32 lanes, 16 vector registers)"
    assert target_from_name("znver4").vector_lanes == 16
    assert target_from_name("znver4").vector_registers == 32
    assert target_from_name("x86-64-v2").vector_lanes == 4


def test_cli_compile_takes_a_target(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(conv_gemm_model(), path)
    cli = [sys.executable, "-m", "minimlc.tools.minimlc_cli", "compile", str(path)]
    good = subprocess.run([*cli, "--emit", "loop", "--target", "x86-64-v3"], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    assert re.search(r'builtin.module attributes \{.*minimlc.target = "x86-64-v3"', good.stdout)
    bad = subprocess.run([*cli, "--target", "pentium-9000"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "argument --target: unknown target CPU 'pentium-9000'" in bad.stderr
