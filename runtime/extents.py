"""Calling a model compiled with run-time extents (`docs/design/symbolic_shapes.md`, "Runtime"): one compiled model
serves every input shape.

    model compiled for x[batch, 16], m[batch, 8] -> out[batch, 4]     (symbols ("batch", "batch"))
    feeds x[3, 16], m[3, 8]        symbols bound: batch = 3, within input_bounds -> extents [3, 3]
    @main_output_extents([3, 3])   -> [3]: out allocated [3, 4]
    @main(x, m, out, extents, pool, weights...)

Every feed is checked before native code runs: rank, static sizes, inputs sharing a symbol agree, each symbol within
its bounds; so native code never sees a buffer it could overrun. The checks and their messages are those of a model
compiled per shape (`driver/specializations.py` uses `symbol_sizes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from minimlc.frontend.onnx_symbolic_dims import derived_dim, evaluate
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import DYNAMIC
from minimlc.runtime.compiled import CompiledModel
from minimlc.runtime.session import InvalidInputError

InputBounds = Mapping[str, int | tuple[int, int]]
"""What `input_bounds` takes: per symbol its largest size, or its `(smallest, largest)`."""


def checked_bounds(bounds: InputBounds | None, symbols: Iterable[str]) -> dict[str, tuple[int, int]]:
    """`bounds` as `{symbol: (lo, hi)}` (a lone `hi` means `(0, hi)`); ValueError for a symbol not in `symbols` or
    a bound that is not `0 <= lo <= hi`."""
    known = list(dict.fromkeys(symbols))
    checked: dict[str, tuple[int, int]] = {}
    for symbol, bound in (bounds or {}).items():
        if symbol not in known:
            dimensions = ", ".join(map(repr, known)) or "none"
            raise ValueError(
                f"input_bounds: {symbol!r} is not a dimension of the model's inputs (its symbolic dimensions: "
                f"{dimensions})"
            )
        single = isinstance(bound, int | np.integer)
        pair = (0, bound) if single else tuple(bound) if isinstance(bound, Sequence) else ()
        integers = len(pair) == 2 and all(isinstance(value, int | np.integer) for value in pair)
        if not integers or not 0 <= pair[0] <= pair[1]:
            raise ValueError(
                f"input_bounds: {symbol!r} has bound {bound!r}; give its largest size or (smallest, largest), "
                "with 0 <= smallest <= largest"
            )
        checked[symbol] = (int(pair[0]), int(pair[1]))
    return checked


def symbol_sizes(
    inputs: Sequence[TensorInfo], shapes: Sequence[tuple[int, ...]], bounds: Mapping[str, tuple[int, int]]
) -> dict[str, int]:
    """The size of each symbol of `inputs` (declared shapes: sizes, symbols, None for an unnamed dimension) in the
    feeds' `shapes`; `InvalidInputError` naming the input and axis for a wrong rank or size, inputs that share a
    symbol but disagree, or a size outside the symbol's `bounds`."""
    bound: dict[str, tuple[int, str]] = {}  # symbol -> (size, the input and axis that set it)
    derived = _derived_symbols(inputs)
    for info, shape in zip(inputs, shapes):
        if len(shape) != len(info.shape):
            raise InvalidInputError(
                f"input '{info.name}': expected rank {len(info.shape)} {spelled(info.shape)}, got shape {shape}"
            )
        for axis, (declared, size) in enumerate(zip(info.shape, shape)):
            where = f"input '{info.name}' axis {axis}"
            if isinstance(declared, int) and declared != size:
                raise InvalidInputError(f"{where}: expected size {declared} {spelled(info.shape)}, got {size}")
            if not isinstance(declared, str):
                continue
            if declared in derived:
                derived[declared].append((size, where))
                continue
            first = bound.setdefault(declared, (size, where))
            if first[0] != size:
                raise InvalidInputError(
                    f"{where} is dimension '{declared}' = {size}, but {first[1]} gave it {first[0]}: "
                    "inputs that share a dimension must agree"
                )
            lo, hi = bounds.get(declared, (0, size))
            if not lo <= size <= hi:
                raise InvalidInputError(
                    f"{where} is dimension '{declared}' = {size}, outside its bounds [{lo}, {hi}] (input_bounds)"
                )
    sizes = {symbol: size for symbol, (size, _) in bound.items()}
    for text, (expression, given) in ((text, (derived_dim(text, sizes), given)) for text, given in derived.items()):
        for size, where in given:
            if size != (expected := evaluate(expression, sizes)):  # type: ignore[arg-type]
                raise InvalidInputError(f"{where} is dimension '{text}' = {expected}, but the feed has size {size}")
    return sizes


