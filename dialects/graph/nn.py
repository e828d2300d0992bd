"""Neural-network ops: convolution, pooling, normalisation, and activations with parameters."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation

__all__: list[str] = []

OPS: list[type[IRDLOperation]] = []
