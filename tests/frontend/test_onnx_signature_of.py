"""`signature_of` (frontend/onnx_fold.py): a converter's or evaluator's signature read once, by identity."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from minimlc.frontend.onnx_fold import signature_of


@dataclass
class Converter:
    """A callable dataclass holding a dict: unhashable, as some converters are."""

    table: dict[str, int] = field(default_factory=dict)

    def __call__(self, ctx: object, x: object, *, axis: int = 0) -> object:
        return x


def two_inputs(ctx: object, a: object, b: object) -> object:
    return a


def test_the_signature_is_inspect_s_and_read_once() -> None:
    first = signature_of(two_inputs)
    assert first == inspect.signature(two_inputs)
    assert signature_of(two_inputs) is first


def test_unhashable_converters_are_told_apart_by_identity() -> None:
    one, other = Converter(), Converter({"a": 1})
    assert list(signature_of(one).parameters) == ["ctx", "x", "axis"]
    assert signature_of(other) is not signature_of(one)
    assert signature_of(other) == signature_of(one)
