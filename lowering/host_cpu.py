"""What the host CPU is, as the operating system tells it (no LLVM): its cache sizes and its SVE vector length.
`lowering/target.py` builds the host's `Target` and checks that code built for a target runs here from these."""

from __future__ import annotations

import ctypes
from pathlib import Path

TYPICAL_CACHES = (32 << 10, 1 << 20, 32 << 20)
"""L1 data, L2 and last-level cache bytes assumed where the host's cannot be read (and for named CPUs)."""
_PR_SVE_GET_VL = 51


def host_caches() -> tuple[int, int, int]:
    """L1 data, L2, L3 sizes from sysfs (Linux), the typical sizes where it cannot be read."""
    sizes = dict(enumerate(TYPICAL_CACHES, start=1))
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


def host_sve_bits() -> int:
    """This process's SVE vector length in bits (Linux's `prctl(PR_SVE_GET_VL)`), 0 where there is no SVE."""
    try:
        length = ctypes.CDLL(None).prctl(_PR_SVE_GET_VL, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return 0
    return 8 * (length & 0xFFFF) if length > 0 else 0
