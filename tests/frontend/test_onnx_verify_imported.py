"""`verify_imported`: the importer's last verification of the module skips the ops `verify_built` verified as their
nodes built them, and verifies every other op (a bad one is an internal error)."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Region

from minimlc.frontend.onnx_errors import ModelImportError, verify_imported


def module_with_a_bad_add() -> tuple[ModuleOp, arith.AddfOp]:
    """@main adding two i32s with `arith.addf` (which takes floats only)."""
    block = Block(arg_types=[i32])
    add = arith.AddfOp(block.args[0], block.args[0])
    block.add_ops([add, func.ReturnOp(add.result)])
    return ModuleOp([func.FuncOp("main", ([i32], [i32]), Region(block))]), add


def test_an_op_no_node_verified_is_verified() -> None:
    module, _ = module_with_a_bad_add()
    with pytest.raises(ModelImportError, match=r"^internal error: the imported module does not verify: operand 'lhs'"):
        verify_imported(module, set())


def test_an_op_verified_when_built_is_not_verified_again() -> None:
    module, add = module_with_a_bad_add()
    verify_imported(module, {add})  # the bad add passes: taken as verified


def test_the_function_itself_is_verified() -> None:
    """A return whose type is not the function's is caught though every op of the body is taken as verified."""
    module, add = module_with_a_bad_add()
    (main,) = module.ops
    assert isinstance(main, func.FuncOp)
    main.function_type = func.FunctionType.from_lists([i32, i32], [i32])
    with pytest.raises(ModelImportError, match=r"^internal error: the imported module does not verify"):
        verify_imported(module, {add, *main.body.block.ops})
