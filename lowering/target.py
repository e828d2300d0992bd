"""The target: the CPU compiled code runs on, and what schedules need to know about it (TVM's `Target`).

One description serves every stage: the schedule rules read the vector width, register count and cache sizes, the
JIT builds its LLVM target machine from the CPU name and features. A module carries its target as an attribute, so
every pass (and every re-parse of printed IR) sees the same one:

    builtin.module attributes {minimlc.target = "x86-64-v3"} { ... }

Without the attribute the target is the host. `mini-opt --mcpu NAME`, `minimlc compile/run/build --target NAME` and
`InferenceSession(..., target=NAME)` set it. A name is an x86 LLVM CPU name (`host`, `x86-64-v3`, `skylake-avx512`,
`znver4`, ...: the host's triple), so a build for AVX2 can be made, and run, on an AVX-512 host; or another CPU's
triple, with llc's options (code for it is built, by `minimlc build`, never run in this process):

    aarch64-linux-gnu                               NEON, 128-bit vectors, 32 registers
    aarch64-linux-gnu -mcpu=neoverse-v1             tuned for that CPU, its caches, its 256-bit SVE
    aarch64-linux-gnu -mattr=+sve -msve-vector-bits=512   SVE of a stated vector length
    riscv64-linux-gnu -mattr=+v,+zvl256b            RVV with VLEN 256 (no zvl: 128-bit vectors)

    builtin.module attributes {minimlc.target = "aarch64-linux-gnu -mcpu=neoverse-v1"} { ... }
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from minimlc.lowering.host_cpu import TYPICAL_CACHES, host_caches, host_sve_bits
from minimlc.lowering.known_cpus import (
    AVX2,
    AVX512,
    BF16_CPUS,
    CPU_CACHES,
    CPUS,
    DOTPROD_CPUS,
    I8MM_CPUS,
    RVV_CPU_VLEN,
    SSE,
    SVE_CPU_BITS,
    TRIPLES,
)

if TYPE_CHECKING:  # the runtime checks targets of saved models without loading xDSL; llvmlite: `initialize_llvm`
    import llvmlite.binding as llvm
    from xdsl.dialects.builtin import ModuleOp


class TargetNotRunnableError(ValueError):
    """Code for a target cannot run on this host (another architecture, or features the host lacks)."""


BF16_FEATURES = "x86: avx512bf16; AArch64: bf16"
"""The CPU features a bfloat16 build needs (`Target.dot_bf16_bits`), as refusals name them."""

TARGET_ATTR = "minimlc.target"
"""Module attribute naming the target CPU (absent: the host)."""


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
    triple: str
    """The LLVM triple code is built for: the host's for `host` and the x86 CPU names, else the one named."""

    @property
    def arch(self) -> str:
        """The triple's architecture, as `platform.machine()` names it: `x86_64`, `aarch64`, `riscv64`."""
        return self.triple.split("-", 1)[0]

    @property
    def is_x86(self) -> bool:
        """Whether code for this target is x86-64 (may use `llvm.x86.*` intrinsics)."""
        return self.arch == "x86_64"

    @property
    def data_layout(self) -> str:
        """LLVM's data layout string for the triple (what the IR text declares)."""
        return _data_layout(self.triple)

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
        512-bit vectors, 256 with AVX-VNNI (or AVX512-VNNI and VL), 128 on AArch64 with I8MM (`usdot`), else 0 (no
        such instruction: the portable expansion)."""
        features = self.code_features
        if self.arch == "aarch64":  # `usdot` (FEAT_I8MM) on 128-bit NEON vectors
            return 128 if self._aarch64_has("i8mm", I8MM_CPUS) else 0
        if not self.is_x86:
            return 0
        if "avx512vnni" in features and self.vector_bits == 512:
            return 512
        if "avxvnni" in features or ("avx512vnni" in features and "avx512vl" in features):
            return 256
        return 0

    @property
    def dot_u8s8_madd_bits(self) -> int:
        """Width in bits of the exact two-`vpmaddwd` form of the u8 x s8 dot product (`lowering/llvm/dot_product.py`):
        256 on x86 with AVX2 but no VNNI, else 0."""
        return 256 if self.is_x86 and not self.dot_u8s8_bits and "avx2" in self.code_features else 0

    @property
    def dot_u8s8_udot_bits(self) -> int:
        """Width in bits of the exact `udot` form of the u8 x s8 dot product (`lowering/llvm/dot_product.py`): 128 on
        AArch64 with the dot product extension (neoverse-n1, cortex-a76, `-mattr=+dotprod`) but no I8MM, else 0."""
        if self.arch != "aarch64" or self.dot_u8s8_bits:
            return 0
        return 128 if self._aarch64_has("dotprod", DOTPROD_CPUS | I8MM_CPUS) else 0

    @property
    def dot_u8s8_lanes(self) -> int:
        """i32 lanes of the int8 dot-product layout: 4 on AArch64 (NEON `usdot`/`udot`, SVE or not), else f32's."""
        return 4 if self.arch == "aarch64" else self.vector_lanes

    @property
    def has_fast_dot_u8s8(self) -> bool:
        """Whether a vector `llvmx.dot_u8s8` beats widening to i32: one instruction per piece (`dot_u8s8_bits`), the
        `vpmaddwd` pair (`dot_u8s8_madd_bits`) or the `udot` form (`dot_u8s8_udot_bits`); int8 kernels then take the
        dot-product layout."""
        return bool(self.dot_u8s8_bits or self.dot_u8s8_madd_bits or self.dot_u8s8_udot_bits)

    @property
    def dot_bf16_bits(self) -> int:
        """Width in bits of the bfloat16 pair dot product (`llvmx.dot_bf16`) the code may use: 512 with AVX512-BF16 on
        512-bit vectors (`vdpbf16ps`), 256 with AVX512-BF16 and VL on narrower ones, 128 on AArch64 with BF16
        (`bfdot`), else 0: no such instruction, so no bfloat16 build (`precision="bf16"` is refused)."""
        if self.arch == "aarch64":
            return 128 if self._aarch64_has("bf16", BF16_CPUS) else 0
        features = self.code_features
        if not self.is_x86 or "avx512bf16" not in features:
            return 0
        return 512 if self.vector_bits == 512 else 256 if "avx512vl" in features else 0

    @property
    def sve_bits(self) -> int:
        """The fixed SVE vector width code may assume (AArch64 with SVE wider than NEON: neoverse-v1's 256, or
        `-msve-vector-bits`), else 0; it is the target's `vector_bits`, and functions carry `vscale_range(N,N)`
        (`sve_vscale`) so that LLVM lowers vectors of that width to predicated SVE."""
        return self.vector_bits if self.arch == "aarch64" and self.vector_bits > 128 else 0

    @property
    def sve_vscale(self) -> int:
        """`vscale` (SVE bits / 128) of the `vscale_range(N,N)` every function built for this target carries, else 0."""
        return self.sve_bits // 128

    @property
    def aarch64_kernel_features(self) -> tuple[str, ...]:
        """The AArch64 features whose instructions minimlc's kernels choose (`dotprod`: `udot`, `i8mm`: `usdot`,
        `bf16`: `bfdot`, `sve`), which code built for this target needs beyond the architecture; () for other
        architectures."""
        if self.arch != "aarch64":
            return ()
        chosen = (
            ("dotprod", self.dot_u8s8_udot_bits),
            ("i8mm", self.dot_u8s8_bits),
            ("bf16", self.dot_bf16_bits),
            ("sve", self.sve_bits),
        )
        return tuple(feature for feature, used in chosen if used)

    def _aarch64_has(self, feature: str, cpus: frozenset[str]) -> bool:
        """Whether this AArch64 target has `feature`: named by `-mattr=+F` or implied by its CPU (and not `-F`)."""
        if f"-{feature}" in self.features.split(","):
            return False
        return feature in self.code_features or self.cpu in cpus

    def missing_on_host(self) -> list[str]:
        """The features this target needs that the host CPU lacks (empty: code built for it runs here); for another
        architecture, the architecture itself."""
        if self.arch != host_arch():
            return [self.arch]
        host = _host_features()
        needed = dict.fromkeys((*self.required_features, *self.aarch64_kernel_features))  # `-mattr=+F` names F twice
        missing = [feature for feature in needed if not host.get(feature)]
        if self.sve_bits and not missing and (length := host_sve_bits()) != self.sve_bits:
            missing.append(f"{self.sve_bits}-bit SVE vectors (the host's are {length} bits)")
        return missing

    def check_runs_on_host(self) -> None:
        """Raise `TargetNotRunnableError` if the host cannot run code built for this target: naming its architecture
        where it is another CPU's (such code can be built, not run in this process), else the features it lacks."""
        if self.arch != host_arch():
            raise TargetNotRunnableError(
                f"target '{self.name}' is {self.arch} code and this host is {host_arch()}: it can be built "
                "(minimlc build --target), not run in this process"
            )
        missing = self.missing_on_host()
        if missing:
            raise TargetNotRunnableError(
                f"this host cannot run code for target '{self.name}': it lacks {', '.join(missing)}"
            )

    def describe(self) -> str:
        """One line for logs and `--stats`: `x86-64-v3 (avx2, 8 f32 lanes, 16 vector registers)`."""
        if self.arch == "aarch64":
            isa = f"sve{self.sve_bits}" if self.sve_bits else "neon"
        elif self.arch == "riscv64":
            isa = "rvv" if "v" in self.required_features else "rv64gc"
        else:
            isa = "avx512" if self.vector_bits == 512 else "avx2" if self.vector_bits == 256 else "sse"
        named = self.name == self.cpu or f"-mcpu={self.cpu}" in self.name
        cpu = self.name if named else f"{self.name}={self.cpu}"
        return f"{cpu} ({isa}, {self.vector_lanes} f32 lanes, {self.vector_registers} vector registers)"


