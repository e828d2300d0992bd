"""Cross builds (`minimlc build --target aarch64-linux-gnu`): the library of another architecture, linked by its cross
compiler with examples/c/main.c as the driver, runs under qemu-user and gives the host build's outputs (within 1e-5
relative; quantized outputs exactly) and ONNX Runtime's, for NEON, 256-bit SVE (neoverse-v1, under `qemu-aarch64
-cpu max,sve256=on`), `udot` (neoverse-n1's int8) and RISC-V; a missing cross compiler, a JIT of a foreign target
and a saved model of another architecture are each refused in one line. Each case skips, naming what is missing,
without the cross compiler or qemu (Debian: gcc-aarch64-linux-gnu, gcc-riscv64-linux-gnu, qemu-user)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from make_mlp import build_mlp
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from quantized_resnet import onnxruntime_saturates_u8s8, quantized_resnet
from transformer_models import Dims, bert, transformer_encoder_layer

from minimlc import InferenceSession
from minimlc.driver.shared_library import CompilerNotFoundError, c_compiler, export_library
from minimlc.frontend.onnx import import_model
from minimlc.lowering.target import host_arch, target_from_name
from minimlc.runtime import artifact

ROOT = Path(__file__).resolve().parents[2]
MINIMLC = str(Path(sys.executable).parent / "minimlc")
EMULATORS = {
    "aarch64-linux-gnu": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
    "riscv64-linux-gnu": ["qemu-riscv64", "-cpu", "rv64,v=true,vlen=128", "-L", "/usr/riscv64-linux-gnu"],
}
"""How each triple's programs run here; qemu's RISC-V CPU needs its vector extension turned on."""


def emulator(target: str) -> list[str]:
    """The qemu command of `target`: its triple's, with SVE's vector length fixed where the target fixes it (qemu's
    `max` CPU would otherwise run SVE code at 512 bits)."""
    bits = target_from_name(target).sve_bits
    triple = target.split()[0]
    return [EMULATORS[triple][0], "-cpu", f"max,sve{bits}=on", *EMULATORS[triple][1:]] if bits else EMULATORS[triple]


def conv_net() -> onnx.ModelProto:
    """Conv + batch norm + ReLU, a strided conv, global pool and a Gemm: conv schedules, folded constants, threads.
    (Its second conv takes 8 channels: with 16, AArch64's LLVM unrolls the weight packing loop fully, 10x the IR,
    and spends 7 s in code generation.)"""
    b = ModelBuilder(seed=4)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 3, 8, "conv1"), 8, "bn")], "relu")
    y = b.node("GlobalAveragePool", [b.conv(y, 8, 16, "conv2", strides=[2, 2])], "pool")
    y = b.node("Flatten", [y], "flat")
    y = b.node("Gemm", [y, b.weight("fc.w", (10, 16)), b.weight("fc.b", (10,))], "fc", transB=1)
    return b.model([1, 3, 16, 16], "fc", [1, 10])


def quantized_net() -> onnx.ModelProto:
    """The quantized ResNet block (uint8 x int8 convolutions, a QLinearMatMul), its uint8 outputs cast to float32
    (exactly) for main.c; 7-bit weights where ONNX Runtime's kernels saturate on this host."""
    model = quantized_resnet(channels=8, size=8, blocks=1, reduce_range=onnxruntime_saturates_u8s8())
    outputs = list(model.graph.output)
    del model.graph.output[:]
    for output in outputs:
        shape = [dim.dim_value for dim in output.type.tensor_type.shape.dim]
        model.graph.node.append(helper.make_node("Cast", [output.name], [f"{output.name}_f32"], to=TensorProto.FLOAT))
        model.graph.output.append(helper.make_tensor_value_info(f"{output.name}_f32", TensorProto.FLOAT, shape))
    return model


MODELS = {
    "mlp": build_mlp,
    "conv": conv_net,
    "encoder": lambda: transformer_encoder_layer(Dims(tokens=8, hidden=32, heads=2, ffn=64), "Gelu"),
    "quantized": quantized_net,
    "bert": lambda: bert(Dims(tokens=8, hidden=64, heads=2, ffn=128), layers=1, vocab=VOCAB),
}
VOCAB = 100
"""The BERT-style encoder's vocabulary: its int64 token ids are drawn below it."""
SVE_TARGET = "aarch64-linux-gnu -mcpu=neoverse-v1"
"""256-bit SVE (run under `qemu-aarch64 -cpu max,sve256=on`), and I8MM's `usdot` for int8."""
TARGETS = [
    "aarch64-linux-gnu",
    SVE_TARGET,
    "riscv64-linux-gnu -mattr=+v",
    "riscv64-linux-gnu",
]
BERT_TARGETS = ("aarch64-linux-gnu", "riscv64-linux-gnu -mattr=+v")
"""The BERT-style encoder (int64 inputs through main.c) runs for these only: the encoder layer covers the others."""
DOTPROD_TARGET = "aarch64-linux-gnu -mcpu=neoverse-n1"
EXTRA_TARGETS = {DOTPROD_TARGET: ("quantized",), "aarch64-linux-gnu -mattr=+sve -msve-vector-bits=512": ("conv",)}
"""Targets only some models run for: the dot product extension without I8MM (`udot`; its floats are NEON's, as
above) and SVE of a stated length (qemu's `sve512`)."""


