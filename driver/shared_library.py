"""A model as a shared library for C programs (`minimlc build`), after TVM's `export_library`: compile, then link with
the system C compiler.

    export_library(import_model("mlp.onnx"), "libmodel.so")   # writes libmodel.so, libmodel.h, libmodel.weights

The library holds the model's object code (optimised as the JIT optimises it, then emitted position-independent),
the thread pool's (`threadpool_ir.build_pool_module`), the C runtime shipped in `runtime/c/` and a generated API file;
`cc -shared` links them. Only the prefixed API is exported (`model_load`, `model_run`, `model_run_arrays`,
`model_free`, `model_last_error`, and for a model with run-time dimensions `model_output_shapes`; the header declares
them, `driver/c_api.py` generates both): the model's functions are renamed `<prefix>_...` and the pool's are hidden,
so two models' libraries link into one program. The weights stay out of the code, in a side file the C API reads at
load:

    header:  b"MLCWGT\\0\\0", format version (u32), weight count (u32), fingerprint (u64), file bytes (u64)
    table:   one (offset u64, bytes u64) per weight, in the entry's weight order
    arrays:  raw, each in its own dtype (float32, int64, ...), at a 64-byte aligned offset

The fingerprint (of the weights' names and shapes) ties a weights file to the libraries built from the same model
graph, so weights of the same shapes can be swapped without relinking. `model_load` first checks that the running
CPU has the features the code was built for (`driver/cpu_checks.py`: x86 features, AArch64's dot products and SVE
length, RISC-V's V and VLEN) and refuses with a message naming what is missing. The model's code is compiled in
partitions on all cores, as for the JIT (`driver/codegen.py`), one object file each; `object_code(..., jobs=1)`, one
file, is `minimlc compile --emit obj`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

from minimlc import runtime
from minimlc.driver.c_api import c_api_source, c_header
from minimlc.driver.codegen import Optimizer
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import EntrySignature, check_weight_bits, entry_function, extern_calls_in, input_symbols_of
from minimlc.lowering.pipeline import Pipeline
from minimlc.lowering.target import Target, host_arch, target_from_name, target_machine
from minimlc.runtime.compiled import align_up
from minimlc.runtime.extents import InputBounds, checked_bounds
from minimlc.runtime.jit import optimized_module
from minimlc.runtime.threadpool_ir import PoolOptions, build_pool_module

RUNTIME_DIR = Path(runtime.__file__).parent / "c"
"""The shipped C runtime: `minimlc_runtime.c` and its header."""
WEIGHTS_MAGIC = b"MLCWGT\x00\x00"
WEIGHTS_FORMAT = 1
_WEIGHTS_HEADER = struct.Struct("<8sIIQQ")


class CompilerNotFoundError(RuntimeError):
    """No C compiler to link the library with; the message names the one looked for."""


class LinkError(RuntimeError):
    """The C compiler failed; the message holds its command line and output."""


@dataclass
class ModelObject:
    """A model's position-independent object files (one per codegen partition) and what its C API needs to know."""

    objects: list[bytes]
    signature: EntrySignature
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    target: Target
    index_checks: list[str] = field(default_factory=list[str])
    """The run-time index checks' messages: the entry writes their counts after `outputs`, into buffers of the API's
    own; a nonzero count makes `run` return 2 with the message (`ImportedModel.index_checks`)."""
    lower_seconds: float = 0.0
    codegen_seconds: float = 0.0


def pic_target_machine(target: Target, llvm_level: int) -> llvm.TargetMachine:
    """A target machine for `target` that emits position-independent code (for a shared library)."""
    return target_machine(target, opt=llvm_level, reloc="pic")


def library_optimizer(prefix: str | None) -> Callable[[Target, int], Optimizer]:
    """An optimiser for `runtime.codegen` that makes library code: optimised as `JitModule` does, emitted
    position-independent, the model's own functions renamed `<prefix>_<name>` (none without a prefix) and every
    defined symbol hidden or internal: the library exports only its C API, its objects still call each other."""

    def for_target(target: Target, llvm_level: int) -> Optimizer:
        def optimize(llvm_ir: str, own: frozenset[str]) -> tuple[llvm.TargetMachine, llvm.ModuleRef]:
            machine = pic_target_machine(target, llvm_level)
            module = optimized_module(llvm_ir, machine, llvm_level, sealed=True)
            for function in module.functions:
                if not function.is_declaration and function.linkage not in (
                    llvm.Linkage.internal,
                    llvm.Linkage.private,
                ):
                    function.visibility = llvm.Visibility.hidden
                if prefix is not None and (function.name in own or not function.is_declaration):
                    function.name = f"{prefix}_{function.name}"
            for variable in module.global_variables:
                if not variable.is_declaration:
                    variable.linkage = llvm.Linkage.internal
            return machine, module

        return optimize

    return for_target


