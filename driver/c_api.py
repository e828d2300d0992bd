"""The C API of a model's shared library (`minimlc build`, `shared_library.export_library`): its header and the
generated C file that binds the prefixed functions to the model's code and the C runtime (`runtime/c/`).

A model of static shapes takes one pointer per input and output:

    int model_run(minimlc_model *m, const float *input, float *logits);

A model with run-time dimensions (`docs/design/symbolic_shapes.md`) takes the shapes with the buffers: the caller asks
for the outputs' shapes, allocates them, and runs; the C runtime checks every shape before native code runs, with
the Python runtime's rules and messages (`runtime/extents.py`):

    /* input 'x': float32 [batch, 16], as float */
    int model_output_shapes(minimlc_model *m, const minimlc_shape *input_shapes, const minimlc_shape *output_shapes);
    int model_run(minimlc_model *m, const minimlc_shape *input_shapes, const minimlc_shape *output_shapes,
                  const float *x, float *y);
"""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from minimlc.driver.c_api_shapes import INT64_MAX, RunTimeShapes, extents_source, output_shapes_source
from minimlc.driver.cpu_checks import cpu_checks
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import ENTRY_FUNCTION, init_name, packed_name
from minimlc.runtime.extents import spelled

if TYPE_CHECKING:
    from minimlc.driver.shared_library import ModelObject

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "bool true false m".split()
)
SHAPE_PARAMETERS = ("input_shapes", "output_shapes")
"""The parameters a dynamic model's run takes before its buffers: no buffer parameter may take their names."""


C_TYPES: dict[str, str] = {
    "float32": "float",
    "float64": "double",
    **{f"{kind}{bits}": f"{kind}{bits}_t" for kind in ("int", "uint") for bits in (8, 16, 32, 64)},
    "bool": "uint8_t",
    "float16": "uint16_t",
    "bfloat16": "uint16_t",
}
"""The C element type of a tensor, by numpy dtype name: bools are bytes (0 or 1), 16-bit floats their bits, and the
one-byte types of ml_dtypes (float8, int4, ...) bytes."""


def c_type(dtype: np.dtype) -> str:
    """The C element type a tensor of `dtype` is passed as (`C_TYPES`; other one-byte types: `uint8_t`)."""
    return C_TYPES.get(dtype.name, "uint8_t")


def _pointer_type(infos: Sequence[TensorInfo]) -> str:
    """The element type of `run_arrays`' pointer arrays: float when every tensor is float32, else void."""
    return "float" if all(info.dtype == np.float32 for info in infos) else "void"


def c_names(infos: Sequence[TensorInfo], taken: set[str]) -> list[str]:
    """C identifiers for `infos`' names: other characters become `_`, keywords and repeats get a `_` suffix."""
    names = []
    for info in infos:
        name = re.sub(r"\W", "_", info.name, flags=re.ASCII) or "_"
        if name[0].isdigit():
            name = f"_{name}"
        while name in taken or name in _C_KEYWORDS or keyword.iskeyword(name):
            name += "_"
        taken.add(name)
        names.append(name)
    return names


def _comment(text: str) -> str:
    """`text` safe inside a C comment."""
    return text.replace("*/", "* /")


def _doc_comment(text: str) -> list[str]:
    """`text` as the lines of a C comment of at most 120 columns."""
    return (textwrap.fill(_comment(text), 117, initial_indent="/* ", subsequent_indent=" * ") + " */").split("\n")