def known_targets() -> list[str]:
    """Every x86 CPU name and other CPU's triple `target_from_name` accepts (a triple also takes `-mcpu`/`-mattr`)."""
    return ["host", *CPUS, *TRIPLES]


@functools.cache
def target_from_name(name: str = "host") -> Target:
    """The target of an x86 LLVM CPU name, of the host (`host`), or of a triple with llc's options
    (`aarch64-linux-gnu -mcpu=neoverse-v1`); raises ValueError naming the known CPUs and triples."""
    llvm = initialize_llvm()
    if name == "host":
        return _host_target()
    if name.split(" ", 1)[0] in TRIPLES:
        return _triple_target(name)
    isa = CPUS.get(name)
    if isa is None:
        raise ValueError(
            f"unknown target CPU '{name}'; known: {', '.join(['host', *CPUS])}, or a triple "
            f"({', '.join(TRIPLES)}) with -mcpu=CPU and -mattr=+FEATURE,..."
        )
    _check_llvm_knows(name, llvm.get_default_triple())
    return Target(
        name, name, "", isa.vector_bits, isa.vector_registers, isa.required_features, TYPICAL_CACHES,
        llvm.get_default_triple(),
    )  # fmt: skip


def baseline_target() -> Target:
    """The target every CPU of the host's architecture runs (x86: `x86-64`; others: their triple, no `-mcpu`), for
    artifacts that hold no code."""
    for triple, arch in TRIPLES.items():
        if arch.name == host_arch():
            return _triple_target(triple)
    return target_from_name("x86-64")