def object_code(
    imported: ImportedModel,
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
    prefix: str = "model",
    jobs: int | None = None,
) -> ModelObject:
    """Lower `imported` and emit its object files (on up to `jobs` processes): `<prefix>_main_packed(void **args)`
    (inputs, outputs, pool, weights, precomputed buffers: see `minimlc.lowering.abi`) and, with precomputed buffers,
    `<prefix>_main_init_packed(void **tail)`; every symbol is hidden. Calls `minimlc_parallel_for` if the model has
    parallel loops. The target need not be the host's (nothing runs here)."""
    from minimlc.driver.compiler import compile_objects

    compiled = compile_objects(
        imported, pipeline, opt_level=opt_level, target=target, optimizer=library_optimizer(prefix), jobs=jobs
    )
    outputs = imported.computed_outputs
    return ModelObject(
        compiled.object_files,
        compiled.signature,
        list(imported.inputs),
        outputs[: len(outputs) - len(imported.index_checks)],
        compiled.target,
        list(imported.index_checks),
        lower_seconds=float(compiled.stats["lower_seconds"]),
        codegen_seconds=float(compiled.stats["codegen_seconds"]),
    )


def pool_object_code(target: Target, options: PoolOptions = PoolOptions()) -> bytes:
    """The thread pool's object code for `target`, every symbol hidden (each library has its own copy)."""
    pool = build_pool_module(options, target.arch)
    machine, module = library_optimizer(None)(target, 3)(str(pool), frozenset())
    return machine.emit_object(module)


