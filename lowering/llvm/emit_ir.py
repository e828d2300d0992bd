"""A direct path from `scf`- or `cf`-level IR to LLVM IR text, without building the xDSL `llvm` dialect.

`emit_llvm_ir(module)` takes what `loop-to-scf` leaves, or what `convert-scf-to-cf` leaves (the input of
`convert-to-llvm`), and prints LLVM IR with plain string formatting. It gives the same text as
`convert-to-llvm,reconcile-unrealized-casts` followed by `translate.translate_to_llvm_ir`, up to the names of local
values and blocks (`canonical_llvm_ir` renumbers them): the same functions, declarations, linkage and attributes in
the same order, the same instructions with the same types, flags and constants, including what the llvmlite printer
of that path does, such as typing a pointer from an `alloca` as `float*` (a vector store through it bitcasts it, one
through an opaque `ptr` does not) and padding float constants (`float              0x0`). The semantics are
`convert_to_llvm.py`'s (see `docs/design/llvm.md`):

    func.func private @scale(%x: memref<4x8xf32> {llvm.noalias}, %i: index) {
      %c = arith.constant 2.0 : f32
      %v = memref.load %x[%i, %i] : memref<4x8xf32>
      %w = arith.mulf %v, %c fastmath<contract> : f32
      memref.store %w, %x[%i, %i] : memref<4x8xf32>
      func.return
    }

becomes

    define internal void @scale(ptr noalias %.1, i64 %.2)
    {
    .3:
      %.4 = getelementptr inbounds [8 x float], ptr %.1, i64 %.2, i64 %.2
      %.5 = load float, ptr %.4
      %.6 = fmul contract float %.5, 0x4000000000000000
      %.7 = getelementptr inbounds [8 x float], ptr %.1, i64 %.2, i64 %.2
      store float %.6, ptr %.7
      ret void
    }

The op handlers live in `emit_ops.py` (the `arith`, `math`, `memref`, `vector`, `func` and `cf` ops),
`emit_scf.py` (`scf.for`/`scf.if`: the `scf` level is taken as it is) and `emit_llvm_dialect.py`. An op none of
them knows raises `DiagnosticException` naming it. The module is left as it was.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from xdsl.dialects import builtin, func, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.abi import ENTRY_ATTR, llvm_function_flags, packed_name
from minimlc.lowering.llvm.convert_to_llvm import check_entry_signature, packed_reads
from minimlc.lowering.llvm.translate import PARAM_FLAGS
from minimlc.lowering.target import target_of

_SIMPLE_NAME = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*\Z")

_PARAM_INTS = {"llvm.align": "align {0:d}", "llvm.dereferenceable": "dereferenceable({0:d})"}


def emit_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR text of a `cf`-level module (after `convert-scf-to-cf`), or of an `scf`-level one (`emit_scf.py`):
    what `convert-scf-to-cf`, `convert-to-llvm`, `reconcile-unrealized-casts` and `translate_to_llvm_ir` give, up to
    local names. Raises `DiagnosticException`
    naming the first op it cannot emit."""
    from minimlc.lowering.llvm.emit_ops import HANDLERS
    from minimlc.lowering.llvm.emit_scf import SCF_HANDLERS

    handlers = {**HANDLERS, **SCF_HANDLERS}
    emitter = ModuleEmitter(module)
    texts: list[str] = []
    for op in module.ops:
        assert isinstance(op, func.FuncOp)
        if ENTRY_ATTR in op.attributes and op.body.blocks:
            texts.append(emit_function(emitter, op, handlers, packed=True))
            texts.append(_unpacked_entry(emitter, op))
        else:
            texts.append(emit_function(emitter, op, handlers))
    texts += emitter.tail_declarations
    texts += emitter.intrinsics.values()
    triple = module.attributes.get("llvm.target_triple")
    triple_text = triple.data if isinstance(triple, StringAttr) else emitter.target.triple
    layout = f'target datalayout = "{emitter.target.data_layout}"'
    return "\n".join(['; ModuleID = ""', f'target triple = "{triple_text}"', layout, "", *texts])


def global_name(name: str) -> str:
    """`@name`, quoted as LLVM needs it outside its identifier syntax."""
    if _SIMPLE_NAME.match(name):
        return "@" + name
    return '@"{}"'.format(name.replace("\\", "\\5c").replace('"', "\\22"))


