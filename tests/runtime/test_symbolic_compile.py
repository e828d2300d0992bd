"""One compiled model for every input shape (`docs/design/symbolic_shapes.md`, "Entry ABI" and "Runtime").

The runtime's part is tested on a hand-written entry that follows the ABI (LLVM IR: `out = x + m * w`, with
x, m, out [batch, 4] and the weight w [4]), so that it does not depend on the compiler: the extents array and its
slot, the outputs sized by `@main_output_extents`, every feed checked before native code runs (rank, static sizes,
shared symbols, `input_bounds`), save and load. Then the driver: a symbolic ONNX model compiled once when the
compiler takes its run-time dimensions, and compiled per shape, saying why, when it does not.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Region

from minimlc import InferenceSession
from minimlc.dialects import graph
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering import abi
from minimlc.lowering.abi import DYNAMIC, EntryExtents, EntrySignature
from minimlc.runtime import InvalidInputError, load
from minimlc.runtime.compiled import bind
from minimlc.runtime.jit import JitModule
from minimlc.runtime.session import Session
from minimlc.runtime.threadpool import register_symbols

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from make_mlp import build_mlp

RTOL, ATOL = 1e-4, 1e-5

# @main_packed(args): args = [x, m, out, extents, w]; out[i] = x[i] + m[i] * w[i % 4] for i < extents[0] * 4.
# @main_output_extents_packed(args): args = [input extents, output extents]; out's batch is x's.
ENTRY_IR = """
define void @main_packed(ptr %args) {
entry:
  %x = load ptr, ptr %args
  %m.at = getelementptr ptr, ptr %args, i64 1
  %m = load ptr, ptr %m.at
  %out.at = getelementptr ptr, ptr %args, i64 2
  %out = load ptr, ptr %out.at
  %extents.at = getelementptr ptr, ptr %args, i64 3
  %extents = load ptr, ptr %extents.at
  %w.at = getelementptr ptr, ptr %args, i64 4
  %w = load ptr, ptr %w.at
  %batch = load i64, ptr %extents
  %n = mul i64 %batch, 4
  br label %check
check:
  %i = phi i64 [0, %entry], [%next, %body]
  %done = icmp sge i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %xi = getelementptr float, ptr %x, i64 %i
  %mi = getelementptr float, ptr %m, i64 %i
  %k = urem i64 %i, 4
  %wk = getelementptr float, ptr %w, i64 %k
  %xv = load float, ptr %xi
  %mv = load float, ptr %mi
  %wv = load float, ptr %wk
  %product = fmul float %mv, %wv
  %sum = fadd float %xv, %product
  %oi = getelementptr float, ptr %out, i64 %i
  store float %sum, ptr %oi
  %next = add i64 %i, 1
  br label %check
exit:
  ret void
}

