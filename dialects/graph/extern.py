"""External functions: `graph.call_extern`, a call to a function registered by name outside the compiler.

The call is destination-passing at run time (as Relax's `call_dps_packed`): the compiled code allocates the results
and passes the operands' and results' buffers to the function, which fills the results. As in Relax, the function is
taken to be pure (its results depend on its operands alone), so `cse` merges equal calls and `dce` drops unused ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, var_operand_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import ELEMENT_TYPES, AnyTensor, element_type, shape_of
from minimlc.dialects.graph.core import GraphOp

__all__ = ["CallExternOp", "check_extern_call"]


def check_extern_call(op: IRDLOperation, callee: str, values: Sequence[SSAValue]) -> None:
    """Checks shared by the call ops of every level: a name, at least one result, static shapes of known types."""
    if not callee:
        raise VerifyException(f"{op.name}: the callee name is empty")
    if not op.results:
        raise VerifyException(f"{op.name} '{callee}': an external call needs at least one result to write")
    for value in values:
        if any(dim < 0 for dim in shape_of(value)):
            raise VerifyException(f"{op.name} '{callee}': a dynamic shape is not supported")
        if element_type(value) not in ELEMENT_TYPES:
            raise VerifyException(f"{op.name} '{callee}': element type {element_type(value)} is not supported")


@irdl_op_definition
class CallExternOp(GraphOp):
    """A call to the external function registered as `callee`, which writes the results:
    `%y = graph.call_extern "env.linear" (%x, %w, %b) : (tensor<1x784xf32>, tensor<128x784xf32>, tensor<128xf32>) -> tensor<1x128xf32>`.
    """

    name = "graph.call_extern"
    RUN_TIME_DIMS: ClassVar[bool] = True
    """Its verifier refuses a dynamic shape with its own message."""
    callee = prop_def(StringAttr)
    args = var_operand_def(AnyTensor)
    res = var_result_def(AnyTensor)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(operands=[args], result_types=[result_types], properties={"callee": StringAttr(callee)})

    def verify_(self) -> None:
        check_extern_call(self, self.callee.data, [*self.args, *self.res])
        for value in (*self.args, *self.res):
            assert isinstance(value.type, TensorType)


OPS = [CallExternOp]
