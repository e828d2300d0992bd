"""Saved models and compile-cache entries: one file of native object code, arrays and JSON metadata.

Nothing in the file is executed to read it (no pickle): a 64-byte header, then the metadata as UTF-8 JSON, then the
arrays, each at a 64-byte aligned offset, so that loading is one read and the weights are views of that buffer.

    header:   b"MINIMLC\\0", format version (u32), 0 (u32), file bytes (u64), metadata bytes (u64),
              checksum of everything after the header (32 bytes): the sha256 of the sha256 digests of its 8 MiB
              chunks, so that the chunks hash on all cores (about 25 ms for 100 MB on two, 50 ms on one)
    metadata: {"minimlc": ..., "llvmlite": ..., "target": {...}, "blobs": {name: {offset, dtype, shape}}, ...};
              a model compiled with run-time extents adds `entry.extents` (`EntryExtents`) and `input_bounds`
    blobs:    the object code ("code_0", "code_1", ...: one per compiled partition, uint8), the thread pool's object
              code ("pool_code": the pool and the allocation guard every model runs under; loading it is ten times
              cheaper than compiling it), weights, constant outputs

`read_file` raises one `ArtifactError` per problem: not a minimlc file, truncated, corrupt (checksum), made by
another minimlc or llvmlite version, or built for a CPU this host is not: another architecture (the target's
triple, `aarch64-linux-gnu`, names it) or one with features this host lacks.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any

import llvmlite
import numpy as np

from minimlc.frontend.signature import TensorInfo
from minimlc.lowering.abi import EntryExtents, EntrySignature, ExternCall
from minimlc.lowering.target import Target, host_arch
from minimlc.runtime.compiled import CompiledModel, align_up, aligned_empty, bind
from minimlc.runtime.jit import ObjectModule
from minimlc.runtime.threadpool import load_pool_code, pool_object_code, register_symbols

MAGIC = b"MINIMLC\x00"
FORMAT_VERSION = 5
"""5: the target records its triple (4 did not); 4: every model holds the pool code, which holds the allocation
guard (3 had no guard)."""
_HEADER = struct.Struct("<8sIIQQ32s")
_CHECKSUM_CHUNK = 8 << 20


class ArtifactError(ValueError):
    """A file is not a loadable minimlc model or cache entry; the message says why."""


def versions() -> dict[str, str]:
    """The versions a file must have been written by: this minimlc and this llvmlite."""
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str]:
    return {"minimlc": version("minimlc"), "llvmlite": llvmlite.__version__}


def target_meta(target: Target) -> dict[str, Any]:
    """`target` as JSON, with the features code built for it needs (for the host: every feature the host has)."""
    return dataclasses.asdict(dataclasses.replace(target, required_features=target.code_features))


def target_from_meta(meta: Mapping[str, Any]) -> Target:
    """The target `target_meta` wrote."""
    fields = {**meta, "required_features": tuple(meta["required_features"]), "cache_bytes": tuple(meta["cache_bytes"])}
    return Target(**fields)


def dtype_meta(dtype: np.dtype) -> str:
    """A dtype as JSON: its array-protocol string (`<f4`), or its name for ml_dtypes' (`bfloat16`, whose string is
    the `<V2` of any two raw bytes; `float8_e5m2`'s `<f1` does not parse back)."""
    return dtype.name if dtype.type.__module__ == "ml_dtypes" else dtype.str


def dtype_from_meta(meta: str) -> np.dtype:
    """The dtype `dtype_meta` wrote. ml_dtypes is imported only for a name numpy does not know (its import took 1.5
    s of a saved model's 2.2 s load in a fresh process)."""
    try:
        return np.dtype(meta)
    except TypeError:
        import ml_dtypes

        if not hasattr(ml_dtypes, meta):
            raise
        return np.dtype(getattr(ml_dtypes, meta))


def tensor_meta(info: TensorInfo) -> dict[str, Any]:
    """An input's or output's signature as JSON."""
    return {"name": info.name, "shape": list(info.shape), "dtype": dtype_meta(info.dtype)}


def tensor_from_meta(meta: Mapping[str, Any]) -> TensorInfo:
    """The signature `tensor_meta` wrote."""
    return TensorInfo(meta["name"], tuple(meta["shape"]), dtype_from_meta(meta["dtype"]))