define void @main_output_extents_packed(ptr %args) {
  %in = load ptr, ptr %args
  %out.at = getelementptr ptr, ptr %args, i64 1
  %out = load ptr, ptr %out.at
  %batch = load i64, ptr %in
  store i64 %batch, ptr %out
  ret void
}
"""

WEIGHT = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
FLOAT = np.dtype(np.float32)
EXTENTS = EntryExtents(
    slot=3, count=2, output_extents=1, shapes=((DYNAMIC, 4), (DYNAMIC, 4), (DYNAMIC, 4)), symbols=("batch", "batch")
)


def hand_written_session(bounds: dict[str, tuple[int, int]] | None = None) -> Session:
    """A session over `ENTRY_IR`, bound as `load` binds a saved model."""
    register_symbols()
    inputs = [TensorInfo("x", (DYNAMIC, 4), FLOAT), TensorInfo("m", (DYNAMIC, 4), FLOAT)]
    outputs = [TensorInfo("out", (DYNAMIC, 4), FLOAT)]
    signature = EntrySignature(["w"], [], extents=EXTENTS)
    model = bind(inputs, outputs, JitModule(ENTRY_IR), signature, {"w": WEIGHT})
    session = Session.__new__(Session)
    declared = [TensorInfo("x", ("batch", 4), FLOAT), TensorInfo("m", ("batch", 4), FLOAT)]
    session._set_signature(declared, [TensorInfo("out", ("batch", 4), FLOAT)], {})
    session._input_bounds = bounds or {}
    session._bind(model, 3, 1)
    return session


def feed(batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal((batch, 4)).astype(np.float32) for name in ("x", "m")}


def expected(inputs: dict[str, np.ndarray]) -> np.ndarray:
    return inputs["x"] + inputs["m"] * WEIGHT


@pytest.fixture(scope="module")
def hand_written() -> Session:
    return hand_written_session({"batch": (0, 16)})


@pytest.mark.parametrize("batch", [1, 3, 8, 0])
def test_one_entry_runs_every_batch(hand_written: Session, batch: int) -> None:
    inputs = feed(batch, seed=batch)
    (out,) = hand_written.run(None, inputs)
    assert out.shape == (batch, 4)
    np.testing.assert_allclose(out, expected(inputs), rtol=RTOL, atol=ATOL)


def test_non_contiguous_feeds_are_copied(hand_written: Session) -> None:
    inputs = {name: np.asfortranarray(value) for name, value in feed(5).items()}
    (out,) = hand_written.run(None, inputs)
    np.testing.assert_allclose(out, expected(inputs), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"x": np.zeros((3, 4), np.float32), "m": np.zeros((2, 4), np.float32)},
            r"^input 'm' axis 0 is dimension 'batch' = 2, but input 'x' axis 0 gave it 3: inputs that share a "
            r"dimension must agree$",
        ),
        (
            {"x": np.zeros((3, 5), np.float32), "m": np.zeros((3, 5), np.float32)},
            r"^input 'x' axis 1: expected size 4 \[batch, 4\], got 5$",
        ),
        (
            {"x": np.zeros((3, 4, 1), np.float32), "m": np.zeros((3, 4), np.float32)},
            r"^input 'x': expected rank 2 \[batch, 4\], got shape \(3, 4, 1\)$",
        ),
        (
            {"x": np.zeros((17, 4), np.float32), "m": np.zeros((17, 4), np.float32)},
            r"^input 'x' axis 0 is dimension 'batch' = 17, outside its bounds \[0, 16\] \(input_bounds\)$",
        ),
        (
            {"x": np.zeros((3, 4), np.float64), "m": np.zeros((3, 4), np.float32)},
            r"^input 'x': expected dtype float32",
        ),
    ],
)
def test_feeds_are_checked_before_native_code_runs(
    hand_written: Session, inputs: dict[str, np.ndarray], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        hand_written.run(None, inputs)


def test_a_lower_bound_refuses_smaller_sizes() -> None:
    session = hand_written_session({"batch": (1, 8)})
    with pytest.raises(InvalidInputError, match=r"dimension 'batch' = 0, outside its bounds \[1, 8\]"):
        session.run(None, feed(0))
    assert session.run(None, feed(8))[0].shape == (8, 4)


def test_save_and_load_keep_the_symbols_and_bounds(hand_written: Session, tmp_path: Path) -> None:
    hand_written.save(tmp_path / "dynamic.mlc")
    loaded = load(tmp_path / "dynamic.mlc")
    assert [info.shape for info in loaded.get_inputs()] == [("batch", 4), ("batch", 4)]
    assert [info.shape for info in loaded.get_outputs()] == [("batch", 4)]
    for batch in (2, 7):
        inputs = feed(batch, seed=10 + batch)
        np.testing.assert_allclose(loaded.run(None, inputs)[0], expected(inputs), rtol=RTOL, atol=ATOL)
    with pytest.raises(InvalidInputError, match=r"outside its bounds \[0, 16\]"):
        loaded.run(None, feed(20))


def test_with_weights_and_with_num_threads_keep_the_extents(hand_written: Session) -> None:
    inputs = feed(3)
    doubled = hand_written.with_weights({"w": 2 * WEIGHT})
    np.testing.assert_allclose(doubled.run(None, inputs)[0], inputs["x"] + inputs["m"] * 2 * WEIGHT, rtol=RTOL)
    with pytest.raises(InvalidInputError, match="outside its bounds"):
        hand_written.with_num_threads(2).run(None, feed(17))


@pytest.mark.parametrize(
    ("extents", "message"),
    [
        (EntryExtents(3, 2, 1, ((DYNAMIC, 4), (DYNAMIC, 4), (DYNAMIC, 4)), ("batch",)), "1 symbols"),
        (EntryExtents(3, 1, 1, ((DYNAMIC, 4), (DYNAMIC, 4), (DYNAMIC, 4)), ("batch",)), "1 input extents"),
        (EntryExtents(3, 2, 0, ((DYNAMIC, 4), (DYNAMIC, 4), (DYNAMIC, 4)), ("b", "b")), "0 output extents"),
        (EntryExtents(2, 2, 1, ((DYNAMIC, 4), (DYNAMIC, 4)), ("b", "b")), "2 input and output parameters"),
    ],
)
def test_an_extents_abi_that_does_not_fit_the_entry_is_refused(extents: EntryExtents, message: str) -> None:
    inputs = [TensorInfo("x", (DYNAMIC, 4), FLOAT), TensorInfo("m", (DYNAMIC, 4), FLOAT)]
    outputs = [TensorInfo("out", (DYNAMIC, 4), FLOAT)]
    signature = EntrySignature(["w"], [], extents=extents)
    with pytest.raises(ValueError, match=f"the entry's run-time extents do not fit .*{message}"):
        bind(inputs, outputs, JitModule(ENTRY_IR), signature, {"w": WEIGHT})


# The driver: ONNX models with a symbolic batch.


def symbolic_mlp() -> onnx.ModelProto:
    """examples/make_mlp.py's MLP (MatMul, Add, Relu) with its batch named `batch`."""
    return build_mlp(batch="batch")


