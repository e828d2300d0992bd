"""`cse`: common subexpression elimination, in one walk of the module.

An op with no memory effects is replaced by an equal op (name, operands, attributes, properties, result types,
regions) that dominates it: earlier in its block or in a block around it. An op that only reads memory is replaced by
an equal op earlier in the same block when nothing between the two may write; every other op stays. Ops left unused
and free of effects are erased. An op isolated from above (`func.func`) starts with nothing known.

    %a = arith.addi %x, %y : index          %a = arith.addi %x, %y : index
    %b = arith.addi %x, %y : index    ->    %l = memref.load %m[%a] : memref<8xf32>
    %l = memref.load %m[%a] : ...           "test.use"(%l, %l)
    %k = memref.load %m[%b] : ...
    "test.use"(%l, %k)

The same rewrite as xDSL's `cse`, which asks for each repeated read whether an op between the two writes by walking
the ops between them (and into their regions): quadratic in a block's length, seconds for NonMaxSuppression's 2,000
ops. Here each block counts its writes as the walk passes them, and a read is reused only if the count has not moved
since; each op's effects are asked for once, and once per op class where its effect traits do not look at the op
(`_ClassFacts`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import (
    EffectInstance,
    IsolatedFromAbove,
    IsTerminator,
    MemoryAllocEffect,
    MemoryEffect,
    MemoryEffectKind,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoMemoryEffect,
    RecursiveMemoryEffect,
    SymbolOpInterface,
    get_effects,
)
from xdsl.transforms.common_subexpression_elimination import OperationInfo

_FIXED_EFFECT_TRAITS = (NoMemoryEffect, MemoryReadEffect, MemoryWriteEffect, MemoryAllocEffect, MemoryFreeEffect)
"""xDSL's effect traits whose effects are the same for every op (their `get_effects` does not read the op)."""


@dataclass(frozen=True)
class _ClassFacts:
    """What `cse` asks of an op that its class alone answers (traits are class-level in xDSL): `effects` is None
    where they depend on the op (a recursive or op-dependent effect trait: ask `get_effects(op)`), `unknown` where
    the op may do anything, `recursive` where its one effect trait is `RecursiveMemoryEffect` (its effects are its
    ops'); `dead_if_unused` is `would_be_trivially_dead` for ops with fixed effects, `removable` its part that the
    class answers (neither a terminator nor a symbol)."""

    terminator: bool
    isolated: bool
    effects: frozenset[EffectInstance] | None
    unknown: bool
    recursive: bool
    removable: bool
    dead_if_unused: bool

    @staticmethod
    def of(cls: type[Operation]) -> _ClassFacts:
        traits = cls.get_traits_of_type(MemoryEffect)
        fixed = all(getattr(trait.get_effects, "__func__", None) in _FIXED_FUNCTIONS for trait in traits)
        effects = frozenset(e for trait in traits for e in trait.get_effects(None)) if traits and fixed else None  # type: ignore[arg-type]
        terminator = cls.has_trait(IsTerminator, value_if_unregistered=False)
        symbol = cls.has_trait(SymbolOpInterface, value_if_unregistered=False)
        return _ClassFacts(
            terminator=cls.has_trait(IsTerminator),
            isolated=cls.has_trait(IsolatedFromAbove, value_if_unregistered=True),
            effects=effects,
            unknown=not traits,
            recursive=[type(trait) for trait in traits] == [RecursiveMemoryEffect],
            removable=not terminator and not symbol,
            dead_if_unused=effects is not None
            and not terminator
            and not symbol
            and all(e.kind is MemoryEffectKind.READ for e in effects),
        )


_FIXED_FUNCTIONS = {trait.get_effects.__func__ for trait in _FIXED_EFFECT_TRAITS}  # type: ignore[attr-defined]
_FACTS: dict[type[Operation], _ClassFacts] = {}


class _Key(OperationInfo):
    """An op as a table key (equal ops, equal keys), its hash computed once: a lookup probes every scope."""

    def __init__(self, op: Operation) -> None:
        super().__init__(op)
        self._hash = super().__hash__()

    def __hash__(self) -> int:
        return self._hash


@dataclass
class _Known:
    """An op that later equal ops may reuse; for a read, its block and the block's write count when it was seen."""

    op: Operation
    block: Block | None = None
    writes: int = 0