def fingerprint(signature: EntrySignature, weights: Mapping[str, np.ndarray]) -> int:
    """64 bits of a hash of the weights' names and shapes, the precomputed buffers' shapes, and the bits the code
    relies on weights fitting (`EntrySignature.weight_bits`, where there are any)."""
    parts: list[object] = [
        [[name, list(np.shape(weights[name]))] for name in signature.weight_names],
        [list(shape) for shape, _ in signature.precomputed_buffers],
    ]
    text = json.dumps([*parts, sorted(signature.weight_bits.items())] if signature.weight_bits else parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def write_weights(path: str | os.PathLike[str], signature: EntrySignature, weights: Mapping[str, np.ndarray]) -> None:
    """Write the entry's weights, in its order and each in its dtype, to a weights file (see the module docstring);
    ValueError for a weight outside the bits the code relies on (`check_weight_bits`)."""
    check_weight_bits(signature.weight_bits, weights)
    arrays = [np.ascontiguousarray(weights[name]) for name in signature.weight_names]
    offset = align_up(_WEIGHTS_HEADER.size + 16 * len(arrays))
    table = []
    for array in arrays:
        table.append((offset, array.nbytes))
        offset = align_up(offset + array.nbytes)
    size = table[-1][0] + table[-1][1] if table else offset
    body = bytearray(size)
    _WEIGHTS_HEADER.pack_into(
        body, 0, WEIGHTS_MAGIC, WEIGHTS_FORMAT, len(arrays), fingerprint(signature, weights), size
    )
    for index, ((start, nbytes), array) in enumerate(zip(table, arrays)):
        struct.pack_into("<QQ", body, _WEIGHTS_HEADER.size + 16 * index, start, nbytes)
        body[start : start + nbytes] = array.tobytes()
    Path(path).write_bytes(body)


def c_compiler(
    purpose: str = "no C compiler to link the library with", target: Target | None = None, compiler: str | None = None
) -> list[str]:
    """The C compiler's command: `compiler` (`--cc`), else `$CC`, else `cc`, or for a `target` of another architecture
    the cross compiler its triple names (`aarch64-linux-gnu-gcc`); `CompilerNotFoundError`, its message opening with
    `purpose` (what needed the compiler), if it is not installed."""
    given = (compiler or "").strip() or os.environ.get("CC", "").strip()
    cross = target is not None and target.arch != host_arch()
    command = shlex.split(given or (f"{target.triple}-gcc" if target is not None and cross else "cc"))
    if shutil.which(command[0]) is not None:
        return command
    if given:
        source = "--cc" if (compiler or "").strip() else "$CC"
        raise CompilerNotFoundError(f"{purpose}: '{command[0]}' ({source}) is not installed or not on PATH")
    if target is not None and cross:
        raise CompilerNotFoundError(
            f"{purpose}: the cross compiler for {target.triple}, '{command[0]}', is not on PATH; install the Debian "
            f"package gcc-{target.triple}, or name one with --cc (or $CC)"
        )
    raise CompilerNotFoundError(
        f"{purpose}: '{command[0]}' (the default; set CC to choose another) is not installed or not on PATH; install "
        "gcc or clang, or set CC"
    )


@dataclass
class LibraryFiles:
    """What `export_library` wrote, and how long each stage took."""

    library: Path
    header: Path
    weights: Path
    lower_seconds: float
    codegen_seconds: float
    link_seconds: float


def export_library(
    imported: ImportedModel,
    path: str | os.PathLike[str],
    pipeline: Pipeline | None = None,
    *,
    opt_level: int = 3,
    target: str | Target = "host",
    prefix: str = "model",
    source: str = "the model",
    input_bounds: InputBounds | None = None,
    cc: str | None = None,
) -> LibraryFiles:
    """Build `imported` into the shared library `path`, with its header and weights file beside it (`path` with
    the suffixes `.h` and `.weights`). A model imported with run-time dimensions (`import_model(..., symbolic=True)`)
    gets the shaped C API (`driver/c_api.py`), whose runs check each symbol against `input_bounds` (as
    `InferenceSession` takes them). The target may be another architecture's (`aarch64-linux-gnu`): the library is
    then linked by its cross compiler (`c_compiler`; `cc` names another). Raises ValueError for a bad prefix, target
    or bounds or a model the C API cannot express, `CompilerNotFoundError` without a C compiler, `LinkError` if the
    compiler fails."""
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix, flags=re.ASCII):
        raise ValueError(f"the prefix must be a C identifier, got '{prefix}'")
    if imported.constant_outputs:
        raise ValueError(
            f"outputs {sorted(imported.constant_outputs)} are constants folded at import time; the C API has no "
            "place for them yet"
        )
    if externs := sorted({name for name, _ in extern_calls_in(imported.module)}):
        raise ValueError(f"the model calls external functions ({', '.join(externs)}): the C API cannot bind them yet")
    bounds = checked_bounds(input_bounds, input_symbols_of(entry_function(imported.module)))
    compiler = c_compiler(target=target_from_name(target) if isinstance(target, str) else target, compiler=cc)
    model = object_code(imported, pipeline, opt_level=opt_level, target=target, prefix=prefix)
    start = time.perf_counter()
    pool_code = pool_object_code(model.target)
    library = Path(path)
    library.parent.mkdir(parents=True, exist_ok=True)
    header = library.with_suffix(".h")
    weights = library.with_suffix(".weights")
    # Everything is made in a scratch folder beside the library and renamed into place once linked: a failure
    # leaves the files of an earlier build as they were, and nothing half-written.
    with tempfile.TemporaryDirectory(prefix=".minimlc-build-", dir=library.parent) as scratch:
        folder = Path(scratch)
        (folder / header.name).write_text(c_header(model, prefix, str(library), source, bounds))
        write_weights(folder / weights.name, model.signature, imported.weights)
        objects = [folder / f"model_{i}.o" for i in range(len(model.objects))]
        for path_, code in zip(objects, model.objects, strict=True):
            path_.write_bytes(code)
        (folder / "pool.o").write_bytes(pool_code)
        weights_fingerprint = fingerprint(model.signature, imported.weights)
        (folder / "api.c").write_text(
            c_api_source(model, prefix, header.name, imported.weights, weights_fingerprint, bounds)
        )
        command = [
            *compiler, "-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-Werror=implicit-function-declaration",
            f"-I{RUNTIME_DIR}", f"-I{folder}",
            "-o", str(folder / library.name),
            str(folder / "api.c"), str(RUNTIME_DIR / "minimlc_runtime.c"),
            *map(str, objects), str(folder / "pool.o"),
            "-lm", "-pthread", "-Wl,--wrap=aligned_alloc",  # the allocation guard: runtime/alloc_guard_ir.py
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise LinkError(f"{shlex.join(command)} failed ({result.returncode}):\n{result.stderr}{result.stdout}")
        for made in (header, weights, library):
            os.replace(folder / made.name, made)
    return LibraryFiles(
        library, header, weights, model.lower_seconds, model.codegen_seconds, time.perf_counter() - start
    )
