"""The compile cache: object code of models compiled before, keyed by everything that changes the code.

A session compiles a model once per machine: the next session of the same graph (in any process) loads the object
code, binds the weights and reruns the init entry, which refills the precomputed (packed) buffers. The key hashes
the imported graph-level module's IR (weights are handles there, so new weight values hit the cache), the weights'
names and shapes, the pipeline (opt level and extra passes), the target and this host's CPU name and features, and
the minimlc and llvmlite versions, and the contents of the compiler's own source (`compiler_fingerprint`: a
development checkout whose lowering changed must not reuse code the old one made). An entry is an `artifact` file
(object code, entry signature, statistics; no weights) written to a temporary name and renamed into place, so
concurrent writers never leave half a file; an entry that fails its checks is rebuilt with a warning.

A model that misses compiles through the kernel cache (`driver/kernel_cache.py`, entries in `kernels/`), which keeps
each kernel's object code across models; `kernel_context` is what, beside a kernel's IR, its key hashes. The cache
lives in `$MINIMLC_CACHE_DIR`, else `~/.cache/minimlc` (created user-only); `MINIMLC_CACHE=0` turns both off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from minimlc.lowering.target import Target, target_from_name
from minimlc.runtime import artifact
from minimlc.runtime.compiled import CompiledModel

if TYPE_CHECKING:
    from minimlc.frontend.onnx import ImportedModel
    from minimlc.lowering.pipeline import Pipeline

SUFFIX = ".mlc"


def cache_dir() -> Path:
    """Where entries live: `$MINIMLC_CACHE_DIR`, else `~/.cache/minimlc`."""
    return Path(os.environ.get("MINIMLC_CACHE_DIR") or Path.home() / ".cache" / "minimlc")


def cache_enabled() -> bool:
    """False when `MINIMLC_CACHE` is `0` (or `false`, `no`, `off`)."""
    return os.environ.get("MINIMLC_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_key(imported: ImportedModel, pipeline: Pipeline, opt_level: int, target: str) -> str:
    """The hex digest of everything that changes the code `compile_model` makes of `imported` (before it runs)."""
    host = target_from_name("host")
    parts: dict[str, Any] = {
        "module": str(imported.module),
        "weights": {name: list(np.shape(value)) for name, value in imported.weights.items()},
        "inputs": [artifact.tensor_meta(info) for info in imported.inputs],
        "pipeline": pipeline if isinstance(pipeline, int | str) else [str(item) for item in pipeline],
        "opt_level": opt_level,
        "target": target,
        "host": [host.cpu, host.features],
        "tuning": _tuning_fingerprint(pipeline, target),
        "compiler": compiler_fingerprint(),
        **artifact.versions(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def kernel_context(target: Target, passes: list[str], llvm_level: int) -> str:
    """What, beside its IR, changes a kernel's object code: the target and this host's CPU, the passes after the
    `program` stage, LLVM's opt level, the compiler's source and versions, xDSL's (hashed into each kernel-cache
    key)."""
    host = target_from_name("host")
    parts = {
        "target": artifact.target_meta(target),
        "host": [host.cpu, host.features],
        "passes": passes,
        "llvm_level": llvm_level,
        "compiler": compiler_fingerprint(),
        "xdsl": importlib.metadata.version("xdsl"),  # the kernels' printed IR
        **artifact.versions(),
    }
    return json.dumps(parts, sort_keys=True)


@functools.cache
def compiler_fingerprint() -> str:
    """The sha256 of the Python source of the rooms that turn an imported module into code (dialects, lowering,
    driver, runtime), read once per process (about 3 MB)."""
    from minimlc import dialects, driver, lowering, runtime

    digest = hashlib.sha256()
    for package in (dialects, lowering, driver, runtime):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _tuning_fingerprint(pipeline: Pipeline, target: str) -> str | None:
    """The best records a pipeline's `default-schedule{tuning-db=PATH}` applies (None without a database): a key
    must change when a new record wins."""
    from minimlc.lowering.pipeline import tuning_db_of
    from minimlc.lowering.strategy.tuning_db import TuningDatabase, target_key

    path = tuning_db_of(pipeline)
    return None if path is None else TuningDatabase(path).fingerprint(target_key(target_from_name(target)))


def compile_cached(
    imported: ImportedModel,
    pipeline: Pipeline | None,
    *,
    opt_level: int,
    target: str,
    cache: bool = True,
    isolated: bool = False,
) -> CompiledModel:
    """`compile_model` (`isolated`: see there), through the cache unless `cache` is False or the cache is off;
    `stats["cache_hit"]` is 1 when the code came from the cache. A miss compiles through the kernel cache
    (`driver/kernel_cache.py`): kernels another model compiled are loaded, not compiled."""
    from minimlc.driver.compiler import compile_model

    if not (cache and cache_enabled()):
        compiled = compile_model(imported, pipeline, opt_level=opt_level, target=target, isolated=isolated)
        compiled.stats["cache_hit"] = 0
        return compiled
    start = time.perf_counter()
    key = cache_key(imported, pipeline if pipeline is not None else opt_level, opt_level, target)
    path = cache_dir() / (key + SUFFIX)
    hit = _load_entry(path, imported)
    if hit is not None:
        elapsed = time.perf_counter() - start
        hit.compile_seconds = elapsed
        hit.stats.update(compile_seconds=elapsed, lower_seconds=0.0, codegen_seconds=0.0, load_seconds=elapsed)
        hit.stats["cache_hit"] = 1
        return hit
    compiled = compile_model(
        imported, pipeline, opt_level=opt_level, target=target, kernel_cache=True, isolated=isolated
    )
    compiled.stats["cache_hit"] = 0
    _store_entry(path, compiled, opt_level)
    return compiled


def entries(directory: Path | None = None, suffix: str = SUFFIX) -> list[Path]:
    """The cache's entries: the files ending in `suffix` in `directory` (default: the whole-model entries)."""
    directory = cache_dir() if directory is None else directory
    return sorted(directory.glob(f"*{suffix}")) if directory.is_dir() else []


def clear(directory: Path | None = None, suffix: str = SUFFIX) -> int:
    """Remove every entry `entries(directory, suffix)` lists; returns how many there were."""
    removed = entries(directory, suffix)
    for path in removed:
        path.unlink(missing_ok=True)
    return len(removed)


def _load_entry(path: Path, imported: ImportedModel) -> CompiledModel | None:
    if not path.exists():
        return None
    try:
        meta, blobs = artifact.read_file(path)
        if meta.get("kind") != "cache-entry":
            raise artifact.ArtifactError(f"'{path}' is not a compile-cache entry")
        return artifact.bind_code(meta, blobs, imported.weights)
    except (artifact.ArtifactError, KeyError, OSError) as error:
        warnings.warn(f"minimlc: rebuilding a bad compile-cache entry: {error}", RuntimeWarning, stacklevel=4)
        path.unlink(missing_ok=True)
        return None


def _store_entry(path: Path, compiled: CompiledModel, opt_level: int) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        meta = {"kind": "cache-entry", **artifact.code_meta(compiled, opt_level)}
        artifact.write_file(path, meta, artifact.code_blobs(compiled))
    except OSError as error:
        warnings.warn(f"minimlc: cannot write the compile cache ({error}); compiled without it", RuntimeWarning)
