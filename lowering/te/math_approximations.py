"""exp, erf and tanh of f32 as straight-line arith ops (polynomials, range reduction, bit tricks), which LLVM vectorizes
where its `llvm.exp` becomes one libm call per lane and `erff` and `tanhf` have no vector form at all.

All are accurate to about 1.3 ulp over all of f32 (tests/lowering/test_te_expand_math.py compares them with numpy
and Python's `math.erf` in double precision over millions of points and the edge cases), infinities and NaN
included. The ops are created with xDSL's `ImplicitBuilder`, so they land wherever the caller builds:

    %y = exp(%x)   // t = x * log2(e) + 1.5 * 2^23 (n = round(x * log2 e) in t's low bits); r = x - n * ln 2;
                   // y = (1 + r + r^2 q(r)) * 2^(n >> 1) * 2^(n - (n >> 1))

Polynomial coefficients are fitted when this module is imported: weighted least squares on Chebyshev nodes (the
discrete approximation to the minimax polynomial, see Trefethen, "Approximation Theory and Approximation Practice",
ch. 16), in double precision, rounded to f32. Multiply-adds carry `contract`, so LLVM may fuse them; nothing carries
`reassoc`, which would undo the rounding trick.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f32, i32
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import SSAValue

_CONTRACT = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])


def fit(function: Callable[[float], float], lower: float, upper: float, degree: int, relative: bool) -> list[float]:
    """Monomial coefficients (lowest first) of the degree-`degree` polynomial nearest `function` on [lower, upper] in
    the least-squares sense on 4000 Chebyshev nodes, weighted by 1/|function| when `relative`."""
    nodes = np.cos(np.pi * (np.arange(4000) + 0.5) / 4000)
    points = (lower + upper) / 2 + (upper - lower) / 2 * nodes
    values = np.array([function(float(point)) for point in points])
    weights = 1 / np.abs(values) if relative else None
    return [float(np.float32(c)) for c in np.polynomial.polynomial.polyfit(points, values, degree, w=weights)]


_EXP_Q = fit(lambda r: (math.expm1(r) - r) / (r * r), -0.35, 0.35, 4, relative=True)
"""(e^r - 1 - r) / r^2 on |r| <= ln(2) / 2 (and a little more: the reduction's rounding)."""
_ERF_SMALL = fit(lambda s: math.erf(math.sqrt(s)) / math.sqrt(s) - 1, 1e-12, 1.0, 6, relative=False)
"""erf(a) / a - 1 as a polynomial in s = a^2, for |a| < 1: erf(a) = a + a * R(a^2), one rounding at the end."""
_ERF_HIGHEST = 3.92  # erf(a) rounds to 1 in f32 from here on
_ERF_LARGE_CENTRE = 2.25
_ERF_LARGE = fit(
    lambda t: math.erfc(t + _ERF_LARGE_CENTRE),
    1.0 - _ERF_LARGE_CENTRE,
    _ERF_HIGHEST - _ERF_LARGE_CENTRE,
    12,
    relative=False,
)
"""erfc(a) as a polynomial in t = a - 2.25, for 1 <= a <= 3.92: erf(a) = 1 - P(t) there, where erfc(a) < 0.16, so
its absolute error is what counts (a polynomial of degree 12, where erfc(a) = e^(-a^2) G(a) took e^(-a^2) and one
of degree 10: 12 ops more)."""

_TANH_SMALL_BELOW = 0.625
_TANH_SMALL = fit(lambda s: math.tanh(math.sqrt(s)) / math.sqrt(s) - 1, 1e-12, _TANH_SMALL_BELOW**2, 6, relative=False)
"""tanh(a) / a - 1 as a polynomial in s = a^2, for |a| < 0.625: tanh(a) = a + a * R(a^2), one rounding at the end."""
_TANH_HIGHEST = 9.0  # tanh(9) rounds to 1 in f32

_LOG2E = 1.4426950408889634
_ROUNDER = 12582912.0  # 1.5 * 2^23: adding it rounds |v| < 2^22 to an integer, kept in the low mantissa bits
_LN2_HIGH = 0.693359375  # ln 2 to 9 bits, so n * _LN2_HIGH is exact for |n| <= 2^15 (Cody and Waite)
_LN2_LOW = math.log(2) - _LN2_HIGH
_EXP_HIGHEST = 89.0  # e^89 overflows f32 however it is rounded
_EXP_LOWEST = -104.0  # e^-104 is under half the smallest subnormal


def _f(value: float) -> SSAValue:
    return arith.ConstantOp(FloatAttr(value, f32)).result


def _i(value: int) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(value, i32)).result


def _mul(a: SSAValue, b: SSAValue, contract: bool = True) -> SSAValue:
    return arith.MulfOp(a, b, _CONTRACT if contract else None).result


