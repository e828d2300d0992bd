"""`default-schedule`: choose and apply a schedule to every kernel still as te-to-loop left it.

Kernels are recognised by structure, not by name:

- **GEMM-like**: a sum reduction over one loop `k` whose update adds the product of two reads, one (A) indexed by
  the row loop `i` and `k`, the other (B) by `k` and the column loop `j`. Schedule: accumulate in the output
  (`loop-decompose-reduction`), split `i` by MR, `j` by NR (a multiple of the vector width) and `k` by KC, order
  `k_o, j_o, i_o, k_i, i_i, j_i`, pack B into `NR`-wide panels at load time when it is a weight, unroll `i_i`,
  vectorize `j_i` and keep the `MR x NR` tile in registers (`loop-cache-write` at `i_o`): a register-blocked
  micro-kernel streaming packed panels, as in BLIS. MR is the largest candidate that divides the rows and leaves
  the accumulators, B vectors and a broadcast within the host's vector registers.
- **Elementwise/injective** (no reduction): split the innermost loop by the vector width and vectorize it.

Each schedule is a list of primitive passes (`schedule_for` returns it as text, the trace `minimlc compile
--emit schedule` prints); replaying that list with `mini-opt -p` gives the same IR. A schedule that the vector code
generator cannot lower (non-contiguous accesses, say) is dropped, leaving the kernel to LLVM. Kernels with any
non-serial loop count as scheduled and are left alone, so the pass can run twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop_expand import expand_loops
from minimlc.lowering.loop_nest import loops_of
from minimlc.runtime.jit import HostInfo, host_info


def kernels_of(module: ModuleOp) -> list[func.FuncOp]:
    """The private kernel functions (the ones te-to-loop extracts) of `module`."""
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and op.sym_visibility is not None
        and op.sym_visibility.data == "private"
    ]


def schedule_for(module: ModuleOp, kernel: func.FuncOp, host: HostInfo) -> list[str]:
    """The primitive passes default-schedule applies to `kernel`, as pass-pipeline items (empty: leave it)."""
    loops = loops_of(kernel)
    if not loops or any(lp.kind.data != "serial" for lp in loops):
        return []
    name = kernel.sym_name.data
    gemm = _gemm_shape(kernel)
    if gemm is not None:
        return _gemm_schedule(module, name, gemm, host)
    if any(isinstance(op, loop.AllocOp) for op in kernel.walk()):
        return []
    innermost = loops[-1]
    lanes, trip, inner = host.vector_lanes, innermost.trip_count, innermost.loop_name.data
    if trip == lanes:
        return [f"loop-vectorize{{kernel={name} loop={inner}}}"]
    if trip % lanes:
        return []
    return [f"loop-split{{kernel={name} loop={inner} factor={lanes}}}", f"loop-vectorize{{kernel={name} loop={inner}_i}}"]


@dataclass
class _Gemm:
    rows: str
    cols: str
    depth: str
    m: int
    n: int
    k: int
    b_operand: int
    b_dim: int


def _gemm_shape(kernel: func.FuncOp) -> _Gemm | None:
    """The loops and B operand of a GEMM-like kernel, or None."""
    accs = [op for op in kernel.walk() if isinstance(op, loop.AllocOp) and op.scope.data == "local"]
    if len(accs) != 1:
        return None
    update = [op for op in kernel.walk() if isinstance(op, arith.AddfOp) and accs[0].result in _loaded(op)]
    if len(update) != 1:
        return None
    product = next((v.owner for v in update[0].operands if isinstance(v.owner, arith.MulfOp)), None)
    if product is None:
        return None
    reduction = update[0].parent_op()
    spatial = reduction.parent_op() if isinstance(reduction, loop.ForOp) else None
    rows = spatial.parent_op() if isinstance(spatial, loop.ForOp) else None
    if not isinstance(reduction, loop.ForOp) or not isinstance(spatial, loop.ForOp) or not isinstance(rows, loop.ForOp):
        return None
    k_iv, j_iv = reduction.induction_var, spatial.induction_var
    params = list(kernel.body.block.args)
    for read in (product.lhs.owner, product.rhs.owner):
        if isinstance(read, memref.LoadOp) and read.memref in params and set(read.indices) == {k_iv, j_iv}:
            return _Gemm(
                rows.loop_name.data,
                spatial.loop_name.data,
                reduction.loop_name.data,
                rows.trip_count,
                spatial.trip_count,
                reduction.trip_count,
                params.index(read.memref),
                list(read.indices).index(j_iv),
            )
    return None


def _loaded(op: arith.AddfOp) -> list[SSAValue]:
    return [v.owner.memref for v in op.operands if isinstance(v.owner, memref.LoadOp)]


def _gemm_schedule(module: ModuleOp, name: str, g: _Gemm, host: HostInfo) -> list[str]:
    lanes = host.vector_lanes
    nr = next((f for f in (2 * lanes, lanes) if g.n % f == 0), None)
    if nr is None:
        return []
    vectors = nr // lanes
    mr = next(f for f in (8, 6, 4, 3, 2, 1) if g.m % f == 0 and f * vectors + vectors + 1 <= host.vector_registers)
    kc = next((f for f in range(min(g.k, 256), 0, -1) if g.k % f == 0), g.k)
    i, j, k = g.rows, g.cols, g.depth
    steps = [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={j}_init factor={nr}}}",
        f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
        f"loop-split{{kernel={name} loop={i} factor={mr}}}",
        f"loop-split{{kernel={name} loop={j} factor={nr}}}",
        f"loop-split{{kernel={name} loop={k} factor={kc}}}",
        f"loop-reorder{{kernel={name} order={k}_o,{i}_o,{j}_o,{k}_i,{i}_i,{j}_i}}",
    ]
    if _is_weight_at_every_call(module, name, g.b_operand):
        steps.append(f"loop-pack{{kernel={name} operand={g.b_operand} dim={g.b_dim} factor={nr}}}")
    elif g.b_dim != 1:
        return []
    steps += [
        f"loop-unroll{{kernel={name} loop={i}_i}}",
        f"loop-vectorize{{kernel={name} loop={j}_i}}",
        f"loop-cache-write{{kernel={name} loop={j}_o accumulate=true}}",
    ]
    return steps


def _is_weight_at_every_call(module: ModuleOp, name: str, operand: int) -> bool:
    calls = [op for op in module.walk() if isinstance(op, func.CallOp) and op.callee.string_value() == name]
    return bool(calls) and all(
        isinstance(call.arguments[operand].owner, loop.WeightOp | loop.PrecomputeOp) for call in calls
    )


@dataclass(frozen=True)
class DefaultSchedulePass(ModulePass):
    """Apply the default schedule of its kind to every unscheduled kernel (see the module docstring)."""

    name = "default-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        host = host_info()
        for kernel in kernels_of(op):
            steps = schedule_for(op, kernel, host)
            if steps and _lowers(ctx, op, kernel, steps):
                apply_steps(ctx, op, steps)


def apply_steps(ctx: Context, module: ModuleOp, steps: list[str]) -> None:
    """Apply pass-pipeline items (`loop-split{kernel=k loop=i factor=8}`) to `module`."""
    from minimlc.lowering import get_all_passes

    registry = get_all_passes()
    for spec in parse_pipeline(",".join(steps)):
        registry[spec.name]().from_pass_spec(spec).apply(ctx, module)


def _lowers(ctx: Context, module: ModuleOp, kernel: func.FuncOp, steps: list[str]) -> bool:
    """True if `steps` apply to a copy of the kernel and its callers, and its vector code can be generated."""
    callers = [f.clone() for f in module.ops if isinstance(f, func.FuncOp) and f not in kernels_of(module)]
    trial = ModuleOp([kernel.clone(), *callers])
    try:
        apply_steps(ctx, trial, steps)
        expand_loops(trial)
    except DiagnosticException:
        return False
    return True
