"""The search over one task's space: the default first, random samples, then evolution ranked by a cost model.

`Search` holds a task's measured configs. `propose(count)` gives configs not measured yet: the default config if it is
not measured, then its neighbours (one knob changed, in rounds over the knobs, nearest values first: with a few trials
per task, the question worth asking first is which single decision of the default is wrong, as a cold-weights tuning
of ResNet-50 showed for `prefetch`), random samples until `RANDOM_START` configs are measured, then mutations (one or
two knobs changed) of the fastest few, ranked by the cost model, with one random sample in a batch of two or more, so
the model does not close the search.
The cost model is ridge regression of log latency on the knobs (one-hot per value, plus log2 of integer values),
fitted to this task's measurements: cheap, and enough to say which knob values pay.

    search = Search(task.space, seed=0)
    for config in search.propose(4):
        search.add(config, measure(config))   # latency in seconds, or None for a failed candidate
"""

from __future__ import annotations

import math
import random

import numpy as np

from minimlc.lowering.schedule.space import Config, Space
from minimlc.lowering.strategy.tuning_db import config_id

RANDOM_START = 4
"""Configs measured (default included) before the cost model ranks proposals."""
POPULATION = 4
"""How many of the fastest configs mutations start from."""
PROPOSALS = 64
"""Candidates the cost model ranks per batch."""
RIDGE = 1.0


class CostModel:
    """Ridge regression of log latency on knob features (see the module docstring)."""

    def __init__(self, space: Space):
        self.space = space
        self.weights: np.ndarray | None = None

    def features(self, config: Config) -> np.ndarray:
        values: list[float] = [1.0]
        for knob in self.space.knobs:
            values += [float(config[knob.name] == value) for value in knob.values]
            value = config[knob.name]
            if isinstance(value, int) and not isinstance(value, bool):
                values.append(math.log2(value + 1))
        return np.array(values)

    def fit(self, configs: list[Config], latencies: list[float]) -> None:
        x = np.stack([self.features(c) for c in configs])
        y = np.log(np.array(latencies))
        self.weights = np.linalg.solve(x.T @ x + RIDGE * np.eye(x.shape[1]), x.T @ y)

    def predict(self, configs: list[Config]) -> np.ndarray:
        """Predicted log latencies (zeros before `fit`)."""
        if self.weights is None:
            return np.zeros(len(configs))
        return np.stack([self.features(c) for c in configs]) @ self.weights


class Search:
    """The measured configs of one task and the next ones to measure (see the module docstring)."""

    def __init__(self, space: Space, seed: int = 0):
        self.space = space
        self.rng = random.Random(seed)
        self.measured: dict[str, tuple[Config, float | None]] = {}
        self.model = CostModel(space)

    def size(self) -> int:
        return math.prod(len(knob.values) for knob in self.space.knobs)

    def exhausted(self) -> bool:
        return len(self.measured) >= self.size()

    def add(self, config: Config, latency: float | None) -> None:
        self.measured[config_id(config)] = (config, latency)

    def best(self) -> tuple[Config, float] | None:
        timed = [(c, t) for c, t in self.measured.values() if t is not None]
        return min(timed, key=lambda item: item[1]) if timed else None

    def propose(self, count: int) -> list[Config]:
        """Up to `count` configs not measured yet, most promising first."""
        chosen: dict[str, Config] = {}

        def take(config: Config) -> None:
            key = config_id(config)
            if key not in self.measured and key not in chosen and len(chosen) < count:
                chosen[key] = config

        take(self.space.default())
        for config in self.neighbours(self.space.default()):
            take(config)
        if len(chosen) == count:
            return list(chosen.values())
        if len(self.measured) + len(chosen) < RANDOM_START:
            for _ in range(20 * count):
                take(self.space.sample(self.rng))
            return list(chosen.values())
        timed = [(c, t) for c, t in self.measured.values() if t is not None]
        if len(timed) >= 2:
            self.model.fit([c for c, _ in timed], [t for _, t in timed])
        parents = [c for c, _ in sorted(timed, key=lambda item: item[1])[:POPULATION]] or [self.space.default()]
        pool: dict[str, Config] = {}
        for _ in range(4 * PROPOSALS):
            child = self._mutate(self.rng.choice(parents))
            if config_id(child) not in self.measured:
                pool[config_id(child)] = child
            if len(pool) >= PROPOSALS:
                break
        ranked = [pool[k] for k in sorted(pool, key=lambda k: self.model.predict([pool[k]])[0])]
        for config in ranked[: max(1, count - 1)]:
            take(config)
        take(self.space.sample(self.rng))  # exploration
        for config in ranked:
            take(config)
        for _ in range(20 * count):  # a small space's mutations may all be measured
            take(self.space.sample(self.rng))
        return list(chosen.values())

    def neighbours(self, config: Config) -> list[Config]:
        """`config` with one knob changed, for every knob and every other value of it: in rounds over the knobs, each
        round changing every knob to its next value nearest the current one (in the knob's order), so every decision
        is asked within the first rounds; in knob order, all of one knob's values came first, and ResNet-50's
        convolutions (16-30 trials each in a 500-trial tune) spent them on `mr`'s 13 values before `channels`,
        `prefetch` or `channel_block` were tried."""
        rounds: list[list[Config]] = []
        for knob in self.space.knobs:
            here = knob.values.index(config[knob.name]) if config[knob.name] in knob.values else 0
            others = sorted((i for i in range(len(knob.values)) if i != here), key=lambda i: (abs(i - here), i))
            for number, index in enumerate(others):
                if number == len(rounds):
                    rounds.append([])
                rounds[number].append({**config, knob.name: knob.values[index]})
        return [neighbour for round_ in rounds for neighbour in round_]

    def _mutate(self, config: Config) -> Config:
        child = dict(config)
        knobs = [knob for knob in self.space.knobs if len(knob.values) > 1]
        for knob in self.rng.sample(knobs, min(len(knobs), self.rng.choice((1, 1, 2)))):
            child[knob.name] = self.rng.choice([v for v in knob.values if v != config[knob.name]])
        return child
