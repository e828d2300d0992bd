"""The GEMM rule: a register-blocked micro-kernel streaming packed panels, as in BLIS.

Applies to a sum reduction over one loop `k` whose update adds the product of two reads, one (A) indexed by the row
loop `i` and `k`, the other (B) by `k` and the column loop `j`, and maybe by batch loops around `i` (a batched
MatMul, attention's `Q @ K^T` and `P @ V`, whose B must then walk `j` with unit stride):

    loop.for "i0" { loop.for "i1" { acc = 0; loop.for "k2" { acc += a[i0, k2] * b[k2, i1] } ; c[i0, i1] = acc } }

Schedule: accumulate in the output (`loop-decompose-reduction`), split `i` by `mr`, `j` by `nr` (a multiple of the
vector width) and `k` by `kc`, order the outer parts `k_o, i_o, j_o` (or `i_o, k_o, j_o`, or BLIS's `k_o, j_o, i_o`)
then `k_i, i_i, j_i`, pack B into `nr`-wide panels at load time when it is a weight, unroll `i_i`, vectorize `j_i` and
keep the `mr x nr` tile in registers (`loop-cache-write` at the innermost outer loop: where one depth block holds the
whole reduction, the tile starts at zero and is stored, and the output is never zeroed first). Knobs: `mr` (1-16
rows, any of them: a row count it does not divide gets a peeled tail of rows, see `loop-split`, split after the
columns so that the tail reads packed B too), `nr` (multiples of the vector width that divide the columns), `kc`
(divisors of the depth up to 1024), `nc` (0, or a column block of
`nc` columns, a multiple of `nr` that divides the columns, taken outside the row loop as BLIS's `jc` loop does, so
that the `kc x nc` block of B a row block streams stays in L2 instead of the whole `kc x N` row of panels; an `nr`
that does not divide it leaves the block out), `order`, `mc` (with order `k,j,i`: 0, or a row block of at most `mc`
rows, whole register tiles, taken outside the column panels as BLIS's `ic` loop: each `kc x nr` panel of B then
serves the block's tiles while the block's `mc x kc` rows of A stay in L2), `unroll`, `pack`, `pack_a` (copy the
rows of A that the column panels share into `mr`-row panels first, `loop-cache-read` at the loop around the panels:
BLIS's packing of A; off by default: MatMul 256^3 to 1024^3 on Zen 3 ran 1.00-1.05x its time with it), `prefetch`
(0, or how many depth steps ahead each step of `k_i` prefetches the lines of B the tile reads, where B is a weight:
`loop-prefetch`; a 14 x 32 tile streaming its panels from L2 ran 198 -> 208 GFLOP/s with 8, MatMul 1024^3 in the model
1.02-1.05x faster on a Xeon with AVX-512; off by default, as for convolutions). The `k,j,i` nest, and (without row
blocks or `pack_a`) a tail of rows split inside the panels, after each panel's full tiles:

    k_o { i_o_o (mc rows) { j_o (nr columns) { i_o_i (mr rows) { k_i { i_i (unrolled) { j_i (vector) }}}}}}
    k_o { j_o (nr columns) { i_o (mr rows) { k_i { i_i { j_i }}} ; i_t_o (the tail) { k_i { i_t_i { j_i }}} }}

Default: `mr` the largest of 8, 7, 6, 4, 3, 2, 1 (12 first for a one-vector tile over rows that 8 does not divide) that
leaves the accumulators, B vectors and a broadcast within the vector registers (7 for the 49 rows of a 7x7 window under
batch loops: (16, 49, 256) x (16, 256, 256) ran at 45 GFLOP/s one row at a time, 87 with 7 rows, Zen 4), the tail of
rows (where it does not divide them) one more register tile per column panel; where the rows make fewer than 4 such
tiles, or under batch loops (where the tail is not inside the panels, a tail beside the full tiles in a batch loop's
body leaves parallel placement only the batch loops), the largest that divides them unless that is under 4 (Winograd's
16 x (49 x 256) x (256 x 256) GEMM on AVX2: 7.0 ms one row at a time, 4.1 with 6 rows and a tail of 1, an EPYC LLVM
calls znver1). With AVX2, 6 x 16 (12 accumulators) over 4 x 16 (8, the FMA latency's bare minimum): MatMul 1024^3
0.87-0.89x its time, ShuffleNet's grouped 1x1 GEMMs (3,136 rows) 0.94x, 128-token BERT and GPT unchanged. Likewise 12 x
16 over 8 x 16 on AVX-512 where 16 lanes divide the columns and 32 do not, for rows that need a tail anyway (ViT's
attention scores, 197 x 208 a head: 0.041 against 0.048 ms a layer; ViT 0.98x in bf16 and in float32, Zen 5); rows that
8 divides keep 8 (ShuffleNet's grouped GEMMs would grow tails). `nr` two vectors if they divide the columns, else one;
where 32 registers hold 4-lane vectors (NEON, RVV at VLEN 128), four vectors first (`_tile_vectors`): a 6 x 16 tile of
24 accumulators, where 8 x 8 used 16 of the 32 and loaded a B vector per 4 FMAs instead of per 6; `nc` 0; one row (a
batch-1 classifier): `kc` the whole depth, in one pass over B. Where B is a weight whose 256-deep row of panels (`256 x
N`) fills the L2 cache (MatMul 1024^3), order `k,j,i` with `kc` the largest divisor of the depth up to 1024 (one block:
the output is read and written once) and `mc` the largest row block whose `mc x kc` rows of A fill at most a quarter of
L2; batched, with one depth block and a tail of rows, order `k,j,i` with the tail inside the panels, so that the batch
loops' body is one nest and the parallel band takes the panels (and the depth loop of one iteration) too: Winograd's
GEMM for a 14x14 map on AVX2 (the 49 rows above) got 256 tasks instead of 16 and ran 0.94x its time at one thread (3.8
ms against 4.0-4.2; the 28x28 and 56x56 maps' GEMMs, 196 and 784 rows, 0.98-1.02x); elsewhere order `k,i,j` with `kc`
the largest divisor of the depth up to 256 and `mc` 0 (the small GEMMs of im2col convolutions keep the schedule they
were measured with).

`split_k` (only for a float GEMV: one row, unbatched, B a weight walked by the columns with unit stride): 0, or about
how many depth ranges `loop-rfactor` reduces separately, each a parallel task streaming whole rows of unpacked B into a
partial row (`_split_k_steps`); the default where B exceeds the last-level cache (it comes from memory at every call
either way, and a packed copy would hold the weight twice): 32 ranges, 0.93-0.96x the packed GEMV's time on a
256 MB `[65536, 1024]` weight at one and two threads, peak memory 1.06x a 3 GB weight instead of 2x.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from minimlc.dialects import loop
from minimlc.lowering.loop.loop_cache_read import CACHE_READ_MAX_BYTES
from minimlc.lowering.loop.loop_rfactor import RFACTOR_MAX_BYTES
from minimlc.lowering.loop.loop_split import in_tail, tail_name
from minimlc.lowering.schedule.kernel_analysis import (
    is_weight_at_every_call,
    sum_of_products,
)
from minimlc.lowering.schedule.space import Config, Knob, Space, divisors, register_tile_steps
from minimlc.lowering.target import Target

GEMM_MAX_ROWS = 16
"""Most rows a register tile covers (the default takes at most 8; AVX-512's 32 registers hold 14 x 2 vectors)."""
GEMM_MAX_DEPTH_BLOCK = 1024
"""Largest depth block `kc` in the space (a 1024 x 32 panel of B, 128 KB, streams from L2; one block for a 1024-deep
GEMM reads and writes the output once)."""
GEMM_DEFAULT_DEPTH_BLOCK = 256
"""Largest depth block the `k,i,j` default takes: a 256 x nr panel of B stays in L1."""
ORDERS = {"k,i,j": "{k}_o,{J}{i},{j}", "i,k,j": "{J}{i},{k}_o,{j}", "k,j,i": "{k}_o,{J}{I}{j},{i}"}
"""`order` knob -> the outer loops, outermost first: `{j}` the column panels (`j_o`, or `j_o_i` inside the column
block loop `{J}` = `j_o_o,` with `nc`), `{i}` the row tiles (`i_o`, or `i_o_i` inside the row block loop `{I}` =
`i_o_o,` with `mc`)."""
GEMM_ROW_BLOCKS = (0, 32, 64, 128, 256)
"""`mc` knob values: most rows of a row block (order `k,j,i`; 0: none)."""
GEMM_COLUMN_BLOCKS = (4, 8, 16)
"""`nc` knob values, in panels of `nr` columns (where they leave at least two blocks)."""


@dataclass(frozen=True)
class GemmWorkload:
    """A GEMM-like kernel: its loops, their trip counts and its B operand."""

    kernel: str
    rows: str
    cols: str
    depth: str
    m: int
    n: int
    k: int
    b_operand: int
    b_dim: int
    """The dimension of B the column loop indexes."""
    b_is_weight: bool
    b_batched: bool
    """Whether B is also indexed by batch loops (then it is never packed)."""
    batched: bool = False
    """Whether the row loop has batch loops of several iterations around it (a tail of rows would share their body)."""
    a_operand: int | None = None
    """The kernel parameter A is (None where A is not read from a parameter)."""
    float_sum: bool = True
    """Whether the sum is of floats (the integer rule's are of i32: `split_k` is measured on float GEMVs only)."""


def gemm_workload(module: ModuleOp, kernel: func.FuncOp, update: Operation, product: Operation) -> GemmWorkload | None:
    """The GEMM of `kernel` whose sum `update` (in the reduction loop, under the column and row loops) adds
    `product`, one read of which is B (indexed by the reduction and column loops, maybe batch loops), or None. Shared
    by the float and integer rules."""
    reduction = update.parent_op()
    spatial = reduction.parent_op() if isinstance(reduction, loop.ForOp) else None
    rows = spatial.parent_op() if isinstance(spatial, loop.ForOp) else None
    if not all(isinstance(lp, loop.ForOp) for lp in (reduction, spatial, rows)):
        return None
    assert isinstance(reduction, loop.ForOp)
    assert isinstance(spatial, loop.ForOp)
    assert isinstance(rows, loop.ForOp)
    k_iv, j_iv = reduction.induction_var, spatial.induction_var
    batch = {lp.induction_var for lp in _enclosing_loops(rows)}
    params = list(kernel.body.block.args)
    name = kernel.sym_name.data
    lhs, rhs = product.lhs.owner, product.rhs.owner
    for read, other in ((lhs, rhs), (rhs, lhs)):
        if not isinstance(read, memref.LoadOp) or read.memref not in params:
            continue
        indices = set(read.indices)
        b_batched = bool(indices & batch)
        if {k_iv, j_iv} <= indices <= {k_iv, j_iv} | batch and len(read.indices) == len(indices):
            if b_batched and list(read.indices)[-1] is not j_iv:
                return None
            operand = params.index(read.memref)
            return GemmWorkload(
                name,
                rows.loop_name.data,
                spatial.loop_name.data,
                reduction.loop_name.data,
                rows.trip_count,
                spatial.trip_count,
                reduction.trip_count,
                operand,
                list(read.indices).index(j_iv),
                is_weight_at_every_call(module, name, operand) and not b_batched,
                b_batched,
                any(lp.trip_count > 1 for lp in _enclosing_loops(rows)),
                params.index(other.memref) if isinstance(other, memref.LoadOp) and other.memref in params else None,
                isinstance(update, arith.AddfOp),
            )
    return None


def _tile_vectors(target: Target) -> tuple[int, ...]:
    """The register tile's widths in vectors, preferred first: two, else one (x86: AVX2's 6 x 2 vectors in 16
    registers, AVX-512's 8 x 2 in 32); four first where 32 registers hold 4-lane vectors (NEON; RVV at VLEN 128) or
    SVE's of a fixed width (neoverse-v1: 8 lanes), whose 8 x 2 tile would leave half the registers unused."""
    return (4, 2, 1) if target.vector_registers >= 32 and (target.vector_lanes <= 4 or target.sve_bits) else (2, 1)


@dataclass(frozen=True)
class GemmRule:
    """GEMM: register tile mr x nr over packed B panels (see the module docstring)."""

    name: str = "gemm"

    def match(self, module: ModuleOp, kernel: func.FuncOp, target: Target) -> GemmWorkload | None:
        found = sum_of_products(kernel)
        if found is None:
            return None
        _, update, product = found
        return gemm_workload(module, kernel, update, product)

    def space(self, workload: GemmWorkload, target: Target) -> Space:
        """No knobs (no schedule) where no vector width divides the columns, or B is neither a weight to pack nor
        walked by the columns with unit stride."""
        default = self.default(workload, target)
        if not default:
            return Space()
        lanes = target.vector_lanes
        g = workload
        parts = _split_k_choices(g, target)
        split_k = (Knob("split_k", parts, default["split_k"]),) if len(parts) > 1 else ()
        return Space(
            (
                Knob("mr", tuple(range(1, min(GEMM_MAX_ROWS, g.m) + 1)), default["mr"]),
                Knob("nr", tuple(f * lanes for f in (1, 2, 3, 4) if g.n % (f * lanes) == 0), default["nr"]),
                Knob("kc", _depth_blocks(g), default["kc"]),
                Knob("nc", _column_blocks(g, lanes), 0),
                Knob("order", tuple(ORDERS), default["order"]),
                Knob("mc", GEMM_ROW_BLOCKS, default["mc"]),
                Knob("unroll", (True, False), True),
                Knob("pack", _pack_choices(g), default["pack"]),
                Knob("pack_a", (False, True) if g.a_operand is not None else (False,), default["pack_a"]),
                Knob("prefetch", (0, 8, 16) if g.b_is_weight else (0,), 0),
                *split_k,
            )
        )

    def default(self, workload: GemmWorkload, target: Target) -> Config:
        g, lanes = workload, target.vector_lanes
        nr = next((vectors * lanes for vectors in _tile_vectors(target) if g.n % (vectors * lanes) == 0), None)
        if nr is None or (not g.b_is_weight and not g.b_batched and g.b_dim != 1):
            return {}
        vectors = nr // lanes
        registers = target.vector_registers
        heights = (8, 7, 6, 4, 3, 2, 1) if vectors > 1 or g.m % 8 == 0 else (12, 8, 7, 6, 4, 3, 2, 1)
        fitting = [f for f in heights if f * vectors + vectors + 1 <= registers]
        mr, widest = next(f for f in fitting if g.m % f == 0), fitting[0]
        if mr < widest and ((not g.batched and g.m >= 4 * widest) or (mr < 4 and g.m > widest)):
            mr = widest  # the widest tile, with a tail of rows
        kc = g.k if g.m == 1 else _largest_divisor(g.k, GEMM_DEFAULT_DEPTH_BLOCK)  # a vector: one pass over B
        # Batched with one depth block and a tail of rows: the rows inside the column panels, so that the tail shares
        # each panel of B and the batch loops' body stays one nest (their parallel band takes the panels too).
        order, mc = ("k,j,i" if g.batched and kc == g.k and g.m % mr else "k,i,j"), 0
        l2_floats = target.cache_bytes[1] // 4
        if g.b_is_weight and kc * g.n >= l2_floats and g.m >= 4 * mr:
            order, kc = "k,j,i", _largest_divisor(g.k, GEMM_MAX_DEPTH_BLOCK)
            mc = max(f for f in GEMM_ROW_BLOCKS if f * kc <= l2_floats // 4 or f == 0)
        config: Config = {
            "mr": mr,
            "nr": nr,
            "kc": kc,
            "nc": 0,
            "order": order,
            "mc": mc,
            "unroll": True,
            "pack": g.b_is_weight,
            "pack_a": False,
            "prefetch": 0,
        }
        if len(parts := _split_k_choices(g, target)) > 1:
            # B comes from memory at every call either way: packing it would only hold the weight twice.
            streams = 4 * g.k * g.n > target.cache_bytes[2]
            config["split_k"] = max(p for p in parts if p <= SPLIT_K_PARTS) if streams else 0
            config["pack"] = not streams
        return config

    def apply(self, workload: GemmWorkload, config: Config) -> list[str]:
        if config.get("split_k"):
            return _split_k_steps(workload, config)
        name, i, j, k = workload.kernel, workload.rows, workload.cols, workload.depth
        mr, nr, kc, nc = config["mr"], config["nr"], config["kc"], int(config["nc"])
        if nc % int(nr):
            nc = 0
        order = str(config["order"])
        tiles = _row_block_tiles(workload.m, int(mr), int(config["mc"])) if order == "k,j,i" else 1
        outer = ORDERS[order].format(
            k=k,
            J=f"{j}_o_o," if nc else "",
            j=f"{j}_o_i" if nc else f"{j}_o",
            I=f"{i}_o_o," if tiles > 1 else "",
            i=f"{i}_o_i" if tiles > 1 else f"{i}_o",
        )
        steps = [
            f"loop-decompose-reduction{{kernel={name}}}",
            f"loop-split{{kernel={name} loop={j}_init factor={nr}}}",
            f"loop-vectorize{{kernel={name} loop={j}_init_i}}",
        ]
        split_rows = f"loop-split{{kernel={name} loop={i} factor={mr}}}"
        split_columns = f"loop-split{{kernel={name} loop={j}_o factor={nc // int(nr)}}}" if nc else None
        steps.append(f"loop-split{{kernel={name} loop={j} factor={nr}}}")
        steps.append(f"loop-split{{kernel={name} loop={k} factor={kc}}}")
        tail = workload.m % int(mr)
        in_panels = bool(tail) and order == "k,j,i" and tiles <= 1 and not config.get("pack_a")
        if in_panels:
            # The rows split inside the column panels: the tail of rows runs in each panel after the full tiles, on
            # the panel of B they left in L1, and the panels stay the only loop of their parent (a parallel band).
            rows_inside = ",".join(i if loop_name == f"{i}_o" else loop_name for loop_name in outer.split(","))
            steps += [split_columns] if split_columns else []
            steps += [f"loop-reorder{{kernel={name} order={rows_inside},{k}_i,{j}_i}}", split_rows]
            steps.append(f"loop-reorder{{kernel={name} order={i}_o,{k}_i,{i}_i,{j}_i}}")
        else:
            # With a tail of rows, split them after the columns: the tail then has the column split packing B needs.
            steps += [step for step in (split_rows, split_columns) if step]
            if tiles > 1:
                steps.append(f"loop-split{{kernel={name} loop={i}_o factor={tiles}}}")
            steps.append(f"loop-reorder{{kernel={name} order={outer},{k}_i,{i}_i,{j}_i}}")
        if config["pack"]:
            steps.append(f"loop-pack{{kernel={name} operand={workload.b_operand} dim={workload.b_dim} factor={nr}}}")
        if ahead := int(config["prefetch"]):
            depth = 1 if config["pack"] else 1 - workload.b_dim  # packed panels are [j / nr, k, nr]
            operand = workload.b_operand
            steps.append(f"loop-prefetch{{kernel={name} loop={k}_i operand={operand} dim={depth} ahead={ahead}}}")
        tile = outer.split(",")[-1]
        whole = int(kc) == workload.k  # one depth block: each tile's sum is final
        steps += register_tile_steps(name, f"{i}_i", f"{j}_i", tile, bool(config["unroll"]), fill=whole)
        if config.get("pack_a") and (block := _a_block_loop(workload, outer.split(","), int(mr), int(kc), tiles)):
            steps.append(f"loop-cache-read{{kernel={name} loop={block} operand={workload.a_operand}}}")
        if tail:
            steps += _tail_tile_steps(name, i, j, k, tail, bool(config["unroll"]), whole, in_panels)
        return steps


SPLIT_K_PARTS = 32
"""Depth ranges the default split-K GEMV reduces separately (its parallel tasks: 16 threads share them evenly)."""
SPLIT_K_CHOICES = (0, 8, SPLIT_K_PARTS, 128)
"""`split_k` knob values: 0 (no split), or about how many depth ranges."""
GEMV_ROW_BLOCK = 8
"""Rows of B a split-K GEMV's tile reads per pass over its partial row (unrolled: the row is loaded and stored once
per this many rows)."""


def split_depth(depth: int, parts: int) -> int:
    """Rows of each depth range of a split-K GEMV asking for `parts` ranges: a multiple of `GEMV_ROW_BLOCK`, at most
    `depth // parts`, down to half that, leaving the fewest rows over (a peeled tail the combining nest reduces)."""
    largest = depth // parts // GEMV_ROW_BLOCK * GEMV_ROW_BLOCK
    sizes = range(largest, max(GEMV_ROW_BLOCK, largest // 2) - 1, -GEMV_ROW_BLOCK)
    return min(sizes, key=lambda size: (depth % size, -size))


def _split_k_choices(g: GemmWorkload, target: Target) -> tuple[int, ...]:
    """The `split_k` values of a float GEMV (one row, unbatched) reading a weight B by the columns with unit stride:
    those whose depth ranges hold at least `GEMV_ROW_BLOCK` rows and whose partials fit `RFACTOR_MAX_BYTES`; (0,) for
    any other GEMM."""
    if g.m != 1 or g.batched or not g.b_is_weight or g.b_dim != 1 or not g.float_sum:
        return (0,)
    fitting = [
        parts
        for parts in SPLIT_K_CHOICES[1:]
        if g.k // parts >= GEMV_ROW_BLOCK and 4 * (g.k // split_depth(g.k, parts)) * g.n <= RFACTOR_MAX_BYTES
    ]
    return (0, *fitting)


def _split_k_steps(g: GemmWorkload, config: Config) -> list[str]:
    """The split-K GEMV (`loop-rfactor`): B read unpacked, whole rows at a time. The depth is split into ranges (the
    parallel tasks), each reduced into a partial row of the output: `GEMV_ROW_BLOCK` rows of B at a time, across the
    row in `nr`-wide register tiles that add into the partial row (zeroed first by the same task); then one small
    nest sums the partials (and the depth's tail) into the output. The other knobs (packing, row tiles, blocks) do
    not apply:

        k_o (parallel) { i_rf_init { j_rf_init } ; i_rf { k_i_o { j_rf_o { k_i_i (unrolled) { j_rf_i (vector) }}}}}
        i { j { k_o_r ; k_t }}
    """
    name, i, j, k = g.kernel, g.rows, g.cols, g.depth
    nr = int(config["nr"])
    steps = [
        f"loop-split{{kernel={name} loop={k} factor={split_depth(g.k, int(config['split_k']))}}}",
        f"loop-rfactor{{kernel={name} loop={k}_o}}",
        f"loop-decompose-reduction{{kernel={name}}}",
        f"loop-split{{kernel={name} loop={j}_rf_init factor={nr}}}",
        f"loop-vectorize{{kernel={name} loop={j}_rf_init_i}}",
        f"loop-split{{kernel={name} loop={j}_rf factor={nr}}}",
        f"loop-split{{kernel={name} loop={k}_i factor={GEMV_ROW_BLOCK}}}",
        f"loop-reorder{{kernel={name} order={k}_o,{i}_rf,{k}_i_o,{j}_rf_o,{k}_i_i,{j}_rf_i}}",
        f"loop-compute-at{{kernel={name} stage={k}_o_init at={k}_o}}",  # each task zeroes its own partial row
        *register_tile_steps(name, f"{k}_i_i", f"{j}_rf_i", f"{j}_rf_o", bool(config["unroll"])),
    ]
    # The ranges write distinct rows of the partials, a local buffer whose stores parallel placement does not check
    # (it would take the depth blocks inside too): the ranges are the parallel loop here, whatever `parallel` says.
    return [*steps, f"loop-parallel{{kernel={name} loop={k}_o}}"]


def _tail_tile_steps(
    name: str, i: str, j: str, k: str, rows: int, unroll: bool, fill: bool, in_panels: bool
) -> list[str]:
    """The peeled tail of `rows` rows as one more register tile per column panel, as the full tiles are (without
    this its columns stayed scalar and it accumulated in memory: ViT's 197-token GEMMs with 8-row tiles ran three
    times slower at 16 threads than with 1-row tiles). `i_t` is split whole into `i_t_o` (one iteration) and
    `i_t_i`; a tail beside the full tiles of the nest has its own panel and depth loops, one in each panel
    (`in_panels`) only the inner ones:

        i_t { j_o { j_i { k_o { k_i }}}}  ->  j_o { k_o { i_t_o { k_i { i_t_i (unrolled) { j_i (vector) }}}}}
        j_o { ... ; i_t { k_i { j_i }}}   ->  j_o { ... ; i_t_o { k_i { i_t_i (unrolled) { j_i (vector) }}}}
    """
    t = tail_name(i)
    outer = [] if in_panels else [in_tail(f"{j}_o", i), in_tail(f"{k}_o", i)]
    order = [*outer, f"{t}_o", in_tail(f"{k}_i", i), f"{t}_i", in_tail(f"{j}_i", i)]
    return [
        f"loop-split{{kernel={name} loop={t} factor={rows}}}",
        f"loop-reorder{{kernel={name} order={','.join(order)}}}",
        *register_tile_steps(name, f"{t}_i", in_tail(f"{j}_i", i), f"{t}_o", unroll, fill),
    ]


def _a_block_loop(g: GemmWorkload, outer: list[str], mr: int, kc: int, tiles: int) -> str | None:
    """The loop around the innermost column-panel loop, where `pack_a` copies the rows of A that the panels share
    (`mr x kc` inside a row tile loop, a row block's `tiles * mr x kc` inside `i_o_o`, every full tile's rows
    inside `k_o`), or None where there is none or the copy would exceed `CACHE_READ_MAX_BYTES`."""
    panel = max(n for n, name in enumerate(outer) if name.startswith(f"{g.cols}_o"))
    if panel == 0:
        return None
    inside = outer[panel:]
    if f"{g.rows}_o" in inside or f"{g.rows}_o_o" in inside:
        rows = g.m - g.m % mr
    else:
        rows = mr * tiles if f"{g.rows}_o_i" in inside else mr
    return outer[panel - 1] if rows * kc * 4 <= CACHE_READ_MAX_BYTES else None


def _depth_blocks(g: GemmWorkload) -> tuple[int, ...]:
    """The `kc` values: the divisors of the depth up to `GEMM_MAX_DEPTH_BLOCK`, and the whole depth where there is one
    row (a classifier at batch 1 streams B once; blocks would only split its parallel loop into one dispatch each)."""
    blocks = divisors(g.k, GEMM_MAX_DEPTH_BLOCK)
    return (*blocks, g.k) if g.m == 1 and g.k not in blocks else blocks


def _largest_divisor(value: int, largest: int) -> int:
    """The largest divisor of `value` up to `largest`."""
    return next(f for f in range(min(value, largest), 0, -1) if value % f == 0)


def _row_block_tiles(m: int, mr: int, mc: int) -> int:
    """Register tiles per row block: the largest divisor of the full tiles (`m // mr`) covering at most `mc` rows
    (0 where no row block is asked for or even one tile is more)."""
    full = m // mr
    return max((d for d in range(1, full + 1) if full % d == 0 and d * mr <= mc), default=0)


def _enclosing_loops(target: loop.ForOp) -> list[loop.ForOp]:
    """The loops around `target`, outermost first."""
    loops: list[loop.ForOp] = []
    parent = target.parent_op()
    while isinstance(parent, loop.ForOp):
        loops.insert(0, parent)
        parent = parent.parent_op()
    return loops


def _column_blocks(g: GemmWorkload, lanes: int) -> tuple[int, ...]:
    """The `nc` values: 0 (no column block), or `GEMM_COLUMN_BLOCKS` panels of two vectors (one where two do not
    divide the columns) that divide the columns at least twice."""
    panel = 2 * lanes if g.n % (2 * lanes) == 0 else lanes
    return (0, *(panel * f for f in GEMM_COLUMN_BLOCKS if g.n % (panel * f) == 0 and g.n // (panel * f) >= 2))


def _pack_choices(g: GemmWorkload) -> tuple[bool, ...]:
    """Packing needs a weight; not packing needs B walked by the columns with unit stride."""
    if not g.b_is_weight:
        return (False,)
    return (True, False) if g.b_dim == 1 else (True,)


GEMM = GemmRule()
