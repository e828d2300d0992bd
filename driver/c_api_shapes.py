"""The C of a model's run-time shapes in its shared library's API (`c_api.py`): the symbols, their bounds, each
input's and output's dimensions, and the symbols that are expressions of others (`past + sequence`), which the C
runtime (`runtime/c/minimlc_runtime.c`, `check_inputs`) binds from the feeds and checks against their expressions with
the Python runtime's rules (`runtime/extents.py`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minimlc.frontend.onnx_symbolic_dims import Dim, derived_dim
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import DYNAMIC, ENTRY_FUNCTION, output_extents_name, packed_name
from minimlc.runtime.extents import spelled

if TYPE_CHECKING:
    from minimlc.driver.shared_library import ModelObject

INT64_MAX = 2**63 - 1
MAX_FACTORS = 4
"""Factors a term of a derived symbol may have (the runtime's `minimlc_term`); more is refused at export."""


@dataclass(frozen=True)
class RunTimeShapes:
    """What the C API of a model with run-time dimensions checks and reports (its entry's `EntryExtents`, named):

    x[batch, 16], m[batch, 1] -> y[batch, 4] with input_bounds {"batch": (1, 8)}
    RunTimeShapes(inputs=[("batch", 16), ("batch", 1)], outputs=[(None, 4)], bounds={"batch": (1, 8)})"""

    inputs: list[tuple[int | str, ...]]
    """Per input, per axis: its static size or its symbol."""
    outputs: list[tuple[int | None, ...]]
    """Per output of the API, per axis: its static size, or None for one `@main_output_extents` computes."""
    bounds: dict[str, tuple[int, int]]
    """Every symbol, in order of first use, with the sizes it may take: its `input_bounds`, else 0 to INT64_MAX."""

    @classmethod
    def of(cls, model: ModelObject, bounds: Mapping[str, tuple[int, int]]) -> RunTimeShapes | None:
        """`model`'s run-time shapes with `bounds` (checked `input_bounds`); None for a model of static shapes."""
        extents = model.signature.extents
        if extents is None:
            return None
        symbols = iter(extents.symbols)
        count = len(model.inputs)
        inputs = [tuple(next(symbols) if size == DYNAMIC else size for size in s) for s in extents.shapes[:count]]
        outputs = extents.shapes[count : count + len(model.outputs)]
        return cls(
            inputs,
            [tuple(None if size == DYNAMIC else size for size in shape) for shape in outputs],
            {symbol: bounds.get(symbol, (0, INT64_MAX)) for symbol in extents.symbols},
        )

    def derived(self) -> dict[str, Dim]:
        """The symbols that are expressions of the plain ones (`past + sequence`), as the Python runtime reads them
        (`runtime/extents.py`): each is bound by the feeds like a symbol, then checked against its expression."""
        plain = {symbol for symbol in self.bounds if symbol.isidentifier()}
        found = {symbol: derived_dim(symbol, plain) for symbol in self.bounds if not symbol.isidentifier()}
        return {symbol: dim for symbol, dim in found.items() if isinstance(dim, Dim)}

    def output_declared(self, model: ModelObject) -> list[str]:
        """Each output's shape as the model declares it (`[batch, 4]`), `?` where it names no size."""
        return [
            spelled(info.shape if len(info.shape) == len(shape) else shape)
            for info, shape in zip(model.outputs, self.outputs)
        ]


def extents_source(model: ModelObject, prefix: str, shapes: RunTimeShapes) -> str:
    """C of `run_time_extents`, the runtime's `minimlc_extents` of `model` (`shapes`)."""
    extents = model.signature.extents
    assert extents is not None
    symbols = list(shapes.bounds)

    def int64s(values: Sequence[int]) -> str:
        return "{" + ", ".join("INT64_MAX" if value == INT64_MAX else f"{value}ll" for value in values or [0]) + "}"

    def tensors(kind: str, infos: Sequence[TensorInfo], dims: Sequence[Sequence[int]], declared: list[str]) -> str:
        arrays = "".join(
            f"static const int64_t {kind}_dims_{index}[] = {int64s(sizes)};\n" for index, sizes in enumerate(dims)
        )
        rows = "".join(
            f"    {{{json.dumps(info.name)}, {json.dumps(text)}, {len(sizes)}, {kind}_dims_{index}, "
            f"{info.dtype.itemsize}}},\n"
            for index, (info, sizes, text) in enumerate(zip(infos, dims, declared))
        )
        return f"{arrays}static const minimlc_tensor {kind}_tensors[] = {{\n{rows}}};\n"

    input_dims = [[-1 - symbols.index(size) if isinstance(size, str) else size for size in s] for s in shapes.inputs]
    output_dims = [[-1 if size is None else size for size in shape] for shape in shapes.outputs]
    output_extents = f"{prefix}_{packed_name(output_extents_name(ENTRY_FUNCTION))}"
    has_output_extents = extents.output_extents > 0
    return f"""
{f"MINIMLC_HIDDEN void {output_extents}(void **args);" if has_output_extents else ""}
static const char *const symbols[] = {{{", ".join(json.dumps(symbol) for symbol in symbols)}}};
static const int64_t symbol_lo[] = {int64s([lo for lo, _ in shapes.bounds.values()])};
static const int64_t symbol_hi[] = {int64s([hi for _, hi in shapes.bounds.values()])};
{tensors("input", model.inputs, input_dims, [spelled(dims) for dims in shapes.inputs])}\
{tensors("output", model.outputs, output_dims, shapes.output_declared(model))}\
{_derived_source(shapes)}\
static const minimlc_extents run_time_extents = {{
    {len(symbols)}, symbols, symbol_lo, symbol_hi, input_tensors, {len(model.outputs)}, output_tensors,
    {extents.count}, {extents.output_extents}, {output_extents if has_output_extents else "0"},
    {len(shapes.derived())}, {"derived_symbols" if shapes.derived() else "0"},
}};
"""


def _derived_source(shapes: RunTimeShapes) -> str:
    """C of `derived_symbols`, each derived symbol's polynomial over the others (`minimlc_derived`):

    past + new + 1  ->  {1ll, 1, {0}}, {1ll, 1, {1}}, {1ll, 0, {0}}  (coefficient, factors, symbol indices)"""
    derived = shapes.derived()
    if not derived:
        return ""
    symbols = list(shapes.bounds)
    lines = []
    for index, (symbol, dim) in enumerate(derived.items()):
        terms = []
        for monomial, coefficient in dim.terms:
            factors = [symbols.index(factor) for factor in monomial]  # derived_dim's factors are symbols
            if len(factors) > MAX_FACTORS:
                raise ValueError(
                    f"input dimension '{symbol}' multiplies {len(factors)} dimensions in one term; the C API checks "
                    f"at most {MAX_FACTORS}: export the model with input_shapes fixing some of them"
                )
            terms.append(f"{{{coefficient}ll, {len(factors)}, {{{', '.join(map(str, factors or [0]))}}}}}")
        lines.append(f"static const minimlc_term derived_terms_{index}[] = {{{', '.join(terms)}}};")
    rows = ", ".join(
        f"{{{symbols.index(symbol)}, {len(dim.terms)}, derived_terms_{index}}}"
        for index, (symbol, dim) in enumerate(derived.items())
    )
    return "\n".join([*lines, f"static const minimlc_derived derived_symbols[] = {{{rows}}};", ""])


def output_shapes_source(prefix: str, input_extents: int) -> str:
    """C of `<prefix>_output_shapes`."""
    shaped_parameters = "const minimlc_shape *input_shapes, const minimlc_shape *output_shapes"
    return f"""
API int {prefix}_output_shapes(minimlc_model *m, {shaped_parameters}) {{
    int64_t extents[{input_extents}];
    return minimlc_instance_shapes(&desc, (minimlc_instance *)m, "output_shapes", input_shapes, output_shapes, 1,
                                   extents);
}}
"""
