"""A model as a shared library for C programs (`minimlc build`), after TVM's `export_library`: compile, then link with
the system C compiler.

    export_library(import_model("mlp.onnx"), "libmodel.so")   # writes libmodel.so, libmodel.h, libmodel.weights

The library holds the model's object code (optimised as the JIT optimises it, then emitted position-independent),
the thread pool's (`threadpool_ir.build_pool_module`), the C runtime shipped in `runtime/c/` and a generated API file;
`cc -shared` links them. Only the prefixed API is exported (`model_load`, `model_run`, `model_run_arrays`,
`model_free`, `model_last_error`; the header declares them): the model's functions are renamed `<prefix>_...` and
the pool's are hidden, so two models' libraries link into one program. The weights stay out of the code, in a side
file the C API reads at load:

    header:  b"MLCWGT\\0\\0", format version (u32), weight count (u32), fingerprint (u64), file bytes (u64)
    table:   one (offset u64, bytes u64) per weight, in the entry's weight order
    arrays:  raw, each in its own dtype (float32, int64, ...), at a 64-byte aligned offset

The fingerprint (of the weights' names and shapes) ties a weights file to the libraries built from the same model
graph, so weights of the same shapes can be swapped without relinking. `model_load` first checks that the running
CPU has the features the code was built for (`cpu_checks`) and refuses with a message naming the missing one. The
model's code is compiled in partitions on all cores, as for the JIT (`driver/codegen.py`), one object file each;
`object_code(..., jobs=1)`, one file, is `minimlc compile --emit obj`.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

from minimlc import runtime
from minimlc.driver.codegen import Optimizer
from minimlc.driver.symbolic import refuse_run_time_dimensions
from minimlc.frontend.onnx import ImportedModel
from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import ENTRY_FUNCTION, EntrySignature, extern_calls_in, init_name, packed_name
from minimlc.lowering.pipeline import Pipeline
from minimlc.lowering.target import Target, initialize_llvm
from minimlc.runtime.compiled import align_up
from minimlc.runtime.jit import optimized_module
from minimlc.runtime.threadpool_ir import PoolOptions, build_pool_module

RUNTIME_DIR = Path(runtime.__file__).parent / "c"
"""The shipped C runtime: `minimlc_runtime.c` and its header."""
WEIGHTS_MAGIC = b"MLCWGT\x00\x00"
WEIGHTS_FORMAT = 1
_WEIGHTS_HEADER = struct.Struct("<8sIIQQ")
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "bool true false m".split()
)


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
    initialize_llvm()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=target.cpu, features=target.features, opt=llvm_level, reloc="pic", codemodel="default"
    )


def library_optimizer(prefix: str | None) -> Callable[[Target, int], Optimizer]:
    """An optimiser for `runtime.codegen` that makes library code: optimised as `JitModule` does, emitted
    position-independent, the model's own functions renamed `<prefix>_<name>` (none without a prefix) and every
    defined symbol hidden or internal: the library exports only its C API, its objects still call each other."""

    def for_target(target: Target, llvm_level: int) -> Optimizer:
        def optimize(llvm_ir: str, own: frozenset[str]) -> tuple[llvm.TargetMachine, llvm.ModuleRef]:
            machine = pic_target_machine(target, llvm_level)
            module = optimized_module(llvm_ir, machine, llvm_level)
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
    machine, module = library_optimizer(None)(target, 3)(str(build_pool_module(options)), frozenset())
    return machine.emit_object(module)


def fingerprint(signature: EntrySignature, weights: Mapping[str, np.ndarray]) -> int:
    """64 bits of a hash of the weights' names and shapes, and the precomputed buffers' shapes."""
    text = json.dumps(
        [
            [[name, list(np.shape(weights[name]))] for name in signature.weight_names],
            [list(shape) for shape, _ in signature.precomputed_buffers],
        ]
    )
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def write_weights(path: str | os.PathLike[str], signature: EntrySignature, weights: Mapping[str, np.ndarray]) -> None:
    """Write the entry's weights, in its order and each in its dtype, to a weights file (see the module docstring)."""
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


def c_compiler(purpose: str = "no C compiler to link the library with") -> list[str]:
    """The C compiler's command (`$CC`, default `cc`); `CompilerNotFoundError`, its message opening with `purpose`
    (what needed the compiler), if it is not installed."""
    command = shlex.split(os.environ.get("CC", "").strip() or "cc")
    if shutil.which(command[0]) is None:
        source = "$CC" if os.environ.get("CC", "").strip() else "the default; set CC to choose another"
        raise CompilerNotFoundError(
            f"{purpose}: '{command[0]}' ({source}) is not installed or not on PATH; install gcc or clang, or set CC"
        )
    return command


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


