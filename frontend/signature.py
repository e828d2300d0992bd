"""`TensorInfo`: a model input's or output's name, shape and dtype; light (no ONNX, no xDSL), so that a saved
model's signature loads without the frontend."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TensorInfo:
    """Name, static shape and element type of a model input or output (like ORT's NodeArg)."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def type(self) -> str:
        """ONNX Runtime's type string, e.g. "tensor(float)"."""
        from onnx import TensorProto, helper

        element = TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(self.dtype))
        return f"tensor({element.lower()})"
