"""`Dim`: an exact expression of a symbolic dimension, for the importer's symbolic mode (`onnx_symbolic`).

A dimension is an `int` or a `Dim`: a polynomial with integer coefficients over symbols (`batch`, `sequence`) and
opaque quotients (`floor((sequence + 1) / 2)`), kept in a normal form so that equal expressions compare equal.
Arithmetic with ints and Dims folds to an `int` whenever the result is constant; no sympy.

    batch, sequence = Dim.symbol("batch"), Dim.symbol("sequence")
    str(batch * sequence * 12)               # 'batch*sequence*12'
    (batch * sequence * 768) // 768 == batch * sequence
    ceil_div(sequence + 1, 2)                # an opaque quotient: 'ceil((sequence + 1)/2)'
    (batch * 4 - batch * 4) + 3              # 3 (an int)
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass

Monomial = tuple  # sorted tuple of factors (symbol names or Quotients); () is the constant term


@dataclass(frozen=True)
class Quotient:
    """An opaque `floor(numerator / denominator)` or `ceil(...)` that did not simplify."""

    numerator: Dim
    denominator: int | Dim
    ceil: bool

    def __str__(self) -> str:
        kind = "ceil" if self.ceil else "floor"
        return f"{kind}(({self.numerator})/{_factor_text(self.denominator)})"

    def evaluate(self, sizes: Mapping[str, int]) -> int:
        numerator, denominator = evaluate(self.numerator, sizes), evaluate(self.denominator, sizes)
        return -(-numerator // denominator) if self.ceil else numerator // denominator


def _factor_text(value: object) -> str:
    text = str(value)
    return f"({text})" if " " in text or "*" in text else text


def _sort_key(factor: str | Quotient) -> tuple[int, str]:
    return (0, factor) if isinstance(factor, str) else (1, str(factor))


@dataclass(frozen=True)
class Dim:
    """A symbolic dimension: `terms` maps each monomial (a sorted tuple of factors) to its non-zero coefficient,
    in a canonical order. Build with `Dim.symbol` and arithmetic; a constant result is an `int`, never a Dim."""

    terms: tuple[tuple[Monomial, int], ...]

    @staticmethod
    def symbol(name: str) -> Dim:
        """The dimension named `name` (an ONNX dim_param)."""
        return Dim((((name,), 1),))

    @staticmethod
    def of(terms: Mapping[Monomial, int]) -> int | Dim:
        """The normal form of a polynomial: an int if it is constant."""
        kept = {monomial: c for monomial, c in terms.items() if c}
        if not kept:
            return 0
        if set(kept) == {()}:
            return kept[()]
        ordered = sorted(kept.items(), key=lambda item: (len(item[0]) == 0, [_sort_key(f) for f in item[0]]))
        return Dim(tuple(ordered))

    @property
    def symbols(self) -> list[str]:
        """The symbol names it uses, in order of appearance."""
        found: list[str] = []
        for monomial, _ in self.terms:
            for factor in monomial:
                if isinstance(factor, str):
                    names = [factor]
                else:
                    names = [*_symbols(factor.numerator), *_symbols(factor.denominator)]
                found += [name for name in names if name not in found]
        return found

    def __add__(self, other: int | Dim) -> int | Dim:
        terms = dict(self.terms)
        for monomial, c in _terms(other).items():
            terms[monomial] = terms.get(monomial, 0) + c
        return Dim.of(terms)

    __radd__ = __add__

    def __neg__(self) -> int | Dim:
        return Dim.of({monomial: -c for monomial, c in self.terms})

    def __sub__(self, other: int | Dim) -> int | Dim:
        return self + (-other)

    def __rsub__(self, other: int | Dim) -> int | Dim:
        return (-self) + other

    def __mul__(self, other: int | Dim) -> int | Dim:
        terms: dict[Monomial, int] = {}
        for left, a in self.terms:
            for right, b in _terms(other).items():
                monomial = tuple(sorted((*left, *right), key=_sort_key))
                terms[monomial] = terms.get(monomial, 0) + a * b
        return Dim.of(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: int | Dim) -> int | Dim:
        return floor_div(self, other)

    def __rfloordiv__(self, other: int) -> int | Dim:
        return floor_div(other, self)

    def __str__(self) -> str:
        text = ""
        for monomial, c in self.terms:
            factors = [str(f) for f in monomial]
            magnitude = abs(c)
            body = "*".join(factors + ([str(magnitude)] if magnitude != 1 or not factors else []))
            if not text:
                text = f"-{body}" if c < 0 else body
            else:
                text += f" - {body}" if c < 0 else f" + {body}"
        return text

    def __repr__(self) -> str:
        return f"Dim({str(self)!r})"


def _terms(value: int | Dim) -> dict[Monomial, int]:
    return dict(value.terms) if isinstance(value, Dim) else ({(): int(value)} if value else {})


def _symbols(value: int | Dim) -> list[str]:
    return value.symbols if isinstance(value, Dim) else []


def _exact_quotient(numerator: int | Dim, denominator: int | Dim) -> int | Dim | None:
    """`numerator / denominator` when it divides exactly as polynomials (a monomial denominator), else None."""
    terms = _terms(denominator)
    if len(terms) != 1:
        return None if numerator != denominator else 1
    ((divisor, coefficient),) = terms.items()
    quotient: dict[Monomial, int] = {}
    for monomial, c in _terms(numerator).items():
        rest = list(monomial)
        for factor in divisor:
            if factor not in rest:
                return None
            rest.remove(factor)
        if c % coefficient:
            return None
        quotient[tuple(rest)] = c // coefficient
    return Dim.of(quotient)


def floor_div(numerator: int | Dim, denominator: int | Dim) -> int | Dim:
    """`floor(numerator / denominator)` of non-negative sizes (a positive denominator): exact where it divides,
    an opaque `Quotient` otherwise. ZeroDivisionError for a zero denominator."""
    return _divide(numerator, denominator, ceil=False)


def ceil_div(numerator: int | Dim, denominator: int | Dim) -> int | Dim:
    """`ceil(numerator / denominator)`, as `floor_div`."""
    return _divide(numerator, denominator, ceil=True)


def _divide(numerator: int | Dim, denominator: int | Dim, ceil: bool) -> int | Dim:
    if denominator == 0:
        raise ZeroDivisionError("symbolic division by zero")
    if isinstance(numerator, int) and isinstance(denominator, int):
        return -(-numerator // denominator) if ceil else numerator // denominator
    exact = _exact_quotient(numerator, denominator)
    if exact is not None:
        return exact
    return Dim(((((Quotient(Dim.of(_terms(numerator)), denominator, ceil),), 1)),))  # type: ignore[arg-type]


def evaluate(value: int | Dim, sizes: Mapping[str, int]) -> int:
    """The size of `value` for symbol `sizes`; KeyError naming a symbol `sizes` lacks."""
    if isinstance(value, int):
        return value
    total = 0
    for monomial, c in value.terms:
        product = c
        for factor in monomial:
            product *= sizes[factor] if isinstance(factor, str) else factor.evaluate(sizes)
        total += product
    return total


def derived_dim(text: str, symbols: Collection[str]) -> int | Dim | None:
    """The expression a dim_param spells over other `symbols` (`'past_sequence + sequence'`, `'2*batch'`): sums,
    differences and products of those names and integers. None for a plain name or anything else.

        derived_dim("past + sequence", {"past", "sequence"})   # Dim past + sequence
        derived_dim("sequence", {"sequence"})                  # None: a symbol of its own
    """
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.Name):
        return None
    try:
        return _expression(tree, symbols)
    except ValueError:
        return None


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _expression(node: ast.expr, symbols: Collection[str]) -> int | Dim:
    if isinstance(node, ast.Name) and node.id in symbols:
        return Dim.symbol(node.id)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_expression(node.operand, symbols)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_expression(node.left, symbols), _expression(node.right, symbols))
    raise ValueError(ast.dump(node))


def is_symbolic(value: object) -> bool:
    """Whether `value` is a symbolic dimension (not a plain integer)."""
    return isinstance(value, Dim)


def dim_text(value: int | Dim) -> int | str:
    """A dimension as reported (`TensorInfo.shape`): its size, or its expression's text (`'batch*sequence'`)."""
    return value if isinstance(value, int) else str(value)