def code_meta(compiled: CompiledModel, opt_level: int) -> dict[str, Any]:
    """What loading `compiled`'s object code needs besides the code and the weights: its target, entry signature,
    inputs, computed outputs, opt level and statistics."""
    signature = compiled.signature
    return {
        "opt_level": opt_level,
        "target": target_meta(compiled.jit.target),
        "entry": {
            "weights": signature.weight_names,
            "precomputed": [
                [list(shape), dtype_meta(np.dtype(dtype))] for shape, dtype in signature.precomputed_buffers
            ],
            "pool_slot": signature.pool_slot,
            "externs": [
                {
                    "callee": call.callee,
                    "slot": call.slot,
                    "buffers": [[list(shape), np.dtype(dtype).str] for shape, dtype in call.buffers],
                    "num_outputs": call.num_outputs,
                }
                for call in signature.extern_calls
            ],
            "extern_status": signature.extern_status_slot,
            **({} if signature.extents is None else {"extents": dataclasses.asdict(signature.extents)}),
            **({"weight_bits": signature.weight_bits} if signature.weight_bits else {}),
        },
        "inputs": [tensor_meta(info) for info in compiled.inputs],
        "computed_outputs": [tensor_meta(info) for info in compiled.outputs],
        "stats": dict(compiled.stats),
    }


def code_blobs(compiled: CompiledModel) -> dict[str, np.ndarray]:
    """The blobs `bind_code` loads `compiled`'s code from: its object code, and the pool's (which also holds the
    allocation guard every model runs under), so that loading compiles nothing."""
    blobs = {f"code_{i}": np.frombuffer(code, dtype=np.uint8) for i, code in enumerate(compiled.jit.object_files)}
    blobs["pool_code"] = np.frombuffer(pool_object_code(compiled.jit.target), dtype=np.uint8)
    return blobs


def bind_code(
    meta: Mapping[str, Any], blobs: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray]
) -> CompiledModel:
    """Load the object code in `blobs` (`code_blobs`) that `code_meta` described and bind it to `weights`."""
    entry = meta["entry"]
    buffers = [(tuple(shape), dtype_from_meta(dtype)) for shape, dtype in entry["precomputed"]]
    extern_calls = [
        ExternCall(
            call["callee"],
            call["slot"],
            tuple((tuple(shape), dtype_from_meta(dtype)) for shape, dtype in call["buffers"]),
            call["num_outputs"],
        )
        for call in entry.get("externs", [])
    ]
    extents = entry.get("extents")  # only a model compiled with run-time extents has them
    signature = EntrySignature(
        list(entry["weights"]),
        buffers,
        entry["pool_slot"],
        extern_calls,
        entry.get("extern_status"),
        None if extents is None else extents_from_meta(extents),
        dict(entry.get("weight_bits", {})),
    )
    target = target_from_meta(meta["target"])
    load_pool_code(blobs["pool_code"].tobytes(), target)
    register_symbols()
    code = [blobs[f"code_{i}"].tobytes() for i in range(sum(name.startswith("code_") for name in blobs))]
    native = ObjectModule(code, target)
    inputs = [tensor_from_meta(info) for info in meta["inputs"]]
    outputs = [tensor_from_meta(info) for info in meta["computed_outputs"]]
    compiled = bind(inputs, outputs, native, signature, weights)
    compiled.stats = dict(meta["stats"])
    return compiled


def extents_from_meta(meta: Mapping[str, Any]) -> EntryExtents:
    """The run-time extents `code_meta` wrote (`dataclasses.asdict` of them)."""
    shapes = tuple(tuple(shape) for shape in meta["shapes"])
    return EntryExtents(meta["slot"], meta["count"], meta["output_extents"], shapes, tuple(meta["symbols"]))