def c_header(
    model: ModelObject, prefix: str, library: str, source: str, bounds: Mapping[str, tuple[int, int]] | None = None
) -> str:
    """The C header of a library built from `model`: shapes as `#define`s, the API's declarations; for a model with
    run-time dimensions, each input's symbols and each symbol's `bounds` too."""
    upper = prefix.upper()
    shapes = RunTimeShapes.of(model, bounds or {})
    input_names = c_names(model.inputs, set() if shapes is None else set(SHAPE_PARAMETERS))
    output_names = c_names(model.outputs, set(input_names))
    lines = [
        f"/* {Path(library).with_suffix('.h').name}: the C API of {source}, built by minimlc {version('minimlc')} for "
        f"CPU {model.target.cpu} ({model.target.triple}).",
        f" * Link with {Path(library).name}; {prefix}_load reads the weights file "
        f"{Path(library).with_suffix('.weights').name} (built with it).",
    ]
    if shapes is None:
        lines.append(" * Every tensor is a dense row-major array of the element type and shape given below. */")
    else:
        lines += [
            " * Every tensor is a dense row-major array of the element type and shape given below. A size named by a",
            " * symbol (-1 in the _SHAPE macros) is given at run time: each call takes the inputs' shapes, and",
            f" * {prefix}_output_shapes gives the outputs' for them. */",
        ]
    lines += [
        f"#ifndef {upper}_MINIMLC_H",
        f"#define {upper}_MINIMLC_H",
        "",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "#ifndef MINIMLC_MODEL_TYPEDEF",
        "#define MINIMLC_MODEL_TYPEDEF",
        "typedef struct minimlc_model minimlc_model;",
        "#endif",
    ]
    if shapes is not None:
        lines += [
            "#ifndef MINIMLC_SHAPE_TYPEDEF",
            "#define MINIMLC_SHAPE_TYPEDEF",
            "/* A tensor's shape: ndim sizes at dims. */",
            "typedef struct minimlc_shape {",
            "    int ndim;",
            "    int64_t *dims;",
            "} minimlc_shape;",
            "#endif",
        ]
    lines += [
        "",
        f"#define {upper}_NUM_INPUTS {len(model.inputs)}",
        f"#define {upper}_NUM_OUTPUTS {len(model.outputs)}",
    ]
    if shapes is not None:
        lines += _symbol_lines(upper, shapes.bounds)
    trimmed = {f"{info.name}.count": info.name for info in model.outputs}
    for kind, infos, names in (("INPUT", model.inputs, input_names), ("OUTPUT", model.outputs, output_names)):
        for index, (info, name) in enumerate(zip(infos, names)):
            macro = f"{upper}_{kind}_{name.upper()}"
            count_of = (
                f": how many entries of '{trimmed[info.name]}' are valid along its data-dependent axis (the "
                "rest is padding up to its bound)"
                if kind == "OUTPUT" and info.name in trimmed
                else ""
            )
            if shapes is None:
                lines += [
                    f"/* {kind.lower()} '{info.name}': {info.dtype.name}{list(info.shape)}, as {c_type(info.dtype)}"
                    f"{count_of} */",
                    f"#define {macro}_NDIM {len(info.shape)}",
                    f"#define {macro}_SHAPE {{{', '.join(map(str, info.shape)) or '1'}}}",
                    f"#define {macro}_SIZE {int(np.prod(info.shape))}",
                ]
                continue
            dims = shapes.inputs[index] if kind == "INPUT" else shapes.outputs[index]
            declared = spelled(dims) if kind == "INPUT" else shapes.output_declared(model)[index]
            sizes = [size if isinstance(size, int) else -1 for size in dims]
            lines += [
                _comment(f"/* {kind.lower()} '{info.name}': {info.dtype.name} {declared}, as {c_type(info.dtype)}")
                + f"{count_of} */",
                f"#define {macro}_NDIM {len(dims)}",
                f"#define {macro}_SHAPE {{{', '.join(map(str, sizes)) or '1'}}}",
            ]
        quoted = ", ".join(json.dumps(info.name) for info in infos)
        lines.append(f"#define {upper}_{kind}_NAMES {{{quoted}}}")
        if shapes is None:
            lines.append(
                f"#define {upper}_{kind}_SIZES {{{', '.join(str(int(np.prod(info.shape))) for info in infos)}}}"
            )
            dtypes = ", ".join(json.dumps(info.dtype.name) for info in infos)
            lines.append(f"#define {upper}_{kind}_DTYPES {{{dtypes}}}")
        else:
            ranks = shapes.inputs if kind == "INPUT" else shapes.outputs
            lines.append(f"#define {upper}_{kind}_NDIMS {{{', '.join(str(len(dims)) for dims in ranks) or '0'}}}")
    params = [f"const {c_type(info.dtype)} *{name}" for info, name in zip(model.inputs, input_names)]
    params += [f"{c_type(info.dtype)} *{name}" for info, name in zip(model.outputs, output_names)]
    pointer = _pointer_type([*model.inputs, *model.outputs])
    lines += [
        "",
        "/* Read the weights file and start the model: fill its load-time constants and, if it has parallel loops, "
        "start",
        " * a pool of num_threads threads (the caller included; 0 or less: one per core). NULL on failure: see "
        f"{prefix}_last_error(). */",
        f"minimlc_model *{prefix}_load(const char *weights_path, int num_threads);",
    ]
    if shapes is None:
        lines += [
            "/* Run the model once: read the inputs, write the outputs. 0 on success, 1 on a NULL argument, 2 on a",
            " * run-time index out of range (a Gather's, ...), 3 when its intermediate buffers cannot be allocated (no",
            " * output written). The message says which. Calls may run concurrently from several threads. */",
            f"int {prefix}_run(minimlc_model *m, {', '.join(params)});",
            f"/* {prefix}_run with the inputs and outputs as arrays, in the order of {upper}_INPUT_NAMES and "
            f"{upper}_OUTPUT_NAMES. */",
            f"int {prefix}_run_arrays(minimlc_model *m, const {pointer} *const *inputs, {pointer} *const *outputs);",
        ]
    else:
        shaped = "minimlc_model *m, const minimlc_shape *input_shapes, const minimlc_shape *output_shapes"
        lines += [
            *_doc_comment(
                f"The outputs' shapes for inputs of the shapes input_shapes (one per input, in the order of "
                f"{upper}_INPUT_NAMES): writes output i's sizes to output_shapes[i].dims, whose ndim must be the "
                "output's. 0 on success, 1 on a NULL argument, 4 on input shapes the model does not take: a wrong "
                "rank or static size, inputs that share a symbol but disagree, a negative size, a size outside its "
                "symbol's bounds, a symbol spelled as an expression of others that does not equal it. The message "
                "says which."
            ),
            f"int {prefix}_output_shapes({shaped});",
            *_doc_comment(
                "Run the model once on inputs of the shapes input_shapes: read the inputs, write the outputs, whose "
                f"shapes output_shapes must be those {prefix}_output_shapes gives (their buffers hold that many "
                "elements). 0 on success, 1 on a NULL argument, 2 on a run-time index out of range (a Gather's, "
                "...), 3 when its intermediate buffers cannot be allocated, 4 on shapes the model does not take (as "
                f"for {prefix}_output_shapes, or output shapes other than those; no output written). The message "
                "says which. Calls may run concurrently from several threads."
            ),
            f"int {prefix}_run({shaped},",
            f"    {', '.join(params)});",
            f"/* {prefix}_run with the inputs and outputs as arrays, in the order of {upper}_INPUT_NAMES and "
            f"{upper}_OUTPUT_NAMES. */",
            f"int {prefix}_run_arrays({shaped},",
            f"    const {pointer} *const *inputs, {pointer} *const *outputs);",
        ]
    lines += [
        "/* Stop the pool and free the model (NULL is ignored). */",
        f"void {prefix}_free(minimlc_model *m);",
        "/* The message of the calling thread's last failed call (empty if none). */",
        f"const char *{prefix}_last_error(void);",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "#endif",
        "",
    ]
    return "\n".join(lines)