class ModuleEmitter:
    """Module-wide state: the functions' signatures, the declarations `convert-to-llvm` appends (`aligned_alloc`,
    `free`, libm), the intrinsics declared at first use, and caches of type and constant text."""

    def __init__(self, module: ModuleOp) -> None:
        self.target = target_of(module)
        self._types: dict[Attribute, str] = {}
        self.signatures: dict[str, tuple[str, list[str]]] = {}
        """Each function: its return type and parameter types, as LLVM text."""
        for op in module.ops:
            if not isinstance(op, func.FuncOp):
                raise DiagnosticException(f"emit-llvm-ir: cannot emit '{op.name}' at module level")
            outputs = op.function_type.outputs.data
            if len(outputs) > 1:
                raise DiagnosticException(f"convert-to-llvm: @{op.sym_name.data} returns >1 value")
            result = self.type(outputs[0]) if outputs else "void"
            self.signatures[op.sym_name.data] = (result, [self.type(t) for t in op.function_type.inputs])
            if ENTRY_ATTR in op.attributes:
                self.signatures.setdefault(packed_name(op.sym_name.data), ("void", ["ptr"]))
        self.tail_declarations: list[str] = []
        self.intrinsics: dict[str, str] = {}
        self.pointees: dict[SSAValue, str] = {}
        """Each buffer's element type as `getelementptr` indexes it (`[8 x float]` for a `memref<?x8xf32>`)."""

    def declare(self, name: str, result: str, params: list[str]) -> None:
        """Declare `name` at the module's end unless the module has it (`conversion.declare_function`)."""
        if name not in self.signatures:
            self.signatures[name] = (result, params)
            self.tail_declarations.append(declaration(name, result, params))

    def intrinsic(self, name: str, result: str, params: list[str]) -> None:
        """Declare the intrinsic `name` with the parameter types of its first call, as llvmlite does."""
        if name not in self.intrinsics and name not in self.signatures:
            self.intrinsics[name] = declaration(name, result, params)

    def type(self, type: Attribute) -> str:
        """LLVM text of `type` as `convert-to-llvm` maps it (`index` -> `i64`, memref -> `ptr`)."""
        kind = type.__class__
        if kind in _FIXED_TYPES:  # without hashing the type, which xDSL computes anew each time
            return _FIXED_TYPES[kind]
        text = self._types.get(type)
        if text is None:
            text = self._types[type] = _type_text(type)
        return text


_FIXED_TYPES: dict[type[Attribute], str] = {
    IndexType: "i64",
    MemRefType: "ptr",
    Float32Type: "float",
    Float64Type: "double",
    Float16Type: "half",
}


def _type_text(type: Attribute) -> str:
    if isinstance(type, IndexType):
        return "i64"
    if isinstance(type, IntegerType):
        return f"i{type.width.data}"
    if isinstance(type, Float32Type):
        return "float"
    if isinstance(type, Float64Type):
        return "double"
    if isinstance(type, Float16Type):
        return "half"
    if isinstance(type, BFloat16Type):
        return "bfloat"
    if isinstance(type, MemRefType | llvm.LLVMPointerType):
        space = getattr(type, "addr_space", None)
        if isinstance(space, builtin.IntAttr) and space.data:
            return f"ptr addrspace({space.data})"
        return "ptr"
    if isinstance(type, VectorType):
        shape = type.get_shape()
        if len(shape) != 1 or type.get_num_scalable_dims():
            raise DiagnosticException(f"emit-llvm-ir: type not supported: {type}")
        return f"<{shape[0]} x {_type_text(type.element_type)}>"
    if isinstance(type, llvm.LLVMArrayType):
        return f"[{type.size.data} x {_type_text(type.type)}]"
    if isinstance(type, llvm.LLVMStructType):
        return "{" + ", ".join(_type_text(t) for t in type.types.data) + "}"
    if isinstance(type, llvm.LLVMVoidType):
        return "void"
    if isinstance(type, llvm.LLVMFunctionType):
        params = ", ".join(_type_text(t) for t in type.inputs.data)
        return f"{_type_text(type.output)} ({params})"
    raise DiagnosticException(f"emit-llvm-ir: type not supported: {type}")