def _derived_symbols(inputs: Sequence[TensorInfo]) -> dict[str, list[tuple[int, str]]]:
    """The declared dimensions that are expressions over the inputs' plain symbols (`past + sequence`: the
    importer's `derive_input_dims`), each with the feeds' sizes for it to check, once the plain symbols are bound."""
    plain = {size for info in inputs for size in info.shape if isinstance(size, str) and size.isidentifier()}
    return {
        size: []
        for info in inputs
        for size in info.shape
        if isinstance(size, str) and not size.isidentifier() and derived_dim(size, plain) is not None
    }


def spelled(shape: Sequence[int | str | None]) -> str:
    """A declared shape as `[batch, 128]`, `?` for an unknown dimension."""
    return f"[{', '.join('?' if size is None else str(size) for size in shape)}]"


OutputType = tuple[tuple[int, ...], np.dtype]
"""An output's shape and dtype."""
SHAPES_KEPT = 64
"""Distinct input shapes whose extents and output shapes a `DynamicEntry` keeps (least recently used dropped)."""


class DynamicEntry:
    """How a session calls `model`, whose entry takes run-time extents (`model.extents`): the feeds' checks, the
    extents array, and the outputs' shapes."""

    def __init__(self, model: CompiledModel, bounds: Mapping[str, tuple[int, int]]):
        extents = model.extents
        assert extents is not None
        self.slot = extents.slot
        symbols = iter(extents.symbols)
        count = len(model.inputs)
        self.inputs = [
            TensorInfo(info.name, tuple(next(symbols) if size == DYNAMIC else size for size in shape), info.dtype)
            for info, shape in zip(model.inputs, extents.shapes[:count])
        ]
        """The inputs as the compiled entry takes them: each `?` named by its symbol."""
        self._output_types = [(shape, info.dtype) for info, shape in zip(model.outputs, extents.shapes[count:])]
        self._output_extents = extents.output_extents
        self._output_extents_entry = model.output_extents_entry
        self._bounds = dict(bounds)
        self._prepared: dict[tuple[tuple[int, ...], ...], tuple[np.ndarray, list[OutputType]]] = {}

    def prepared(self, feeds: Sequence[np.ndarray]) -> tuple[np.ndarray, list[OutputType]]:
        """The extents array and the outputs' shapes and dtypes for `feeds` (`extents_of`, `output_types`), kept for
        the last `SHAPES_KEPT` distinct input shapes: a run at shapes seen before checks and computes nothing again
        (both are functions of the shapes alone; native code only reads the extents)."""
        key = tuple(feed.shape for feed in feeds)
        found = self._prepared.pop(key, None)
        if found is None:
            extents = self.extents_of(feeds)
            found = (extents, self.output_types(extents))
            if len(self._prepared) >= SHAPES_KEPT:
                del self._prepared[next(iter(self._prepared))]
        self._prepared[key] = found  # most recently used last
        return found

    def extents_of(self, feeds: Sequence[np.ndarray]) -> np.ndarray:
        """The entry's extents array (int64, input order then axis order) for `feeds`, checked (`symbol_sizes`)."""
        symbol_sizes(self.inputs, [feed.shape for feed in feeds], self._bounds)
        sizes = [
            size
            for info, feed in zip(self.inputs, feeds)
            for size, declared in zip(feed.shape, info.shape)
            if isinstance(declared, str)
        ]
        return np.array(sizes, dtype=np.int64)

    def output_types(self, extents: np.ndarray) -> list[OutputType]:
        """The outputs' shapes and dtypes for input `extents`, from `@main_output_extents`."""
        sizes: list[int] = []
        if self._output_extents:
            assert self._output_extents_entry is not None
            written = np.full(self._output_extents, -1, dtype=np.int64)
            args = np.array([extents.ctypes.data, written.ctypes.data], np.uintp)
            self._output_extents_entry(args.ctypes.data)
            if (written < 0).any():
                raise ValueError(f"@main_output_extents wrote negative output extents {written.tolist()}")
            sizes = written.tolist()
        computed = iter(sizes)
        return [
            (tuple(next(computed) if size == DYNAMIC else size for size in shape), dtype)
            for shape, dtype in self._output_types
        ]
