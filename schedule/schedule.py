"""`Schedule`: TVM's TensorIR schedule API over minimlc's loop level, each primitive one of the `loop-*` passes.

    sch = Schedule(te.create_function([A, B, C], name="matmul"))   # lowered with te-to-loop
    block = sch.get_block("C")                                     # the kernel of compute "C"
    i, j, k = sch.get_loops(block)
    jo, ji = sch.split(j, factors=[None, 16])
    sch.reorder(i, jo, k, ji)
    sch.vectorize(ji)
    sch.parallel(i)
    print(sch.trace)   # loop-split{kernel=C_0 loop=j factor=16},loop-reorder{kernel=C_0 order=i,j_o,k,j_i},...
    print(sch.mod)     # the loop IR

Every primitive runs the pass on a copy of the module and keeps it only if the pass succeeds, so a refused step
leaves the schedule as it was; the error (`ScheduleError`) names the kernel, the loop and what is wrong. The trace is
the pass list: `mini-opt -p te-to-loop` on the te function and then `-p '<trace>'` gives the same IR, and
`Schedule.replay` applies a printed trace here. Where minimlc's primitive differs from TVM's, the docstring says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil, prod

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop, te
from minimlc.lowering.loop.analysis import loops_of
from minimlc.lowering.pipeline import run_passes, split_pass_list

PRIMITIVES = (
    "loop-split",
    "loop-tile",
    "loop-reorder",
    "loop-fuse",
    "loop-vectorize",
    "loop-parallel",
    "loop-unroll",
    "loop-cache-write",
    "loop-cache-read",
    "loop-compute-at",
    "loop-decompose-reduction",
)
"""The passes a trace may hold (not `loop-pack`: it packs weights, and a te function has none)."""


class ScheduleError(ValueError):
    """A schedule primitive refused: names the kernel, the loop and what is wrong."""


@dataclass(frozen=True)
class BlockRV:
    """A compute's kernel (TVM's block): `sch.get_block("C")`."""

    kernel: str
    name: str


@dataclass(frozen=True)
class LoopRV:
    """One loop of a kernel, by name (TVM's loop random variable); stale once a primitive replaces the loop."""

    kernel: str
    name: str

    def __str__(self) -> str:
        return self.name


class Trace:
    """The primitives applied so far, as pass items; `str(trace)` is the `mini-opt -p` pipeline."""

    def __init__(self, items: Sequence[str] = ()):
        self.items = list(items)

    def __str__(self) -> str:
        return ",".join(self.items)

    def __repr__(self) -> str:
        return f"Trace({self.items!r})"

    def __len__(self) -> int:
        return len(self.items)


class Schedule:
    """A te function (`te.create_function`'s `func.FuncOp`) lowered to loops by `te-to-loop`, scheduled in place."""

    def __init__(self, function: func.FuncOp):
        if not isinstance(function, func.FuncOp):
            raise TypeError(f"Schedule takes a te function (te.create_function), got {type(function).__name__}")
        self.te_function = function.clone()
        self.name = function.sym_name.data
        self.mod = ModuleOp([function.clone()])
        """The loop-level module (print it for the IR)."""
        run_passes(self.mod, ["te-to-loop"])
        self.trace = Trace()
        self._blocks = self._kernels_by_compute()

    # -- finding blocks and loops -------------------------------------------------------------------------------

    def kernels(self) -> list[str]:
        """The kernel functions, in the order the entry calls them."""
        functions = [op for op in self.mod.ops if isinstance(op, func.FuncOp)]
        return [op.sym_name.data for op in functions if op.sym_name.data != self.name]

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The kernel of compute `name` (te-to-loop names it `<name>_<n>`), or a kernel by its own name;
        `func_name`, as in TVM, must be the scheduled function's name if given."""
        if func_name is not None and func_name != self.name:
            raise ScheduleError(f"no function named '{func_name}' (this schedule is of '{self.name}')")
        if name in self._blocks:
            return BlockRV(self._blocks[name], name)
        kernels = self.kernels()
        if name not in kernels:
            blocks = ", ".join(f"{compute} ({kernel})" for compute, kernel in self._blocks.items())
            raise ScheduleError(f"no block named '{name}' (blocks: {blocks or 'none'})")
        return BlockRV(name, name)

    def _kernels_by_compute(self) -> dict[str, str]:
        """Compute name -> the kernel te-to-loop made of it: the entry calls one kernel per compute, in order (two
        computes with identical bodies share one kernel, so scheduling either schedules both)."""
        tags = [op.tag.data for op in self.te_function.walk() if isinstance(op, te.ComputeOp)]
        entry = next(op for op in self.mod.ops if isinstance(op, func.FuncOp) and op.sym_name.data == self.name)
        callees = [call.callee.string_value() for call in entry.walk() if isinstance(call, func.CallOp)]
        assert len(tags) == len(callees), "te-to-loop calls one kernel per compute"
        return dict(zip(tags, callees))

    def get_loops(self, block: BlockRV | str) -> list[LoopRV]:
        """Every loop of the block's kernel, outermost first, in program order (init nests included)."""
        block = self.get_block(block) if isinstance(block, str) else block
        return [LoopRV(block.kernel, lp.loop_name.data) for lp in loops_of(self._kernel(block.kernel))]

    def trip_count(self, loop_rv: LoopRV) -> int:
        """The number of iterations of a loop."""
        return self._loop(loop_rv).trip_count

    # -- primitives ---------------------------------------------------------------------------------------------

    def split(self, loop_rv: LoopRV, factors: Sequence[int | None]) -> list[LoopRV]:
        """Split a loop into len(factors) nested loops (TVM's `split`): one factor may be None (inferred); the
        product may exceed the trip count only through the outermost factor, whose remainder becomes a tail loop
        `<name>_t` (see `loop-split`). Returns the new loops, outermost first."""
        trip = self._loop(loop_rv).trip_count
        inner = self._inner_factors(loop_rv, list(factors), trip)
        loops = [loop_rv]
        for factor in [prod(inner[n:]) for n in range(len(inner))]:
            target = loops.pop()
            self._apply(f"loop-split{{kernel={target.kernel} loop={target.name} factor={factor}}}")
            loops += [LoopRV(target.kernel, f"{target.name}_o"), LoopRV(target.kernel, f"{target.name}_i")]
        return loops

    def tile(self, loops: Sequence[LoopRV], sizes: Sequence[int]) -> list[LoopRV]:
        """Tile a perfect nest (`loop-tile`): returns the outer loops, then the inner ones."""
        kernel = self._same_kernel(loops, "tile")
        names = ",".join(self._loop_name(lp) for lp in loops)
        self._apply(f"loop-tile{{kernel={kernel} loops={names} sizes={','.join(map(str, sizes))}}}")
        return [LoopRV(kernel, f"{lp.name}_o") for lp in loops] + [LoopRV(kernel, f"{lp.name}_i") for lp in loops]

    def reorder(self, *loops: LoopRV) -> None:
        """Permute the loops of a perfect nest into this order, outermost first (`loop-reorder`)."""
        kernel = self._same_kernel(loops, "reorder")
        self._apply(f"loop-reorder{{kernel={kernel} order={','.join(self._loop_name(lp) for lp in loops)}}}")

    def fuse(self, first: LoopRV, second: LoopRV) -> LoopRV:
        """Merge two adjacent sibling loops of equal bounds into `first` (`loop-fuse`). Unlike TVM's `fuse`, which
        merges nested loops into one, minimlc fuses consecutive loops (classic loop fusion)."""
        kernel = self._same_kernel((first, second), "fuse")
        self._apply(f"loop-fuse{{kernel={kernel} first={self._loop_name(first)} second={self._loop_name(second)}}}")
        return first

    def vectorize(self, loop_rv: LoopRV) -> None:
        """Run the loop as vector operations (`loop-vectorize`; split it by the vector width first): an innermost
        loop, holding no loop but unrolled ones."""
        self._apply(f"loop-vectorize{{kernel={loop_rv.kernel} loop={self._loop_name(loop_rv)}}}")

    def parallel(self, loop_rv: LoopRV) -> None:
        """Run the loop's iterations on the thread pool (`loop-parallel`)."""
        self._apply(f"loop-parallel{{kernel={loop_rv.kernel} loop={self._loop_name(loop_rv)}}}")

    def unroll(self, loop_rv: LoopRV) -> None:
        """Unroll the loop completely (`loop-unroll`)."""
        self._apply(f"loop-unroll{{kernel={loop_rv.kernel} loop={self._loop_name(loop_rv)}}}")

    def cache_write(self, loop_rv: LoopRV, accumulate: bool = False) -> None:
        """Keep the output tile one iteration of the loop writes in a local buffer (`loop-cache-write`). Where TVM's
        `cache_write` takes a block and a buffer index, minimlc's takes the loop whose iteration owns the tile."""
        option = " accumulate=true" if accumulate else ""
        self._apply(f"loop-cache-write{{kernel={loop_rv.kernel} loop={self._loop_name(loop_rv)}{option}}}")

    def cache_read(self, loop_rv: LoopRV, operand: int) -> None:
        """Copy what one iteration of the loop reads of the kernel's parameter `operand` into a local buffer first,
        laid out in the order the loops inside walk it (`loop-cache-read`). Where TVM's `cache_read` takes a block, a
        buffer index and a scope, minimlc's takes the loop whose iteration the copy serves."""
        self._apply(f"loop-cache-read{{kernel={loop_rv.kernel} loop={self._loop_name(loop_rv)} operand={operand}}}")

    def compute_at(self, stage: LoopRV, at: LoopRV) -> None:
        """Move the nest whose outermost loop is `stage` into loop `at` of the nest after it (`loop-compute-at`):
        minimlc's stages are the nests of one kernel (a decomposed reduction's init nest, a kernel group's stages)."""
        kernel = self._same_kernel((stage, at), "compute_at")
        self._apply(f"loop-compute-at{{kernel={kernel} stage={self._loop_name(stage)} at={self._loop_name(at)}}}")

    def decompose_reduction(self, block: BlockRV | str, loop_rv: LoopRV | None = None) -> list[LoopRV]:
        """Accumulate the reduction in the output, zeroed by an init nest before the whole nest
        (`loop-decompose-reduction`); TVM's `loop` argument, if given, must be the outermost loop. Returns the init
        nest's loops."""
        block = self.get_block(block) if isinstance(block, str) else block
        outermost = self.get_loops(block)[0]
        if loop_rv is not None and loop_rv != outermost:
            raise ScheduleError(
                f"decompose_reduction of kernel '{block.kernel}' at loop '{loop_rv.name}': minimlc puts the init nest "
                f"before the whole nest, so the loop must be the outermost one, '{outermost.name}'"
            )
        before = {lp.name for lp in self.get_loops(block)}
        self._apply(f"loop-decompose-reduction{{kernel={block.kernel}}}")
        return [lp for lp in self.get_loops(block) if lp.name not in before]

    def replay(self, trace: Trace | str) -> None:
        """Apply a trace (`str(sch.trace)` or a `mini-opt -p` list of the primitives' passes) step by step."""
        for item in trace.items if isinstance(trace, Trace) else split_pass_list(trace):
            name = item.split("{", 1)[0].strip()
            if name not in PRIMITIVES:
                raise ScheduleError(f"'{name}' is not a schedule primitive (primitives: {', '.join(PRIMITIVES)})")
            self._apply(item)

    # -- helpers ------------------------------------------------------------------------------------------------

    def _apply(self, item: str) -> None:
        trial = self.mod.clone()
        try:
            run_passes(trial, [item])
        except DiagnosticException as error:
            raise ScheduleError(str(error)) from None
        self.mod = trial
        self.trace.items.append(item)

    def _kernel(self, name: str) -> func.FuncOp:
        for op in self.mod.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name and op.body.blocks:
                return op
        raise ScheduleError(f"no kernel named '{name}' (kernels: {', '.join(self.kernels()) or 'none'})")

    def _loop(self, loop_rv: LoopRV) -> loop.ForOp:
        if not isinstance(loop_rv, LoopRV):
            raise TypeError(f"expected a loop from sch.get_loops or a primitive, got {loop_rv!r}")
        loops = loops_of(self._kernel(loop_rv.kernel))
        for candidate in loops:
            if candidate.loop_name.data == loop_rv.name:
                return candidate
        names = ", ".join(candidate.loop_name.data for candidate in loops)
        raise ScheduleError(
            f"kernel '{loop_rv.kernel}' has no loop '{loop_rv.name}' (a primitive replaced it?); its loops: {names}"
        )

    def _loop_name(self, loop_rv: LoopRV) -> str:
        return self._loop(loop_rv).loop_name.data

    def _same_kernel(self, loops: Sequence[LoopRV], primitive: str) -> str:
        kernels = {lp.kernel for lp in loops}
        if len(kernels) != 1:
            raise ScheduleError(f"{primitive}: the loops belong to different kernels ({', '.join(sorted(kernels))})")
        return kernels.pop()

    def _inner_factors(self, loop_rv: LoopRV, factors: list[int | None], trip: int) -> list[int]:
        """The factors of the loops inside the outermost one, checked against the trip count."""
        where = f"split of loop '{loop_rv.name}' ({trip} iterations) in kernel '{loop_rv.kernel}'"
        if len(factors) < 2:
            raise ScheduleError(f"{where}: give at least two factors, got {factors}")
        if factors.count(None) > 1:
            raise ScheduleError(f"{where}: at most one factor may be None, got {factors}")
        if any(f is not None and (isinstance(f, bool) or not isinstance(f, int) or f < 1) for f in factors):
            raise ScheduleError(f"{where}: factors must be positive integers or None, got {factors}")
        known = prod(f for f in factors if f is not None)
        if None in factors[1:]:
            position = factors.index(None)
            missing, remainder = divmod(trip, known)
            if remainder or missing < 1:
                raise ScheduleError(f"{where}: the factors {factors} leave no whole factor at position {position}")
            factors[position] = missing
        inner = [f for f in factors[1:] if f is not None]
        if factors[0] is not None and factors[0] < ceil(trip / prod(inner)):
            raise ScheduleError(f"{where}: the factors {factors} cover fewer than {trip} iterations")
        if prod(inner) > trip:
            raise ScheduleError(f"{where}: the inner factors {inner} exceed the trip count")
        return inner