def declaration(name: str, result: str, params: list[str]) -> str:
    """`declare <result> @name(<params>)`, parameters named as llvmlite names them."""
    args = ", ".join(f"{param} %.{index}" for index, param in enumerate(params, 1))
    return f"declare {result} {global_name(name)}({args})\n"


def float_text(value: float, type_text: str) -> str:
    """A float constant as llvmlite prints it: the IEEE double of the value (rounded to the type first) in hex,
    padded to 16 characters."""
    if type_text == "float":
        value = struct.unpack("f", struct.pack("f", value))[0]
    elif type_text == "half":
        value = struct.unpack("e", struct.pack("e", value))[0]
    return "{:#16x}".format(struct.unpack("Q", struct.pack("d", float(value)))[0])


def constant_text(value: Attribute, type_text: str, element_text: str | None) -> str:
    """The reference of a constant of `value` (integer, float or dense vector) of LLVM type `type_text`;
    `element_text` is the element type of a vector."""
    if isinstance(value, IntegerAttr):
        return str(value.value.data)
    if isinstance(value, builtin.FloatAttr):
        return float_text(value.value.data, type_text)
    if isinstance(value, builtin.DenseIntOrFPElementsAttr) and element_text is not None:
        if element_text in ("float", "double", "half"):
            items = (f"{element_text} {float_text(v, element_text)}" for v in value.get_values())
        else:  # llvmlite writes Python bools as `true`/`false`
            items = (f"{element_text} {str(v).lower() if isinstance(v, bool) else v}" for v in value.get_values())
        return "<" + ", ".join(items) + ">"
    raise DiagnosticException(f"emit-llvm-ir: unsupported constant {value} of type {type_text}")


def undef_text(type_text: str, element_text: str | None) -> str:
    """The reference of `undef` of a type: a vector lists its lanes, as llvmlite prints it."""
    if element_text is None:
        return "undef"
    count = int(type_text[1:].split(" ", 1)[0])
    return "<" + ", ".join([f"{element_text} undef"] * count) + ">"


def function_header(
    emitter: ModuleEmitter,
    op: func.FuncOp,
    arg_names: list[str],
    form: Literal["plain", "packed", "unpacked"] = "plain",
) -> str:
    """The `define`/`declare` line of a lowered `func.func` (linkage, parameter attributes, `llvm_function_flags`,
    `vscale_range`); of an entry, `form` picks `packed` (`@<name>_packed(ptr)`, its body, with the flags) or
    `unpacked` (`@<name>` with its parameters, the wrapper)."""
    name = packed_name(op.sym_name.data) if form == "packed" else op.sym_name.data
    result, params = emitter.signatures[name]
    defined = bool(op.body.blocks)
    private = op.sym_visibility is not None and op.sym_visibility.data == "private"
    attrs = _param_attributes(op) if form != "packed" else None
    args = []
    for index, (param, arg) in enumerate(zip(params, arg_names, strict=True)):
        listed = attrs[index] if attrs else []
        args.append(f"{param} {' '.join(listed)} {arg}" if listed else f"{param} {arg}")
    prefix = " ".join(
        x for x in ("define" if defined else "declare", "internal" if defined and private else "", result) if x
    )
    flags = llvm_function_flags(op.attributes) if form != "unpacked" else []
    passthrough = "".join(f" {flag}" for flag in flags)
    return f"{prefix} {global_name(name)}({', '.join(args)}){passthrough}{_vscale_range(emitter) if defined else ''}\n"


def _vscale_range(emitter: ModuleEmitter) -> str:
    """` vscale_range(N,N)` where the target fixes SVE's vector length (`Target.sve_vscale`: LLVM then lowers wide
    vectors to predicated SVE), else nothing; `translate.py` adds the same to every defined function."""
    vscale = emitter.target.sve_vscale
    return f" vscale_range({vscale},{vscale})" if vscale else ""


