"""What vector code can be generated, which the schedule rules and kernel fusion ask before they vectorize a loop and
the code generators then honour: a read with a stride up to `MAX_INTERLEAVE` along the vectorized loop becomes one
wide load and a shuffle (the vectorizer, `loop/expand.py`; `unit_stride` in `schedule/kernel_analysis.py` takes such
loops as vectorizable), and the math ops of `LIBM_FUNCTIONS` stay scalar calls of libm (`convert-to-llvm` lowers them
so, the vectorizer refuses them, `program/epilogue.py` folds no epilogue with one into a vector write-back).

    LIBM_FUNCTIONS[math.ErfOp]   # "erf": `erff` on f32, `erf` on f64, one element at a time
"""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.ir import Operation

MAX_INTERLEAVE = 4
"""The largest stride a read may have to be loaded whole and shuffled (`loop/expand.py`): one wider load and a
shuffle instead of a scalar load per lane."""

LIBM_FUNCTIONS: dict[type[Operation], str] = {
    math.AcoshOp: "acosh",
    math.AsinhOp: "asinh",
    math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt",
    math.ErfOp: "erf",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
}
"""Math ops lowered to scalar libm calls (`erf` -> `erff` for f32): they have no vector form."""
