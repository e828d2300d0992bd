"""ONNX converters for neural-network ops: convolution, pooling, normalisation, parameterised activations.

Each converter is named exactly like its ONNX op and takes the node's inputs positionally and its attributes as
keyword arguments with ONNX's defaults; `CONVERTERS` lists them (merged with the other families in `onnx.py`).
"""

from __future__ import annotations

from minimlc.frontend.onnx_ops import Converter

CONVERTERS: dict[str, Converter] = {}