def _param_attributes(op: func.FuncOp) -> list[list[str]] | None:
    if op.arg_attrs is None:
        return None
    kept = [{k: v for k, v in attrs.data.items() if k.startswith("llvm.")} for attrs in op.arg_attrs]
    if not any(kept):
        return None
    result = []
    for attrs in kept:
        flags = sorted(PARAM_FLAGS[k] for k in attrs if k in PARAM_FLAGS)
        for key, pattern in _PARAM_INTS.items():
            value = attrs.get(key)
            if isinstance(value, IntegerAttr) and value.value.data:
                flags.append(pattern.format(value.value.data))
        result.append(flags)
    return result


def _unpacked_entry(emitter: ModuleEmitter, op: func.FuncOp) -> str:
    """`@<name>(ptr, ...)`: stores its pointers into a stack array and calls `@<name>_packed`
    (`convert_to_llvm._unpacked_body`)."""
    count = len(op.function_type.inputs)
    names = [f"%.{index}" for index in range(1, count + 1)]
    lines = [function_header(emitter, op, names, form="unpacked"), "{\n", f".{count + 1}:\n"]
    lines.append(f"  %.a = alloca ptr, i64 {count}, align 8\n")
    for index, name in enumerate(names):
        lines.append(f"  %.s{index} = getelementptr inbounds ptr, ptr %.a, i32 {index}\n")
        lines.append(f"  store ptr {name}, ptr %.s{index}\n")
    lines.append(f"  call ccc void {global_name(packed_name(op.sym_name.data))}(ptr %.a)\n  ret void\n}}\n")
    return "".join(lines)


Value = tuple[str, str]


Phi = tuple[str, str, list[str]]
"""A phi's name, type and incoming `[value, %label]` texts."""


@dataclass
class BlockText:
    """One LLVM basic block as it is written: its label, phis and instruction lines."""

    label: str
    phis: list[Phi]
    lines: list[str] = field(default_factory=list)


class FunctionEmitter:
    """One function's state: the text of its values, its blocks (one per `cf` block, and those structured ops open:
    `emit_scf.py`) and the incoming values of their phis."""

    def __init__(self, module: ModuleEmitter, handlers: dict[type[Operation], Handler]) -> None:
        self.module = module
        self.handlers = handlers
        self.values: dict[SSAValue, Value] = {}
        self.count = 0
        self.lines: list[str] = []
        self.labels: dict[Block, str] = {}
        self.phis: dict[Block, list[Phi]] = {}
        self.blocks: list[BlockText] = []
        self.scopes: dict[Operation, tuple[str, list[Phi]]] = {}
        """Each open `scf.for`/`scf.if`: the label its `scf.yield` branches to and the phis it feeds."""
        self.reads_before: dict[Operation, list[BlockArgument]] = {}
        """In a packed entry, the arguments to load from its array before each op (`packed_reads`)."""
        self.argument_array = ""
        """A packed entry's array of argument pointers (`%.1`)."""
        self.hoisted: list[str] = []
        """The `alloca`s of the `memref.alloca`s in op order: the entry block starts with them, last one first, as
        `convert-to-llvm` inserts each at its start."""

    def name(self) -> str:
        """A new local name."""
        self.count += 1
        return f"%.{self.count}"

    def emit(self, text: str, result: SSAValue | None = None, type: str = "") -> str:
        """Append `text` as an instruction; with `result`, as its definition of that type."""
        if result is None and not type:
            self.lines.append(f"  {text}\n")
            return ""
        name = self.name()
        self.lines.append(f"  {name} = {text}\n")
        if result is not None:
            self.values[result] = (type, name)
        return name

    def typed(self, value: SSAValue) -> str:
        """`<type> <reference>` of a value."""
        type, ref = self.values[value]
        return f"{type} {ref}"

    def start_block(self, label: str, phis: list[Phi] | None = None) -> BlockText:
        """Open a new block after the others: the instructions emitted next go there."""
        block = BlockText(label, phis if phis is not None else [])
        self.blocks.append(block)
        self.lines = block.lines
        return block

    def incoming(self, phis: list[Phi], references: Sequence[str]) -> None:
        """Record `references` (`%.7`, `0`) as the incoming values of `phis` from the current block."""
        for (_, _, incoming), reference in zip(phis, references, strict=True):
            incoming.append(f"[{reference}, %{self.blocks[-1].label}]")

    def branch_to(self, target: Block, args: Sequence[SSAValue]) -> None:
        """Record `args` as the incoming values of `target`'s phis from the current block."""
        self.incoming(self.phis[target], [self.values[arg][1] for arg in args])

    def read_arguments(self, arguments: list[BlockArgument]) -> None:
        """Load each of a packed entry's `arguments` from its array: `args[i]` for the i-th."""
        for argument in arguments:
            slot = self.emit(
                f"getelementptr inbounds ptr, ptr {self.argument_array}, i32 {argument.index}", None, "ptr"
            )
            self.emit(f"load ptr, ptr {slot}", argument, "ptr")

    def emit_block(self, block: Block) -> None:
        """Emit each op of `block` by its handler (in a packed entry, after the loads of the arguments it reads
        first)."""
        reads = self.reads_before
        for op in block.ops:
            if reads and op in reads:
                self.read_arguments(reads[op])
            handler = self.handlers.get(type(op))
            if handler is None:
                raise DiagnosticException(f"emit-llvm-ir: cannot emit '{op.name}'")
            handler(self, op)


