"""`callee` finds a call's kernel from an index of the module's functions: after the kernel is replaced (as
`default-schedule` undoes a schedule) or a function is added (`loop-pack`'s packing kernels), it finds the one
now in the module, never a detached one."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter

from minimlc.lowering.loop.analysis import nested_ops
from minimlc.lowering.loop.kernel_patterns import callee
from minimlc.lowering.pipeline import make_context

MODULE = """
builtin.module {
  func.func @main(%x: memref<4xf32>) attributes {minimlc.entry} {
    func.call @copy_0(%x) : (memref<4xf32>) -> ()
    func.return
  }
  func.func private @copy_0(%a: memref<4xf32>) {
    func.return
  }
}
"""


def test_callee_follows_a_replaced_kernel_and_an_added_function() -> None:
    module = Parser(make_context(), MODULE).parse_module()
    (call,) = nested_ops(module, func.CallOp)
    first = callee(module, call)
    assert first.sym_name.data == "copy_0"
    replacement = first.clone()
    Rewriter.replace_op(first, replacement)
    assert callee(module, call) is replacement
    added = replacement.clone()
    added.sym_name = type(added.sym_name)("copy_1")
    module.body.block.add_op(added)
    call.callee = type(call.callee)("copy_1")
    assert callee(module, call) is added