def write_file(path: str | os.PathLike[str], meta: Mapping[str, Any], blobs: Mapping[str, np.ndarray]) -> None:
    """Write `meta` (JSON-able; `blobs` and version keys are added) and `blobs` to `path`, atomically: a reader or
    another writer never sees a half-written file. Each blob goes from its array to the file (hashed on the way): the
    file is never whole in memory, nor a contiguous blob copied."""
    layout: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, array in blobs.items():
        if array.dtype.hasobject:
            raise ValueError(f"blob '{name}' has dtype {array.dtype}: only plain numeric arrays can be saved")
        layout[name] = {"offset": offset, "dtype": dtype_meta(array.dtype), "shape": list(array.shape)}
        offset = align_up(offset + array.nbytes)
    text = json.dumps({**meta, **versions(), "blobs": layout}).encode()
    payload_start = align_up(_HEADER.size + len(text))
    pieces = [memoryview(text)]
    end = _HEADER.size + len(text)
    for name, array in blobs.items():
        pieces.append(memoryview(bytes(payload_start + layout[name]["offset"] - end)))
        pieces.append(memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8)))
        end = payload_start + layout[name]["offset"] + array.nbytes
    total = payload_start + offset
    pieces.append(memoryview(bytes(total - end)))
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(bytes(_HEADER.size))  # the header holds the checksum: written last
            checksum = _checksum(_chunks(pieces), file.write)
            file.seek(0)
            file.write(_HEADER.pack(MAGIC, FORMAT_VERSION, 0, total, len(text), checksum))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def read_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata and blobs of a file `write_file` wrote, checked (see the module docstring); blobs are read-only
    64-byte aligned views of one buffer."""
    size = os.path.getsize(path)
    buffer = aligned_empty((size,), np.dtype(np.uint8))
    with open(path, "rb") as file:
        file.readinto(memoryview(buffer))
    if size < len(MAGIC) or bytes(buffer[: len(MAGIC)]) != MAGIC:
        raise ArtifactError(f"'{path}' is not a minimlc model file (it does not start with the minimlc header)")
    if size < _HEADER.size:
        raise ArtifactError(f"'{path}' is truncated: {size} bytes, shorter than the header")
    _, format_version, _, total, meta_bytes, checksum = _HEADER.unpack_from(buffer)
    if size < total:
        raise ArtifactError(f"'{path}' is truncated: {size} of its {total} bytes")
    body = memoryview(buffer)[_HEADER.size :]
    if size > total or (format_version == FORMAT_VERSION and _checksum(_chunks([body])) != checksum):
        raise ArtifactError(f"'{path}' is corrupt: its checksum does not match its contents")
    try:
        meta = json.loads(bytes(buffer[_HEADER.size : _HEADER.size + meta_bytes]))
    except ValueError as error:
        raise ArtifactError(f"'{path}' is corrupt: unreadable metadata ({error})") from None
    found = {key: meta.get(key) for key in versions()}
    if format_version != FORMAT_VERSION or found != versions():
        made = ", ".join(f"{key} {value}" for key, value in found.items())
        ours = ", ".join(f"{key} {value}" for key, value in versions().items())
        raise ArtifactError(
            f"'{path}' was written by {made} (format {format_version}); this is {ours} "
            f"(format {FORMAT_VERSION}): compile the model again"
        )
    target = target_from_meta(meta["target"])
    if target.arch != host_arch():
        raise ArtifactError(
            f"'{path}' holds {target.arch} code (target '{target.name}', triple {target.triple}) and this host is "
            f"{host_arch()}: compile the model for this host"
        )
    missing = target.missing_on_host()
    if missing:
        raise ArtifactError(
            f"'{path}' holds code for target '{target.name}' (CPU {target.cpu}) and this host lacks "
            f"{', '.join(missing)}: compile the model on this host"
        )
    buffer.flags.writeable = False
    payload = buffer[align_up(_HEADER.size + meta_bytes) :]
    blobs = {}
    for name, blob in meta["blobs"].items():
        dtype = dtype_from_meta(blob["dtype"])
        count = int(np.prod(blob["shape"]))
        start = blob["offset"]
        blobs[name] = payload[start : start + count * dtype.itemsize].view(dtype).reshape(blob["shape"])
    return meta, blobs


def _chunks(pieces: Iterable[memoryview]) -> Iterator[list[memoryview]]:
    """`pieces` one after the other, cut into chunks of `_CHECKSUM_CHUNK` bytes (the last one shorter): each the
    list of its parts, views of the pieces (never copies)."""
    parts: list[memoryview] = []
    filled = 0
    for piece in pieces:
        while len(piece):
            parts.append(piece[: _CHECKSUM_CHUNK - filled])
            filled += len(parts[-1])
            piece = piece[len(parts[-1]) :]
            if filled == _CHECKSUM_CHUNK:
                yield parts
                parts, filled = [], 0
    if parts:
        yield parts


def _digest(parts: list[memoryview]) -> bytes:
    """The sha256 of `parts` one after the other."""
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part)
    return hasher.digest()


def _checksum(chunks: Iterable[list[memoryview]], write: Callable[[memoryview], object] | None = None) -> bytes:
    """The sha256 of the sha256 digests of `chunks` (`_chunks`), hashed on up to one thread per core (hashlib
    releases the GIL) while `write`, if given, takes their parts in order."""
    with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as executor:
        digests = []
        for parts in chunks:
            digests.append(executor.submit(_digest, parts))
            if write is not None:
                for part in parts:
                    write(part)
        return hashlib.sha256(b"".join(digest.result() for digest in digests)).digest()
