"""`lowering/generic/structural_key.py`: equal keys exactly for the same IR up to value names and the root's symbol."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.ir import Operation
from xdsl.parser import Parser

from minimlc.lowering.generic.structural_key import structural_key

TEMPLATE = """
func.func @{name}(%a: f32, %b: f32) -> f32 {{
  %c = arith.constant {constant} : f32
  %m = arith.mulf {operands} : f32
  %s = arith.addf %m, %c {flags}: f32
  func.return %s : f32
}}
"""


def function(name: str = "f", constant: str = "2.0", operands: str = "%a, %b", flags: str = "") -> Operation:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith):
        ctx.load_dialect(dialect)
    text = TEMPLATE.format(name=name, constant=constant, operands=operands, flags=flags)
    module = Parser(ctx, text).parse_module()
    return module.body.block.first_op.clone()


def test_copies_under_other_names_share_a_key() -> None:
    assert structural_key(function("f")) == structural_key(function("g"))


def test_a_constant_an_operand_order_or_a_flag_changes_the_key() -> None:
    key = structural_key(function())
    assert structural_key(function(constant="3.0")) != key
    assert structural_key(function(operands="%b, %a")) != key
    assert structural_key(function(operands="%a, %a")) != key
    assert structural_key(function(flags="fastmath<fast> ")) != key


def test_the_root_symbol_is_ignored_only_where_asked() -> None:
    assert structural_key(function("f"), ignored=()) != structural_key(function("g"), ignored=())


def test_outside_values_are_keyed_by_their_position_in_given() -> None:
    first, second = function(), function()
    inner = first.body.block.ops.first.next_op  # arith.mulf, whose operands come from outside it
    other = second.body.block.ops.first.next_op
    a, b = inner.operands
    c, d = other.operands
    assert structural_key(inner, (a, b)) == structural_key(other, (c, d))
    assert structural_key(inner, (a, b)) != structural_key(other, (d, c))
    assert structural_key(inner) == structural_key(other)  # values from outside, unnumbered, are all alike