Handler = Callable[[FunctionEmitter, Operation], None]


def emit_function(
    module: ModuleEmitter, op: func.FuncOp, handlers: dict[type[Operation], Handler], packed: bool = False
) -> str:
    """The LLVM text of one `func.func`, its definition or declaration, each op emitted by its handler; with
    `packed`, an entry's body as `@<name>_packed(ptr %args)`, loading its arguments as `packed_reads` plans."""
    fe = FunctionEmitter(module, handlers)
    blocks = list(op.body.blocks)
    if not blocks:
        names = [f"%.{i}" for i in range(1, len(op.function_type.inputs) + 1)]
        return function_header(module, op, names)
    entry = blocks[0]
    arg_names = []
    reads: dict[Operation | None, list[BlockArgument]] = {}
    if packed:
        check_entry_signature(op)
        fe.argument_array = fe.name()
        arg_names.append(fe.argument_array)
        reads = packed_reads(op)
        fe.reads_before = {before: arguments for before, arguments in reads.items() if before is not None}
    else:
        for arg, param in zip(entry.args, module.signatures[op.sym_name.data][1], strict=True):
            arg_names.append(fe.name())
            fe.values[arg] = (param, arg_names[-1])
    for block in blocks:
        fe.labels[block] = fe.name()[1:]
        if block is not entry:
            fe.phis[block] = [(fe.name(), module.type(arg.type), []) for arg in block.args]
            for arg, (name, phi_type, _) in zip(block.args, fe.phis[block]):
                fe.values[arg] = (phi_type, name)
    for block in blocks:
        fe.start_block(fe.labels[block], fe.phis.get(block, []))
        if block is entry and None in reads:
            fe.read_arguments(reads[None])
        fe.emit_block(block)
    fe.blocks[0].lines[:0] = reversed(fe.hoisted)
    out = [function_header(module, op, arg_names, "packed" if packed else "plain"), "{\n"]
    for block_text in fe.blocks:
        out.append(f"{block_text.label}:\n")
        for name, phi_type, incoming in block_text.phis:
            out.append(f"  {name} = phi  {phi_type} {', '.join(incoming)}".rstrip() + "\n")
        out += block_text.lines
    out.append("}\n")
    return "".join(out)


_LOCAL = re.compile(r'%(?:"[^"]*"|[-a-zA-Z$._0-9]+)')
_LABEL = re.compile(r'^("[^"]*"|[-a-zA-Z$._0-9]+):')


def canonical_llvm_ir(text: str) -> str:
    """`text` with the local values and block labels of each function renamed `%v0`, `%v1`, ... in order of first
    appearance (labels `v<n>:`), so that two printings of the same IR compare equal whatever names they chose."""
    out: list[str] = []
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        key = name.strip('"')
        if key not in names:
            names[key] = f"v{len(names)}"
        return names[key]

    for line in text.splitlines():
        if line.startswith(("define ", "declare ")):
            names = {}
        label = _LABEL.match(line)
        if label is not None:
            line = rename(label.group(1)) + ":" + line[label.end() :]
        out.append(_LOCAL.sub(lambda m: "%" + rename(m.group(0)[1:]), line))
    return "\n".join(out) + "\n"