def _symbol_lines(upper: str, bounds: Mapping[str, tuple[int, int]]) -> list[str]:
    """The header's lines on the symbols: each one's bounds, in a comment and as arrays."""
    derived = RunTimeShapes([], [], dict(bounds)).derived()

    def sizes(symbol: str, lo: int, hi: int) -> str:
        if symbol in derived:
            return "equal to that expression of the others"
        return f"{lo} or more" if hi == INT64_MAX else f"{lo} to {hi}"

    described = [f" *   {symbol}: {sizes(symbol, lo, hi)}" for symbol, (lo, hi) in bounds.items()]
    highs = ["INT64_MAX" if hi == INT64_MAX else str(hi) for _, hi in bounds.values()]
    return [
        "/* The symbols (run-time dimensions), and the sizes a call may give each (input_bounds):",
        *map(_comment, described[:-1]),
        _comment(described[-1]) + " */",
        f"#define {upper}_NUM_SYMBOLS {len(bounds)}",
        f"#define {upper}_SYMBOL_NAMES {{{', '.join(json.dumps(symbol) for symbol in bounds)}}}",
        f"#define {upper}_SYMBOL_MIN {{{', '.join(str(lo) for lo, _ in bounds.values())}}}",
        f"#define {upper}_SYMBOL_MAX {{{', '.join(highs)}}}",
    ]


