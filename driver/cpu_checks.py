"""The load-time CPU check of a model's shared library: C code returning what the running CPU lacks of what the code
was built for, so that a library built for another CPU refuses to load (`minimlc_instance_load`) instead of dying of
an illegal instruction or, worse, computing with the wrong vector length.

- x86: each feature of the target that `__builtin_cpu_supports` knows (GCC's and Clang's names).
- AArch64: the instructions minimlc's kernels choose, from the kernel's auxiliary vector (`getauxval`): the dot
  product (`udot`, HWCAP_ASIMDDP), I8MM (`usdot`, HWCAP2_I8MM), BF16 (`bfdot`, HWCAP2_BF16), SVE (HWCAP_SVE) and
  SVE's vector length, which must be the built one exactly (code built with `-msve-vector-bits=256` is wrong at 512
  bits), read with `prctl(PR_SVE_GET_VL)`.
- RISC-V: the vector extension (HWCAP's `V` bit, which Linux sets only where it enables V) and VLEN at least the
  built minimum (`zvlNb`), read from the `vlenb` CSR.

    static const char *missing_cpu_feature(void) {
        unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
        if (!(hwcap & (1ul << 22))) return "sve";
        ...
        return 0;
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from minimlc.lowering.target import Target

CPU_CHECKABLE_FEATURES = frozenset(
    "sse4.2 avx avx2 fma bmi bmi2 popcnt avx512f avx512vl avx512bw avx512dq avx512cd avx512vnni avx512bf16 "
    "avx512vbmi avx512vbmi2 avx512ifma avx512bitalg avx512vpopcntdq gfni vaes vpclmulqdq".split()
)
"""x86 features of LLVM whose names `__builtin_cpu_supports` accepts too."""

_AARCH64_HWCAPS = {"dotprod": ("hwcap", 20), "i8mm": ("hwcap2", 13), "bf16": ("hwcap2", 14), "sve": ("hwcap", 22)}
"""AArch64 features minimlc's kernels choose, as Linux's auxiliary vector bits (HWCAP_ASIMDDP, HWCAP2_I8MM,
HWCAP2_BF16, HWCAP_SVE in <asm/hwcap.h>)."""
_PR_SVE_GET_VL = 51
_RISCV_VLENB_CSR = 0xC22


@dataclass(frozen=True)
class CpuCheck:
    """The C of one library's check: the headers it needs and the body of `missing_cpu_feature`."""

    includes: tuple[str, ...]
    body: str


def cpu_checks(target: Target) -> CpuCheck:
    """The statements returning the first thing `target`'s code needs that the running CPU lacks (a feature's name,
    or a sentence for a vector length), for each architecture as the module docstring says."""
    if target.arch == "aarch64":
        return _aarch64_checks(target)
    if target.arch == "riscv64":
        return _riscv_checks(target)
    features = [feature for feature in target.code_features if feature in CPU_CHECKABLE_FEATURES]
    checks = [f'    if (!__builtin_cpu_supports("{feature}")) return "{feature}";' for feature in features]
    return CpuCheck((), "\n".join(["    __builtin_cpu_init();", *checks]) if checks else "")


def _aarch64_checks(target: Target) -> CpuCheck:
    needed = target.aarch64_kernel_features
    if not needed:
        return CpuCheck((), "")
    lines = ["    unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);", "    (void)hwcap2;"]
    for feature in needed:
        word, bit = _AARCH64_HWCAPS[feature]
        lines.append(f'    if (!({word} & (1ul << {bit}))) return "{feature}";')
    if target.sve_bits:
        lines += [
            f"    int length = prctl({_PR_SVE_GET_VL}) & 0xffff; /* PR_SVE_GET_VL: the vector length in bytes */",
            f"    if (length != {target.sve_bits // 8}) {{",
            "        static char vectors[96];",
            f'        snprintf(vectors, sizeof vectors, "{target.sve_bits}-bit SVE vectors (its SVE vectors are %d '
            'bits)", 8 * length);',
            "        return vectors;",
            "    }",
        ]
    return CpuCheck(("<stdio.h>", "<sys/auxv.h>", "<sys/prctl.h>"), "\n".join(lines))


def _riscv_checks(target: Target) -> CpuCheck:
    if "v" not in target.code_features:
        return CpuCheck((), "")
    lines = [
        "    if (!(getauxval(AT_HWCAP) & (1ul << ('V' - 'A')))) return \"v\";",
        "    unsigned long vlenb;",
        f'    __asm__ volatile("csrr %0, {_RISCV_VLENB_CSR:#x}" : "=r"(vlenb)); /* vlenb: VLEN in bytes */',
        f"    if (8 * vlenb < {target.vector_bits}) {{",
        "        static char vectors[96];",
        f'        snprintf(vectors, sizeof vectors, "vectors of at least {target.vector_bits} bits (its VLEN is %lu)", '
        "8 * vlenb);",
        "        return vectors;",
        "    }",
    ]
    return CpuCheck(("<stdio.h>", "<sys/auxv.h>"), "\n".join(lines))
