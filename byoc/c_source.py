"""The C target of BYOC (TVM's `CSourceCodegen` and JSON runtime, our way): each region `graph-partition{target=c}`
outlined becomes a C function `int32_t region_<hash>(void **buffers)` (inputs, then outputs, as every external
function), all compiled at build time by the system C compiler (`$CC`, else `cc`) into one shared object, loaded
here and registered as the external function `c.<hash>`; beside it, `c_regions.json` describes each region's graph
(nodes, their operands, attributes and shapes).

Ops (f32, row-major): `graph.conv` (2-D, any strides, pads, dilations, groups; optional bias), `graph.add` (numpy
broadcasting), `graph.relu`, `graph.matmul` (2-D), `graph.gemm` (alpha, beta, transposes, broadcast bias). A
region's intermediates are allocated and freed by its function; a failed allocation returns 1.

    int32_t region_3f2a(void **buffers) {
      const float *v0 = (const float *)buffers[0];   // region inputs ...
      float *v2 = (float *)buffers[2];               // ... and outputs
      ...
    }
"""

from __future__ import annotations

import ctypes
import json
import subprocess
from collections.abc import Sequence
from math import prod
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import graph
from minimlc.driver.shared_library import c_compiler
from minimlc.runtime.extern import EXTERN_FUNCTION

Region = tuple[str, func.FuncOp]
"""A region to compile: its C symbol and the outlined function."""


