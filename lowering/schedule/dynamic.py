"""The dynamic rule: schedules for kernels with loops of a run-time trip count (`loop.for ... to %n`).

`default-schedule` gives every kernel with a dynamic loop this rule and no other: the static rules read trip counts.
Each loop of a run-time trip count is split into a main part and a remainder (`loop-split` of a dynamic loop: `<i>_o`
over `n - n % f`, `<i>_i` of `f` iterations, the remainder `<i>_t`), so that the vector and register-tile code keeps
its static shapes. What a kernel gets, by its structure:

- **elementwise** (no accumulator; every access of the innermost loop unit-stride): the innermost loop split by
  `width` with its inner part vectorized and a scalar remainder (a static loop of exactly `width` iterations is
  vectorized whole; a static loop shorter than a vector is left to LLVM):

      loop.for "i0" %i0 = 0 to %n step 1 serial { loop.for "i1" %i1 = 0 to 64 step 1 serial { y = f(x) } }
      // gets
      loop-split{kernel=k loop=i1 factor=8},loop-vectorize{kernel=k loop=i1_i}

- **gemm** (`c[i, j] = sum_k a[i, k] * b[k, j]`, the row loop `i` dynamic, under batch loops or outermost, `b` read
  at `[..., k, j]`, or a weight `b` at `[j, k]`, ONNX Gemm's `transB`): the static GEMM rule's micro-kernel with an
  `mr x nr` tile in registers, the rows split by `mr` last so that the remainder of fewer than `mr` rows (a run-time
  count) has the column and depth splits too and runs one row at a time with its `nr` columns vectorized (inside each
  column panel in tiles of 2 rows then one, where the panels are outside the row tiles). The depth block `kc` is the
  largest divisor of the depth up to 1024 where B is a packed weight (a prefill's projections: one block for a
  896-deep one), else up to 256. Where the whole depth is in one block the tiles start at zero and are stored
  (`fill=true`: the zeroing nest goes), else they are added to the zeroed output. A weight `b` is packed at load
  time; run-time columns and depth: see `_gemm_steps` and `_gemm_dynamic_columns_steps`. The column panels are the
  parallel tasks where one row's work reaches `GEMM_PANELS_MIN_WORK` multiply-adds; a smaller GEMM (a decoder's key
  and value projections) has its row tiles outermost as its tasks, so that a decode step's GEMV, whose row count is
  known only at run time, runs on one thread and a prompt's GEMM on all of them. The rule marks these loops parallel
  itself (whatever the `parallel` knob says), inside a batch loop of a run-time or unit count (a generator's batch
  of 1 would be one task); under a static batch of several (attention's heads) parallel placement takes the batch.
- **reduction** (one accumulator, a reduction loop of a run-time trip count, the innermost output loop static and
  unit-stride, e.g. `out[j] = sum_i x[i, j]`): the reduction stays serial, the output loop is split by `width`, its
  outer part moved outside the reduction loops and its inner part vectorized, the accumulators in registers.
- **concatenation** (a static innermost loop that changes input at constants: rotary embeddings' `rotate_half`
  under run-time rows): the `concat` rule's schedule (`concat.py`), the loop partitioned, each piece vectorized.
- **rows** (stages over shared row loops, softmax's max, exponentials, sum and division of a prefill's scores over
  a run-time key count): the `rows` rule's schedule (`rows.py`), its dynamic innermost loops split and vectorized.
- **other** (several accumulators, strided or dynamic innermost output loops): no knobs; only parallel placement.

Before these, an image kernel under a run-time batch loop gets the static rule of one image (`conv_batch.py`:
convolutions, pools), its knobs and schedule.

Parallel placement (`parallel.py`) then makes the outermost loop of each other nest parallel over its run-time trip
count, in chunks of at least `grain` innermost iterations. Knobs whose effect depends on a run-time extent say so
(`Knob.depends_on`, listed by `minimlc compile --emit space`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import loops_of, walk_ops
from minimlc.lowering.loop.loop_split import in_tail, tail_name
from minimlc.lowering.schedule.concat import CONCAT, ConcatWorkload
from minimlc.lowering.schedule.conv_batch import BatchedWorkload, batched_steps, batched_workload
from minimlc.lowering.schedule.elementwise import vector_steps
from minimlc.lowering.schedule.gemm import GEMM_DEFAULT_DEPTH_BLOCK, GEMM_MAX_DEPTH_BLOCK, GEMM_MAX_ROWS
from minimlc.lowering.schedule.kernel_analysis import (
    accumulator_of,
    is_weight_at_every_call,
    output_and_reduction_loops,
    sum_of_products,
    unit_stride,
)
from minimlc.lowering.schedule.parallel import PARALLEL_MIN_TASKS
from minimlc.lowering.schedule.rows import ROWS, RowsWorkload
from minimlc.lowering.schedule.space import Config, Knob, Space, divisors, register_tile_steps
from minimlc.lowering.target import Target

VECTOR_FACTORS = (1, 2, 4)
"""`width` knob values, in vector widths."""


def has_dynamic_loop(kernel: func.FuncOp) -> bool:
    """Whether a loop of `kernel` runs a run-time trip count."""
    return any(lp.is_dynamic for lp in loops_of(kernel))


def _depends(loop_name: str) -> str:
    return f"the run-time trip count of loop '{loop_name}'"


@dataclass(frozen=True)
class DynamicElementwise:
    """A kernel without reductions: its innermost loop, and its trip count (None: a run-time count)."""

    kernel: str
    loop: str
    trip: int | None


@dataclass(frozen=True)
class DynamicGemm:
    """A GEMM whose row loop runs a run-time trip count: its loops and the static columns and depth."""

    kernel: str
    rows: str
    cols: str
    depth: str
    n: int | None
    """The columns; None for a run-time count (attention's `Q @ K^T`): then the depth is not blocked either."""
    k: int | None
    """The depth; None for a run-time one (attention's `P @ V`), which is not blocked (`kc` 0)."""
    packed_b: int | None = None
    """The kernel parameter B is, where B is a 2-D weight at every call (packed into `nr`-wide panels at load time)."""
    b_columns: int = 1
    """B's dimension along the columns: 1 for `b[k, j]`, 0 for a weight read transposed (`b[j, k]`, ONNX Gemm's
    `transB`), which only its packed panels make unit-stride."""
    static_batch: bool = False
    """Whether a batch loop around the rows runs a static count of more than one iteration (attention's heads): its
    batch band is the parallel one (parallel placement's); else the rule places the GEMM's own tasks."""


@dataclass(frozen=True)
class DynamicReduction:
    """A reduction over loops of which one runs a run-time trip count, its innermost output loop static."""

    kernel: str
    output: str
    reductions: tuple[str, ...]
    n: int
    dynamic: str
    """The reduction loop of a run-time trip count."""


@dataclass(frozen=True)
class DynamicOther:
    """A kernel with dynamic loops the rule has no schedule for (parallel placement only)."""

    kernel: str


DynamicWorkload = (
    DynamicElementwise | DynamicGemm | DynamicReduction | RowsWorkload | ConcatWorkload | DynamicOther | BatchedWorkload
)
STATIC_RULES = {RowsWorkload: ROWS, ConcatWorkload: CONCAT}
"""The workloads whose static rule schedules them over run-time extents too."""


@dataclass(frozen=True)
class DynamicRule:
    """Kernels with loops of a run-time trip count (see the module docstring)."""

    name: str = "dynamic"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> DynamicWorkload | None:
        if not has_dynamic_loop(kernel):
            return None
        if (batched := batched_workload(module, kernel, target)) is not None:
            return batched
        name = kernel.sym_name.data
        if accumulator_of(kernel) is None and not any(isinstance(op, loop.AllocOp) for op in walk_ops(kernel)):
            innermost = loops_of(kernel)[-1]
            if not innermost.is_dynamic and (concat := CONCAT.match(module, kernel, target)) is not None:
                return concat
            if unit_stride(innermost):
                trip = None if innermost.is_dynamic else innermost.trip_count
                return DynamicElementwise(name, innermost.loop_name.data, trip)
            return DynamicOther(name)
        return (
            _gemm(module, kernel, target) or _reduction(kernel) or _rows(module, kernel, target) or DynamicOther(name)
        )

    def space(self, workload: DynamicWorkload, target: Target) -> Space:
        if isinstance(workload, BatchedWorkload):
            return workload.rule.space(workload.workload, target)
        if (rule := STATIC_RULES.get(type(workload))) is not None:
            return rule.space(workload, target)
        default = self.default(workload, target)
        lanes = target.vector_lanes
        if isinstance(workload, DynamicElementwise):
            if workload.trip is None:
                widths = tuple(f * lanes for f in VECTOR_FACTORS)
                return Space((Knob("width", (0, *widths), default["width"], _depends(workload.loop)),))
            widths = tuple(f * lanes for f in VECTOR_FACTORS if f * lanes <= workload.trip)
            return Space((Knob("width", (0, *widths), default["width"]),))
        if isinstance(workload, DynamicReduction):
            widths = tuple(f * lanes for f in VECTOR_FACTORS if f * lanes <= workload.n)
            return Space((Knob("width", (0, *widths), default["width"]),))
        if isinstance(workload, DynamicGemm):
            g = workload
            remainder = f"{_depends(g.rows)}: a remainder of fewer than mr rows runs one row at a time"
            return Space(
                (
                    Knob("mr", tuple(range(1, GEMM_MAX_ROWS + 1)), default["mr"], remainder),
                    Knob(
                        "nr",
                        tuple(f * lanes for f in (1, 2, 3, 4) if g.n is None or g.n % (f * lanes) == 0),
                        default["nr"],
                        None if g.n else f"{_depends(g.cols)}: a remainder of columns runs scalar",
                    ),
                    Knob("kc", divisors(g.k, GEMM_MAX_DEPTH_BLOCK) if g.k and g.n else (0,), default["kc"]),
                    Knob("unroll", (True, False), True),
                )
            )
        return Space()

    def default(self, workload: DynamicWorkload, target: Target) -> Config:
        if isinstance(workload, BatchedWorkload):
            return workload.rule.default(workload.workload, target)
        if (rule := STATIC_RULES.get(type(workload))) is not None:
            return rule.default(workload, target)
        lanes = target.vector_lanes
        if isinstance(workload, DynamicElementwise):
            return {"width": lanes if workload.trip is None or workload.trip >= lanes else 0}
        if isinstance(workload, DynamicReduction):
            return {"width": lanes if workload.n >= lanes else 0}
        if isinstance(workload, DynamicGemm):
            nr = 2 * lanes if workload.n is None or workload.n % (2 * lanes) == 0 else lanes
            vectors = nr // lanes
            # The widest tile whose accumulators, B vectors and a broadcast fit the registers (the static rule's).
            mr = next(f for f in (8, 7, 6, 4, 3, 2, 1) if f * vectors + vectors + 1 <= target.vector_registers)
            return {"mr": mr, "nr": nr, "kc": _default_depth_block(workload), "unroll": True}
        return {}

    def apply(self, workload: DynamicWorkload, config: Config) -> list[str]:
        if isinstance(workload, BatchedWorkload):
            return batched_steps(workload, config)
        if (rule := STATIC_RULES.get(type(workload))) is not None:
            return rule.apply(workload, config)
        if isinstance(workload, DynamicElementwise):
            return vector_steps(workload.kernel, workload.loop, workload.trip, int(config["width"]))
        if isinstance(workload, DynamicReduction):
            return _reduction_steps(workload, int(config["width"]))
        if isinstance(workload, DynamicGemm):
            mr, nr, kc, unroll = int(config["mr"]), int(config["nr"]), int(config["kc"]), bool(config["unroll"])
            if workload.n is None:
                return _gemm_dynamic_columns_steps(workload, mr, nr, unroll)
            return _gemm_steps(workload, mr, nr, kc, unroll)
        return []


def _gemm(module: ModuleOp, kernel: func.FuncOp, target: Target) -> DynamicGemm | None:
    """The GEMM of `kernel` if its row loop is dynamic and outermost or under batch loops only, its column and depth
    loops static, B is read at `[..., k, j]` (unit stride along the columns) or is a 2-D weight read at `[j, k]`
    (packed), and a vector width divides the columns."""
    found = sum_of_products(kernel)
    if found is None:
        return None
    _, update, product = found
    depth = update.parent_op()
    cols = depth.parent_op() if isinstance(depth, loop.ForOp) else None
    rows = cols.parent_op() if isinstance(cols, loop.ForOp) else None
    if not (isinstance(depth, loop.ForOp) and isinstance(cols, loop.ForOp) and isinstance(rows, loop.ForOp)):
        return None
    if not rows.is_dynamic or not _perfectly_nested(kernel, rows):
        return None
    if not cols.is_dynamic and cols.trip_count % target.vector_lanes:
        return None
    reads = [read for read in (product.lhs.owner, product.rhs.owner) if isinstance(read, memref.LoadOp)]
    along = {(depth.induction_var, cols.induction_var): 1, (cols.induction_var, depth.induction_var): 0}
    b, b_columns = next(
        ((read, along[tuple(read.indices)[-2:]]) for read in reads if tuple(read.indices)[-2:] in along), (None, 1)
    )
    if b is None:
        return None
    params = list(kernel.body.block.args)
    operand = params.index(b.memref) if b.memref in params else None
    name = kernel.sym_name.data
    weight = operand is not None and len(b.indices) == 2 and is_weight_at_every_call(module, name, operand)
    if b_columns == 0 and not weight:
        return None  # B[j, k] walks the columns with a stride: only a weight, packed at load time, reads well
    batch = [lp for lp in loops_of(kernel) if rows in lp.walk() and lp is not rows]
    return DynamicGemm(
        name,
        rows.loop_name.data,
        cols.loop_name.data,
        depth.loop_name.data,
        None if cols.is_dynamic else cols.trip_count,
        None if depth.is_dynamic else depth.trip_count,
        operand if weight else None,
        b_columns,
        any(not lp.is_dynamic and lp.trip_count > 1 for lp in batch),
    )


def _rows(module: ModuleOp, kernel: func.FuncOp, target: Target) -> RowsWorkload | None:
    """The `rows` workload of a kernel of several stages that share row loops, else None."""
    rows = ROWS.match(module, kernel, target)
    return rows if rows is not None and rows.at is not None else None


def _default_depth_block(g: DynamicGemm) -> int:
    """The largest divisor of the depth up to 1024 where B is a weight packed into panels (the fewest passes over the
    output: [128, 896] x [896, 4864] ran 1.22x ONNX Runtime's time in 4 blocks of 224, 1.03x in one), else up to 256
    (a panel in L1); 0 (not blocked) where the depth or the columns run a run-time count."""
    if not g.k or not g.n:
        return 0
    largest = GEMM_MAX_DEPTH_BLOCK if g.packed_b is not None else GEMM_DEFAULT_DEPTH_BLOCK
    return next(f for f in range(min(g.k, largest), 0, -1) if g.k % f == 0)


def _perfectly_nested(kernel: func.FuncOp, nest: loop.ForOp) -> bool:
    """Whether `nest` is the kernel's one top-level loop or sits under a chain of loops (batch loops) each holding
    only the next one."""
    parent = nest.parent_op()
    while isinstance(parent, loop.ForOp):
        if len(loops_of(parent)) != len(loops_of(nest)) + 1 or len(parent.body.block.ops) != 1:
            return False
        nest, parent = parent, parent.parent_op()
    return parent is kernel and len([op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]) == 1


GEMM_PANELS_MIN_WORK = 1 << 18
"""Fewest multiply-adds one row of a GEMM over run-time rows takes (depth x columns) for its column panels to be the
parallel tasks: a smaller one (a decoder's 896 x 128 key and value projections) keeps its row tiles outermost, so
that its tasks are row tiles and a decode step's one row runs on the calling thread (see `_gemm_steps`)."""


def panels_outermost(g: DynamicGemm, nr: int) -> bool:
    """Whether the GEMM's column panels go outside its row tiles (and are its parallel tasks): at least
    `PARALLEL_MIN_TASKS` panels, and one row's work at least `GEMM_PANELS_MIN_WORK` (or a run-time depth)."""
    assert g.n is not None
    return g.n // nr >= PARALLEL_MIN_TASKS and (g.k is None or g.k * g.n >= GEMM_PANELS_MIN_WORK)


def _gemm_steps(g: DynamicGemm, mr: int, nr: int, kc: int, unroll: bool) -> list[str]:
    """The static GEMM rule's micro-kernel over the dynamic rows: `mr x nr` tiles in registers, B packed into
    `nr`-wide panels at load time where it is a weight. The column panels go outside the row tiles where they are
    enough tasks to share and each is worth a task even for one row (`panels_outermost`; each panel of B then serves
    every row tile from L1: a 128 x 256 x 1024 projection ran 2.4x the static build's time with the row tiles
    outermost, 1.15x so), the remainder of rows inside each panel after its
    full tiles, on the panel they left in cache, in `REMAINDER_ROWS`-row tiles then one row
    (`_remainder_tile_steps`; a remainder after the whole nest, one row at a time, streamed all of B once per row:
    [128, 896] x [896, 4864] ran 1.13x ONNX Runtime's time at 128 rows, 0.96x at 126, a multiple of the tile; 0.95x
    at 128 rows inside the panels):

        k_o { j_o { i_o { k_i { i_i (unrolled) { j_i (vector) }}} ;
                    i_t_o { k_i { i_t_i (unrolled) { j_i (vector) }}} ; i_t_t { k_i { j_i (vector) }} }}

    Else the row tiles are outermost and are the parallel tasks (the rule marks `i_o` parallel), `floor(M / mr)` of
    them at run time, so that fewer than `2 mr` rows (a decode step's one) run on the calling thread (the pool runs
    one task or none inline) and a prompt's rows are split; the remainder of rows, one row's `nr` columns in
    registers, is a nest of its own, run serially:

        i_o (parallel) { k_o { j_o { k_i { i_i (unrolled) { j_i (vector) }}}}} ; i_t { k_o { j_o { k_i { j_i }}}}

    With the whole depth in one block (`kc` = k, or a run-time depth, `kc` 0, not blocked: `k` takes the place of
    `k_i` and `k_o` goes) the tiles start at zero and are stored (`fill=true`), a remainder nest's depth inside its
    tile loop (`i_t { j_o { k_o { k_i { j_i }}}}`): the main tiles and the remainder write every element once, so
    the zeroing nest goes (1.07x -> 1.03x the static build's time, [1, 128, 256] x [256, 1024], one thread). Else
    the output is zeroed first and the tiles added to it (`accumulate=true`)."""
    name, i, j, k = g.kernel, g.rows, g.cols, g.depth
    k_outer, k_inner = ([f"{k}_o"], f"{k}_i") if kc else ([], k)
    whole = kc in (0, g.k)
    start = "fill=true" if whole else "accumulate=true"
    head = [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={j}_init factor={nr}}}",
        f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
        f"loop-split{{kernel={name} loop={j} factor={nr}}}",
        *([f"loop-split{{kernel={name} loop={k} factor={kc}}}"] if kc else []),
    ]
    packed = g.packed_b is not None
    pack = [f"loop-pack{{kernel={name} operand={g.packed_b} dim={g.b_columns} factor={nr}}}"] if packed else []
    if panels_outermost(g, nr):
        return [
            *head,
            f"loop-reorder{{kernel={name} order={','.join([*k_outer, f'{j}_o', i, k_inner, f'{j}_i'])}}}",
            f"loop-split{{kernel={name} loop={i} factor={mr}}}",
            f"loop-reorder{{kernel={name} order={i}_o,{k_inner},{i}_i,{j}_i}}",
            *pack,
            *register_tile_steps(name, f"{i}_i", f"{j}_i", f"{i}_o", unroll, fill=whole),
            *_remainder_tile_steps(name, tail_name(i), in_tail(k_inner, i), in_tail(f"{j}_i", i), unroll),
            *([] if g.static_batch or g.k is None else _panel_tasks_steps(name, f"{j}_o", g.n // nr)),
        ]
    outer = [f"{i}_o", *k_outer, f"{j}_o"]
    panel, depth = [in_tail(f"{j}_o", i)], [*(in_tail(lp, i) for lp in k_outer), in_tail(k_inner, i)]
    tail = [*panel, *depth, in_tail(f"{j}_i", i)] if whole else [*depth[:-1], *panel, *depth[-1:], in_tail(f"{j}_i", i)]
    return [
        *head,
        f"loop-split{{kernel={name} loop={i} factor={mr}}}",
        f"loop-reorder{{kernel={name} order={','.join(outer)},{k_inner},{i}_i,{j}_i}}",
        *pack,
        *register_tile_steps(name, f"{i}_i", f"{j}_i", outer[-1], unroll, fill=whole),
        f"loop-reorder{{kernel={name} order={tail_name(i)},{','.join(tail)}}}",
        f"loop-vectorize{{kernel={name} loop={tail[-1]}}}",
        f"loop-cache-write{{kernel={name} loop={panel[0]} {start}}}",
        *([] if g.static_batch else [f"loop-parallel{{kernel={name} loop={i}_o}}"]),
    ]


PANEL_TASKS = 32
"""About how many tasks a GEMM's column panels make (consecutive panels share one)."""


def _panel_tasks_steps(name: str, panels_loop: str, panels: int) -> list[str]:
    """Mark the column panels parallel, in runs of consecutive panels (the largest divisor of their count that leaves
    at least `PANEL_TASKS` tasks) so that each task loops over its panels in one call."""
    run = next(f for f in range(max(1, panels // PANEL_TASKS), 0, -1) if panels % f == 0)
    if run == 1:
        return [f"loop-parallel{{kernel={name} loop={panels_loop}}}"]
    return [
        f"loop-split{{kernel={name} loop={panels_loop} factor={run}}}",
        f"loop-parallel{{kernel={name} loop={panels_loop}_o}}",
    ]


REMAINDER_ROWS = 2
"""Rows of the register tiles that the remainder of fewer than `mr` rows runs in, inside a column panel."""


def _remainder_tile_steps(name: str, rows: str, depth: str, columns: str, unroll: bool) -> list[str]:
    """The remainder of rows `rows { depth { columns }}` in tiles of `REMAINDER_ROWS` rows, then one row, each tile
    reading the panel of B once for its rows ([16, 896] x [896, 4864], 4 rows over 2 tiles of 6: 1.29x -> 1.07x ONNX
    Runtime's time; 17 rows 1.41x -> 1.17x). Both add to the zeroed output (`accumulate=true`): the coverage proof
    that lets tiles start at zero (`loop-cache-write{fill=true}`) takes one split of the rows, not a split of its
    remainder, so the zeroing nest stays (128 rows: 0.95x either way)."""
    pairs, last = f"{rows}_o", tail_name(rows)
    return [
        f"loop-split{{kernel={name} loop={rows} factor={REMAINDER_ROWS}}}",
        f"loop-reorder{{kernel={name} order={pairs},{depth},{rows}_i,{columns}}}",
        *register_tile_steps(name, f"{rows}_i", columns, pairs, unroll),
        f"loop-vectorize{{kernel={name} loop={in_tail(columns, rows)}}}",
        f"loop-cache-write{{kernel={name} loop={last} accumulate=true}}",
    ]


def _gemm_dynamic_columns_steps(g: DynamicGemm, mr: int, nr: int, unroll: bool) -> list[str]:
    """`_gemm_steps` where the columns run a run-time count too: each row tile's remainder of columns is distributed
    out of the tile (`loop-distribute`) into a scalar nest of its own, `mr` sums in registers; the depth is not
    blocked, so every tile (the last one a single sum, `j_t` of `i_t`) starts at zero and is stored (`fill=true`),
    and the four write every element once: no zeroing nest.

        i_o { j_o { k { i_i (unrolled) { j_i (vector) }}} ; j_t { k { i_i_d1 (unrolled) }} }
        i_t { j_o { k { j_i (vector) }} ; j_t { k } }"""
    name, i, j, k = g.kernel, g.rows, g.cols, g.depth
    tail_panels, tail_depth, tail_columns = in_tail(f"{j}_o", i), in_tail(k, i), in_tail(f"{j}_i", i)
    remainder, remainder_depth = tail_name(j), in_tail(k, j)
    return [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={j}_init factor={nr}}}",
        f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
        f"loop-split{{kernel={name} loop={j} factor={nr}}}",
        f"loop-split{{kernel={name} loop={i} factor={mr}}}",
        f"loop-distribute{{kernel={name} loop={i}_i}}",
        f"loop-reorder{{kernel={name} order={j}_o,{k},{i}_i,{j}_i}}",
        *register_tile_steps(name, f"{i}_i", f"{j}_i", f"{j}_o", unroll, fill=True),
        f"loop-reorder{{kernel={name} order={remainder},{remainder_depth},{i}_i_d1}}",
        *([f"loop-unroll{{kernel={name} loop={i}_i_d1}}"] if unroll else []),
        f"loop-cache-write{{kernel={name} loop={remainder} fill=true}}",
        f"loop-reorder{{kernel={name} order={tail_panels},{tail_depth},{tail_columns}}}",
        f"loop-vectorize{{kernel={name} loop={tail_columns}}}",
        f"loop-cache-write{{kernel={name} loop={tail_panels} fill=true}}",
        f"loop-cache-write{{kernel={name} loop={in_tail(remainder, i)} fill=true}}",
    ]


def _reduction(kernel: func.FuncOp) -> DynamicReduction | None:
    """The reduction of `kernel` if a reduction loop runs a run-time trip count, the reduction loops are one perfect
    chain right inside the innermost output loop, and that loop is static and walks the output with unit stride."""
    accumulator = accumulator_of(kernel)
    if accumulator is None:
        return None
    outputs, reductions = output_and_reduction_loops(kernel, accumulator)
    dynamic = [lp for lp in reductions if lp.is_dynamic]
    if not outputs or not dynamic or any(lp.is_dynamic for lp in outputs):
        return None
    output = outputs[-1]
    chain = [output]
    while len(inner := [lp for lp in chain[-1].body.block.ops if isinstance(lp, loop.ForOp)]) == 1:
        chain.append(inner[0])
    chain = chain[1:]
    if not chain or len(chain) != len(reductions) or len(loops_of(chain[-1])) > 1 or not unit_stride(output):
        return None
    stores = [op for op in walk_ops(kernel) if isinstance(op, memref.StoreOp) and op.memref is not accumulator.result]
    if len(stores) != 1 or not stores[0].indices or stores[0].indices[-1] is not output.induction_var:
        return None
    return DynamicReduction(
        kernel.sym_name.data,
        output.loop_name.data,
        tuple(lp.loop_name.data for lp in chain),
        output.trip_count,
        dynamic[0].loop_name.data,
    )


def _reduction_steps(r: DynamicReduction, width: int) -> list[str]:
    """Accumulate in the output (zeroed by a vectorized init nest), the output loop's vector part inside the
    reduction loops, its `width` lanes of sums in registers (`loop-cache-write{accumulate=true}`)."""
    if not width:
        return []
    name, j = r.kernel, r.output
    return [
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={j}_init factor={width}}}",
        f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
        f"loop-split{{kernel={name} loop={j} factor={width}}}",
        f"loop-reorder{{kernel={name} order={j}_o,{','.join(r.reductions)},{j}_i}}",
        f"loop-vectorize{{kernel={name} loop={j}_i}}",
        f"loop-cache-write{{kernel={name} loop={j}_o accumulate=true}}",
    ]


DYNAMIC = DynamicRule()