def _triple_target(name: str) -> Target:
    """`TRIPLE [-mcpu=CPU] [-mattr=+F,-G,...] [-msve-vector-bits=N]`: a target of another architecture, named
    canonically."""
    triple, *options = name.split()
    arch = TRIPLES[triple]
    cpu, attrs, sve_bits = arch.default_cpu, list[str](), 0
    for option in options:
        key, _, value = option.partition("=")
        if key == "-mcpu" and value:
            cpu = value
        elif key == "-mattr" and value and all(item[:1] in "+-" and item[1:] for item in value.split(",")):
            attrs += value.split(",")
        elif key == "-msve-vector-bits" and arch.name == "aarch64" and value.isdigit():
            sve_bits = int(value)
        else:
            raise ValueError(
                f"target '{name}': cannot read '{option}'; expected -mcpu=CPU or -mattr=+FEATURE,..."
                + (" or -msve-vector-bits=N" if arch.name == "aarch64" else "")
            )
    canonical = triple
    if cpu != arch.default_cpu:
        _check_llvm_knows(cpu, triple)
        canonical += f" -mcpu={cpu}"
    if attrs:
        canonical += f" -mattr={','.join(attrs)}"
    base = [feature for feature in arch.base_features if f"-{feature}" not in attrs]
    enabled = [*base, *(item[1:] for item in attrs if item[0] == "+" and item[1:] not in base)]
    if cpu in RVV_CPU_VLEN and "v" not in enabled:
        enabled.append("v")
    vlens = [int(item[3:-1]) for item in enabled if re.fullmatch(r"zvl\d+b", item)]  # RVV's VLEN, where given
    vector_bits = max([128, RVV_CPU_VLEN.get(cpu, 128), *vlens, _sve_bits(name, cpu, attrs, sve_bits)])
    if sve_bits:
        canonical += f" -msve-vector-bits={sve_bits}"
    features = ",".join([f"+{feature}" for feature in base] + attrs)
    caches = CPU_CACHES.get(cpu, TYPICAL_CACHES)
    return Target(canonical, cpu, features, vector_bits, arch.vector_registers, tuple(enabled), caches, triple)


