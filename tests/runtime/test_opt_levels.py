"""Every optimisation level computes what ONNX Runtime computes; O3 folds batch norms into the layer before them.

Tolerance against ONNX Runtime (CPU, its graph optimisations off): |minimlc - ort| <= 1e-4 + 1e-4 * |ort|.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import onnx
import pytest
from model_builder import ModelBuilder

from minimlc import InferenceSession
from minimlc.driver.codegen import Optimizer, jit_optimizer
from minimlc.driver.compiler import compile_objects
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import OPT_LEVELS
from minimlc.lowering.target import Target
from minimlc.tools import model_tools

ROOT = Path(__file__).resolve().parents[2]
RTOL = ATOL = 1e-4


def conv_bn() -> onnx.ModelProto:
    b = ModelBuilder(1)
    y = b.batch_norm(b.conv("x", 3, 8, "conv", bias=False, strides=[2, 2], pads=[1, 1, 1, 1]), 8, "bn", 1e-3)
    return b.model([1, 3, 10, 10], y, [1, 8, 5, 5])


def conv_bn_relu_pool() -> onnx.ModelProto:
    b = ModelBuilder(2)
    y = b.batch_norm(b.conv("x", 3, 16, "conv", pads=[1, 1, 1, 1]), 16, "bn")
    y = b.node("MaxPool", [b.node("Relu", [y], "relu")], "pool", kernel_shape=[2, 2], strides=[2, 2])
    return b.model([1, 3, 16, 16], y, [1, 16, 8, 8])


def residual_block() -> onnx.ModelProto:
    b = ModelBuilder(3)
    y = b.node("Relu", [b.batch_norm(b.conv("x", 8, 8, "conv1", bias=False, pads=[1, 1, 1, 1]), 8, "bn1")], "relu1")
    y = b.batch_norm(b.conv(y, 8, 8, "conv2", bias=False, pads=[1, 1, 1, 1]), 8, "bn2")
    y = b.node("Relu", [b.node("Add", [y, "x"], "sum")], "out")
    return b.model([1, 8, 8, 8], y, [1, 8, 8, 8])


def gemm_bn_relu() -> onnx.ModelProto:
    b = ModelBuilder(4)
    gemm = b.node("Gemm", ["x", b.weight("fc.w", (8, 16)), b.weight("fc.b", (8,))], "fc", transB=1, beta=0.5)
    y = b.node("Relu", [b.batch_norm(gemm, 8, "bn")], "relu")
    return b.model([2, 16], y, [2, 8])


def matmul_bn() -> onnx.ModelProto:
    b = ModelBuilder(5)
    y = b.batch_norm(b.node("MatMul", ["x", b.weight("fc.w", (16, 8))], "fc"), 8, "bn")
    return b.model([3, 16], y, [3, 8])


def mlp() -> onnx.ModelProto:
    spec = importlib.util.spec_from_file_location("make_mlp", ROOT / "examples" / "make_mlp.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_mlp()


MODELS: list[Callable[[], onnx.ModelProto]] = [mlp, conv_bn, conv_bn_relu_pool, residual_block, gemm_bn_relu, matmul_bn]
BN_MODELS = [conv_bn, conv_bn_relu_pool, residual_block, gemm_bn_relu, matmul_bn]


def _check_against_onnxruntime(model: onnx.ModelProto, session: InferenceSession) -> None:
    feeds = model_tools.random_inputs(model, seed=7)
    expected = model_tools.run_oracle(model, feeds, "onnxruntime")
    (actual,) = session.run(None, feeds)
    (reference,) = expected.values()
    np.testing.assert_allclose(actual, reference, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("opt_level", sorted(OPT_LEVELS))
@pytest.mark.parametrize("build", MODELS, ids=lambda build: build.__name__)
def test_every_level_matches_onnxruntime(build: Callable[[], onnx.ModelProto], opt_level: int) -> None:
    model = build()
    _check_against_onnxruntime(model, InferenceSession(model, opt_level=opt_level))


def _function_body(llvm_ir: str, name: str) -> str:
    return re.split(rf"define (?:internal )?void @{name}\(", llvm_ir)[1].split("\n}\n")[0]


def _per_call_code(session: InferenceSession) -> str:
    """The LLVM IR of the entry and of every kernel it calls, with their outlined parallel task bodies
    (`<kernel>_<loop>_body`), but not of the load-time init entry."""
    main = _function_body(session.llvm_ir, "main_packed")
    kernels = set(re.findall(r"call \w* ?void @(\w+_\d+)\(", main))
    defined = re.findall(r"define (?:internal )?void @(\w+)\(", session.llvm_ir)
    called = [n for n in defined if any(n == k or (n.startswith(f"{k}_") and n.endswith("_body")) for k in kernels)]
    return "\n".join([main, *(_function_body(session.llvm_ir, name) for name in called)])


@pytest.mark.parametrize("build", BN_MODELS, ids=lambda build: build.__name__)
def test_batch_norm_folding_leaves_no_normalisation_per_call(build: Callable[[], onnx.ModelProto]) -> None:
    """At O2 every call computes `(y - mean) * gamma / sqrt(var + eps) + beta`; at O3 the scale and shift are folded
    into the layer's weight and bias at load time, so no square root runs per call."""
    model = build()
    unfolded, folded = InferenceSession(model, opt_level=2), InferenceSession(model, opt_level=3)
    assert "llvm.sqrt" in _per_call_code(unfolded)
    assert "llvm.sqrt" not in _per_call_code(folded)
    _check_against_onnxruntime(model, folded)
    feeds = model_tools.random_inputs(model, seed=8)
    np.testing.assert_allclose(folded.run(None, feeds)[0], unfolded.run(None, feeds)[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("bad", [4, -1, "3", 2.0, True, None])
def test_bad_opt_level_names_the_allowed_values(bad: object) -> None:
    with pytest.raises(ValueError, match=r"opt_level must be one of 0, 1, 2, 3, got"):
        InferenceSession(conv_bn(), opt_level=bad)  # type: ignore[arg-type]


def test_llvm_optimises_every_level_but_o0(tmp_path: Path) -> None:
    """O0's native code is LLVM's O0 (as clang -O0: no module passes, so the entry's unpacked wrapper, internal and
    never called, is still there); O1-O3 run LLVM's O2 pipeline, which drops it. (The optimiser runs in a forked child,
    `codegen._emit_in_child`: it records what it saw in files.)"""

    def recording(target: Target, llvm_level: int) -> Optimizer:
        optimize = jit_optimizer(target, llvm_level)

        def record(llvm_ir: str, own: frozenset[str]) -> tuple[llvm.TargetMachine, llvm.ModuleRef]:
            machine, module = optimize(llvm_ir, own)
            (tmp_path / f"O{opt_level}.ll").write_text(f"{llvm_level}\n{module}")
            return machine, module

        return record

    for opt_level in OPT_LEVELS:
        compile_objects(import_model(conv_bn()), opt_level=opt_level, optimizer=recording, jobs=1)
    seen: dict[int, tuple[int, str]] = {}
    for level in OPT_LEVELS:
        llvm_level, code = (tmp_path / f"O{level}.ll").read_text().split("\n", 1)
        seen[level] = (int(llvm_level), code)
    assert {level: llvm_level for level, (llvm_level, _) in seen.items()} == {0: 0, 1: 2, 2: 2, 3: 2}
    wrapper = re.compile(r"^define internal void @\"?main\"?\(", re.M)
    assert wrapper.search(seen[0][1])
    assert not any(wrapper.search(code) for level, (_, code) in seen.items() if level > 0)
