"""Numerics of the tensor-family ONNX ops (concatenation, splitting, slicing, gathering, broadcasting, reductions,
shape plumbing) and the elementwise math, comparison and variadic ops, end to end through InferenceSession.

Each case is a tiny model run on seeded random float32 inputs and compared with `onnx.reference.ReferenceEvaluator`
at rtol=1e-5, atol=1e-6 (1e-4 / 1e-5 for reductions, which reassociate sums, and for libm-style functions).
Index-valued inputs (axes, split sizes, starts, indices, repeats) are initializers: compile-time constants. Shapes
and dtypes of every output must match exactly. Reductions over an empty axis are compared with numpy instead: the
reference evaluator is what the importer used to compute them with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError, UnsupportedFeatureError, import_model

Shape = tuple[int, ...]


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _check(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, Shape],
    initializers: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int = 13,
    outputs: Sequence[str] = ("Y",),
    rtol: float = 1e-5,
    atol: float = 1e-6,
    low: float = -2.0,
    high: float = 2.0,
) -> None:
    """Run `nodes` on random inputs in [low, high) with minimlc and the reference; compare every output."""
    rng = np.random.default_rng(0)
    feeds = {
        name: rng.uniform(low, high, size=shape).astype(np.float32)
        for name, shape in inputs.items()
    }
    graph = helper.make_graph(
        list(nodes),
        "test",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
            for name, shape in inputs.items()
        ],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    expected = ReferenceEvaluator(model).run(None, feeds)
    del model.graph.output[:]
    model.graph.output.extend(
        helper.make_tensor_value_info(name, TensorProto.FLOAT, want.shape)
        for name, want in zip(outputs, expected)
    )
    onnx.checker.check_model(model)
    actual = InferenceSession(model).run(None, feeds)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.shape == want.shape
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _node(
    op_type: str, inputs: Sequence[str], outputs: Sequence[str] = ("Y",), **attributes: Any
) -> onnx.NodeProto:
    return helper.make_node(op_type, list(inputs), list(outputs), **attributes)


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (2, 1)], 1),
        ([(2, 3), (4, 3), (1, 3)], 0),
        ([(2, 3, 4), (2, 3, 2)], -1),
        ([(1, 2, 2), (1, 3, 2), (1, 1, 2)], -2),
        ([(5,)], 0),
    ],
    ids=str,
)
def test_concat(shapes: list[Shape], axis: int) -> None:
    names = [f"X{i}" for i in range(len(shapes))]
    _check([_node("Concat", names, axis=axis)], dict(zip(names, shapes)))


def test_concat_with_a_constant() -> None:
    constant = {"C": np.arange(6, dtype=np.float32).reshape(2, 3)}
    _check([_node("Concat", ["X", "C"], axis=0)], {"X": (1, 3)}, constant)


@pytest.mark.parametrize("op_type", ["Sum", "Mean", "Max", "Min"])
@pytest.mark.parametrize("shapes", [[(2, 3)], [(2, 3), (3,)], [(4, 5), (4, 1), (1, 5)]], ids=str)
def test_variadic(op_type: str, shapes: list[Shape]) -> None:
    names = [f"X{i}" for i in range(len(shapes))]
    _check([_node(op_type, names)], dict(zip(names, shapes)))


@pytest.mark.parametrize(
    ("opset", "axis", "sizes", "outputs"),
    [
        (11, 0, None, 2),
        (11, 1, [1, 4], 2),
        (13, -1, [2, 2, 1], 3),
        (13, 1, None, 5),
        (18, 1, "num_outputs", 2),
        (18, 0, "num_outputs", 3),
    ],
    ids=str,
)
def test_split(opset: int, axis: int, sizes: list[int] | str | None, outputs: int) -> None:
    names = [f"Y{i}" for i in range(outputs)]
    attributes: dict[str, Any] = {"axis": axis}
    initializers = {}
    inputs = ["X"]
    if sizes == "num_outputs":
        attributes["num_outputs"] = outputs
    elif sizes is not None and opset < 13:
        attributes["split"] = sizes
    elif sizes is not None:
        initializers["split"] = _ints(*sizes)
        inputs.append("split")
    _check(
        [_node("Split", inputs, names, **attributes)],
        {"X": (4, 5)},
        initializers,
        opset=opset,
        outputs=names,
    )


@pytest.mark.parametrize(
    ("opset", "shape", "axes"),
    [
        (11, (1, 3, 1, 2), [0, 2]),
        (13, (1, 3, 1, 2), [-2]),
        (13, (1, 3, 1, 2), None),
        (11, (2, 1), None),
    ],
    ids=str,
)
def test_squeeze(opset: int, shape: Shape, axes: list[int] | None) -> None:
    if axes is None:
        _check([_node("Squeeze", ["X"])], {"X": shape}, opset=opset)
    elif opset < 13:
        _check([_node("Squeeze", ["X"], axes=axes)], {"X": shape}, opset=opset)
    else:
        _check([_node("Squeeze", ["X", "axes"])], {"X": shape}, {"axes": _ints(*axes)}, opset=opset)


@pytest.mark.parametrize(
    ("opset", "shape", "axes"),
    [(11, (3, 2), [0]), (11, (3, 2), [1, 3]), (13, (3,), [-1, 0]), (13, (2, 3), [2])],
    ids=str,
)
def test_unsqueeze(opset: int, shape: Shape, axes: list[int]) -> None:
    if opset < 13:
        _check([_node("Unsqueeze", ["X"], axes=axes)], {"X": shape}, opset=opset)
    else:
        _check(
            [_node("Unsqueeze", ["X", "axes"])], {"X": shape}, {"axes": _ints(*axes)}, opset=opset
        )


REDUCTIONS = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]

REDUCE_CASES = [
    # (axes or None for all, keepdims, noop_with_empty_axes)
    ([1], 1, 0),
    ([1], 0, 0),
    ([-1, 0], 0, 0),
    ([0, 2], 1, 0),
    (None, 1, 0),
    (None, 0, 0),
    (None, 0, 1),
]


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize(("axes", "keepdims", "noop"), REDUCE_CASES, ids=str)
def test_reduce_axes_input(op_type: str, axes: list[int] | None, keepdims: int, noop: int) -> None:
    """Opset 18: axes as an input for every reduction."""
    inputs = ["X"] if axes is None else ["X", "axes"]
    initializers = {} if axes is None else {"axes": _ints(*axes)}
    node = _node(op_type, inputs, keepdims=keepdims, noop_with_empty_axes=noop)
    # Positive inputs keep the logarithms defined.
    _check(
        [node], {"X": (2, 3, 4)}, initializers, opset=18, rtol=1e-4, atol=1e-5, low=0.1, high=2.0
    )


EMPTY_REDUCTIONS: dict[str, Any] = {
    "ReduceSum": lambda x, **kw: np.sum(x, **kw),
    "ReduceMean": lambda x, **kw: np.sum(x, **kw) / np.sum(np.ones_like(x), **kw),  # np.mean warns
    "ReduceMax": lambda x, **kw: np.max(x, initial=-np.inf, **kw),
    "ReduceMin": lambda x, **kw: np.min(x, initial=np.inf, **kw),
    "ReduceProd": lambda x, **kw: np.prod(x, **kw),
    "ReduceL1": lambda x, **kw: np.sum(np.abs(x), **kw),
    "ReduceL2": lambda x, **kw: np.sqrt(np.sum(x * x, **kw)),
    "ReduceLogSum": lambda x, **kw: np.log(np.sum(x, **kw)),
    "ReduceLogSumExp": lambda x, **kw: np.log(np.sum(np.exp(x), **kw)),
    "ReduceSumSquare": lambda x, **kw: np.sum(x * x, **kw),
}
"""Each reduction in numpy; over no values numpy gives the combiner's identity (max and min need `initial=`)."""


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([1], 0), (None, 0)], ids=str)
def test_reduce_over_an_empty_axis(op_type: str, axes: list[int] | None, keepdims: int) -> None:
    """No data is read: native code fills the result with the reduction of the empty set (0, 1, -inf, inf; NaN for
    the mean, 0 / 0), compared with numpy exactly, NaN equal to NaN."""
    inputs = ["X"] if axes is None else ["X", "axes"]
    initializers = [] if axes is None else [numpy_helper.from_array(_ints(*axes), "axes")]
    x = np.zeros((2, 0, 4), np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, 0 / 0 = NaN, as intended
        expected = EMPTY_REDUCTIONS[op_type](x, axis=None if axes is None else tuple(axes), keepdims=bool(keepdims))
    graph = helper.make_graph(
        [_node(op_type, inputs, keepdims=keepdims)],
        "empty",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, expected.shape)],
        initializers,
    )
    session = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    (y,) = session.run(None, {"X": x})
    assert session.constant_output_names == [] and session.stats["kernels"] > 0, "native code computes it"
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, expected.astype(np.float32))


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([-1], 0), (None, 1)], ids=str)
def test_reduce_axes_attribute(op_type: str, axes: list[int] | None, keepdims: int) -> None:
    """Opset 11: axes as an attribute."""
    attributes: dict[str, Any] = {"keepdims": keepdims} | ({} if axes is None else {"axes": axes})
    _check(
        [_node(op_type, ["X"], **attributes)],
        {"X": (3, 4)},
        opset=11,
        rtol=1e-4,
        atol=1e-5,
        low=0.1,
    )


