"""The graph's inputs and outputs as the importer takes them: each input's shape (its declared one, `input_shapes`'
sizes, or in symbolic mode a symbol per symbolic or unknown dimension) and element type, and the checks on outputs.

    static_input(vi, (1, 3, 224, 224))     # TensorInfo('x', (1, 3, 224, 224), float32)
    symbolic_input(vi, None, fresh)        # (TensorInfo('x', ('batch', 3, 224, 224), float32), (Dim batch, 3, ...))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import helper
from xdsl.ir import Attribute, SSAValue

from minimlc.frontend import onnx_ops
from minimlc.frontend.onnx_errors import ModelImportError, UnsupportedTypeError
from minimlc.frontend.onnx_ops import ELEMENT_TYPES
from minimlc.frontend.onnx_symbolic_dims import Dim, derived_dim, dim_text, is_symbolic
from minimlc.frontend.signature import TensorInfo


def declared_shape(dims: Sequence[onnx.TensorShapeProto.Dimension]) -> str:
    """A declared shape as `[N, 3, 224, 224]`: sizes, symbols, and `?` for unknown dimensions."""
    sizes = [str(dim.dim_value) if dim.HasField("dim_value") else dim.dim_param or "?" for dim in dims]
    return f"[{', '.join(sizes)}]"


def static_input(vi: onnx.ValueInfoProto, given: Sequence[int] | None) -> TensorInfo:
    """Input `vi` at the shape it declares, or at `given` (`input_shapes`), which may only set its symbolic or
    unknown dimensions, as ONNX Runtime takes a model's inputs."""
    dtype = run_time_dtype(vi, "input")
    declared = vi.type.tensor_type
    if given is not None:
        sizes = tuple(int(d) for d in given)
        if declared.HasField("shape") and len(sizes) != len(declared.shape.dim):
            raise ModelImportError(
                f"input_shapes gives input '{vi.name}' rank {len(sizes)}, "
                f"but the model declares rank {len(declared.shape.dim)}"
            )
        if any(d < 0 for d in sizes):
            raise ModelImportError(f"input_shapes gives input '{vi.name}' a negative dimension: {sizes}")
        dims = declared.shape.dim if declared.HasField("shape") else []
        if any(dim.HasField("dim_value") and dim.dim_value != size for dim, size in zip(dims, sizes)):
            raise ModelImportError(
                f"input '{vi.name}' is given shape {list(sizes)}, but the model declares "
                f"{declared_shape(dims)}: only symbolic or unknown dimensions can be set"
            )
        return TensorInfo(vi.name, sizes, dtype)
    hint = f"pass input_shapes={{'{vi.name}': [...]}}"
    if not declared.HasField("shape"):
        raise ModelImportError(f"input '{vi.name}' has an unknown rank; {hint}")
    shape: list[int] = []
    for axis, dim in enumerate(declared.shape.dim):
        if dim.HasField("dim_value") and dim.dim_value >= 0:
            shape.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            symbol = dim.dim_param
            raise ModelImportError(f"input '{vi.name}' has a symbolic dimension '{symbol}' at axis {axis}; {hint}")
        else:
            raise ModelImportError(f"input '{vi.name}' has an unknown dimension at axis {axis}; {hint}")
    return TensorInfo(vi.name, tuple(shape), dtype)


def symbolic_input(
    vi: onnx.ValueInfoProto, given: Sequence[int | str | None] | None, fresh_symbol: Callable[[], str]
) -> tuple[TensorInfo, tuple[int | Dim, ...]]:
    """Input `vi` in symbolic mode, and its dimensions: each symbolic or unknown one a symbol (its dim_param, else
    `fresh_symbol()`) unless `given` (`input_shapes`) gives its size (a name or None there keeps it symbolic)."""
    dtype = run_time_dtype(vi, "input")
    declared = vi.type.tensor_type
    dims = list(declared.shape.dim) if declared.HasField("shape") else None
    if dims is None and given is None:
        raise ModelImportError(f"input '{vi.name}' has an unknown rank; pass input_shapes={{'{vi.name}': [...]}}")
    if dims is not None and given is not None and len(given) != len(dims):
        raise ModelImportError(
            f"input_shapes gives input '{vi.name}' rank {len(given)}, but the model declares rank {len(dims)}"
        )
    sizes: list[int | Dim] = []
    for axis in range(len(given) if given is not None else len(dims or [])):
        dim = dims[axis] if dims is not None else None
        fixed = given[axis] if given is not None else None
        declared_size = dim.dim_value if dim is not None and dim.HasField("dim_value") else None
        if isinstance(fixed, (int, np.integer)) and not isinstance(fixed, bool):
            if fixed < 0 or (declared_size is not None and declared_size != fixed):
                shown = declared_shape(dims) if dims is not None else "an unknown shape"
                raise ModelImportError(
                    f"input '{vi.name}' is given size {fixed} at axis {axis}, but the model declares {shown}: "
                    "only symbolic or unknown dimensions can be set, to non-negative sizes"
                )
            sizes.append(int(fixed))
        elif declared_size is not None and fixed is None:
            sizes.append(declared_size)
        else:
            name = fixed if isinstance(fixed, str) else dim.dim_param if dim is not None else ""
            sizes.append(Dim.symbol(name or fresh_symbol()))
    info = TensorInfo(vi.name, tuple(dim_text(size) for size in sizes), dtype)  # type: ignore[arg-type]
    return info, tuple(sizes)