def _sve_bits(name: str, cpu: str, attrs: list[str], stated: int) -> int:
    """The fixed SVE width of an AArch64 target: `-msve-vector-bits=N` (which needs SVE: `-mattr=+sve` or a CPU of
    `SVE_CPU_BITS`), else its CPU's, none where `-mattr=-sve` turns SVE off."""
    has_sve = "-sve" not in attrs and (cpu in SVE_CPU_BITS or any(item in attrs for item in ("+sve", "+sve2")))
    if not stated:
        return SVE_CPU_BITS.get(cpu, 0) if has_sve else 0
    if stated not in (256, 512, 1024, 2048):  # LLVM's `vscale_range` takes powers of two
        raise ValueError(
            f"target '{name}': -msve-vector-bits={stated} is not a length LLVM fixes; expected 256, 512, 1024 or 2048"
        )
    if not has_sve:
        raise ValueError(f"target '{name}': -msve-vector-bits needs SVE: add -mattr=+sve or name a CPU with it")
    return stated


def _check_llvm_knows(cpu: str, triple: str) -> None:
    llvm = initialize_llvm()
    if not llvm_knows_cpu(cpu, triple):
        version = ".".join(map(str, llvm.llvm_version_info))
        if triple == llvm.get_default_triple():
            raise ValueError(f"this LLVM ({version}, from llvmlite) does not know CPU '{cpu}': upgrade llvmlite")
        arch = TRIPLES[triple].name
        known = ", ".join(name for name in CPU_CACHES if llvm_knows_cpu(name, triple))
        raise ValueError(f"LLVM {version} knows no {arch} CPU '{cpu}' (for {triple}); for example: {known}")


@functools.cache
def _data_layout(triple: str) -> str:
    return str(target_machine(target_from_name(triple if triple in TRIPLES else "host")).target_data)


