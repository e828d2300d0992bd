"""The target: the CPU compiled code runs on, and what schedules need to know about it (TVM's `Target`).

One description serves every stage: the schedule rules read the vector width, register count and cache sizes, the
JIT builds its LLVM target machine from the CPU name and features. A module carries its target as an attribute, so
every pass (and every re-parse of printed IR) sees the same one:

    builtin.module attributes {minimlc.target = "x86-64-v3"} { ... }

Without the attribute the target is the host. `mini-opt --mcpu NAME`, `minimlc compile/run --target NAME` and
`InferenceSession(..., target=NAME)` set it; names are LLVM CPU names (`host`, `x86-64-v3`, `skylake-avx512`,
`znver4`, ...), so a build for AVX2 can be made, and run, on an AVX-512 host.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import llvmlite.binding as llvm

if TYPE_CHECKING:  # the runtime checks targets of saved models without loading xDSL
    from xdsl.dialects.builtin import ModuleOp

TARGET_ATTR = "minimlc.target"
"""Module attribute naming the target CPU (absent: the host)."""


@dataclass(frozen=True)
class _Isa:
    """A vector instruction-set level: what a schedule can count on."""

    name: str
    vector_bits: int
    vector_registers: int
    required_features: tuple[str, ...]
    """LLVM feature names a CPU must have to run code built for this level."""


_SSE = _Isa("sse4.2", 128, 16, ("sse4.2",))
_AVX2 = _Isa("avx2", 256, 16, ("avx", "avx2", "fma"))
_AVX512 = _Isa("avx512", 512, 32, ("avx", "avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq"))
_AVX2_VNNI = _Isa("avx2", 256, 16, (*_AVX2.required_features, "avxvnni"))
_AVX512_VNNI = _Isa("avx512", 512, 32, (*_AVX512.required_features, "avx512vnni"))

_CPUS: dict[str, _Isa] = {
    "x86-64": _Isa("sse2", 128, 16, ()),
    "x86-64-v2": _SSE,
    "nehalem": _SSE,
    "x86-64-v3": _AVX2,
    "haswell": _AVX2,
    "broadwell": _AVX2,
    "skylake": _AVX2,
    "alderlake": _AVX2_VNNI,
    "znver1": _AVX2,
    "znver2": _AVX2,
    "znver3": _AVX2,
    "x86-64-v4": _AVX512,
    "skylake-avx512": _AVX512,
    "cascadelake": _AVX512_VNNI,
    "icelake-server": _AVX512_VNNI,
    "sapphirerapids": _AVX512_VNNI,
    "emeraldrapids": _AVX512_VNNI,
    "graniterapids": _AVX512_VNNI,
    "znver4": _AVX512_VNNI,
    "znver5": _AVX512_VNNI,
}
"""LLVM CPU names a target may name, with their vector level (the host is read from the CPU itself)."""

_TYPICAL_CACHES = (32 << 10, 1 << 20, 32 << 20)
"""L1 data, L2 and L3 bytes assumed for a named CPU (a host's are read from sysfs)."""


@dataclass(frozen=True)
class Target:
    """A CPU to compile for: its LLVM name and features, and the facts schedules are built from."""

    name: str
    """As the user named it: `host` or an LLVM CPU name."""
    cpu: str
    """The LLVM CPU name the code generator tunes for (the host's own name for `host`)."""
    features: str
    """LLVM feature string (`+avx2,+fma,...`): the host's for `host`, empty (the CPU's defaults) for a named CPU."""
    vector_bits: int
    vector_registers: int
    """Vector registers the register allocator may use: 32 with AVX-512VL, else 16."""
    required_features: tuple[str, ...]
    """LLVM feature names a CPU must have to run the code."""
    cache_bytes: tuple[int, int, int]
    """L1 data, L2 and L3 cache sizes in bytes (per core for L1/L2)."""

    @property
    def vector_lanes(self) -> int:
        """float32 lanes of one vector register: 16 with AVX-512, 8 with AVX2, else 4."""
        return self.vector_bits // 32

    @property
    def code_features(self) -> tuple[str, ...]:
        """The features code built for this target may use: for the host, every feature the host has (LLVM may
        emit any of them); for a named CPU, its vector level's."""
        if self.name == "host":
            return tuple(feature[1:] for feature in self.features.split(",") if feature.startswith("+"))
        return self.required_features

    @property
    def dot_u8s8_bits(self) -> int:
        """Width in bits of the u8 x s8 four-way dot product (`vpdpbusd`) the code may use: 512 with AVX512-VNNI on
        512-bit vectors, 256 with AVX-VNNI (or AVX512-VNNI and VL), else 0 (no such instruction)."""
        features = self.code_features
        if "avx512vnni" in features and self.vector_bits == 512:
            return 512
        if "avxvnni" in features or ("avx512vnni" in features and "avx512vl" in features):
            return 256
        return 0

    def missing_on_host(self) -> list[str]:
        """The features this target needs that the host CPU lacks (empty: code built for it runs here)."""
        host = _host_features()
        return [feature for feature in self.required_features if not host.get(feature)]

    def check_runs_on_host(self) -> None:
        """Raise ValueError naming the missing features if the host cannot run code built for this target."""
        missing = self.missing_on_host()
        if missing:
            raise ValueError(f"this host cannot run code for target '{self.name}': it lacks {', '.join(missing)}")

    def describe(self) -> str:
        """One line for logs and `--stats`: `x86-64-v3 (avx2, 8 f32 lanes, 16 vector registers)`."""
        isa = "avx512" if self.vector_bits == 512 else "avx2" if self.vector_bits == 256 else "sse"
        cpu = f"{self.name}={self.cpu}" if self.name != self.cpu else self.name
        return f"{cpu} ({isa}, {self.vector_lanes} f32 lanes, {self.vector_registers} vector registers)"


def known_targets() -> list[str]:
    """Every name `target_from_name` accepts."""
    return ["host", *_CPUS]


@functools.cache
def target_from_name(name: str = "host") -> Target:
    """The target of an LLVM CPU name, or of the host (`host`); raises ValueError naming the known CPUs."""
    if name == "host":
        return _host_target()
    isa = _CPUS.get(name)
    if isa is None:
        raise ValueError(f"unknown target CPU '{name}'; known: {', '.join(known_targets())}")
    if not llvm_knows_cpu(name):
        version = ".".join(map(str, llvm.llvm_version_info))
        raise ValueError(f"this LLVM ({version}, from llvmlite) does not know CPU '{name}': upgrade llvmlite")
    return Target(name, name, "", isa.vector_bits, isa.vector_registers, isa.required_features, _TYPICAL_CACHES)


def target_of(module: ModuleOp) -> Target:
    """The target a module is compiled for: its `minimlc.target` attribute, else the host."""
    from xdsl.dialects.builtin import StringAttr

    attr = module.attributes.get(TARGET_ATTR)
    return target_from_name(attr.data) if isinstance(attr, StringAttr) else target_from_name("host")


def set_target(module: ModuleOp, target: str | Target) -> None:
    """Pin `module` to a target (a name, checked, or a Target); `host` removes the attribute."""
    from xdsl.dialects.builtin import StringAttr

    name = target if isinstance(target, str) else target.name
    target_from_name(name)
    if name == "host":
        module.attributes.pop(TARGET_ATTR, None)
    else:
        module.attributes[TARGET_ATTR] = StringAttr(name)


def copy_target(source: ModuleOp, destination: ModuleOp) -> None:
    """Give `destination` (a trial or outlined module) the target of `source`."""
    if TARGET_ATTR in source.attributes:
        destination.attributes[TARGET_ATTR] = source.attributes[TARGET_ATTR]


@functools.cache
def initialize_llvm() -> None:
    """Register the host's LLVM target and its assembly printer, once: needed before any target machine is made."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def llvm_knows_cpu(cpu: str) -> bool:
    """Whether this process's LLVM knows CPU `cpu` (an older LLVM lacks newer CPUs; code for an unknown one aborts
    the process): LLVM only warns on stderr when a target machine is made for it, so stderr is read meanwhile."""
    initialize_llvm()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            llvm.Target.from_default_triple().create_target_machine(cpu=cpu)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return b"not a recognized processor" not in captured.read()


@functools.cache
def _host_features() -> dict[str, bool]:
    initialize_llvm()
    return dict(llvm.get_host_cpu_features().items())


def _host_target() -> Target:
    features = _host_features()
    if features.get("avx512f") and features.get("avx512vl"):
        isa = _AVX512
    elif features.get("avx2") and features.get("fma"):
        isa = _AVX2
    else:
        isa = _CPUS["x86-64"] if not features.get("sse4.2") else _SSE
    flattened = ",".join(("+" if on else "-") + name for name, on in features.items())
    return Target(
        "host",
        llvm.get_host_cpu_name(),
        flattened,
        isa.vector_bits,
        isa.vector_registers,
        isa.required_features,
        _host_caches(),
    )


def _host_caches() -> tuple[int, int, int]:
    """L1 data, L2, L3 sizes from sysfs (Linux), the typical sizes where it cannot be read."""
    sizes = dict(enumerate(_TYPICAL_CACHES, start=1))
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")) if root.exists() else []:
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or level not in sizes:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:], 1)
        digits = size.rstrip("KM")
        if digits.isdigit():
            sizes[level] = int(digits) * scale
    return sizes[1], sizes[2], sizes[3]
