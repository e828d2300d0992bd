"""`loop-compute-at`: compute a producer stage inside a loop of its consumer (TVM's `compute_at`, equal bounds).

`loop-compute-at{kernel=k stage=p at=c}` takes the loop nest `p` (a stage of kernel `k`: a top-level nest, directly
followed by the consumer's nest) and the loop `c` of the consumer nest at depth d (the consumer's outermost loop is
depth 0). The producer's d + 1 outermost loops must be perfectly nested and have the bounds of the consumer's loops
on the path down to `c`; the rest of the producer (the body of its loop at depth d) moves to the start of `c`'s body,
with the producer's loop indices replaced by the consumer's, and the producer's loops go away. So each iteration of
`c` first computes the slice of the intermediate it then reads: the slice stays in cache (or, with `loop-cache-write`
style local buffers, in registers) instead of making a round trip through memory.

Legality (checked; the pass fails naming the buffer otherwise): for every buffer one side writes and the other
accesses, at every depth i <= d there is a dimension that every producer access indexes by exactly its loop index at
depth i and every consumer access indexes by exactly the consumer's; and the consumer accesses the buffer only
inside `c`. Then an iteration of `c` reads only what the same iteration of the producer wrote.

    loop.for "i" %i = 0 to 4 { loop.for "j" %j = 0 to 8 { store f(x[i, j]), t[i, j] } }
    loop.for "r" %r = 0 to 4 { loop.for "s" %s = 0 to 8 { store g(t[r, s]), y[r, s] } }
    // loop-compute-at{kernel=k stage=i at=r}
    loop.for "r" %r = 0 to 4 {
      loop.for "j" %j = 0 to 8 { store f(x[r, j]), t[r, j] }
      loop.for "s" %s = 0 to 8 { store g(t[r, s]), y[r, s] }
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, find_kernel, find_loop, walk_ops
from minimlc.lowering.loop.loop_fuse import describe_bounds, loop_bounds

_Access = memref.LoadOp | memref.StoreOp


def _exact_dims(root: Operation, buffer: SSAValue, iv: SSAValue) -> set[int]:
    """The dimensions of `buffer` that every access under `root` indexes by exactly `iv`."""
    dims: set[int] | None = None
    for access in walk_ops(root):
        if isinstance(access, _Access) and access.memref is buffer:
            exact = {d for d, index in enumerate(access.indices) if affine_form(index) == {iv: 1}}
            dims = exact if dims is None else dims & exact
    return dims or set()


def _access_count(root: Operation, buffer: SSAValue) -> int:
    return sum(1 for access in walk_ops(root) if isinstance(access, _Access) and access.memref is buffer)


def _buffers(root: Operation) -> dict[SSAValue, bool]:
    """The buffers accessed under `root`, each with whether it is written there."""
    result: dict[SSAValue, bool] = {}
    for access in walk_ops(root):
        if isinstance(access, _Access):
            result[access.memref] = result.get(access.memref, False) or isinstance(access, memref.StoreOp)
    return result


@dataclass(frozen=True)
class LoopComputeAtPass(ModulePass):
    """Compute the stage whose outermost loop is `stage` inside loop `at` of the next stage of kernel `kernel`."""

    name = "loop-compute-at"

    kernel: str
    stage: str
    at: str

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(
            f"{self.name}: cannot compute '{self.stage}' at '{self.at}' of '{self.kernel}': {reason}"
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        producer, at = find_loop(kernel, self.name, self.stage), find_loop(kernel, self.name, self.at)
        consumer_path = [at]
        while isinstance(parent := consumer_path[0].parent_op(), loop.ForOp):
            consumer_path.insert(0, parent)
        if producer.next_op is not consumer_path[0]:
            raise self.fail("the stage must be the loop nest right before the one holding the 'at' loop")
        producer_path = [producer]
        for _ in consumer_path[1:]:
            inner = list(producer_path[-1].body.block.ops)
            if len(inner) != 1 or not isinstance(inner[0], loop.ForOp):
                raise self.fail(f"the stage is not perfectly nested {len(consumer_path)} loops deep")
            producer_path.append(inner[0])
        for ours, theirs in zip(producer_path, consumer_path):
            bounds = [loop_bounds(lp) for lp in (ours, theirs)]
            if bounds[0] != bounds[1]:
                raise self.fail(
                    f"loops '{ours.loop_name.data}' and '{theirs.loop_name.data}' have different bounds "
                    f"({describe_bounds(bounds[0])} and {describe_bounds(bounds[1])})"
                )
        self._check_dependences(producer_path, consumer_path)
        for ours, theirs in zip(producer_path, consumer_path):
            ours.induction_var.replace_all_uses_with(theirs.induction_var)
        first = at.body.block.first_op
        for inner in list(producer_path[-1].body.block.ops):
            inner.detach()
            at.body.block.insert_op_before(inner, first) if first is not None else at.body.block.add_op(inner)
        producer.detach()
        producer.erase()

    def _check_dependences(self, producer_path: list[loop.ForOp], consumer_path: list[loop.ForOp]) -> None:
        ours, theirs = _buffers(producer_path[0]), _buffers(consumer_path[0])
        inside_at = _buffers(consumer_path[-1])
        for buffer in ours.keys() & theirs.keys():
            if not (ours[buffer] or theirs[buffer]):
                continue
            name = buffer.name_hint or "a buffer"
            if buffer not in inside_at or _access_count(consumer_path[0], buffer) != _access_count(
                consumer_path[-1], buffer
            ):
                raise self.fail(f"'{name}' is accessed by the consumer outside '{self.at}'")
            for producer_loop, consumer_loop in zip(producer_path, consumer_path):
                producer_dims = _exact_dims(producer_path[0], buffer, producer_loop.induction_var)
                consumer_dims = _exact_dims(consumer_path[-1], buffer, consumer_loop.induction_var)
                if not producer_dims & consumer_dims:
                    raise self.fail(
                        f"'{name}' is not indexed by '{producer_loop.loop_name.data}' and "
                        f"'{consumer_loop.loop_name.data}' in the same dimension on both sides"
                    )