def c_header(model: ModelObject, prefix: str, library: str, source: str) -> str:
    """The C header of a library built from `model`: shapes as `#define`s, the API's declarations."""
    upper = prefix.upper()
    input_names = c_names(model.inputs, set())
    output_names = c_names(model.outputs, set(input_names))
    lines = [
        f"/* {Path(library).with_suffix('.h').name}: the C API of {source}, built by minimlc {version('minimlc')} for "
        f"CPU {model.target.cpu}.",
        f" * Link with {Path(library).name}; {prefix}_load reads the weights file "
        f"{Path(library).with_suffix('.weights').name} (built with it).",
        " * Every tensor is a dense row-major array of the element type and shape given below. */",
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
        "",
        f"#define {upper}_NUM_INPUTS {len(model.inputs)}",
        f"#define {upper}_NUM_OUTPUTS {len(model.outputs)}",
    ]
    trimmed = {f"{info.name}.count": info.name for info in model.outputs}
    for kind, infos, names in (("INPUT", model.inputs, input_names), ("OUTPUT", model.outputs, output_names)):
        for info, name in zip(infos, names):
            macro = f"{upper}_{kind}_{name.upper()}"
            count_of = (
                f": how many entries of '{trimmed[info.name]}' are valid along its data-dependent axis (the "
                "rest is padding up to its bound)"
                if kind == "OUTPUT" and info.name in trimmed
                else ""
            )
            lines += [
                f"/* {kind.lower()} '{info.name}': {info.dtype.name}{list(info.shape)}, as {c_type(info.dtype)}"
                f"{count_of} */",
                f"#define {macro}_NDIM {len(info.shape)}",
                f"#define {macro}_SHAPE {{{', '.join(map(str, info.shape)) or '1'}}}",
                f"#define {macro}_SIZE {int(np.prod(info.shape))}",
            ]
        quoted = ", ".join(json.dumps(info.name) for info in infos)
        lines += [
            f"#define {upper}_{kind}_NAMES {{{quoted}}}",
            f"#define {upper}_{kind}_SIZES {{{', '.join(str(int(np.prod(info.shape))) for info in infos)}}}",
        ]
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
        "/* Run the model once: read the inputs, write the outputs. 0 on success, 1 on a NULL argument, 2 on a",
        " * run-time index out of range (a Gather's, ...), 3 when its intermediate buffers cannot be allocated (no",
        " * output written). The message says which. Calls may run concurrently from several threads. */",
        f"int {prefix}_run(minimlc_model *m, {', '.join(params)});",
        f"/* {prefix}_run with the inputs and outputs as arrays, in the order of {upper}_INPUT_NAMES and "
        f"{upper}_OUTPUT_NAMES. */",
        f"int {prefix}_run_arrays(minimlc_model *m, const {pointer} *const *inputs, {pointer} *const *outputs);",
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


CPU_CHECKABLE_FEATURES = frozenset(
    "sse4.2 avx avx2 fma bmi bmi2 popcnt avx512f avx512vl avx512bw avx512dq avx512cd avx512vnni avx512bf16 "
    "avx512vbmi avx512vbmi2 avx512ifma avx512bitalg avx512vpopcntdq gfni vaes vpclmulqdq".split()
)
"""LLVM features whose names GCC's and Clang's `__builtin_cpu_supports` accept too: the ones a library checks for
at load, so that code built for another CPU refuses to load instead of dying of an illegal instruction."""


def cpu_checks(target: Target) -> str:
    """C statements returning the name of the first feature of `target`'s code that the running CPU lacks."""
    features = [feature for feature in target.code_features if feature in CPU_CHECKABLE_FEATURES]
    return "\n".join(f'    if (!__builtin_cpu_supports("{f}")) return "{f}";' for f in features)


