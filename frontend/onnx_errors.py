"""The ONNX importer's errors: every one a `ModelImportError` (a ValueError the CLI shows as one line)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import VerifyException


class ModelImportError(ValueError):
    """The model is malformed or cannot be imported (bad attribute, shape, dtype, ...)."""


class ExternalDataError(ModelImportError):
    """A tensor stored as external data cannot be read: its file is missing, outside the model's folder, or shorter
    than the tensor."""


class UnsupportedFeatureError(ModelImportError, NotImplementedError):
    """A valid model needing what minimlc lacks (e.g. an int64 output computed at run time)."""


class UnsupportedTypeError(UnsupportedFeatureError):
    """A graph input or output, or an output computed at run time, of a type minimlc lacks (e.g. float16, sequence)."""


class UnsupportedOpsError(UnsupportedFeatureError):
    """The model uses unsupported operators; `.ops` lists (op_type, opset, node names)."""

    def __init__(self, ops: list[tuple[str, int | None, list[str]]]):
        self.ops = ops
        kinds = "type" if len(ops) == 1 else "types"
        listing = "; ".join(f"{op} (opset {opset}): {', '.join(names)}" for op, opset, names in ops)
        super().__init__(f"model has {len(ops)} unsupported operator {kinds}: {listing}")


def verify_built(label: str, built: list[Operation], verified: set[Operation] | None = None) -> None:
    """Verify the ops one node became, so a model whose types no op accepts (a float64 weight beside a float32 input)
    is refused naming its node, adding them to `verified`:

        node 'mm' (MatMul): it makes an invalid graph.matmul: operand 'rhs' ... Expected attribute f32 but got f64
    """
    for op in built:
        try:
            op.verify()
        except VerifyException as error:
            reason = " ".join(str(error).split())
            raise ModelImportError(f"{label}: it makes an invalid {op.name}: {reason}") from None
    if verified is not None:
        verified.update(built)


def verify_imported(module: ModuleOp, verified: set[Operation]) -> None:
    """Verify the imported module as `module.verify()` does, but for the ops of its functions in `verified`, which
    `verify_built` verified as their nodes built them (the importer adds no op to them later, only discardable
    attributes): the module, its functions, and what no node built (inputs' weights, the return)."""
    try:
        module.verify(verify_nested_ops=False)
        for function in module.ops:
            function.verify(verify_nested_ops=False)
            for block in (block for region in function.regions for block in region.blocks):
                for op in block.ops:
                    if op not in verified:
                        op.verify()
    except VerifyException as error:
        raise ModelImportError(f"internal error: the imported module does not verify: {error}") from error


def ops_after(block: Block, last: Operation | None) -> list[Operation]:
    """The ops of `block` after `last` (all of them where `last` is None)."""
    if last is None:
        return list(block.ops)
    built = []
    while (last := last.next_op) is not None:
        built.append(last)
    return built