@dataclass
class _Eliminator:
    scopes: list[dict[_Key, _Known]] = field(default_factory=list)
    dead: list[Operation] = field(default_factory=list)
    nested_effects: dict[Operation, frozenset[EffectInstance] | None] = field(default_factory=dict)
    """The effects of each op with a `RecursiveMemoryEffect` seen so far (a loop's are its ops', a loop around it
    reads them here: xDSL's `get_effects` walks every nested op again at each level, and twice per op)."""

    def effects(self, op: Operation, facts: _ClassFacts) -> AbstractSet[EffectInstance] | None:
        """`get_effects(op)`."""
        if facts.effects is not None or facts.unknown:
            return facts.effects
        if not facts.recursive:
            return get_effects(op)
        if op in self.nested_effects:
            return self.nested_effects[op]
        found: set[EffectInstance] | None = set()
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    inner_effects = self.effects(inner, _facts(inner))
                    if inner_effects is None or found is None:
                        found = None
                        break
                    found.update(inner_effects)
        self.nested_effects[op] = effects = None if found is None else frozenset(found)
        return effects

    def lookup(self, key: _Key) -> _Known | None:
        for scope in reversed(self.scopes):
            if (known := scope.get(key)) is not None:
                return known
        return None

    def region(self, region: Region, isolated: bool) -> None:
        outer = self.scopes
        if isolated:
            self.scopes = []
        for block in region.blocks:  # each block sees its own ops and those around the region, not its siblings'
            self.scopes.append({})
            self.block(block)
            self.scopes.pop()
        self.scopes = outer

    def block(self, block: Block) -> None:
        writes = 0
        op = block._first_op  # the op links, not `block.ops`: nothing here moves an op, and it is a call less per op
        while op is not None:
            facts = _facts(op)
            if op.regions:
                for region in op.regions:
                    self.region(region, facts.isolated)
            effects = self.effects(op, facts)
            pure = effects is not None and not effects
            reads = effects is not None and bool(effects) and all(e.kind is MemoryEffectKind.READ for e in effects)
            self.operation(op, facts, effects, block, None if pure else writes if reads else -1)
            if not (pure or reads):
                writes += 1
            op = op._next_op

    def operation(
        self,
        op: Operation,
        facts: _ClassFacts,
        effects: AbstractSet[EffectInstance] | None,
        block: Block,
        writes: int | None,
    ) -> None:
        """Erase `op` if dead (xDSL's `is_trivially_dead`, of its `effects`), reuse an equal op for it, or remember
        it. `writes`: None for an op free of effects, the count of writes before `op` in `block` for one that only
        reads, -1 for any other."""
        if facts.terminator:
            return
        if not all(result.first_use is None for result in op.results):
            dead = False
        elif facts.effects is not None:
            dead = facts.dead_if_unused
        else:
            dead = facts.removable and effects is not None and all(_no_effect_outside(op, e) for e in effects)
        if dead:
            self.dead.append(op)
            return
        if writes == -1 or any(len(region.blocks) > 1 for region in op.regions):
            return
        key = _Key(op)
        known = self.lookup(key)
        if known is not None and (writes is None or (known.block is block and known.writes == writes)):
            for result, replacement in zip(op.results, known.op.results, strict=True):
                result.replace_all_uses_with(replacement)
            self.dead.append(op)
        else:
            self.scopes[-1][key] = _Known(op, None if writes is None else block, writes or 0)


def _facts(op: Operation) -> _ClassFacts:
    return _FACTS.get(type(op)) or _FACTS.setdefault(type(op), _ClassFacts.of(type(op)))


def is_side_effect_free(op: Operation) -> bool:
    """xDSL's `is_side_effect_free(op)`, answered once per op class where its effect traits do not read the op
    (`_ClassFacts`): loop-to-scf's unroll asks it of every op of every unrolled body."""
    facts = _facts(op)
    if facts.effects is not None or facts.unknown:
        return facts.effects is not None and not facts.effects
    effects = get_effects(op)
    return effects is not None and not effects


def _no_effect_outside(op: Operation, effect: EffectInstance) -> bool:
    """Whether `effect` of `op` is unseen outside it, as xDSL's `result_only_effects` tells: a read, or an
    allocation of a value defined inside `op`."""
    value = effect.value
    return effect.kind == MemoryEffectKind.READ or (
        effect.kind == MemoryEffectKind.ALLOC and isinstance(value, SSAValue) and op.is_ancestor(value.owner)
    )


def eliminate_common_subexpressions(root: Operation) -> None:
    """Run `cse` on the regions of `root`."""
    eliminator = _Eliminator()
    for region in root.regions:
        eliminator.region(region, isolated=True)
    rewriter = Rewriter()
    for op in eliminator.dead:  # the ops of a region before the op that holds it
        rewriter.erase_op(op)


class CsePass(ModulePass):
    """Eliminate common subexpressions: pure ops dominated by an equal op, and reads repeated with no write between."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        eliminate_common_subexpressions(op)
