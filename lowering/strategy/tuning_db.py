"""The tuning database: measured schedules and convolution algorithms as JSON lines, keyed by kernel structure (or
convolution shape) and target CPU: the measured decisions that override the rules' (TVM's `ApplyHistoryBest`), read
by two stages, `te-conv-winograd` and `default-schedule`.

One line per measured candidate (the tuner, `tuner/`, appends them); `default-schedule{tuning-db=PATH}` (as
`build_pipeline(tuning_db=PATH)` in `lowering/pipeline.py` sets it) applies the fastest record of each kernel and keeps
the default schedule for the others:

    {"key": "3f9c0a...", "target": "znver5", "rule": "gemm", "kernel": "gemm_0", "flops": 33554432,
     "config": {"mr": 6, "nr": 32, "kc": 256, "order": "k,i,j", "unroll": true, "pack": true, "parallel": true},
     "latency": 0.00112, "error": null, "model": "mlp.onnx", "cache": "warm"}

The key is a hash of the kernel's IR at the `schedule` stage (its signature and loop nest, not its name) and of its
space (which knobs, which values: weights packed or not), so models that share a kernel share its records. A
failed candidate has `latency` null and an `error`; so has a config that won alone and lost in the model (`minimlc
tune` checks its choices there, `tuner/verify.py`), and a config with a failed record is never applied.
`cache` says where its weights were when timed: `warm` (in the core's caches, as repeated calls leave them) or
`cold` (in memory), as the model's size made the tuner choose (`tuner/cache_flush.py`); latencies of two
modes are not comparable, so a kernel's best record is the fastest of the way its latest record was timed (a line
without the field is `warm`). A line that is not such a record raises `TuningDatabaseError` naming the file and line,
except a record cut short (a tuning killed or interrupted while appending it: the line stops inside the record): it
is skipped with a `TornRecordWarning` naming file and line, and the next record starts on a line of its own.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.strategy.conv import ConvShape
from minimlc.lowering.target import Target

KnobValue = int | bool | str
Config = dict[str, KnobValue]
"""Knob name -> the value chosen for it: a record's schedule (`schedule/space.py` draws them from its knobs)."""


class ConfigSpace(Protocol):
    """What the database reads of a kernel's space of schedules (`schedule/space.py`'s `Space`)."""

    def fits(self, config: Config) -> bool: ...

    def describe(self) -> list[dict[str, Any]]: ...


class TuningDatabaseError(DiagnosticException, ValueError):
    """A tuning database that cannot be read: a line that is not a record, or a file that is not readable. A
    diagnostic, so that `mini-opt -p 'default-schedule{tuning-db=...}'` reports it as the pass's failure."""


class TornRecordWarning(UserWarning):
    """A line of a tuning database is a record cut short (see the module docstring): skipped."""


@dataclass(frozen=True)
class Record:
    """One measured candidate: which kernel (key, target), which config, and its latency in seconds (None: failed)."""

    key: str
    target: str
    rule: str
    kernel: str
    flops: int
    config: Config
    latency: float | None
    error: str | None = None
    model: str = ""
    cache: str = "warm"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


_FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "target": (str,),
    "rule": (str,),
    "kernel": (str,),
    "flops": (int,),
    "config": (dict,),
    "latency": (float, int, type(None)),
    "error": (str, type(None)),
    "model": (str,),
    "cache": (str,),
}
CACHE_MODES = ("warm", "cold")
"""Where a record's weights were when it was timed (`tuner/cache_flush.py`)."""


def kernel_key(kernel: func.FuncOp, space: ConfigSpace) -> str:
    """The structural key of an unscheduled kernel: a hash of its signature, body and space (not its name)."""
    text = f"{kernel_structure(kernel)}\n{json.dumps(space.describe(), sort_keys=True)}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def kernel_structure(kernel: func.FuncOp) -> str:
    """`kernel` printed under a fixed name, without attributes: equal for kernels of the same signature and body."""
    copy = kernel.clone()
    copy.sym_name = StringAttr("kernel")
    copy.attributes.clear()
    return str(copy)


ALGORITHM_RULE = "conv-algorithm"
"""The rule of a record that measured a convolution algorithm (config `{"algorithm": "winograd"}` or `"direct"`):
`te-conv-winograd{tuning-db}` takes the faster of a shape's records (`tuner/algorithms.py` writes them)."""


def algorithm_key(shape: ConvShape) -> str:
    """The key of a stride-1 3x3 convolution's algorithm records: `conv3x3:1x64x56x56->64` (its shape, readable)."""
    return f"conv3x3:{shape.batch}x{shape.in_channels}x{shape.out_height}x{shape.out_width}->{shape.out_channels}"


def target_key(target: Target) -> str:
    """The CPU records are measured on: its LLVM name (`znver5`, `emeraldrapids`, `x86-64-v3`)."""
    return target.cpu