def derive_input_dims(input_dims: Mapping[str, tuple[int | Dim, ...]]) -> dict[str, tuple[int | Dim, ...]]:
    """The inputs' dimensions with each dim_param that spells an expression over the inputs' plain symbols
    (`attention_mask [batch, past_sequence + sequence]` beside `past [batch, 2, past_sequence, 16]` and
    `input_ids [batch, sequence]`) taken as that expression, so that the shapes computed from both agree; the
    runtime checks that a feed's size equals it (`runtime/extents.symbol_sizes`)."""
    plain = {str(size) for dims in input_dims.values() for size in dims if str(size).isidentifier()}

    def derived(size: int | Dim) -> int | Dim:
        if not is_symbolic(size) or str(size).isidentifier():
            return size
        expression = derived_dim(str(size), plain)
        return expression if is_symbolic(expression) else size

    return {name: tuple(derived(size) for size in dims) for name, dims in input_dims.items()}


def run_time_dtype(vi: onnx.ValueInfoProto, kind: str) -> np.dtype:
    """The numpy dtype of a graph input or computed output, which must be a tensor of `ELEMENT_TYPES`."""
    computed = " and is computed at run time" if kind == "output" else ""
    supported = f"tensors of {', '.join(map(str, ELEMENT_TYPES))} are supported"
    if not vi.type.HasField("tensor_type"):
        raise UnsupportedTypeError(f"{kind} '{vi.name}' is not a tensor{computed}; only {supported}")
    element = vi.type.tensor_type.elem_type
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(element)) if element != onnx.TensorProto.UNDEFINED else None
    if dtype not in ELEMENT_TYPES:
        name = onnx.TensorProto.DataType.Name(element)
        raise UnsupportedTypeError(f"{kind} '{vi.name}' has element type {name}{computed}; only {supported}")
    return dtype


def element_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of a tensor or buffer element type native code computes (`ELEMENT_TYPES`)."""
    return onnx_ops.dtype_of(element)


def computed_dtype(value: SSAValue) -> np.dtype:
    return element_dtype(value.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]


def check_computed_output(vi: onnx.ValueInfoProto, dtype: np.dtype) -> None:
    """A computed output must be a tensor of the element type the model declares (no type, or unset: any)."""
    if vi.type.WhichOneof("value") not in (None, "tensor_type"):
        raise UnsupportedTypeError(f"output '{vi.name}' is not a tensor and is computed at run time")
    declared = vi.type.tensor_type.elem_type
    if declared not in (onnx.TensorProto.UNDEFINED, helper.np_dtype_to_tensor_dtype(dtype)):
        name = onnx.TensorProto.DataType.Name(declared)
        raise ModelImportError(f"output '{vi.name}' is declared {name}, but it is computed as {dtype}")


def check_constant_output(vi: onnx.ValueInfoProto, array: np.ndarray) -> None:
    """A constant output must be the tensor the model declares (no type, or element type unset: any)."""
    if vi.type.WhichOneof("value") not in (None, "tensor_type"):
        raise ModelImportError(f"output '{vi.name}' is a constant tensor, but declared otherwise")
    declared = vi.type.tensor_type.elem_type
    if declared != onnx.TensorProto.UNDEFINED and declared != helper.np_dtype_to_tensor_dtype(array.dtype):
        name = onnx.TensorProto.DataType.Name(declared)
        raise ModelImportError(f"output '{vi.name}' is declared {name}, but its constant value is {array.dtype}")
