"""Sessions of a model with symbolic dimensions: one compiled specialisation per distinct set of input shapes.

    session = InferenceSession("bert.onnx")            # input_ids: ['batch', 'sequence'], no input_shapes
    session.get_inputs()[0].shape                      # ('batch', 'sequence'), as ONNX Runtime reports it
    session.run(None, {"input_ids": ids_1x32, ...})    # compiles for (1, 32), then runs
    session.run(None, {"input_ids": ids_4x77, ...})    # compiles for (4, 77); (1, 32) again runs at once

A run binds each symbol to the size its inputs give it: inputs that share a symbol must agree, a declared size must
match, the rank must be the declared one, and the size must lie within the symbol's `input_bounds`, or the run is
refused naming the input, the axis and the symbol. The
shapes then pick a compiled session (`Specializations.session_for`), compiling one the first time (through the
compile cache, so another process reuses it). The last `LIMIT` specialisations stay bound; older ones are dropped,
and come back from the compile cache if their shapes recur.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from minimlc.frontend.signature import TensorInfo
from minimlc.runtime.extents import symbol_sizes
from minimlc.runtime.session import Session

Shapes = tuple[tuple[int, ...], ...]
"""The concrete shape of every input, in input order."""

LIMIT = 8
"""Specialisations kept bound at once (each holds its code, weights and packed buffers)."""


class Specializations:
    """Compiled sessions of one model by input shapes; `compile(shapes)` makes a new one."""

    def __init__(
        self,
        inputs: Sequence[TensorInfo],
        compile: Callable[[dict[str, tuple[int, ...]]], Session],
        bounds: Mapping[str, tuple[int, int]] | None = None,
    ):
        self.inputs = list(inputs)
        self.compile = compile
        self.bounds = dict(bounds or {})
        """Per symbol, the sizes a run may give it (`input_bounds`)."""
        self._sessions: OrderedDict[Shapes, Session] = OrderedDict()
        self._lock = threading.Lock()
        self.compiles = 0
        """Specialisations compiled (or loaded from the compile cache) so far."""
        self.latest: Session | None = None
        """The session of the last run."""

    def shapes_of(self, input_feed: Mapping[str, Any]) -> Shapes:
        """The inputs' shapes, after checking them against the declared ones (ranks, sizes, shared symbols, bounds:
        `runtime.extents.symbol_sizes`)."""
        shapes = tuple(tuple(np.shape(input_feed[info.name])) for info in self.inputs)
        symbol_sizes(self.inputs, shapes, self.bounds)
        return shapes

    def session_for(self, shapes: Shapes) -> Session:
        """The session compiled for `shapes`, compiling it if there is none (one compile at a time)."""
        with self._lock:
            session = self._sessions.get(shapes)
            if session is None:
                session = self.compile({info.name: shape for info, shape in zip(self.inputs, shapes)})
                self.compiles += 1
                self._sessions[shapes] = session
                while len(self._sessions) > LIMIT:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(shapes)
            self.latest = session
            return session

    def compiled_shapes(self) -> list[dict[str, tuple[int, ...]]]:
        """The input shapes of the specialisations bound now, least recently used first."""
        with self._lock:
            return [{info.name: shape for info, shape in zip(self.inputs, key)} for key in self._sessions]


def has_free_dimensions(inputs: Sequence[TensorInfo]) -> bool:
    """Whether any input declares a symbolic (str) or unknown (None) dimension."""
    return any(not isinstance(size, int) for info in inputs for size in info.shape)