def test_reduce_sum_axes_input_at_opset_13() -> None:
    _check(
        [_node("ReduceSum", ["X", "axes"], keepdims=0)],
        {"X": (2, 3, 4)},
        {"axes": _ints(-2)},
        rtol=1e-4,
    )


def test_reduce_log_sum_exp_is_stable_for_large_inputs() -> None:
    _check(
        [_node("ReduceLogSumExp", ["X"], axes=[1])],
        {"X": (2, 5)},
        opset=11,
        low=80.0,
        high=100.0,
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    ("shape", "axis", "indices"),
    [
        ((5, 3), 0, _ints(0, 4, 2)),
        ((5, 3), 1, _ints(-1, 0)),
        ((2, 3, 4), -1, np.array([[0, 3], [3, 1]], dtype=np.int64)),
        ((2, 3, 4), 1, np.array(2, dtype=np.int64)),
        ((6,), 0, _ints(1, 2, 3, 4)),
        ((3, 2), 0, np.array([[2, 2, -3]], dtype=np.int32)),
    ],
    ids=str,
)
def test_gather(shape: Shape, axis: int, indices: np.ndarray) -> None:
    _check([_node("Gather", ["X", "indices"], axis=axis)], {"X": shape}, {"indices": indices})


@pytest.mark.parametrize(
    ("starts", "ends", "axes", "steps"),
    [
        ([1], [3], None, None),
        ([0, 1], [2, -1], [0, 1], None),
        ([-1], [-1000], [1], [-1]),
        ([0, 4], [10, 0], [0, -1], [2, -2]),
        ([1], [2**63 - 1], [-2], None),
    ],
    ids=str,
)
def test_slice(
    starts: list[int], ends: list[int], axes: list[int] | None, steps: list[int] | None
) -> None:
    initializers = {"starts": _ints(*starts), "ends": _ints(*ends)}
    if axes is not None:
        initializers["axes"] = _ints(*axes)
    if steps is not None:
        initializers["steps"] = _ints(*steps)
    _check([_node("Slice", ["X", *initializers])], {"X": (3, 6)}, initializers)