def compile_regions(regions: Sequence[Region], build_dir: Path) -> dict[str, Any]:
    """Emit the C source and JSON description of `regions` into `build_dir`, compile them into a shared object and
    load it; returns each symbol's C function pointer (`int32_t f(void **)`). `CompilerNotFoundError` names the
    target and the compiler if there is none; a compile error is a RuntimeError with the compiler's output."""
    command = c_compiler("BYOC target 'c' compiles its regions with a C compiler")
    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / "c_regions.c"
    library = build_dir / "c_regions.so"
    source.write_text(emit_source(regions))
    description = {"target": "c", "source": source.name, "library": library.name}
    description["regions"] = [describe(symbol, function) for symbol, function in regions]
    (build_dir / "c_regions.json").write_text(json.dumps(description, indent=1))
    compiled = subprocess.run(
        [*command, "-O2", "-std=c99", "-shared", "-fPIC", "-o", str(library), str(source), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    if compiled.returncode != 0:
        raise RuntimeError(f"BYOC target 'c': '{command[0]}' failed on {source}:\n{compiled.stderr}")
    loaded = ctypes.CDLL(str(library))
    return {symbol: EXTERN_FUNCTION((symbol, loaded)) for symbol, _ in regions}


def emit_source(regions: Sequence[Region]) -> str:
    """The C translation unit of `regions`, one function each."""
    header = "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
    return header + "".join(_emit_function(symbol, function) for symbol, function in regions)


def describe(symbol: str, function: func.FuncOp) -> dict[str, Any]:
    """A region as JSON: its inputs and outputs (shapes) and its nodes in order (op, operands, attributes, shape)."""
    names = _value_names(function)
    block = function.body.block
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    nodes = []
    for op in block.ops:
        if op is returned:
            continue
        attributes = {name: str(value) for name, value in op.properties.items()}
        nodes.append(
            {
                "name": names[op.results[0]],
                "op": op.name,
                "inputs": [names[v] for v in op.operands],
                "attrs": attributes,
                "shape": list(graph.shape_of(op.results[0])),
            }
        )
    return {
        "symbol": symbol,
        "inputs": [{"name": names[a], "shape": list(graph.shape_of(a))} for a in block.args],
        "outputs": [{"name": names[v], "shape": list(graph.shape_of(v))} for v in returned.arguments],
        "nodes": nodes,
    }


def _value_names(function: func.FuncOp) -> dict[SSAValue, str]:
    names: dict[SSAValue, str] = {}
    for arg in function.body.block.args:
        names[arg] = f"v{len(names)}"
    for op in function.body.block.ops:
        for result in op.results:
            names[result] = f"v{len(names)}"
    return names


def _emit_function(symbol: str, function: func.FuncOp) -> str:
    block = function.body.block
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    names = _value_names(function)
    lines = [f"\nint32_t {symbol}(void **buffers) {{"]
    for index, arg in enumerate(block.args):
        lines.append(f"  const float *{names[arg]} = (const float *)buffers[{index}];")
    temporaries: list[str] = []
    outputs = {value: len(block.args) + index for index, value in enumerate(returned.arguments)}
    for op in block.ops:
        if op is returned:
            continue
        result = op.results[0]
        name = names[result]
        if result in outputs:
            lines.append(f"  float *{name} = (float *)buffers[{outputs[result]}];")
        else:
            lines.append(f"  float *{name} = (float *)malloc({prod(graph.shape_of(result))} * sizeof(float));")
            release = "".join(f"free({t}); " for t in temporaries)
            lines.append(f"  if (!{name}) {{ {release}return 1; }}")
            temporaries.append(name)
        lines += ["  " + line for line in _emit_op(op, names)]
    lines += [f"  free({name});" for name in temporaries]
    lines += ["  return 0;", "}\n"]
    return "\n".join(lines)


def _emit_op(op: Operation, names: dict[SSAValue, str]) -> list[str]:
    out = names[op.results[0]]
    if isinstance(op, graph.ReluOp):
        size, x = prod(graph.shape_of(op.result)), names[op.input]
        return [f"for (long i = 0; i < {size}; ++i) {out}[i] = {x}[i] > 0.0f ? {x}[i] : 0.0f;"]
    if isinstance(op, graph.AddOp):
        return _emit_add(op, names)
    if isinstance(op, graph.ConvOp):
        return _emit_conv(op, names)
    if isinstance(op, graph.MatMulOp):
        (m, k), (_, n) = graph.shape_of(op.lhs), graph.shape_of(op.rhs)
        return _emit_gemm(names[op.lhs], names[op.rhs], None, out, m, n, k, (k, 1), (n, 1), 1.0, 0.0, (0, 0))
    if isinstance(op, graph.GemmOp):
        return _emit_gemm_op(op, names)
    raise NotImplementedError(f"BYOC target 'c' has no code for '{op.name}'")


def _broadcast_strides(shape: tuple[int, ...], result: tuple[int, ...]) -> list[int]:
    """Element strides of an operand of `shape` read at the indices of a broadcast `result` (0 where broadcast)."""
    padded = (1,) * (len(result) - len(shape)) + shape
    strides, stride = [0] * len(result), 1
    for axis in reversed(range(len(result))):
        strides[axis] = 0 if padded[axis] == 1 and result[axis] != 1 else stride
        stride *= padded[axis]
    return strides


def _emit_add(op: graph.AddOp, names: dict[SSAValue, str]) -> list[str]:
    result = graph.shape_of(op.result)
    out, lhs, rhs = names[op.result], names[op.lhs], names[op.rhs]
    if graph.shape_of(op.lhs) == graph.shape_of(op.rhs) == result:
        return [f"for (long i = 0; i < {prod(result)}; ++i) {out}[i] = {lhs}[i] + {rhs}[i];"]
    left = _broadcast_strides(graph.shape_of(op.lhs), result)
    right = _broadcast_strides(graph.shape_of(op.rhs), result)
    lines = ["long flat = 0;"]
    for axis, extent in enumerate(result):
        lines.append("  " * axis + f"for (long i{axis} = 0; i{axis} < {extent}; ++i{axis})")
    left_index = " + ".join(f"i{a} * {s}" for a, s in enumerate(left) if s) or "0"
    right_index = " + ".join(f"i{a} * {s}" for a, s in enumerate(right) if s) or "0"
    lines.append("  " * len(result) + f"{out}[flat++] = {lhs}[{left_index}] + {rhs}[{right_index}];")
    return ["{", *lines, "}"]


def _emit_conv(op: graph.ConvOp, names: dict[SSAValue, str]) -> list[str]:
    n, c, h, w = graph.shape_of(op.input)
    f, cg, kh, kw = graph.shape_of(op.weight)
    _, _, oh, ow = graph.shape_of(op.result)
    sh, sw = op.strides.get_values()
    ph, pw = op.pads.get_values()[:2]
    dh, dw = op.dilations.get_values()
    fg = f // op.group.value.data
    x, wt, out = names[op.input], names[op.weight], names[op.result]
    init = f"{names[op.bias]}[f]" if op.bias is not None else "0.0f"
    return [
        f"for (long n = 0; n < {n}; ++n) for (long f = 0; f < {f}; ++f) {{",
        f"  long c0 = (f / {fg}) * {cg};",
        f"  for (long oy = 0; oy < {oh}; ++oy) for (long ox = 0; ox < {ow}; ++ox) {{",
        f"    float acc = {init};",
        f"    for (long c = 0; c < {cg}; ++c) for (long ky = 0; ky < {kh}; ++ky) {{",
        f"      long iy = oy * {sh} - {ph} + ky * {dh};",
        f"      if (iy < 0 || iy >= {h}) continue;",
        f"      for (long kx = 0; kx < {kw}; ++kx) {{",
        f"        long ix = ox * {sw} - {pw} + kx * {dw};",
        f"        if (ix < 0 || ix >= {w}) continue;",
        f"        acc += {x}[((n * {c} + c0 + c) * {h} + iy) * {w} + ix]",
        f"             * {wt}[((f * {cg} + c) * {kh} + ky) * {kw} + kx];",
        "      }",
        "    }",
        f"    {out}[((n * {f} + f) * {oh} + oy) * {ow} + ox] = acc;",
        "  }",
        "}",
    ]


def _emit_gemm_op(op: graph.GemmOp, names: dict[SSAValue, str]) -> list[str]:
    a, b = graph.shape_of(op.a), graph.shape_of(op.b)
    m, k = (a[1], a[0]) if op.trans_a else a
    n = b[0] if op.trans_b else b[1]
    a_strides = (1, m) if op.trans_a else (k, 1)
    b_strides = (1, k) if op.trans_b else (n, 1)
    bias = None
    bias_strides = (0, 0)
    if op.c is not None:
        bias = names[op.c]
        strides = _broadcast_strides(graph.shape_of(op.c), (m, n))
        bias_strides = (strides[0], strides[1])
    alpha, beta = op.alpha.value.data, op.beta.value.data
    return _emit_gemm(
        names[op.a], names[op.b], bias, names[op.result], m, n, k, a_strides, b_strides, alpha, beta, bias_strides
    )


def _emit_gemm(
    a: str,
    b: str,
    bias: str | None,
    out: str,
    m: int,
    n: int,
    k: int,
    a_strides: tuple[int, int],
    b_strides: tuple[int, int],
    alpha: float,
    beta: float,
    bias_strides: tuple[int, int],
) -> list[str]:
    """out[i, j] = alpha * sum_p a[i, p] b[p, j] (+ beta * bias[i, j]), operands read through (row, column) strides."""
    init = f"{beta!r}f * {bias}[i * {bias_strides[0]} + j * {bias_strides[1]}]" if bias is not None else "0.0f"
    return [
        f"for (long i = 0; i < {m}; ++i) for (long j = 0; j < {n}; ++j) {{",
        "  float acc = 0.0f;",
        f"  for (long p = 0; p < {k}; ++p) acc += {a}[i * {a_strides[0]} + p * {a_strides[1]}] * "
        f"{b}[p * {b_strides[0]} + j * {b_strides[1]}];",
        f"  {out}[i * {n} + j] = {alpha!r}f * acc + {init};",
        "}",
    ]
