"""How values are laid out for LLVM, a decision that the program stage (`loop-outline-parallel` packs captured
values into a C struct), the schedule rules (`schedule/conv.py` measures input strides in bytes) and
`convert-to-llvm` share: `index` is an `i64`, every `memref` a bare `!llvm.ptr` to its elements, which lie in memory
`byte_size` bytes apart (`i1` takes a byte); other scalar and vector types stay as they are.

    llvm_type(MemRefType(f32, [4, 8]))   # !llvm.ptr
    byte_size(IndexType())               # 8
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException


def llvm_type(type: Attribute) -> Attribute:
    """The LLVM dialect type that stands for `type`."""
    if isinstance(type, IndexType):
        return i64
    if isinstance(type, MemRefType):
        return llvm.LLVMPointerType()
    if isinstance(type, VectorType) and isinstance(type.element_type, IndexType):
        return VectorType(i64, type.get_shape())
    return type


def byte_size(type: Attribute) -> int:
    """Bytes one element of `type` occupies in memory (`i1` takes a byte, `index` eight)."""
    if isinstance(type, IndexType):
        return 8
    if isinstance(type, Float16Type | Float32Type | Float64Type):
        return type.bitwidth // 8
    if isinstance(type, IntegerType):
        return max(1, (type.width.data + 7) // 8)
    raise DiagnosticException(f"convert-to-llvm: unsupported memref element type {type}")