def host_arch() -> str:
    """The host's architecture, as a triple names it (`x86_64`, `aarch64`)."""
    return initialize_llvm().get_default_triple().split("-", 1)[0]


def target_machine(target: Target, *, opt: int = 3, reloc: str = "default", jit: bool = False) -> llvm.TargetMachine:
    """A new LLVM target machine for `target`: its triple, CPU and features (RISC-V: the Linux ABI, `lp64d`)."""
    llvm = initialize_llvm()
    return llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu,
        features=target.features,
        opt=opt,
        reloc=reloc,
        codemodel="default" if reloc == "pic" else "jitdefault",
        jit=jit,
        abiname="lp64d" if target.arch == "riscv64" else "",
    )


def target_of(module: ModuleOp) -> Target:
    """The target a module is compiled for: its `minimlc.target` attribute, else the host."""
    from xdsl.dialects.builtin import StringAttr

    attr = module.attributes.get(TARGET_ATTR)
    return target_from_name(attr.data) if isinstance(attr, StringAttr) else target_from_name("host")


def set_target(module: ModuleOp, target: str | Target) -> None:
    """Pin `module` to a target (a name, checked, or a Target); `host` removes the attribute."""
    from xdsl.dialects.builtin import StringAttr

    name = target_from_name(target).name if isinstance(target, str) else target.name
    if name == "host":
        module.attributes.pop(TARGET_ATTR, None)
    else:
        module.attributes[TARGET_ATTR] = StringAttr(name)


def copy_target(source: ModuleOp, destination: ModuleOp) -> None:
    """Give `destination` (a trial or outlined module) the target of `source`."""
    if TARGET_ATTR in source.attributes:
        destination.attributes[TARGET_ATTR] = source.attributes[TARGET_ATTR]


@functools.cache
def initialize_llvm() -> ModuleType:
    """Register LLVM's targets (the host's and the other CPUs' it was built with) and their assembly printers,
    once: needed before any target machine is made. Returns `llvmlite.binding`, which loads here, at first use (35 ms
    that `mini-opt` runs asking LLVM nothing are spared)."""
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


@functools.cache
def llvm_knows_cpu(cpu: str, triple: str | None = None) -> bool:
    """Whether this process's LLVM knows CPU `cpu` for `triple` (default: the host's; an older LLVM lacks newer CPUs;
    code for an unknown one aborts the process): LLVM only warns on stderr when a target machine is made for it, so
    stderr is read meanwhile."""
    llvm = initialize_llvm()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            llvm.Target.from_triple(triple or llvm.get_default_triple()).create_target_machine(cpu=cpu)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return b"not a recognized processor" not in captured.read()


@functools.cache
def _host_features() -> dict[str, bool]:
    return dict(initialize_llvm().get_host_cpu_features().items())


def _host_target() -> Target:
    llvm, features = initialize_llvm(), _host_features()
    flattened = ",".join(("+" if on else "-") + name for name, on in features.items())
    if host_arch() != "x86_64":  # an AArch64 or RISC-V host: its triple's vector level, its own CPU and features
        base = _triple_target(next(triple for triple, arch in TRIPLES.items() if arch.name == host_arch()))
        enabled = tuple(name for name, on in features.items() if on)
        return dataclasses.replace(
            base, name="host", cpu=llvm.get_host_cpu_name(), features=flattened, required_features=enabled,
            cache_bytes=host_caches(), triple=llvm.get_default_triple(),
        )  # fmt: skip
    if features.get("avx512f") and features.get("avx512vl"):
        isa = AVX512
    elif features.get("avx2") and features.get("fma"):
        isa = AVX2
    else:
        isa = CPUS["x86-64"] if not features.get("sse4.2") else SSE
    return Target(
        "host", llvm.get_host_cpu_name(), flattened, isa.vector_bits, isa.vector_registers, isa.required_features,
        host_caches(), llvm.get_default_triple(),
    )  # fmt: skip
