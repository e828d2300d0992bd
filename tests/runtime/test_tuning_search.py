"""The search over one task's space: the default, then its one-knob neighbours, then random samples and cost-model
ranked mutations; never a config twice, and every config of a small space in the end."""

from __future__ import annotations

import math

from minimlc.lowering.schedule.space import Knob, Space
from minimlc.lowering.strategy.tuning_db import config_id
from minimlc.tuner.search import Search

SPACE = Space(
    (
        Knob("nr", (16, 32, 64), 32),
        Knob("mr", (7, 14), 14),
        Knob("prefetch", (False, True), False),
    )
)


def latency(config: dict) -> float:
    """A made-up cost: 64-wide tiles and prefetching pay."""
    return 1.0 / config["nr"] * (0.8 if config["prefetch"] else 1.0) * (1.0 if config["mr"] == 14 else 1.3)


def test_the_default_and_its_neighbours_come_first():
    """Neighbours in rounds over the knobs, each knob's nearest other value first: every knob is asked once before any
    knob is asked twice."""
    search = Search(SPACE, seed=0)
    first = search.propose(5)
    assert first == [
        {"nr": 32, "mr": 14, "prefetch": False},
        {"nr": 16, "mr": 14, "prefetch": False},
        {"nr": 32, "mr": 7, "prefetch": False},
        {"nr": 32, "mr": 14, "prefetch": True},
        {"nr": 64, "mr": 14, "prefetch": False},
    ]


def test_a_knob_with_many_values_does_not_crowd_out_the_others():
    """A convolution's `mr` has 14 values: its neighbours alternate with the other knobs', nearest values first."""
    space = Space(
        (Knob("mr", tuple(range(1, 15)), 6), Knob("prefetch", (False, True), False), Knob("block", (0, 64), 0))
    )
    neighbours = Search(space).neighbours(space.default())
    assert [(c["mr"], c["prefetch"], c["block"]) for c in neighbours[:5]] == [
        (5, False, 0),
        (6, True, 0),
        (6, False, 64),
        (7, False, 0),
        (4, False, 0),
    ]
    assert len(neighbours) == 13 + 1 + 1


def test_the_search_measures_each_config_once_and_finds_the_best():
    search = Search(SPACE, seed=1)
    seen: list[str] = []
    while not search.exhausted():
        proposals = search.propose(3)
        assert proposals, "a space not exhausted still has proposals"
        for config in proposals:
            seen.append(config_id(config))
            search.add(config, latency(config))
    assert len(seen) == len(set(seen)) == math.prod(len(knob.values) for knob in SPACE.knobs)
    best = search.best()
    assert best is not None and best[0] == {"nr": 64, "mr": 14, "prefetch": True}


def test_failed_configs_count_as_measured_but_never_win():
    search = Search(SPACE, seed=2)
    (default,) = search.propose(1)
    search.add(default, None)
    assert search.best() is None
    nxt = search.propose(2)
    assert default not in nxt and len(nxt) == 2
    search.add(nxt[0], 1e-3)
    assert search.best() == (nxt[0], 1e-3)
