"""Kernel-cache keys (driver/kernel_cache.py `_GroupKeys`): the same in every process and model, different wherever the
code can differ; a kernel using a value before the walk reaches its definition is not keyed (compiled with the entry,
not stored); a hit's object code and LLVM IR are a cold compile's; an entry holding another kernel is recompiled
with a warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, cf, func
from xdsl.ir import Block
from xdsl.parser import Parser

from minimlc import InferenceSession
from minimlc.driver import kernel_cache
from minimlc.driver.compiler import compile_objects
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.lowering.target import target_from_name
from tests.runtime.test_kernel_cache import X, mlp, reference

KERNEL = """
builtin.module {
  func.func private @scale_NAME(%in: memref<16xf32>, %out: memref<16xf32>) {
    loop.for "i" %i = 0 to 16 step 1 vectorize {
      %x = memref.load %in[%i] : memref<16xf32>
      %c = arith.constant 2.000000e+00 : f32
      %y = arith.mulf %x, %c fastmath<reassoc,contract> : f32
      memref.store %y, %out[%i] : memref<16xf32>
    }
    func.return
  }
}
"""


def key_of(text: str) -> str | None:
    module = Parser(make_context(), text).parse_module()
    group = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return kernel_cache._GroupKeys(module, "context").key(group)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("2.000000e+00", "3.000000e+00"),  # a constant
        ("reassoc,contract", "contract"),  # fastmath flags
        ("vectorize", "serial"),  # a schedule
        ("%in: memref<16xf32>", "%in: memref<16xf32> {llvm.noalias}"),  # an argument attribute
        ("arith.mulf %x, %c", "arith.mulf %c, %x"),  # operand order
        ("%y = arith.mulf", "%z = arith.mulf"),  # a value name: LLVM IR names blocks and phis after them
    ],
)
def test_a_kernel_keys_alike_under_any_name_and_apart_for_any_change(old: str, new: str) -> None:
    kernel = KERNEL.replace("NAME", "3")
    assert key_of(KERNEL.replace("NAME", "17")) == key_of(kernel)  # another model's copy
    changed = kernel.replace(old, new).replace("store %y", "store %z" if new.startswith("%z") else "store %y")
    assert changed != kernel
    assert key_of(changed) != key_of(kernel)


KERNEL_BLOCKS = """
builtin.module {
  func.func private @scale(%in: memref<16xf32>, %out: memref<16xf32>) {
    cf.br ^define
  BLOCKS
  }
}
"""
USE = """
  ^use:
    loop.for "i" %i = 0 to 16 step 1 vectorize {
      %x = memref.load %in[%i] : memref<16xf32>
      %y = arith.mulf %x, %FACTOR fastmath<reassoc,contract> : f32
      memref.store %y, %out[%i] : memref<16xf32>
    }
    func.return
"""
DEFINE = """
  ^define:
    %two = arith.constant 2.000000e+00 : f32
    %three = arith.constant 3.000000e+00 : f32
    cf.br ^use
"""


def test_a_kernel_using_a_value_before_its_definition_is_not_keyed() -> None:
    """With `^use` listed before `^define`, `%two` and `%three` have no number where they are used: keyed, the two
    kernels would share a key (and one would load the other's code). Listed in the other order they key, apart."""
    for factor in ("two", "three"):
        assert key_of(KERNEL_BLOCKS.replace("BLOCKS", USE + DEFINE).replace("FACTOR", factor)) is None
    keys = {
        key_of(KERNEL_BLOCKS.replace("BLOCKS", DEFINE + USE).replace("FACTOR", factor)) for factor in ("two", "three")
    }
    assert None not in keys
    assert len(keys) == 2


def test_an_unkeyed_kernel_keeps_its_name_and_goes_with_the_entry() -> None:
    """`mlp(2)`'s weight-packing kernel at the `program` stage, its constant moved to a block listed after its use:
    not keyed, so not renamed and compiled with the entry, while the matmul kernel is keyed as before."""
    module = import_model(mlp(2)).module
    run_pipeline(module, 3, stop_after="program", target=target_from_name("host"))
    (pack,) = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data.endswith("pack1")]
    name = pack.sym_name.data
    constant = next(op for op in pack.walk() if isinstance(op, arith.ConstantOp))
    constant.detach()
    body, use = pack.body.block, Block()
    for op in list(body.ops):
        op.detach()
        use.add_op(op)
    body.add_op(cf.BranchOp(define := Block([constant, cf.BranchOp(use)])))
    pack.body.add_block(use)
    pack.body.add_block(define)
    keyed = kernel_cache.rename_to_keys(module, "context")
    assert keyed.with_entry == {"main", name}  # the entry's group and the one unkeyed group
    assert pack.sym_name.data == name
    ((kernel,),) = keyed.kernels.values()  # the matmul
    functions = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    assert functions == {"main", name, kernel}
    assert kernel.startswith(kernel_cache.PREFIX)


