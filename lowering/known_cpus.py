"""The CPUs a target may name: x86 LLVM CPU names with their vector level, other architectures' triples, and what
is known of their CPUs (caches, dot-product extensions, SVE and RVV vector lengths). `target.py` builds a `Target`
from them:

    CPUS["znver4"].required_features   # (..., "avx512vnni", "avx512bf16"): code for it may use those
    TRIPLES["aarch64-linux-gnu"].base_features   # ("neon", "fp-armv8")
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Isa:
    """A vector instruction-set level: what a schedule can count on."""

    name: str
    vector_bits: int
    vector_registers: int
    required_features: tuple[str, ...]
    """LLVM feature names a CPU must have to run code built for this level."""


SSE = Isa("sse4.2", 128, 16, ("sse4.2",))
AVX2 = Isa("avx2", 256, 16, ("avx", "avx2", "fma"))
AVX512 = Isa("avx512", 512, 32, ("avx", "avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq"))
AVX2_VNNI = Isa("avx2", 256, 16, (*AVX2.required_features, "avxvnni"))
AVX512_VNNI = Isa("avx512", 512, 32, (*AVX512.required_features, "avx512vnni"))
AVX512_BF16 = Isa("avx512", 512, 32, (*AVX512_VNNI.required_features, "avx512bf16"))

CPUS: dict[str, Isa] = {
    "x86-64": Isa("sse2", 128, 16, ()),
    "x86-64-v2": SSE,
    "nehalem": SSE,
    "x86-64-v3": AVX2,
    "haswell": AVX2,
    "broadwell": AVX2,
    "skylake": AVX2,
    "alderlake": AVX2_VNNI,
    "znver1": AVX2,
    "znver2": AVX2,
    "znver3": AVX2,
    "x86-64-v4": AVX512,
    "skylake-avx512": AVX512,
    "cascadelake": AVX512_VNNI,
    "icelake-server": AVX512_VNNI,
    "cooperlake": AVX512_BF16,
    "sapphirerapids": AVX512_BF16,
    "emeraldrapids": AVX512_BF16,
    "graniterapids": AVX512_BF16,
    "znver4": AVX512_BF16,
    "znver5": AVX512_BF16,
}
"""LLVM CPU names a target may name, with their vector level (the host is read from the CPU itself)."""


@dataclass(frozen=True)
class Arch:
    """A CPU architecture named by its triple: what code for it may assume without `-mcpu`/`-mattr`."""

    name: str
    """The triple's first part, as `platform.machine()` names it."""
    default_cpu: str
    base_features: tuple[str, ...]
    """LLVM features every Linux CPU of the architecture has (the Debian ABI's baseline)."""
    vector_registers: int


TRIPLES: dict[str, Arch] = {
    "aarch64-linux-gnu": Arch("aarch64", "generic", ("neon", "fp-armv8"), 32),
    "riscv64-linux-gnu": Arch("riscv64", "generic-rv64", ("m", "a", "f", "d", "c"), 32),
}
"""The other CPUs' triples a target may name (their code runs under qemu-user, or on such a machine)."""

CPU_CACHES: dict[str, tuple[int, int, int]] = {
    "neoverse-n1": (64 << 10, 1 << 20, 32 << 20),
    "neoverse-n2": (64 << 10, 1 << 20, 32 << 20),
    "neoverse-v1": (64 << 10, 1 << 20, 32 << 20),
    "neoverse-v2": (64 << 10, 2 << 20, 64 << 20),
    "cortex-a72": (32 << 10, 1 << 20, 1 << 20),
    "cortex-a76": (64 << 10, 512 << 10, 2 << 20),
    "sifive-x280": (32 << 10, 256 << 10, 2 << 20),
    "spacemit-x60": (32 << 10, 512 << 10, 512 << 10),
}
"""L1 data, L2 and L3 bytes of the other architectures' CPUs known here (no L3: the L2 twice); others are typical."""

I8MM_CPUS = frozenset({"neoverse-v1", "neoverse-n2", "neoverse-v2", "cortex-a710", "cortex-x2", "apple-m2"})
"""AArch64 CPUs with the u8 x s8 dot product `usdot` (FEAT_I8MM); `-mattr=+i8mm` names it for others."""

BF16_CPUS = I8MM_CPUS
"""AArch64 CPUs with the bfloat16 dot product `bfdot` (FEAT_BF16, which every CPU above has); `-mattr=+bf16` names it
for others."""

DOTPROD_CPUS = frozenset({"neoverse-n1", "neoverse-e1", "cortex-a55", "cortex-a75", "cortex-a76", "cortex-a77",
                           "cortex-a78", "cortex-x1", "apple-m1"})  # fmt: skip
"""AArch64 CPUs with the dot product extension (`udot`/`sdot`) but no I8MM; `-mattr=+dotprod` names it for others."""

SVE_CPU_BITS = {"neoverse-v1": 256, "a64fx": 512}
"""AArch64 CPUs whose SVE vectors are wider than NEON's, and their width: code for them may assume it (the CPUs with
128-bit SVE gain nothing over NEON and are not listed); `-mattr=+sve -msve-vector-bits=N` states it for others."""

RVV_CPU_VLEN = {"sifive-x280": 512, "spacemit-x60": 256}
"""RISC-V CPUs with the vector extension, and their VLEN (`-mcpu` names them: no `-mattr=+v` needed)."""
