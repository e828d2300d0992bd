"""Post-training static int8 quantization: run the float model on calibration inputs with minimlc itself, collect
each activation's range, and write a QDQ model (`frontend/onnx_static_quantization.py`).

    feeds = load_calibration("calib/", model)                      # a folder of .npz/.npy files, or one .npz
    quantized = quantize_static(model, feeds, method="percentile")   # -> onnx.ModelProto (QDQ)

Calibration inputs (`load_calibration`):
- a folder: each `.npz` file is one feed (an array per input name); each `.npy` file is one feed of a one-input
  model. Files are taken in name order.
- one `.npz` file: an array per input name whose first axis stacks the feeds: with the input's declared batch B
  (its first dimension; 1 if symbolic), feed i is rows [i*B, (i+1)*B). Every array must give the same count.
A missing or unknown input name, a wrong rank, shape or an element type that is not the input's is a one-line
`CalibrationError` naming the input and the file.

Ranges (`collect_ranges`): the model compiled once with the tensors to calibrate as extra outputs; `minmax` takes
the smallest and largest value seen over all feeds, `percentile` the values at ranks `percentile` % and
100 - `percentile` % of all the values seen (exact: the `k` largest and smallest are kept across feeds).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx

    from minimlc.lowering.pipeline import ExtraPasses

METHODS = ("minmax", "percentile")
"""How activation ranges are taken from the calibration runs."""


class CalibrationError(ValueError):
    """The calibration inputs do not fit the model (a file, an input name, a shape or a type)."""


Feed = dict[str, np.ndarray]


def load_calibration(path: str | os.PathLike[str], model: onnx.ModelProto, count: int | None = None) -> list[Feed]:
    """The calibration feeds at `path` (a folder or one .npz; see the module docstring), at most `count`, checked
    against `model`'s inputs."""
    source = Path(path)
    if source.is_dir():
        files = sorted(file for file in source.iterdir() if file.suffix in (".npz", ".npy"))
        if not files:
            raise CalibrationError(f"calibration folder '{source}' holds no .npz or .npy files")
        feeds = [(file, _read_feed(file, model)) for file in files[:count]]
    elif source.is_file() and source.suffix == ".npz":
        feeds = [(source, feed) for feed in _split_batches(source, model)][:count]
    elif source.exists():
        raise CalibrationError(f"calibration input '{source}' is neither a folder nor an .npz file")
    else:
        raise CalibrationError(f"calibration input '{source}' does not exist")
    for file, feed in feeds:
        check_feed(feed, model, str(file))
    return [feed for _, feed in feeds]


def _read_feed(file: Path, model: onnx.ModelProto) -> Feed:
    inputs = _input_names(model)
    if file.suffix == ".npy":
        if len(inputs) != 1:
            raise CalibrationError(f"'{file}' is a .npy file, but the model has {len(inputs)} inputs: use .npz files")
        return {inputs[0]: np.load(file, allow_pickle=False)}
    with np.load(file, allow_pickle=False) as arrays:
        return {name: arrays[name] for name in arrays.files}


