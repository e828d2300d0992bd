"""The liveness-based arena planner: buffers alive at the same time never overlap, and memory is reused."""

from __future__ import annotations

import random

import pytest

from minimlc.lowering.program.loop_plan_memory import ALIGNMENT, Lifetime, plan_offsets


def check_plan(lifetimes: list[Lifetime], offsets: list[int], arena: int) -> None:
    for index, (item, offset) in enumerate(zip(lifetimes, offsets)):
        assert offset % ALIGNMENT == 0
        assert offset + item.size <= arena
        for other, other_offset in zip(lifetimes[index + 1 :], offsets[index + 1 :]):
            alive_together = item.start <= other.end and other.start <= item.end
            disjoint = offset + item.size <= other_offset or other_offset + other.size <= offset
            assert not alive_together or disjoint, f"{item}@{offset} overlaps {other}@{other_offset}"


@pytest.mark.parametrize("seed", range(20))
def test_random_lifetimes_never_overlap(seed: int) -> None:
    rng = random.Random(seed)
    lifetimes = []
    for _ in range(rng.randint(1, 40)):
        start = rng.randint(0, 50)
        lifetimes.append(Lifetime(rng.choice([4, 64, 100, 4096, 12345]), start, start + rng.randint(0, 8)))
    offsets, arena = plan_offsets(lifetimes)
    check_plan(lifetimes, offsets, arena)
    assert arena <= sum(-(-item.size // ALIGNMENT) * ALIGNMENT for item in lifetimes)


def test_a_chain_needs_two_buffers() -> None:
    chain = [Lifetime(1024, step, step + 1) for step in range(10)]
    offsets, arena = plan_offsets(chain)
    check_plan(chain, offsets, arena)
    assert arena == 2048


def test_all_alive_at_once_needs_everything() -> None:
    lifetimes = [Lifetime(100, 0, 5), Lifetime(200, 1, 4), Lifetime(64, 2, 3)]
    offsets, arena = plan_offsets(lifetimes)
    check_plan(lifetimes, offsets, arena)
    assert arena == 128 + 256 + 64


def test_empty() -> None:
    assert plan_offsets([]) == ([], 0)
