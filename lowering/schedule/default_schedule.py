"""`default-schedule`: choose and apply a schedule to every kernel still as te-to-loop left it.

Kernels are recognised by structure, not by name:

- **GEMM-like**: a sum reduction over one loop `k` whose update adds the product of two reads, one (A) indexed by
  the row loop `i` and `k`, the other (B) by `k` and the column loop `j`. Schedule: accumulate in the output
  (`loop-decompose-reduction`), split `i` by MR, `j` by NR (a multiple of the vector width) and `k` by KC, order
  `k_o, j_o, i_o, k_i, i_i, j_i`, pack B into `NR`-wide panels at load time when it is a weight, unroll `i_i`,
  vectorize `j_i` and keep the `MR x NR` tile in registers (`loop-cache-write` at `i_o`): a register-blocked
  micro-kernel streaming packed panels, as in BLIS. MR is the largest candidate that divides the rows and leaves
  the accumulators, B vectors and a broadcast within the host's vector registers.
- **Elementwise/injective** (no reduction): split the innermost loop by the vector width and vectorize it, if
  every access walks its buffer's last dimension with unit stride (or not at all).
- **Direct convolution** (a sum of input x weight reads in which one output loop, the output channels, indexes the
  weight and not the input; see `_conv_shape`): vectorize over NR output channels (weights packed into NR-wide
  panels at load time, in the order the reduction loops walk them), register-block MR output columns, reduce with
  the input's innermost dimension (its channels) innermost, or outermost for deep panels under narrow tiles
  (`_channels_outermost`), and keep the MR x NR tile in registers (`loop-cache-write` at the column loop: the tile
  goes back to a channels-last output one vector per column, or to an NCHW one through a staging tile). With
  `graph-pad-conv` (no bounds checks in the body), `te-conv-layout` (channels-last input, unit-stride reduction)
  and `te-channels-last` (channels-last output) before it. The other convolution algorithm, im2col + GEMM, is
  chosen per shape before this pass (`te-conv-im2col`): it reaches this pass as a GEMM (the `conv_gemm` kernel).

- **Pooling and depthwise convolution** (a max or sum over a window of one input read, whose innermost output loop
  moves the read; for a depthwise convolution each tap times a weight read that loop does not move): accumulate
  in the output, move the window loops outside the width loop and make that loop one vector operation per window
  tap (see `_Pool.vectorize`), the row of outputs kept in a local tile (`loop-cache-write` at the row loop). With
  `graph-pad-max-pool` before it, padded max pools read plain affine coordinates; before this schedule each output
  was a serial chain of clamped scalar maxes, 10-35x ONNX Runtime's time on Inception v1's 3x3/1 pools.

**Parallelism**, after any of these (and for kernels none applies to: layout copies, pooling): in every top-level
loop nest with at least `PARALLEL_MIN_WORK` innermost iterations, the outermost loop with at least
`PARALLEL_MIN_TASKS` iterations becomes `parallel` (`loop-parallel`), if every store under it to a buffer the kernel
does not own indexes with its induction variable (distinct iterations write distinct elements; local scratch
buffers become private to each task in `loop-outline-parallel`). The search descends through a nest only while each
loop holds one loop, so one nest makes one dispatch per iteration of the loops around the chosen one: for GEMM the
row blocks inside the KC loop, for a convolution the output-channel panels (or, with fewer than
`PARALLEL_MIN_TASKS` of them, the output rows), for elementwise kernels the outermost sizeable dimension.

Each schedule is a list of primitive passes (`schedule_for` returns it as text, the trace `minimlc compile
--emit schedule` prints); replaying that list with `mini-opt -p` gives the same IR. A schedule that the vector code
generator cannot lower (non-contiguous accesses, say) is dropped, leaving the kernel to LLVM. Kernels with any
non-serial loop count as scheduled and are left alone, so the pass can run twice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, find_kernel, loops_of
from minimlc.lowering.loop.loop_vectorize import MAX_LANES
from minimlc.lowering.loop_to_scf.expand import expand_loops
from minimlc.lowering.target import copy_target
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
    conv = _conv_shape(module, kernel, host)
    if conv is not None:
        return _conv_schedule(name, conv, host)
    pool = _pool_shape(kernel, host)
    if pool is not None:
        return _pool_schedule(name, pool)
    if any(isinstance(op, loop.AllocOp) for op in kernel.walk()):
        return []
    innermost = loops[-1]
    lanes, trip, inner = host.vector_lanes, innermost.trip_count, innermost.loop_name.data
    if not _unit_stride(innermost):
        return []
    if trip == lanes:
        return [f"loop-vectorize{{kernel={name} loop={inner}}}"]
    if trip % lanes:
        return []
    return [
        f"loop-split{{kernel={name} loop={inner} factor={lanes}}}",
        f"loop-vectorize{{kernel={name} loop={inner}_i}}",
    ]


PARALLEL_MIN_TASKS = 4
"""Fewest iterations a loop needs to be made parallel: enough to balance two threads under a dynamic schedule."""
PARALLEL_MIN_WORK = 1 << 15
"""Fewest innermost iterations a loop nest needs to be run in parallel (a dispatch costs about 0.5 us)."""


def parallel_steps(kernel: func.FuncOp) -> list[str]:
    """The `loop-parallel` items for `kernel` as scheduled so far (see the module docstring)."""
    steps = []
    name = kernel.sym_name.data
    for nest in [op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]:
        if _work(nest) < PARALLEL_MIN_WORK:
            continue
        current: loop.ForOp | None = nest
        while current is not None and current.kind.data == "serial":
            if current.trip_count >= PARALLEL_MIN_TASKS and _iterations_independent(kernel, current):
                steps.append(f"loop-parallel{{kernel={name} loop={current.loop_name.data}}}")
                break
            inner = [op for op in current.body.block.ops if isinstance(op, loop.ForOp)]
            current = inner[0] if len(inner) == 1 else None
    return steps


def _work(nest: loop.ForOp) -> int:
    """Innermost iterations of a loop nest."""
    inner = [op for op in nest.body.block.ops if isinstance(op, loop.ForOp)]
    return nest.trip_count * max(1, sum(_work(child) for child in inner))


def _iterations_independent(kernel: func.FuncOp, target: loop.ForOp) -> bool:
    """True if every store under `target` to a kernel parameter has an index that moves with `target`."""
    params = set(kernel.body.block.args)
    iv = target.induction_var
    for store in target.walk():
        if isinstance(store, memref.StoreOp) and store.memref in params:
            forms = [affine_form(index) for index in store.indices]
            if not any(form is not None and form.get(iv, 0) != 0 for form in forms):
                return False
    return True


def _unit_stride(target: loop.ForOp) -> bool:
    """True if every access in `target` is to one element or walks the buffer's last dimension with stride 1
    (strided accesses vectorize lane by lane, slower than LLVM's scalar loop)."""
    iv = target.induction_var
    for access in target.walk():
        if isinstance(access, memref.LoadOp | memref.StoreOp):
            strides = [(affine_form(index) or {}).get(iv, 0) for index in access.indices]
            if any(strides[:-1]) or (strides and strides[-1] not in (0, 1)):
                return False
    return True


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


@dataclass
class _Conv:
    spatial: list[str]
    """The output loops, outermost first."""
    reduction: list[str]
    channels: str
    """The output-channel loop: it indexes the weight and not the input."""
    channel_count: int
    columns: str
    """The innermost output loop other than the channel loop (the output's width)."""
    width: int
    """Iterations of the columns loop."""
    weight_operand: int
    weight_dim: int
    weight_order: list[int]
    """The weight's other dimensions in reduction-loop order, outermost first (loop-pack's `order`)."""


def _output_and_reduction_loops(
    kernel: func.FuncOp, accumulator: loop.AllocOp
) -> tuple[list[loop.ForOp], list[loop.ForOp]]:
    """The loops around the accumulator's initialisation (the output loops, outermost first) and all other loops of
    `kernel` (the reduction loops)."""
    init = next(op for op in kernel.walk() if isinstance(op, memref.StoreOp) and op.memref is accumulator.result)
    output_loops: list[loop.ForOp] = []
    parent = init.parent_op()
    while isinstance(parent, loop.ForOp):
        output_loops.insert(0, parent)
        parent = parent.parent_op()
    return output_loops, [lp for lp in loops_of(kernel) if lp not in output_loops]


def _conv_shape(module: ModuleOp, kernel: func.FuncOp, host: HostInfo) -> _Conv | None:
    """The loops and weight of a direct-convolution-like kernel (a sum of input x weight reads), or None.

    The weight is read at loop indices only, and one output loop (the channel loop) indexes the weight and not
    the other read; that loop, a multiple of the vector width, becomes the vector dimension.
    """
    accs = [op for op in kernel.walk() if isinstance(op, loop.AllocOp) and op.scope.data == "local"]
    if len(accs) != 1:
        return None
    update = [op for op in kernel.walk() if isinstance(op, arith.AddfOp) and accs[0].result in _loaded(op)]
    if len(update) != 1:
        return None
    product = next((v.owner for v in update[0].operands if isinstance(v.owner, arith.MulfOp)), None)
    if product is None:
        return None
    reads = [product.lhs.owner, product.rhs.owner]
    if not all(isinstance(read, memref.LoadOp) for read in reads):
        return None
    spatial_loops, reduction_loops = _output_and_reduction_loops(kernel, accs[0])
    if len(spatial_loops) < 2 or not reduction_loops:
        return None
    params = list(kernel.body.block.args)
    ivs = {lp.induction_var: lp for lp in loops_of(kernel)}
    for weight, data in (reads, reads[::-1]):
        assert isinstance(weight, memref.LoadOp)
        assert isinstance(data, memref.LoadOp)
        if weight.memref not in params or not all(index in ivs for index in weight.indices):
            continue
        operand = params.index(weight.memref)
        if not _is_weight_at_every_call(module, kernel.sym_name.data, operand):
            continue
        data_loops = {v for index in data.indices for v in (affine_form(index) or {None: 0}) if v is not None}
        channels = [
            (dim, ivs[index])
            for dim, index in enumerate(weight.indices)
            if ivs[index] in spatial_loops and index not in data_loops
        ]
        if len(channels) != 1:
            continue
        dim, channel_loop = channels[0]
        width = [lp for lp in spatial_loops if lp is not channel_loop][-1]
        if channel_loop.trip_count % host.vector_lanes:
            continue
        # The reduction loop that walks the input's innermost dimension (the channels) goes innermost (unit stride),
        # or outermost where that measured faster (see `_channels_outermost`).
        innermost = affine_form(data.indices[-1]) or {}
        walks_input = {lp: innermost.get(lp.induction_var, 0) == 1 for lp in reduction_loops}
        _, columns = conv_tile(channel_loop.trip_count, width.trip_count, host)
        depth = math.prod(lp.trip_count for lp in reduction_loops)
        outermost = _channels_outermost(depth, columns)
        reduction_loops.sort(key=lambda lp: walks_input[lp] != outermost)
        # The packed weight keeps its reduction dimensions in loop order: the inner loops walk it front to back.
        weight_dims = {ivs[index]: d for d, index in enumerate(weight.indices)}
        weight_order = [weight_dims[lp] for lp in reduction_loops if lp in weight_dims]
        others = [d for d in range(len(weight.indices)) if d != dim]
        if weight_order == others or sorted(weight_order) != others:
            weight_order = []  # the weight's own order, or not one reduction loop per dimension
        return _Conv(
            [lp.loop_name.data for lp in spatial_loops],
            [lp.loop_name.data for lp in reduction_loops],
            channel_loop.loop_name.data,
            channel_loop.trip_count,
            width.loop_name.data,
            width.trip_count,
            operand,
            dim,
            weight_order,
        )
    return None


CHANNELS_OUTERMOST_DEPTH = 2048
"""Fewest products per output (C x KH x KW) for which `_channels_outermost` may put the channel loop outermost."""


def _channels_outermost(depth: int, columns: int) -> bool:
    """Whether a direct convolution reduces with its channel loop outermost, `(c, kh, kw)`, instead of innermost,
    `(kh, kw, c)`: a rule read off per-shape measurements of both (docs/DESIGN.md, "Measured facts"). Channels
    outermost won only for deep weight panels under a register tile of at most 7 columns (3x3 512->512 at 7x7: 1.10
    vs 1.44 x ONNX Runtime; 3x3/2 512->512 from 14x14: 1.54 vs 1.70); with 14 columns it lost or tied (3x3 512->512 at
    14x14: 1.57 vs 1.18, at 28x28: 1.59 vs 1.17; 3x3/2 256->256 from 28x28: 1.59 vs 1.17; 3x3 256->256 at 14x14: 1.17
    vs 1.29, the one exception, left to the common rule)."""
    return depth >= CHANNELS_OUTERMOST_DEPTH and columns <= 7


CONV_MAX_COLUMNS = 14
"""Most output columns a convolution tile covers. The tile takes the largest count up to this that divides the
width and fits the registers: ResNet widths 112, 56, 28, 14 take 14 and 7 takes 7; the 55, 27 and 13 of SqueezeNet
and Inception v1 take 11, 9 (or 27's 9 with two vectors) and 13. A tile of one column reloads every weight vector
for each multiply-add (3-4x slower than ONNX Runtime on those widths when only 14, 8, 7, 6, 4, 2, 1 were allowed)."""


def conv_tile(channels: int, width: int, host: HostInfo) -> tuple[int, int]:
    """The register tile (output channels NR, output columns MR) of the direct schedule for a convolution with
    `channels` output channels (a multiple of the vector width) and output rows `width` wide."""
    lanes = host.vector_lanes
    nr = 2 * lanes if channels % (2 * lanes) == 0 else lanes
    vectors = nr // lanes
    mr = next(
        f
        for f in range(CONV_MAX_COLUMNS, 0, -1)
        if width % f == 0 and f * vectors + vectors + 1 <= host.vector_registers
    )
    return nr, mr


def _conv_schedule(name: str, c: _Conv, host: HostInfo) -> list[str]:
    """Direct convolution, vectorized over output channels (NR of them, weights packed in NR-wide panels at load
    time) and register-blocked over MR output columns; the MR x NR tile is accumulated in registers and stored
    back into the output once per tile."""
    nr, mr = conv_tile(c.channel_count, c.width, host)
    f, w = c.channels, c.columns
    pack_order = f" order={','.join(map(str, c.weight_order))}" if c.weight_order else ""
    outer = [lp for lp in c.spatial if lp not in (f, w)]
    order = [*outer[:1], f"{f}_o", *outer[1:], f"{w}_o", *c.reduction, f"{w}_i", f"{f}_i"]
    return [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={f} factor={nr}}}",
        f"loop-split{{kernel={name} loop={w} factor={mr}}}",
        f"loop-reorder{{kernel={name} order={','.join(order)}}}",
        f"loop-pack{{kernel={name} operand={c.weight_operand} dim={c.weight_dim} factor={nr}{pack_order}}}",
        f"loop-unroll{{kernel={name} loop={w}_i}}",
        f"loop-vectorize{{kernel={name} loop={f}_i}}",
        f"loop-cache-write{{kernel={name} loop={w}_o accumulate=true}}",
    ]