def shared_symbol_model(op: str = "Relu") -> onnx.ModelProto:
    """out = op(x @ w) + m: x [batch, 16], m [batch, 8]."""
    weight = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["y"]),
            helper.make_node(op, ["y"], ["z"]),
            helper.make_node("Add", ["z", "m"], ["out"]),
        ],
        "shared",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16]),
            helper.make_tensor_value_info("m", TensorProto.FLOAT, ["batch", 8]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"sequence": 8}, r"input_bounds: 'sequence' is not a dimension of the model's inputs .*'batch'"),
        ({"batch": (4, 2)}, r"input_bounds: 'batch' has bound \(4, 2\)"),
        ({"batch": -1}, r"input_bounds: 'batch' has bound -1"),
        ({"batch": "8"}, r"input_bounds: 'batch' has bound '8'"),
    ],
)
def test_bad_input_bounds_are_refused_before_compiling(bounds: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InferenceSession(symbolic_mlp(), input_bounds=bounds)


@pytest.mark.parametrize("refused_by", ["importer", "pass"])
def test_a_model_that_does_not_compile_symbolically_falls_back_and_says_why(
    refused_by: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The importer or a pass refusing run-time dimensions (as graph-to-te does for an op without them) leaves the
    session compiling per shape: `stats` names the refusal, the `minimlc` logger warns once per refusal."""
    from xdsl.utils.exceptions import DiagnosticException

    from minimlc.driver import cache, symbolic
    from minimlc.frontend.onnx import import_model
    from minimlc.frontend.onnx_errors import ModelImportError

    refusals = {
        "importer": ModelImportError("node 'nz' (NonZero): no run-time dimensions"),
        "pass": DiagnosticException("graph-to-te: 'graph.nonzero' does not take run-time dimensions"),
    }

    symbolic_imports: list[object] = []

    def import_refused(read, input_shapes):
        if refused_by == "importer":
            raise refusals["importer"]
        symbolic_imports.append(import_model(read, {"x": (1, 16), "m": (1, 8)}))  # only for the pass to refuse
        return symbolic_imports[-1]

    real_compile = cache.compile_cached

    def compile_refusing_symbolic_imports(imported, *args, **kwargs):
        if any(imported is refused for refused in symbolic_imports):
            raise refusals["pass"]
        return real_compile(imported, *args, **kwargs)

    monkeypatch.setattr(symbolic, "import_symbolic", import_refused)
    monkeypatch.setattr(cache, "compile_cached", compile_refusing_symbolic_imports)
    monkeypatch.setattr(symbolic, "_logged", set())
    with caplog.at_level(logging.WARNING, logger="minimlc"):
        session = InferenceSession(shared_symbol_model(), num_threads=1, input_bounds={"batch": 5})
        InferenceSession(shared_symbol_model(), num_threads=1)
    assert session.stats["symbolic_fallback"] == {
        "importer": "the importer refused: node 'nz' (NonZero): no run-time dimensions",
        "pass": "DiagnosticException: graph-to-te: 'graph.nonzero' does not take run-time dimensions",
    }[refused_by]
    assert sum("compiled once per distinct input shapes" in record.message for record in caplog.records) == 1
    oracle = ort.InferenceSession(shared_symbol_model().SerializeToString())
    for batch in (2, 5, 2):
        inputs = {"x": np.ones((batch, 16), np.float32), "m": np.ones((batch, 8), np.float32)}
        np.testing.assert_allclose(session.run(None, inputs)[0], oracle.run(None, inputs)[0], rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 2
    with pytest.raises(InvalidInputError, match=r"^input 'x' axis 0 is dimension 'batch' = 6, outside its bounds"):
        session.run(None, {"x": np.ones((6, 16), np.float32), "m": np.ones((6, 8), np.float32)})
    with pytest.raises(InvalidInputError, match=r"^input 'm' axis 0 is dimension 'batch' = 2, but input 'x' axis 0"):
        session.run(None, {"x": np.zeros((3, 16), np.float32), "m": np.zeros((2, 8), np.float32)})
    with pytest.raises(ValueError, match=r"symbolic dimensions: .* save a session with fixed shapes"):
        session.save(tmp_path / "unused.mlc")
    with pytest.raises(ValueError, match=r"enable_profiling needs fixed input shapes: .*not compile with run-time"):
        InferenceSession(shared_symbol_model(), enable_profiling=True)


# One compile with run-time extents (the compiler side: the importer's symbolic mode, `?` through the pipeline).


def symbolic_session(model: onnx.ModelProto, **options: object) -> InferenceSession:
    """A session over `model` that compiled once with run-time extents; failed if the importer or a pass refused."""
    try:
        session = InferenceSession(model, num_threads=1, **options)  # type: ignore[arg-type]
    except ValueError as error:  # enable_profiling refused after the fallback
        session, fallback = None, str(error)
    else:
        fallback = str(session.stats.get("symbolic_fallback", ""))
    assert session is not None, fallback
    assert not fallback, fallback
    return session


def mlp_feed(batch: int) -> dict[str, np.ndarray]:
    return {"input": np.random.default_rng(batch).standard_normal((batch, 784)).astype(np.float32)}


def test_one_compile_serves_batch_1_3_8() -> None:
    session = symbolic_session(symbolic_mlp(), input_bounds={"batch": 64})
    oracle = ort.InferenceSession(symbolic_mlp().SerializeToString())
    for batch in (1, 3, 8, 3):
        (actual,) = session.run(None, mlp_feed(batch))
        assert actual.shape == (batch, 10)
        np.testing.assert_allclose(actual, oracle.run(None, mlp_feed(batch))[0], rtol=RTOL, atol=ATOL)
    assert session.stats["compiles"] == 1
    assert [list(info.shape) for info in session.get_inputs()] == [["batch", 784]]
    assert [list(info.shape) for info in session.get_outputs()] == [["batch", 10]]
    assert session.compiled_shapes() == [{"input": ("batch", 784)}]
    with pytest.raises(InvalidInputError, match=r"^input 'input' axis 0 is dimension 'batch' = 65, outside its "):
        session.run(None, mlp_feed(65))
    with pytest.raises(InvalidInputError, match=r"^input 'input' axis 1: expected size 784 \[batch, 784\], got 783$"):
        session.run(None, {"input": np.zeros((2, 783), np.float32)})


def test_inputs_sharing_a_symbol_compile_once_and_must_agree() -> None:
    session = symbolic_session(shared_symbol_model())
    oracle = ort.InferenceSession(shared_symbol_model().SerializeToString())
    for batch in (2, 7):
        rng = np.random.default_rng(batch)
        inputs = {"x": rng.standard_normal((batch, 16)).astype(np.float32), "m": rng.random((batch, 8), np.float32)}
        np.testing.assert_allclose(session.run(None, inputs)[0], oracle.run(None, inputs)[0], rtol=RTOL, atol=ATOL)
    with pytest.raises(InvalidInputError, match=r"^input 'm' axis 0 is dimension 'batch' = 2, but input 'x' axis 0 "):
        session.run(None, {"x": np.zeros((3, 16), np.float32), "m": np.zeros((2, 8), np.float32)})
    assert session.stats["compiles"] == 1


def test_a_saved_symbolic_model_runs_at_two_shapes(tmp_path: Path) -> None:
    session = symbolic_session(symbolic_mlp(), input_bounds={"batch": (1, 16)})
    session.save(tmp_path / "mlp.mlc")
    loaded = load(tmp_path / "mlp.mlc")
    assert [list(info.shape) for info in loaded.get_inputs()] == [["batch", 784]]
    for batch in (2, 5):
        np.testing.assert_allclose(
            loaded.run(None, mlp_feed(batch))[0], session.run(None, mlp_feed(batch))[0], rtol=RTOL, atol=ATOL
        )
    with pytest.raises(InvalidInputError, match=r"outside its bounds \[1, 16\]"):
        loaded.run(None, mlp_feed(17))


def test_a_symbolic_model_profiles_at_every_shape() -> None:
    session = symbolic_session(symbolic_mlp(), enable_profiling=True)
    for batch in (1, 4):
        session.run(None, mlp_feed(batch))
    assert session.profiler is not None
    assert session.profiler.summary()


# The pipeline's entry ABI, from a te-level module (no importer needed): te-to-loop gives @main the extents and
# @main_output_extents, the rest of the pipeline lowers them, the runtime calls them.

TE_ADD = """
func.func @main(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32>
    attributes {minimlc.input_symbols = ["batch", "batch"]} {
  %n = te.dim %x[0] : tensor<?x8xf32>
  %z = te.compute "add" (%i, %j) [%n] -> tensor<?x8xf32> {
    %a = te.read %x[%i, %j] : tensor<?x8xf32>
    %b = te.read %y[%i, %j] : tensor<?x8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %z : tensor<?x8xf32>
}
"""


def test_the_pipelines_entry_abi_runs_every_batch(tmp_path: Path) -> None:
    from xdsl.parser import Parser

    from minimlc.frontend.onnx import ImportedModel
    from minimlc.lowering.pipeline import make_context

    module = Parser(make_context(), TE_ADD).parse_module()
    inputs = [TensorInfo("x", ("batch", 8), FLOAT), TensorInfo("y", ("batch", 8), FLOAT)]
    imported = ImportedModel(module, {}, inputs, [TensorInfo("z", ("batch", 8), FLOAT)])
    session = InferenceSession.from_imported(imported, num_threads=1, input_bounds={"batch": 8})
    assert session._model is not None
    assert session._model.extents == EntryExtents(3, 2, 1, ((DYNAMIC, 8),) * 3, ("batch", "batch"))
    session.save(tmp_path / "add.mlc")
    for runner in (session, load(tmp_path / "add.mlc")):
        for batch in (1, 3, 8, 0):
            x, y = (np.random.default_rng(batch + k).random((batch, 8), np.float32) for k in range(2))
            np.testing.assert_array_equal(runner.run(None, {"x": x, "y": y})[0], x + y)
        with pytest.raises(InvalidInputError, match=r"^input 'y' axis 0 is dimension 'batch' = 3, but input 'x' "):
            runner.run(None, {"x": np.zeros((2, 8), np.float32), "y": np.zeros((3, 8), np.float32)})
        with pytest.raises(InvalidInputError, match=r"^input 'x' axis 0 is dimension 'batch' = 9, outside its bounds"):
            runner.run(None, {"x": np.zeros((9, 8), np.float32), "y": np.zeros((9, 8), np.float32)})
    assert session.stats["compiles"] == 1


# The reader: `abi.entry_signature` of an entry lowered past loop-to-scf.


def lowered_entry(extents_type: MemRefType, **attributes: Attribute) -> ModuleOp:
    """@main(x: ?x16, m: ?x8, out: ?x8, extents, pool, w: 16x8) with `attributes`, as loop-to-scf leaves it."""
    types = [
        MemRefType(f32, [DYNAMIC_INDEX, 16]),
        MemRefType(f32, [DYNAMIC_INDEX, 8]),
        MemRefType(f32, [DYNAMIC_INDEX, 8]),
        extents_type,
        llvm.LLVMPointerType(),
        MemRefType(f32, [16, 8]),
    ]
    entry = func.FuncOp("main", (types, []), Region(Block(arg_types=types)))
    entry.body.block.add_op(func.ReturnOp())
    entry.attributes.update({abi.ENTRY_ATTR: UnitAttr(), abi.POOL_ATTR: IntegerAttr(4, 64)})
    entry.attributes.update({abi.WEIGHTS_ATTR: ArrayAttr([StringAttr("w")]), **attributes})
    return ModuleOp([entry])


def test_entry_signature_reads_the_extents_slot_k_j_and_symbols() -> None:
    symbols = ArrayAttr([StringAttr("batch"), StringAttr("batch")])
    module = lowered_entry(
        MemRefType(i64, [2]),
        **{abi.INPUT_EXTENTS_ATTR: IntegerAttr(2, 64), abi.OUTPUT_EXTENTS_ATTR: IntegerAttr(1, 64)},
        **{graph.INPUT_SYMBOLS_ATTR: symbols},
    )
    signature = abi.entry_signature(module)
    assert signature.extents == EntryExtents(
        slot=3, count=2, output_extents=1, shapes=((DYNAMIC, 16), (DYNAMIC, 8), (DYNAMIC, 8)), symbols=("batch",) * 2
    )
    assert (signature.weight_names, signature.pool_slot) == (["w"], 4)


def test_entry_signature_refuses_an_extents_slot_of_another_type() -> None:
    module = lowered_entry(MemRefType(i64, [3]), **{abi.INPUT_EXTENTS_ATTR: IntegerAttr(2, 64)})
    with pytest.raises(ValueError, match=r"@main: parameter 3 should be the memref<2xi64> of the input extents"):
        abi.entry_signature(module)


def test_a_static_entry_has_no_extents() -> None:
    assert abi.entry_signature(lowered_entry(MemRefType(f32, [2]))).extents is None


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_of_static_axes_under_a_run_time_batch_compiles_once(mode: str) -> None:
    pads = numpy_helper.from_array(np.array([0, 1, 0, 2], np.int64), "pads")
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode, name="pad")],
        "pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 6])],
        [pads],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = symbolic_session(model)
    oracle = ort.InferenceSession(model.SerializeToString())
    for batch in (1, 4, 0):
        x = np.random.default_rng(batch).random((batch, 3), np.float32)
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], oracle.run(None, {"x": x})[0])
    assert session.stats["compiles"] == 1
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([1, 0, 0, 0], np.int64), "pads"))
    padded_batch = InferenceSession(model, num_threads=1)
    assert padded_batch.stats["symbolic_fallback"] == (
        "the importer refused: node 'pad' (Pad): pads [1, 0, 0, 0] pad axis 0, whose size is known only at run time"
    )


@pytest.mark.parametrize(
    ("op", "axis", "keepdims", "last"), [("ArgMax", 1, 0, 0), ("ArgMin", 0, 1, 1), ("ArgMax", 1, 1, 1)]
)
def test_arg_reductions_over_run_time_axes_compile_once(op: str, axis: int, keepdims: int, last: int) -> None:
    node = helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)
    graph = helper.make_graph(
        [node],
        "arg",
        [helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = symbolic_session(model)
    oracle = ort.InferenceSession(model.SerializeToString())
    for batch, sequence in ((1, 1), (2, 77), (5, 3)):
        x = np.random.default_rng(sequence).integers(0, 9, (batch, sequence))  # ties: first or last index
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], oracle.run(None, {"x": x})[0])