def compile_in_process(model_layers: int, seed: int, directory: Path) -> dict[str, object]:
    """Compile `mlp(model_layers)` in a new Python process with hash seed `seed`: its kernel-cache stats, and how
    that process orders a fastmath attribute's set (what `repr` would have written into a key)."""
    script = (
        "import json; from minimlc import InferenceSession; from tests.runtime.test_kernel_cache import mlp; "
        "from xdsl.dialects.arith import FastMathFlagsAttr; "
        f"stats = InferenceSession(mlp({model_layers})).stats; "
        "print(json.dumps({'hits': stats['kernel_cache_hits'], 'misses': stats['kernel_cache_misses'], "
        "'flags': repr(FastMathFlagsAttr(['reassoc', 'contract']))}))"
    )
    environment = {**os.environ, "PYTHONHASHSEED": str(seed), "MINIMLC_CACHE": "1", "MINIMLC_CACHE_DIR": str(directory)}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], env=environment, cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_keys_agree_between_processes_that_order_sets_apart(tmp_path: Path) -> None:
    first = compile_in_process(1, 0, tmp_path)
    second = compile_in_process(2, 1, tmp_path)
    assert first["flags"] != second["flags"]  # the two processes order the kernels' fastmath flags apart
    assert first["misses"] > 0
    assert (second["hits"], second["misses"]) == (first["misses"], 0)


def partitions_of(layers: int) -> tuple[list[tuple[str, bytes]], dict[str, int | float]]:
    target = target_from_name("host")
    objects = compile_objects(import_model(mlp(layers, seed=2)), target=target, kernel_cache=True)
    return sorted((p.llvm_ir, p.object_code) for p in objects.partitions), objects.stats


def test_a_hit_gives_the_cold_compiles_llvm_ir_and_object_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path / "cold"))
    cold, cold_stats = partitions_of(3)
    assert cold_stats["kernel_cache_hits"] == 0
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path / "warm"))
    partitions_of(1)
    warm, warm_stats = partitions_of(3)
    assert (warm_stats["kernel_cache_hits"], warm_stats["kernel_cache_misses"]) == (
        cold_stats["kernel_cache_misses"],
        0,
    )
    assert [ir for ir, _ in warm] == [ir for ir, _ in cold]
    assert [code for _, code in warm] == [code for _, code in cold]


def test_an_entry_holding_another_kernel_is_recompiled_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINIMLC_CACHE", "1")
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path))
    InferenceSession(mlp(1))
    first, second = kernel_cache.entries()
    first_bytes = first.read_bytes()
    first.write_bytes(second.read_bytes())  # a whole, valid entry, of the other kernel
    second.write_bytes(first_bytes)
    with pytest.warns(RuntimeWarning, match="recompiling a bad kernel-cache entry"):
        session = InferenceSession(mlp(2))
    assert (session.stats["kernel_cache_hits"], session.stats["kernel_cache_misses"]) == (0, 2)
    np.testing.assert_allclose(session.run(None, {"x": X})[0], reference(mlp(2), X), rtol=1e-5, atol=1e-5)
    assert InferenceSession(mlp(3)).stats["kernel_cache_misses"] == 0  # rewritten whole