@dataclass
class _Pool:
    spatial: list[str]
    """The output loops, outermost first; the last one indexes the output's innermost (width) dimension."""
    reduction: list[str]
    vectorize: bool
    """Whether the width loop becomes one vector operation: if it fits one vector register (strided reads go lane
    by lane), or if it walks the input with unit stride and fits `MAX_LANES` (LLVM splits the vector). Otherwise
    the kernel is left to LLVM as it is: on a longer strided row its interleaved loads beat lane-by-lane ones (2x
    on 55 outputs of stride 2), and with the window loops moved out it was 3x slower (27 outputs of stride 2)."""


def _pool_shape(kernel: func.FuncOp, host: HostInfo) -> _Pool | None:
    """The loops of a window reduction, or None: a max or sum over a window of one input read whose innermost output
    loop moves the read (pooling), or a sum of that read times reads the width loop does not move (a depthwise
    convolution: each channel's window times that channel's weights)."""
    accs = [op for op in kernel.walk() if isinstance(op, loop.AllocOp) and op.scope.data == "local"]
    if len(accs) != 1:
        return None
    update = [
        op for op in kernel.walk() if isinstance(op, arith.MaximumfOp | arith.AddfOp) and accs[0].result in _loaded(op)
    ]
    if len(update) != 1:
        return None
    params = list(kernel.body.block.args)
    terms = [
        v for v in update[0].operands if not (isinstance(v.owner, memref.LoadOp) and v.owner.memref is accs[0].result)
    ]
    if len(terms) != 1:
        return None
    product = terms[0].owner
    depthwise = isinstance(update[0], arith.AddfOp) and isinstance(product, arith.MulfOp)
    factors = [product.lhs, product.rhs] if depthwise else terms
    reads = [v.owner for v in factors if isinstance(v.owner, memref.LoadOp) and v.owner.memref in params]
    if len(reads) != len(factors):
        return None
    spatial_loops, reduction_loops = _output_and_reduction_loops(kernel, accs[0])
    if not spatial_loops or not reduction_loops:
        return None
    width = spatial_loops[-1]
    moving = [r for r in reads if any((affine_form(index) or {}).get(width.induction_var, 0) for index in r.indices)]
    if len(moving) != 1:
        return None
    return _Pool(
        [lp.loop_name.data for lp in spatial_loops],
        [lp.loop_name.data for lp in reduction_loops],
        width.trip_count <= host.vector_lanes or (_unit_stride(width) and width.trip_count <= MAX_LANES),
    )