def test_slice_attributes_before_opset_10() -> None:
    _check(
        [_node("Slice", ["X"], starts=[1, 0], ends=[3, -2], axes=[0, 1])], {"X": (4, 5)}, opset=9
    )


@pytest.mark.parametrize(
    ("shape", "target"),
    [((3, 1), (2, 3, 4)), ((4,), (3, 1)), ((1, 2), (1,)), ((2, 1, 3), (2, 4, 3))],
    ids=str,
)
def test_expand(shape: Shape, target: Shape) -> None:
    _check([_node("Expand", ["X", "shape"])], {"X": shape}, {"shape": _ints(*target)})


@pytest.mark.parametrize(
    ("shape", "repeats"), [((2, 3), (2, 1)), ((2, 3), (1, 3)), ((2, 1, 2), (2, 3, 2))], ids=str
)
def test_tile(shape: Shape, repeats: Shape) -> None:
    _check([_node("Tile", ["X", "repeats"])], {"X": shape}, {"repeats": _ints(*repeats)})


@pytest.mark.parametrize(
    "condition",
    [
        np.array([[True, False, True]]),
        np.array([[True], [False]]),
        np.array(True),
        np.zeros((2, 3), dtype=bool),
    ],
    ids=["row", "column", "all-true", "all-false"],
)
def test_where_with_a_constant_condition(condition: np.ndarray) -> None:
    _check([_node("Where", ["C", "X", "Y1"])], {"X": (2, 3), "Y1": (3,)}, {"C": condition})


