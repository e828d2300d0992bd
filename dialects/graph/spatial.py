"""Spatial ops: folding columns of blocks back into an image (ONNX Col2Im, and ConvTranspose's second half) and
sampling an image at a grid of coordinates (ONNX GridSample).

Other spatial ONNX ops (Resize, DepthToSpace, LpPool, AffineGrid, ...) are compositions of graph ops in the
frontend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, UnitAttr, f32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    F32Tensor,
    I64Array,
    Shape,
    check_result_shape,
    i64_array,
    shape_of,
    tensor_type,
    unit_flags,
)
from minimlc.dialects.graph.core import GraphOp, UnaryOp

__all__ = ["GRID_SAMPLE_MODES", "GRID_SAMPLE_PADDING_MODES", "Col2ImOp", "GridSampleOp", "col2im_blocks"]


def col2im_blocks(
    image: Sequence[int], block: Sequence[int], strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
) -> list[int]:
    """How many block positions fit along each image axis (ONNX Col2Im's rule; <= 0 where none fits)."""
    spatial = len(image)
    return [
        (image[a] + pads[a] + pads[spatial + a] - ((block[a] - 1) * dilations[a] + 1)) // strides[a] + 1
        for a in range(spatial)
    ]


@irdl_op_definition
class Col2ImOp(UnaryOp):
    """Sum columns of blocks back into an image (ONNX Col2Im): input (N, C * prod(block), L), one column per block
    position of the grid `columns` (row-major, L = prod(columns); block position p along an axis starts at image
    coordinate `p * stride - pad_begin`), row `c * prod(block) + tap`; result (N, C, image...), positions no block
    covers are 0: `graph.col2im %cols {block_shape = array<i64: 2, 2>, columns = array<i64: 4, 4>, strides =
    array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
    : tensor<1x8x16xf32> -> tensor<1x2x5x5xf32>`."""

    name = "graph.col2im"
    input = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    block_shape = prop_def(I64Array)
    columns = prop_def(I64Array)
    strides = prop_def(I64Array)
    pads = prop_def(I64Array)
    dilations = prop_def(I64Array)

    def __init__(
        self,
        input: SSAValue,
        image_shape: Sequence[int],
        block_shape: Sequence[int],
        columns: Sequence[int],
        *,
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
    ):
        n, rows = shape_of(input)[:2]
        properties = {
            "block_shape": i64_array(block_shape),
            "columns": i64_array(columns),
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
        }
        super().__init__(input, (n, rows // math.prod(block_shape), *image_shape), f32, properties)

    def verify_(self) -> None:
        x, y = shape_of(self.input), shape_of(self.result)
        block = self.block_shape.get_values()
        spatial = len(block)
        values = (self.strides.get_values(), self.dilations.get_values(), self.pads.get_values())
        if (
            len(x) != 3
            or len(y) != 2 + spatial
            or any(len(v) != count for v, count in zip(values, (spatial, spatial, 2 * spatial)))
        ):
            raise VerifyException(
                f"{self.name}: input {x}, result {y} and attributes do not agree on {spatial} spatial axes"
            )
        if any(v < 1 for v in (*block, *values[0], *values[1])) or any(p < 0 for p in values[2]):
            raise VerifyException(f"{self.name}: block_shape, strides and dilations must be positive, pads >= 0")
        columns = self.columns.get_values()
        if len(columns) != spatial or any(c < 1 for c in columns) or x[2] != math.prod(columns):
            raise VerifyException(f"{self.name}: input has {x[2]} columns, but the column grid is {list(columns)}")
        if x[1] % math.prod(block):
            raise VerifyException(
                f"{self.name}: input rows {x[1]} are not a multiple of the block size {math.prod(block)}"
            )
        check_result_shape(self, (x[0], x[1] // math.prod(block), *y[2:]))


GRID_SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
GRID_SAMPLE_PADDING_MODES = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(GraphOp):
    """Sample an image (N, C, spatial...) at the normalised [-1, 1] coordinates of a grid (N, out..., rank), the
    last axis x first (ONNX GridSample-20): `graph.grid_sample %x, %grid {mode = "bilinear", padding_mode =
    "zeros"} : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32>`."""

    name = "graph.grid_sample"
    input = operand_def(F32Tensor)
    grid = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    mode = prop_def(StringAttr)
    padding_mode = prop_def(StringAttr)
    align_corners = opt_prop_def(UnitAttr)
    assembly_format = "$input `,` $grid attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, grid: SSAValue, *, mode: str, padding_mode: str, align_corners: bool = False):
        x, g = shape_of(input), shape_of(grid)
        properties = {"mode": StringAttr(mode), "padding_mode": StringAttr(padding_mode)}
        properties |= unit_flags(align_corners=align_corners)
        super().__init__(operands=[input, grid], result_types=[tensor_type((*x[:2], *g[1:-1]))], properties=properties)

    def verify_(self) -> None:
        x, g = shape_of(self.input), shape_of(self.grid)
        expected: Shape = (*x[:2], *g[1:-1])
        if len(x) < 3 or len(g) != len(x) or g[0] != x[0] or g[-1] != len(x) - 2:
            raise VerifyException(
                f"{self.name}: grid shape {g} does not match input shape {x} (need (N, out..., {len(x) - 2}))"
            )
        if self.mode.data not in GRID_SAMPLE_MODES or self.padding_mode.data not in GRID_SAMPLE_PADDING_MODES:
            raise VerifyException(
                f"{self.name}: unknown mode '{self.mode.data}' or padding_mode '{self.padding_mode.data}'"
            )
        check_result_shape(self, expected)


OPS: list[type[IRDLOperation]] = [Col2ImOp, GridSampleOp]