def _pool_schedule(name: str, p: _Pool) -> list[str]:
    """Pooling: accumulate in the output and move the window loops outside the width loop, which becomes one
    vector operation per window tap (a row of outputs updated at once instead of a serial max chain per output)."""
    if not p.vectorize:
        return []
    w = p.spatial[-1]
    steps = [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-reorder{{kernel={name} order={','.join([*p.spatial[:-1], *p.reduction, w])}}}",
        f"loop-vectorize{{kernel={name} loop={w}_init}}",
        f"loop-vectorize{{kernel={name} loop={w}}}",
    ]
    if len(p.spatial) > 1:
        steps.append(f"loop-cache-write{{kernel={name} loop={p.spatial[-2]}}}")
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

    lanes: int = 0
    """f32 lanes of a vector register to schedule for (0: the host's)."""
    registers: int = 0
    """Vector registers to schedule for (0: the host's)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_default_schedules(ctx, op, self.host())

    def host(self) -> HostInfo:
        host = host_info()
        return HostInfo(self.lanes or host.vector_lanes, self.registers or host.vector_registers)


def apply_default_schedules(ctx: Context, module: ModuleOp, host: HostInfo) -> list[tuple[str, list[str]]]:
    """Schedule every kernel of `module`; returns the trace: (kernel, the passes applied to it) per kernel."""
    trace: list[tuple[str, list[str]]] = []
    for kernel in kernels_of(module):
        name = kernel.sym_name.data
        if any(lp.kind.data != "serial" for lp in loops_of(kernel)):
            continue
        steps = schedule_for(module, kernel, host)
        if steps and _lowers(ctx, module, kernel, steps):
            apply_steps(ctx, module, steps)
        else:
            steps = []
        parallel = parallel_steps(find_kernel(module, DefaultSchedulePass.name, name))
        apply_steps(ctx, module, parallel)
        if steps or parallel:
            trace.append((name, steps + parallel))
    return trace


def schedule_trace(ctx: Context, module: ModuleOp, host: HostInfo | None = None) -> str:
    """What `minimlc compile --emit schedule` prints: per scheduled kernel, a comment and its pass list; then the
    whole list, which `mini-opt -p` replays on the same loop IR to the IR default-schedule gives."""
    trace = apply_default_schedules(ctx, module, host or host_info())
    lines = [f"// {kernel}\n{','.join(steps)}" for kernel, steps in trace]
    lines.append("// all kernels, in order (mini-opt -p)")
    lines.append(",".join(step for _, steps in trace for step in steps))
    return "\n".join(lines) + "\n"


def apply_steps(ctx: Context, module: ModuleOp, steps: list[str]) -> None:
    """Apply pass-pipeline items (`loop-split{kernel=k loop=i factor=8}`) to `module`."""
    from minimlc.lowering.pipeline import run_passes

    run_passes(module, steps, ctx)


def _lowers(ctx: Context, module: ModuleOp, kernel: func.FuncOp, steps: list[str]) -> bool:
    """True if `steps` apply to a copy of the kernel and its callers, and its vector code can be generated."""
    kernels = kernels_of(module)
    callers = [f.clone() for f in module.ops if isinstance(f, func.FuncOp) and f not in kernels]
    trial = ModuleOp([kernel.clone(), *callers])
    copy_target(module, trial)
    try:
        apply_steps(ctx, trial, steps)
        expand_loops(trial)
    except DiagnosticException:
        return False
    return True