def _add(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.AddfOp(a, b, _CONTRACT).result


def _limit(x: SSAValue, predicate: str, bound: float) -> SSAValue:
    """`bound` where `x <predicate> bound` holds, else x: a compare and a select, so NaN passes through (min/max
    would need fix-ups for it)."""
    limit = _f(bound)
    return arith.SelectOp(arith.CmpfOp(x, limit, predicate).result, limit, x).result


def horner(coefficients: Sequence[float], t: SSAValue) -> SSAValue:
    """c0 + t * (c1 + t * (c2 + ...)), one multiply-add per coefficient."""
    value = _f(coefficients[-1])
    for coefficient in reversed(coefficients[:-1]):
        value = _add(_mul(value, t), _f(coefficient))
    return value


def _power_of_two(exponent: SSAValue) -> SSAValue:
    """2^exponent for an i32 exponent in [-126, 127]: the exponent field alone."""
    biased = arith.AddiOp(exponent, _i(127)).result
    return arith.BitcastOp(arith.ShLIOp(biased, _i(23)).result, f32).result


def exp(x: SSAValue) -> SSAValue:
    """e^x: n = round(x / ln 2), r = x - n ln 2 (two-part ln 2), e^r by a degree-6 polynomial, then the scale 2^n in
    two halves so that results between 2^-149 and 2^128 (subnormal or overflowing to inf) come out right."""
    x = _limit(_limit(x, "ogt", _EXP_HIGHEST), "olt", _EXP_LOWEST)
    polynomial, n = _exp_reduced(x)
    half = arith.ShRSIOp(n, _i(1)).result
    scaled = _mul(polynomial, _power_of_two(half), contract=False)
    return _mul(scaled, _power_of_two(arith.SubiOp(n, half).result), contract=False)


def _exp_normal(x: SSAValue) -> SSAValue:
    """e^x for x in [-87, 88], where e^x is a normal f32 (tanh's e^(2a), a <= 9): `exp` without its bounds, scaled
    by 2^n in one step: the same value (scaling by a power of two is exact between the normal bounds) in 10 ops
    fewer, a sixth of tanh's."""
    polynomial, n = _exp_reduced(x)
    return _mul(polynomial, _power_of_two(n), contract=False)


def _exp_reduced(x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(e^r, n) with e^x = e^r * 2^n: n = round(x / ln 2) as an i32, r = x - n ln 2 (two-part ln 2), e^r by a
    degree-6 polynomial; x within `exp`'s bounds."""
    rounder = _f(_ROUNDER)
    shifted = _add(_mul(x, _f(_LOG2E)), rounder)
    n = arith.SubfOp(shifted, rounder).result
    r = _add(_mul(n, _f(-_LN2_HIGH)), x)
    r = _add(_mul(n, _f(-_LN2_LOW)), r)
    polynomial = _add(_add(_mul(_mul(r, r), horner(_EXP_Q, r)), r), _f(1.0))
    bits = arith.BitcastOp(shifted, i32).result
    return polynomial, arith.SubiOp(bits, arith.BitcastOp(rounder, i32).result).result


def erf(x: SSAValue) -> SSAValue:
    """erf(x) = sign(x) * (a + a R(a^2)) for a = |x| < 1, sign(x) * (1 - P(a - 2.25)) above, a clamped to 3.92."""
    a = _limit(xmath.AbsFOp(x).result, "ogt", _ERF_HIGHEST)
    small = _add(_mul(a, horner(_ERF_SMALL, _mul(a, a, contract=False))), a)
    tail = horner(_ERF_LARGE, arith.SubfOp(a, _f(_ERF_LARGE_CENTRE)).result)
    large = arith.SubfOp(_f(1.0), tail).result
    magnitude = arith.SelectOp(arith.CmpfOp(a, _f(1.0), "olt").result, small, large).result
    return xmath.CopySignOp(magnitude, x).result


def tanh(x: SSAValue) -> SSAValue:
    """tanh(x) = sign(x) * (a + a R(a^2)) for a = |x| < 0.625, sign(x) * (1 - 2 / (e^(2a) + 1)) above (no cancellation
    there: the quotient is under 0.46), a clamped to 9."""
    a = _limit(xmath.AbsFOp(x).result, "ogt", _TANH_HIGHEST)
    small = _add(_mul(a, horner(_TANH_SMALL, _mul(a, a, contract=False))), a)
    grown = _add(_exp_normal(_add(a, a)), _f(1.0))
    large = arith.SubfOp(_f(1.0), arith.DivfOp(_f(2.0), grown).result).result
    magnitude = arith.SelectOp(arith.CmpfOp(a, _f(_TANH_SMALL_BELOW), "olt").result, small, large).result
    return xmath.CopySignOp(magnitude, x).result


QUARTER_POWERS = (0.25, 0.5, 0.75)
"""Constant exponents `quarter_power` computes by square roots (LRN's default beta is 0.75): `vsqrtps`, where `powf`
is one libm call per element (a tenth of ZFNet-512's time)."""


def quarter_power(x: SSAValue, exponent: float) -> SSAValue:
    """x^0.25, x^0.5 or x^0.75 by correctly rounded square roots (`sqrt(sqrt(x))`, `sqrt(x)`,
    `sqrt(x) * sqrt(sqrt(x))`: at most 2 ulp) with `pow`'s special values: a negative base gives NaN (the root's), and
    the base is taken as `x + 0.0` (-0 as +0) with -inf as +inf, since `pow(-0, e)` is +0 and `pow(-inf, e)` +inf."""
    is_minus_infinity = arith.CmpfOp(x, _f(-math.inf), "oeq").result
    base = arith.SelectOp(is_minus_infinity, _f(math.inf), arith.AddfOp(x, _f(0.0)).result).result
    root = xmath.SqrtOp(base).result
    if exponent == 0.5:
        return root
    fourth = xmath.SqrtOp(root).result
    return fourth if exponent == 0.25 else arith.MulfOp(root, fourth).result