def c_api_source(model: ModelObject, prefix: str, header: str, weights: Mapping[str, np.ndarray]) -> str:
    """The generated C file of the library's API: the model's descriptor and the prefixed functions."""
    signature = model.signature
    weight_bytes = [np.asarray(weights[name]).nbytes for name in signature.weight_names]
    buffer_bytes = [int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in signature.precomputed_buffers]
    input_names = c_names(model.inputs, set())
    output_names = c_names(model.outputs, set(input_names))
    params = [f"const {c_type(info.dtype)} *{name}" for info, name in zip(model.inputs, input_names)]
    params += [f"{c_type(info.dtype)} *{name}" for info, name in zip(model.outputs, output_names)]
    pointer = _pointer_type([*model.inputs, *model.outputs])
    entry = f"{prefix}_{packed_name(ENTRY_FUNCTION)}"
    init = f"{prefix}_{packed_name(init_name(ENTRY_FUNCTION))}"
    has_init = bool(signature.precomputed_buffers)

    def array(values: list[int]) -> str:
        return "{" + ", ".join(f"{value}ull" for value in values or [0]) + "}"

    return f"""/* Generated by minimlc: the C API of one model (see {header}). */
#include "minimlc_runtime.h"
#include "{header}"

MINIMLC_HIDDEN void {entry}(void **args);
{f"MINIMLC_HIDDEN void {init}(void **tail);" if has_init else ""}

#define API __attribute__((visibility("default")))

static const uint64_t weight_bytes[] = {array(weight_bytes)};
static const uint64_t precomputed_bytes[] = {array(buffer_bytes)};
static const char *missing_cpu_feature(void) {{
    __builtin_cpu_init();
{cpu_checks(model.target)}
    return 0;
}}

static const minimlc_desc desc = {{
    "{prefix}", {len(model.inputs)}, {len(model.outputs) + len(model.index_checks)},
    {-1 if signature.pool_slot is None else signature.pool_slot},
    {len(weight_bytes)}, weight_bytes, {len(buffer_bytes)}, precomputed_bytes,
    {fingerprint(signature, weights)}ull,
    {entry}, {init if has_init else "0"},
    "{model.target.name}", missing_cpu_feature,
}};

API minimlc_model *{prefix}_load(const char *weights_path, int num_threads) {{
    return (minimlc_model *)minimlc_instance_load(&desc, weights_path, num_threads);
}}

{_checked_run(len(model.outputs), model.index_checks)}
API int {prefix}_run(minimlc_model *m, {", ".join(params)}) {{
    const void *inputs[] = {{{", ".join(input_names) or "0"}}};
    void *outputs[] = {{{", ".join(output_names)}}};
    return checked_run((minimlc_instance *)m, inputs, outputs);
}}

API int {prefix}_run_arrays(minimlc_model *m, const {pointer} *const *inputs, {pointer} *const *outputs) {{
    return checked_run((minimlc_instance *)m, (const void *const *)inputs, (void *const *)outputs);
}}

API void {prefix}_free(minimlc_model *m) {{ minimlc_instance_free((minimlc_instance *)m); }}

API const char *{prefix}_last_error(void) {{ return minimlc_last_error(); }}
"""


def _checked_run(num_outputs: int, index_checks: Sequence[str]) -> str:
    """C of `checked_run`, the run the API calls: with run-time index checks, the entry also writes one count per
    check into the function's own buffers, and a nonzero one fails the run (2, the check's message)."""
    if not index_checks:
        return (
            "static int checked_run(minimlc_instance *m, const void *const *inputs, void *const *outputs) {\n"
            "    return minimlc_instance_run(&desc, m, inputs, outputs);\n}\n"
        )
    messages = ", ".join(json.dumps(message) for message in index_checks)
    return f"""static const char *const index_checks[] = {{{messages}}};
static int checked_run(minimlc_instance *m, const void *const *inputs, void *const *outputs) {{
    int64_t counts[{len(index_checks)}];
    void *all_outputs[{num_outputs + len(index_checks)}];
    for (int i = 0; i < {num_outputs}; ++i)
        all_outputs[i] = outputs[i];
    for (int i = 0; i < {len(index_checks)}; ++i)
        all_outputs[{num_outputs} + i] = &counts[i];
    int status = minimlc_instance_run(&desc, m, inputs, all_outputs);
    for (int i = 0; status == 0 && i < {len(index_checks)}; ++i) {{
        if (counts[i]) {{
            minimlc_set_error(index_checks[i]);
            status = 2;
        }}
    }}
    return status;
}}
"""


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
) -> LibraryFiles:
    """Build `imported` into the shared library `path`, with its header and weights file beside it (`path` with
    the suffixes `.h` and `.weights`). Raises ValueError for a bad prefix or a model the C API cannot express,
    `CompilerNotFoundError` without a C compiler, `LinkError` if the compiler fails."""
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix, flags=re.ASCII):
        raise ValueError(f"the prefix must be a C identifier, got '{prefix}'")
    if imported.constant_outputs:
        raise ValueError(
            f"outputs {sorted(imported.constant_outputs)} are constants folded at import time; the C API has no "
            "place for them yet"
        )
    if externs := sorted({name for name, _ in extern_calls_in(imported.module)}):
        raise ValueError(f"the model calls external functions ({', '.join(externs)}): the C API cannot bind them yet")
    refuse_run_time_dimensions(imported, "the C API")
    compiler = c_compiler()
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
        (folder / header.name).write_text(c_header(model, prefix, str(library), source))
        write_weights(folder / weights.name, model.signature, imported.weights)
        objects = [folder / f"model_{i}.o" for i in range(len(model.objects))]
        for path_, code in zip(objects, model.objects, strict=True):
            path_.write_bytes(code)
        (folder / "pool.o").write_bytes(pool_code)
        (folder / "api.c").write_text(c_api_source(model, prefix, header.name, imported.weights))
        command = [
            *compiler, "-shared", "-fPIC", "-O2", "-fvisibility=hidden",
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