def expected_instruction(name: str, target: str) -> str | None:
    """An instruction the library of model `name` built for `target` must hold (in objdump's spelling), if any: the
    int8 dot product's `udot`/`usdot`, SVE's predicated `fmla z.s`."""
    if target == DOTPROD_TARGET:
        return r"\tudot\tv\d+\.4s, v\d+\.16b, v\d+\.16b"
    if target == SVE_TARGET:
        return r"\tusdot\tv\d+\.4s" if name == "quantized" else r"\tfmla\tz\d+\.s, p\d+/m, z\d+\.s, z\d+\.s"
    return None


def missing_tools(triple: str) -> list[str]:
    """The cross compiler and emulator of `triple` that are not on PATH."""
    return [tool for tool in (f"{triple}-gcc", EMULATORS[triple][0]) if shutil.which(tool) is None]


def qemu_version(emulator: str) -> tuple[int, ...]:
    """`qemu-riscv64 --version`'s version: (7, 2, 22)."""
    words = subprocess.run([emulator, "--version"], capture_output=True, text=True, check=True).stdout.split()
    return tuple(int(part) for part in words[2].split("."))


def needs_tools(triple: str) -> pytest.MarkDecorator:
    missing = missing_tools(triple)
    return pytest.mark.skipif(
        bool(missing), reason=f"{', '.join(missing)} not installed: cannot build and run {triple}"
    )