def c_api_source(
    model: ModelObject,
    prefix: str,
    header: str,
    weights: Mapping[str, np.ndarray],
    fingerprint: int,
    bounds: Mapping[str, tuple[int, int]] | None = None,
) -> str:
    """The generated C file of the library's API: the model's descriptor (with the weights' `fingerprint`) and the
    prefixed functions; for a model with run-time dimensions, its shapes' descriptors and `bounds` too."""
    signature = model.signature
    weight_bytes = [np.asarray(weights[name]).nbytes for name in signature.weight_names]
    buffer_bytes = [int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in signature.precomputed_buffers]
    shapes = RunTimeShapes.of(model, bounds or {})
    input_names = c_names(model.inputs, set() if shapes is None else set(SHAPE_PARAMETERS))
    output_names = c_names(model.outputs, set(input_names))
    params = [f"const {c_type(info.dtype)} *{name}" for info, name in zip(model.inputs, input_names)]
    params += [f"{c_type(info.dtype)} *{name}" for info, name in zip(model.outputs, output_names)]
    pointer = _pointer_type([*model.inputs, *model.outputs])
    entry = f"{prefix}_{packed_name(ENTRY_FUNCTION)}"
    init = f"{prefix}_{packed_name(init_name(ENTRY_FUNCTION))}"
    has_init = bool(signature.precomputed_buffers)
    shaped, shapes_args, run_time, input_extents = "", "", "", None
    if shapes is not None and signature.extents is not None:
        input_extents = signature.extents.count
        shaped = "const minimlc_shape *input_shapes, const minimlc_shape *output_shapes, "
        shapes_args = "input_shapes, output_shapes, "
        run_time = "    &run_time_extents,\n"

    def array(values: list[int]) -> str:
        return "{" + ", ".join(f"{value}ull" for value in values or [0]) + "}"

    check = cpu_checks(model.target)
    includes = "".join(f"#include {name}\n" for name in check.includes)
    return f"""/* Generated by minimlc: the C API of one model (see {header}). */
{includes}#include "minimlc_runtime.h"
#include "{header}"

MINIMLC_HIDDEN void {entry}(void **args);
{f"MINIMLC_HIDDEN void {init}(void **tail);" if has_init else ""}

#define API __attribute__((visibility("default")))

static const uint64_t weight_bytes[] = {array(weight_bytes)};
static const uint64_t precomputed_bytes[] = {array(buffer_bytes)};
static const char *missing_cpu_feature(void) {{
{check.body}
    return 0;
}}
{"" if shapes is None else extents_source(model, prefix, shapes)}
static const minimlc_desc desc = {{
    "{prefix}", {len(model.inputs)}, {len(model.outputs) + len(model.index_checks)},
    {-1 if signature.pool_slot is None else signature.pool_slot},
    {len(weight_bytes)}, weight_bytes, {len(buffer_bytes)}, precomputed_bytes,
    {fingerprint}ull,
    {entry}, {init if has_init else "0"},
    "{model.target.name}", missing_cpu_feature,
{run_time}}};

API minimlc_model *{prefix}_load(const char *weights_path, int num_threads) {{
    return (minimlc_model *)minimlc_instance_load(&desc, weights_path, num_threads);
}}

{_checked_run(len(model.outputs), model.index_checks, input_extents)}
API int {prefix}_run(minimlc_model *m, {shaped}{", ".join(params)}) {{
    const void *inputs[] = {{{", ".join(input_names) or "0"}}};
    void *outputs[] = {{{", ".join(output_names)}}};
    return checked_run((minimlc_instance *)m, {shapes_args}inputs, outputs);
}}

API int {prefix}_run_arrays(minimlc_model *m, {shaped}const {pointer} *const *inputs, {pointer} *const *outputs) {{
    return checked_run((minimlc_instance *)m, {shapes_args}(const void *const *)inputs, (void *const *)outputs);
}}
{"" if input_extents is None else output_shapes_source(prefix, input_extents)}
API void {prefix}_free(minimlc_model *m) {{ minimlc_instance_free((minimlc_instance *)m); }}

API const char *{prefix}_last_error(void) {{ return minimlc_last_error(); }}
"""


def _checked_run(num_outputs: int, index_checks: Sequence[str], input_extents: int | None) -> str:
    """C of `checked_run`, the run the API calls: with run-time index checks, the entry also writes one count per
    check into the function's own buffers, and a nonzero one fails the run (2, the check's message); with
    `input_extents` (a model with run-time dimensions), it takes the shapes and checks them first."""
    params, run, shapes = "const void *const *inputs, void *const *outputs", "minimlc_instance_run(&desc, m, ", ""
    if input_extents is not None:
        params = (
            f"const minimlc_shape *input_shapes, const minimlc_shape *output_shapes,\n                       {params}"
        )
        run = "minimlc_instance_run_extents(&desc, m, extents, "
        shapes = (
            f"    int64_t extents[{input_extents}];\n"
            '    int checked = minimlc_instance_shapes(&desc, m, "run", input_shapes, output_shapes, 0, extents);\n'
            "    if (checked)\n"
            "        return checked;\n"
        )
    if not index_checks:
        body = f"{shapes}    return {run}inputs, outputs);\n"
        return f"static int checked_run(minimlc_instance *m, {params}) {{\n{body}}}\n"
    messages = ", ".join(json.dumps(message) for message in index_checks)
    return f"""static const char *const index_checks[] = {{{messages}}};
static int checked_run(minimlc_instance *m, {params}) {{
{shapes}    int64_t counts[{len(index_checks)}];
    void *all_outputs[{num_outputs + len(index_checks)}];
    for (int i = 0; i < {num_outputs}; ++i)
        all_outputs[i] = outputs[i];
    for (int i = 0; i < {len(index_checks)}; ++i)
        all_outputs[{num_outputs} + i] = &counts[i];
    int status = {run}inputs, all_outputs);
    for (int i = 0; status == 0 && i < {len(index_checks)}; ++i) {{
        if (counts[i]) {{
            minimlc_set_error(index_checks[i]);
            status = 2;
        }}
    }}
    return status;
}}
"""