@pytest.mark.parametrize(
    "comparison", ["Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"]
)
def test_where_with_a_runtime_comparison(comparison: str) -> None:
    nodes = [
        _node("Floor", ["A"], ["FA"]),
        _node("Floor", ["B"], ["FB"]),  # floors make equal elements likely
        _node(comparison, ["FA", "FB"], ["C"]),
        _node("Where", ["C", "A", "B"]),
    ]
    _check(nodes, {"A": (4, 5), "B": (5,)})


def test_logic_on_runtime_masks() -> None:
    nodes = [
        _node("Less", ["A", "B"], ["lt"]),
        _node("Greater", ["A", "zero"], ["pos"]),
        _node("And", ["lt", "pos"], ["both"]),
        _node("Or", ["both", "flags"], ["either"]),
        _node("Not", ["either"], ["neither"]),
        _node("Where", ["neither", "A", "B"]),
    ]
    constants = {"zero": np.zeros((1,), np.float32), "flags": np.array([False, True, False])}
    _check(nodes, {"A": (2, 3), "B": (2, 3)}, constants)


UNARY = [
    ("Neg", -2.0, 2.0),
    ("Abs", -2.0, 2.0),
    ("Sqrt", 0.0, 4.0),
    ("Reciprocal", 0.5, 2.0),
    ("Log", 0.1, 4.0),
    ("Floor", -3.0, 3.0),
    ("Ceil", -3.0, 3.0),
    ("Round", -3.0, 3.0),
    ("Sign", -2.0, 2.0),
    ("Erf", -2.0, 2.0),
    ("Sin", -3.0, 3.0),
    ("Cos", -3.0, 3.0),
    ("Tan", -1.0, 1.0),
    ("Asin", -0.9, 0.9),
    ("Acos", -0.9, 0.9),
    ("Atan", -3.0, 3.0),
    ("Sinh", -2.0, 2.0),
    ("Cosh", -2.0, 2.0),
    ("Asinh", -2.0, 2.0),
    ("Acosh", 1.1, 3.0),
    ("Atanh", -0.9, 0.9),
]


@pytest.mark.parametrize(("op_type", "low", "high"), UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("shape", [(7,), (2, 3), (2, 3, 4)], ids=str)
def test_unary(op_type: str, low: float, high: float, shape: Shape) -> None:
    _check([_node(op_type, ["X"])], {"X": shape}, low=low, high=high, rtol=1e-5, atol=1e-5)


def test_round_is_half_to_even() -> None:
    halves = {"H": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], dtype=np.float32)}
    _check(
        [_node("Add", ["X", "H"], ["S"]), _node("Round", ["S"])],
        {"X": (6,)},
        halves,
        low=0.0,
        high=0.0,
    )