@functools.cache
def host_run(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Model `name`, random inputs, and the host build's and ONNX Runtime's outputs on them (once per model)."""
    model = MODELS[name]()
    rng = np.random.default_rng(0)
    feeds = {}
    for info in model.graph.input:
        shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
        is_float = info.type.tensor_type.elem_type == TensorProto.FLOAT
        feeds[info.name] = rng.standard_normal(shape).astype(np.float32) if is_float else rng.integers(0, VOCAB, shape)
    host = InferenceSession(model, num_threads=1).run(None, feeds)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC  # its QOperator kernels
    reference = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return model, feeds, host, reference.run(None, feeds)


def run_under_qemu(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], target: str, folder: Path, threads: int
) -> tuple[list[np.ndarray], dict[str, float]]:
    """Build `model` for `target` into folder/libmodel.so, link examples/c/main.c with the cross compiler, run it
    under qemu on `feeds`: its outputs (as main.c prints them, %.9g: every float32 exactly), and the seconds each
    step took."""
    triple = target.split()[0]
    folder.mkdir()
    start = time.perf_counter()
    export_library(import_model(model), folder / "libmodel.so", target=target)
    built = time.perf_counter()
    executable = folder / "run_model"
    subprocess.run(
        [f"{triple}-gcc", "-O2", "-Wall", "-Werror", f"-I{folder}", str(ROOT / "examples" / "c" / "main.c"),
         f"-L{folder}", "-lmodel", "-Wl,-rpath,$ORIGIN", "-o", str(executable)],
        check=True,
    )  # fmt: skip
    paths = []
    for name, value in feeds.items():
        paths.append(str(folder / f"{name}.{value.dtype}"))
        value.tofile(paths[-1])  # raw, of the input's own dtype (int64 token ids)
    linked = time.perf_counter()
    result = subprocess.run(
        [*emulator(target), str(executable), str(folder / "libmodel.weights"), "-t", str(threads), *paths],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    ran = time.perf_counter()
    printed = [np.array(chunk.split()[2:], dtype=np.float32) for chunk in result.stdout.split("output ")[1:]]
    return printed, {"build": built - start, "link": linked - built, "qemu": ran - linked}


@pytest.mark.parametrize(
    ("name", "target"),
    [
        pytest.param(name, target, marks=needs_tools(target.split()[0]), id=f"{name}-{target}")
        for name in MODELS
        for target in [*TARGETS, *EXTRA_TARGETS]
        if (name != "bert" or target in BERT_TARGETS) and (target not in EXTRA_TARGETS or name in EXTRA_TARGETS[target])
    ],
)
def test_cross_built_model_runs_under_qemu_as_the_host_build(name: str, target: str, tmp_path: Path) -> None:
    """Float models within 1e-5 of the host build, the quantized one exactly as the host build and ONNX Runtime:
    its dequantize-add-requantize arithmetic carries no `contract`, so every CPU rounds each product and sum alike."""
    if name == "quantized" and target.endswith("+v") and qemu_version("qemu-riscv64") < (8,):
        pytest.skip(
            "qemu-riscv64 before 8.0 aborts (decode_save_opc assertion) on the fsrmi that LLVM emits before RVV's "
            "vfcvt for a vector roundeven (Debian 13's qemu-user runs it: .ci/newer_qemu installs its qemu-riscv64)"
        )
    model, feeds, host, oracle = host_run(name)
    printed, seconds = run_under_qemu(model, feeds, target, tmp_path / "build", threads=2 if name == "conv" else 1)
    if instruction := expected_instruction(name, target):
        listing = subprocess.run(
            ["aarch64-linux-gnu-objdump", "-d", str(tmp_path / "build" / "libmodel.so")],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert re.search(instruction, listing)
    assert [value.size for value in printed] == [value.size for value in host]
    for got, want, expected in zip(printed, host, oracle, strict=True):
        if name == "quantized":
            assert len(np.unique(want)) > 3  # not saturated to a constant
            np.testing.assert_array_equal(got, want.ravel())
            np.testing.assert_array_equal(got, expected.ravel())
            continue
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got, want.ravel(), rtol=1e-5, atol=1e-5 * scale)
        np.testing.assert_allclose(got, expected.ravel(), rtol=1e-4, atol=1e-4 * scale)
        print(f"{name} {target}: max |difference| / max {float(np.abs(got - want.ravel()).max()) / scale:.1e}")
    print(f"{name} {target}: build {seconds['build']:.2f} s, qemu {seconds['qemu']:.2f} s")


@needs_tools("aarch64-linux-gnu")
def test_cli_builds_for_aarch64_with_the_cross_compiler(tmp_path: Path) -> None:
    onnx.save(build_mlp(), tmp_path / "mlp.onnx")
    environment = {key: value for key, value in os.environ.items() if key != "CC"}
    result = subprocess.run(
        [MINIMLC, "build", str(tmp_path / "mlp.onnx"), "--target", "aarch64-linux-gnu -mcpu=neoverse-v1",
         "-o", str(tmp_path / "libmlp.so")],
        capture_output=True, text=True, env=environment,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "libmlp.so").read_bytes()[18] == 183  # ELF e_machine: EM_AARCH64
    assert "for CPU neoverse-v1 (aarch64-linux-gnu)" in (tmp_path / "libmlp.h").read_text()


def test_a_missing_cross_compiler_is_named_with_its_package(tmp_path: Path) -> None:
    onnx.save(build_mlp(), tmp_path / "mlp.onnx")
    environment = {key: value for key, value in os.environ.items() if key != "CC"}
    environment["PATH"] = str(Path(sys.executable).parent)  # the venv alone: no cross compiler
    result = subprocess.run(
        [MINIMLC, "build", str(tmp_path / "mlp.onnx"), "--target", "riscv64-linux-gnu", "-o",
         str(tmp_path / "libmlp.so")],
        capture_output=True, text=True, env=environment,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "minimlc: error: no C compiler to link the library with: the cross compiler for riscv64-linux-gnu, "
        "'riscv64-linux-gnu-gcc', is not on PATH; install the Debian package gcc-riscv64-linux-gnu, or name one "
        "with --cc (or $CC)"
    )
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "libmlp.so").exists()


def test_cc_names_the_compiler_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CC", raising=False)
    aarch64 = target_from_name("aarch64-linux-gnu")
    with pytest.raises(CompilerNotFoundError, match=r"^linking: 'no-such-gcc' \(--cc\) is not installed or not on"):
        c_compiler("linking", aarch64, "no-such-gcc")
    monkeypatch.setenv("CC", "no-such-cc -O1")
    with pytest.raises(CompilerNotFoundError, match=r"'no-such-cc' \(\$CC\) is not installed"):
        c_compiler("linking", aarch64)
    assert c_compiler("linking", aarch64, "cc -g") == ["cc", "-g"]  # --cc wins over $CC


def test_jit_of_a_foreign_target_is_refused_by_the_cli(tmp_path: Path) -> None:
    onnx.save(build_mlp(), tmp_path / "mlp.onnx")
    result = subprocess.run(
        [MINIMLC, "run", str(tmp_path / "mlp.onnx"), "--target", "riscv64-linux-gnu -mattr=+v"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"minimlc: error: target 'riscv64-linux-gnu -mattr=+v' is riscv64 code and this host is {host_arch()}: it "
        "can be built (minimlc build --target), not run in this process"
    )
    assert "Traceback" not in result.stderr


def test_a_saved_model_of_another_architecture_is_refused_naming_both(tmp_path: Path) -> None:
    target = target_from_name("aarch64-linux-gnu -mcpu=neoverse-v1")
    meta = {"target": artifact.target_meta(target)}
    assert meta["target"]["triple"] == "aarch64-linux-gnu"
    assert artifact.target_from_meta(meta["target"]) == target
    artifact.write_file(tmp_path / "model.mlc", meta, {"code_0": np.zeros(8, np.uint8)})
    with pytest.raises(artifact.ArtifactError) as error:
        artifact.read_file(tmp_path / "model.mlc")
    assert str(error.value) == (
        f"'{tmp_path / 'model.mlc'}' holds aarch64 code (target 'aarch64-linux-gnu -mcpu=neoverse-v1', triple "
        f"aarch64-linux-gnu) and this host is {host_arch()}: compile the model for this host"
    )
