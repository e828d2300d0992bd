"""Tensor ops: shape manipulation, concatenation, slicing, gathering, and reductions."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation

__all__: list[str] = []

OPS: list[type[IRDLOperation]] = []