def _split_batches(file: Path, model: onnx.ModelProto) -> list[Feed]:
    """The feeds stacked along the first axis of each array of one .npz."""
    with np.load(file, allow_pickle=False) as arrays:
        stacked = {name: arrays[name] for name in arrays.files}
    _check_names(stacked, model, str(file))
    batches = {name: _declared_batch(model, name) for name in stacked}
    counts = {name: array.shape[0] // batches[name] if array.ndim else 0 for name, array in stacked.items()}
    for name, array in stacked.items():
        if not array.ndim or array.shape[0] % batches[name]:
            raise CalibrationError(
                f"input '{name}' in '{file}' has shape {list(array.shape)}: its first axis must stack whole batches "
                f"of {batches[name]}"
            )
    if len(set(counts.values())) != 1:
        raise CalibrationError(f"the arrays in '{file}' stack different numbers of feeds: {counts}")
    count = next(iter(counts.values()))
    return [
        {name: array[i * batches[name] : (i + 1) * batches[name]] for name, array in stacked.items()}
        for i in range(count)
    ]


def _input_names(model: onnx.ModelProto) -> list[str]:
    constants = {tensor.name for tensor in model.graph.initializer}
    return [vi.name for vi in model.graph.input if vi.name not in constants]


def _declared_shape(model: onnx.ModelProto, name: str) -> list[int | str]:
    vi = next(vi for vi in model.graph.input if vi.name == name)
    return [dim.dim_value if dim.HasField("dim_value") else dim.dim_param for dim in vi.type.tensor_type.shape.dim]


def _declared_batch(model: onnx.ModelProto, name: str) -> int:
    shape = _declared_shape(model, name)
    return shape[0] if shape and isinstance(shape[0], int) and shape[0] > 0 else 1


def _check_names(feed: Mapping[str, np.ndarray], model: onnx.ModelProto, where: str) -> None:
    inputs = _input_names(model)
    unknown = [name for name in feed if name not in inputs]
    if unknown:
        raise CalibrationError(f"{where}: unknown input '{unknown[0]}' (the model's inputs: {', '.join(inputs)})")
    missing = [name for name in inputs if name not in feed]
    if missing:
        raise CalibrationError(f"{where}: no array for input '{missing[0]}'")


def check_feed(feed: Mapping[str, np.ndarray], model: onnx.ModelProto, where: str) -> None:
    """A `CalibrationError` naming the input if `feed` misses one, has an unknown one, or one of the wrong shape or
    element type (a symbolic dimension takes any size)."""
    from onnx import helper

    _check_names(feed, model, where)
    for vi in model.graph.input:
        if vi.name not in feed:
            continue
        array = np.asarray(feed[vi.name])
        expected = _declared_shape(model, vi.name)
        fits = array.ndim == len(expected) and all(
            not isinstance(want, int) or want <= 0 or want == got for want, got in zip(expected, array.shape)
        )
        if not fits:
            raise CalibrationError(
                f"{where}: input '{vi.name}' has shape {list(array.shape)}, the model takes {expected}"
            )
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        if array.dtype != dtype:
            raise CalibrationError(f"{where}: input '{vi.name}' is {array.dtype}, the model takes {dtype}")


def collect_ranges(
    model: onnx.ModelProto,
    feeds: Sequence[Mapping[str, np.ndarray]],
    names: Sequence[str],
    method: str = "minmax",
    percentile: float = 99.99,
) -> dict[str, tuple[float, float]]:
    """[low, high] of each tensor of `names` over `feeds`, the model run by minimlc with them as extra outputs."""
    from onnx import shape_inference

    from minimlc.driver.session import InferenceSession

    if method not in METHODS:
        raise CalibrationError(f"unknown calibration method '{method}' (one of {', '.join(METHODS)})")
    if not 0 < percentile <= 100:
        raise CalibrationError(f"percentile must be in (0, 100], got {percentile}")
    if not feeds:
        raise CalibrationError("no calibration inputs")
    inferred = {vi.name: vi for vi in shape_inference.infer_shapes(model).graph.value_info}
    declared = {vi.name for vi in model.graph.output}
    extra = [name for name in names if name not in declared and name not in _input_names(model)]
    missing = [name for name in extra if name not in inferred]
    if missing:
        raise CalibrationError(f"cannot infer the type of tensor '{missing[0]}' to calibrate it")
    exposed = type(model)()
    exposed.CopyFrom(model)
    exposed.graph.output.extend(inferred[name] for name in extra)
    session = InferenceSession(exposed)
    outputs = [info.name for info in session.get_outputs()]
    collectors = {name: _RangeCollector(method, percentile, len(feeds)) for name in names}
    for feed in feeds:
        values = dict(zip(outputs, session.run(None, dict(feed))))
        values.update(feed)
        for name, collector in collectors.items():
            collector.add(np.asarray(values[name]))
    return {name: collector.range() for name, collector in collectors.items()}


class _RangeCollector:
    """One tensor's range over the calibration runs: min/max, or the exact percentile values, by keeping the `k`
    largest and smallest values seen (k = the values above the percentile's rank over all runs)."""

    def __init__(self, method: str, percentile: float, runs: int):
        self.method, self.percentile, self.runs = method, percentile, runs
        self.low = self.high = None
        self.smallest: np.ndarray | None = None
        self.largest: np.ndarray | None = None

    def add(self, values: np.ndarray) -> None:
        flat = values.astype(np.float32, copy=False).reshape(-1)
        if not flat.size:
            return
        if self.method == "minmax":
            low, high = float(flat.min()), float(flat.max())
            self.low = low if self.low is None else min(self.low, low)
            self.high = high if self.high is None else max(self.high, high)
            return
        k = max(1, math.floor(flat.size * self.runs * (100.0 - self.percentile) / 100.0) + 1)
        self.largest = _extreme(flat, self.largest, k, largest=True)
        self.smallest = _extreme(flat, self.smallest, k, largest=False)

    def range(self) -> tuple[float, float]:
        if self.method == "minmax":
            return (self.low or 0.0, self.high or 0.0)
        if self.largest is None or self.smallest is None:
            return (0.0, 0.0)
        return float(self.smallest.max()), float(self.largest.min())


def _extreme(values: np.ndarray, kept: np.ndarray | None, k: int, largest: bool) -> np.ndarray:
    """The `k` largest (or smallest) of `values` and `kept`."""
    merged = values if kept is None else np.concatenate([kept, values])
    if merged.size <= k:
        return merged
    return np.partition(merged, -k)[-k:] if largest else np.partition(merged, k - 1)[:k]


def quantize_static(
    model: onnx.ModelProto,
    calibration_feeds: Sequence[Mapping[str, np.ndarray]],
    method: str = "minmax",
    per_channel: bool = True,
    percentile: float = 99.99,
    reduce_range: bool = False,
) -> onnx.ModelProto:
    """A QDQ int8 copy of the float `model` (`prepare_for_quantization`: opset 13, BatchNormalization folded into
    Conv): weights of Conv/MatMul/Gemm int8 (per output channel, or per tensor), activations uint8 over the ranges
    `method` takes from running `model` on `calibration_feeds` with minimlc."""
    from minimlc.frontend.onnx_static_quantization import prepare_for_quantization, quantize_qdq, tensors_to_calibrate

    for index, feed in enumerate(calibration_feeds):
        check_feed(feed, model, f"calibration feed {index}")
    model = prepare_for_quantization(model)
    names = tensors_to_calibrate(model)
    ranges = collect_ranges(model, calibration_feeds, names, method, percentile)
    granularity = "per-channel" if per_channel else "per-tensor"
    description = f"int8 static QDQ, {method}, {granularity} weights, {len(calibration_feeds)} calibration inputs"
    return quantize_qdq(model, ranges, per_channel, reduce_range, description)


PRECISIONS = ("fp32", "bf16", "int8")
"""The precisions `InferenceSession(precision=...)` compiles a float model at."""
BF16_PASS = "graph-bf16-products"
"""The graph pass a bfloat16 build adds after the graph stage (`lowering/graph/graph_bf16_products.py`)."""
BF16_TE_PASSES = ("te-bf16-word-views", "te-bf16-activations")
"""The te passes a bfloat16 build adds after the te stage (`lowering/te/te_bf16_word_views.py`,
`te_bf16_activations.py`)."""


def check_precision(precision: str, calibration: object) -> None:
    """A one-line `ValueError` for a precision minimlc does not compile at, or calibration it would not use."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(map(repr, PRECISIONS))}, got {precision!r}")
    if precision == "int8" and calibration is None:
        raise ValueError(
            "precision='int8' needs calibration=[{input: array}, ...] or a folder/.npz of them: the activation "
            "ranges are calibrated on them (or quantize the model beforehand: minimlc quantize --calibrate)"
        )
    if precision != "int8" and calibration is not None:
        raise ValueError("calibration is only used with precision='int8'")


def bf16_passes(target: str, extra_passes: ExtraPasses | None) -> dict[str, str | Sequence[str]]:
    """`extra_passes` with `BF16_PASS` after the graph stage and `BF16_TE_PASSES` after the te stage, for a bfloat16
    build; a one-line `ValueError` where `target` has no bfloat16 dot product (checked before any work)."""
    from minimlc.lowering.target import BF16_FEATURES, target_from_name

    chosen = target_from_name(target)
    if not chosen.dot_bf16_bits:
        cpu = f" ({chosen.cpu})" if chosen.name == "host" else ""
        raise ValueError(f"precision='bf16': target '{chosen.name}'{cpu} has no bfloat16 dot product ({BF16_FEATURES})")
    extra = dict(extra_passes or {})
    graph = extra.get("graph", [])
    extra["graph"] = [*([graph] if isinstance(graph, str) else graph), BF16_PASS]
    te = extra.get("te", [])
    extra["te"] = [*([te] if isinstance(te, str) else te), *BF16_TE_PASSES]
    return extra


def quantized_for_session(
    model: onnx.ModelProto | str | os.PathLike[str] | bytes,
    calibration: str | os.PathLike[str] | Sequence[Mapping[str, np.ndarray]],
) -> onnx.ModelProto:
    """`InferenceSession(model, precision="int8", calibration=...)`'s model: `model` (weights loaded) quantized by
    `quantize_static` with its defaults, `calibration` feeds or a folder/.npz of them (`load_calibration`)."""
    import onnx

    if isinstance(model, onnx.ModelProto):
        proto = model
    else:
        proto = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(os.fspath(model))
    feeds = load_calibration(calibration, proto) if isinstance(calibration, str | os.PathLike) else list(calibration)
    return quantize_static(proto, feeds)