@pytest.mark.parametrize(("a", "b"), [((2, 3), (2, 3)), ((2, 3), (1,)), ((4, 1), (3,))], ids=str)
def test_pow(a: Shape, b: Shape) -> None:
    _check([_node("Pow", ["A", "B"])], {"A": a, "B": b}, low=0.5, high=2.0, rtol=1e-5)


@pytest.mark.parametrize("op_type", ["Cast", "CastLike"])
def test_float_cast_is_identity(op_type: str) -> None:
    node = (
        _node("Cast", ["X"], to=TensorProto.FLOAT)
        if op_type == "Cast"
        else _node("CastLike", ["X", "X"])
    )
    _check([node, _node("Neg", ["Y"], ["Z"])], {"X": (2, 3)}, opset=19, outputs=["Z"])


def test_shape_plumbing_of_a_runtime_tensor() -> None:
    """Shape, Size, Cast, Range and ConstantOfShape on static shapes all fold; only data ops remain."""
    nodes = [
        _node("Shape", ["X"], ["s"], start=-1),
        _node("Size", ["X"], ["n"]),
        _node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        _node(
            "ConstantOfShape",
            ["s"],
            ["ones"],
            value=numpy_helper.from_array(np.ones(1, np.float32)),
        ),
        _node("Div", ["ones", "nf"], ["scale"]),
        _node("Mul", ["X", "scale"], ["Y"]),
    ]
    _check(nodes, {"X": (2, 5)}, opset=15)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize(
    ("shape", "k"), [((4, 5), None), ((2, 4, 5), 1), ((3, 3), -1), ((2, 5, 3), 2), ((4, 2), -5)], ids=str
)
def test_trilu(shape: Shape, k: int | None, upper: int) -> None:
    inputs = ["X"] if k is None else ["X", "k"]
    initializers = None if k is None else {"k": np.array(k, np.int64)}
    _check([_node("Trilu", inputs, upper=upper)], {"X": shape}, initializers, opset=14)


EINSUMS = [  # (equation, operand shapes): the transformer patterns, then transposes, sums, outer products
    ("bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 6, 8)]),
    ("bhqk,bhkd->bhqd", [(1, 2, 5, 6), (1, 2, 6, 8)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bsd,de->bse", [(2, 3, 4), (4, 16)]),
    ("ij->ji", [(3, 4)]),
    ("bij->bj", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("abcd,adce->bae", [(2, 3, 4, 5), (2, 5, 4, 3)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=str)
def test_einsum(equation: str, shapes: list[Shape]) -> None:
    names = [f"X{i}" for i in range(len(shapes))]
    _check([_node("Einsum", names, equation=equation)], dict(zip(names, shapes)), opset=12, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("equation", "shapes", "error", "message"),
    [
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], UnsupportedFeatureError, r"is not supported \(supported: one or"),
        ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)], ModelImportError, "stands for sizes 2 and 1"),
        ("i.j->ij", [(2, 3)], ModelImportError, "characters other than letters and one '...' per term"),
        ("ij,jk->ik", [(2, 3), (4, 5)], ModelImportError, "letter 'j' stands for sizes 3 and 4"),
        ("ij->ik", [(2, 3)], ModelImportError, "output letters must be distinct letters of the operands"),
    ],
    ids=str,
)
def test_einsum_refusals(equation: str, shapes: list[Shape], error: type[Exception], message: str) -> None:
    names = [f"X{i}" for i in range(len(shapes))]
    graph = helper.make_graph(
        [_node("Einsum", names, equation=equation)],
        "test",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in zip(names, shapes)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 3))],  # any shape: the converter refuses first
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=8)
    with pytest.raises(error, match=message):
        import_model(model)