def _parse(line: str, path: Path, number: int) -> Record | None:
    """The record on line `number` of `path`; None for a record cut short."""
    where = f"{path}:{number}"
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as error:
        if cut_short(line):
            return None
        raise TuningDatabaseError(f"{where}: not a JSON line ({error.msg} at column {error.colno})") from None
    if not isinstance(value, dict):
        raise TuningDatabaseError(f"{where}: expected a JSON object, got {type(value).__name__}")
    missing = [name for name in _FIELDS if name not in value and name not in ("error", "model", "cache")]
    if missing:
        raise TuningDatabaseError(f"{where}: record lacks field(s) {', '.join(missing)}")
    for name, types in _FIELDS.items():
        if name in value and (not isinstance(value[name], types) or isinstance(value[name], bool)):
            raise TuningDatabaseError(f"{where}: field '{name}' is {value[name]!r}, not a {types[0].__name__}")
    if value.get("cache", "warm") not in CACHE_MODES:
        raise TuningDatabaseError(f"{where}: field 'cache' is {value['cache']!r}, not one of {', '.join(CACHE_MODES)}")
    latency = value["latency"]
    if latency is not None and (not math.isfinite(latency) or latency <= 0):
        raise TuningDatabaseError(f"{where}: latency {latency!r} is not a positive number of seconds")
    return Record(**{name: value[name] for name in _FIELDS if name in value})


_PARTIAL_TOKEN = re.compile(r"t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|-|[.eE][-+]?|u[0-9a-fA-F]{0,4}")
"""The start of a literal, of a number's fraction or exponent, or of a `\\uXXXX` escape: where a cut line may stop."""


def cut_short(line: str) -> bool:
    """Whether `line` is the beginning of a JSON object whose end is missing, as a write cut short leaves a record:
    `cut_short('{"key": "3f9c')` is True, `cut_short('{not json')` and `cut_short('{"key": 1,,}')` False (corrupt:
    no JSON begins so). The decoder fails at the end of such a line, or at a string or token the end cuts."""
    if not line.lstrip().startswith("{"):
        return False
    try:
        json.loads(line)
    except json.JSONDecodeError as error:
        rest = line[error.pos :]
        return rest == "" or error.msg.startswith("Unterminated string") or bool(_PARTIAL_TOKEN.fullmatch(rest))
    return False


_WARNED: set[tuple[str, int, str]] = set()
"""(file, line number, line) of each record cut short warned about: a tuning reads its database many times."""


def _warn_cut_short(path: Path, number: int, line: str) -> None:
    """A `TornRecordWarning` for `line`, line `number` of `path`, once per process."""
    key = (str(path.resolve()), number, line)
    if key not in _WARNED:
        _WARNED.add(key)
        message = f"{path}:{number}: skipped a record cut short (a tuning stopped while writing it)"
        warnings.warn(message, TornRecordWarning, stacklevel=3)


class TuningDatabase:
    """The records of one JSON-lines file (missing: empty), read once; `add` appends to the file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records: list[Record] = []
        if self.path.exists():
            try:
                text = self.path.read_text()
            except (OSError, UnicodeDecodeError) as error:
                raise TuningDatabaseError(f"{self.path}: cannot read the tuning database ({error})") from None
            lines = text.splitlines()
            parsed = {n: _parse(line, self.path, n) for n, line in enumerate(lines, 1) if line.strip()}
            self.records = [record for record in parsed.values() if record is not None]
            for number in (n for n, record in parsed.items() if record is None):
                _warn_cut_short(self.path, number, lines[number - 1])

    def add(self, record: Record) -> None:
        """Append `record` to the file (created with its folder if missing), on a line of its own even after a
        record cut short."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as file:  # appends, wherever it reads
            size = file.seek(0, os.SEEK_END)
            if size:
                file.seek(size - 1)
                if file.read(1) != b"\n":  # the end of a record cut short
                    file.write(b"\n")
            file.write(record.to_json().encode() + b"\n")
        self.records.append(record)

    def records_for(self, key: str, target: str, cache: str | None = None) -> list[Record]:
        """Every record of kernel `key` on `target` (timed the `cache` way, if given), in file order."""
        return [r for r in self.records if r.key == key and r.target == target and cache in (None, r.cache)]

    def best(self, key: str, target: str, space: ConfigSpace | None = None) -> Record | None:
        """The fastest successful record of kernel `key` on `target` (the first of equals) among those timed the way
        its latest record was, leaving out configs that also have a failed record (rejected in the model) and, given
        the kernel's `space`, configs outside it (a database written by a version whose knobs differed); or None."""
        records = self.records_for(key, target)
        if not records:
            return None
        failed = {config_id(r.config) for r in records if r.latency is None}
        measured = [
            r
            for r in records
            if r.latency is not None
            and r.cache == records[-1].cache
            and config_id(r.config) not in failed
            and (space is None or space.fits(r.config))
        ]
        return min(measured, key=lambda r: r.latency or 0.0) if measured else None

    def fingerprint(self, target: str) -> str:
        """A hash of the best record of every kernel on `target`: what applying the database changes."""
        best = {r.key: self.best(r.key, target) for r in self.records if r.target == target}
        chosen = sorted((key, config_id(r.config)) for key, r in best.items() if r is not None)
        return hashlib.sha256(json.dumps(chosen).encode()).hexdigest()


def config_id(config: Config) -> str:
    """A config as canonical text: a dict key, a record's identity."""
    return json.dumps(config, sort_keys=True)
