"""Lower the integer ops of quantized inference (`graph.matmul_integer`, `graph.conv_integer`) to `te` sum reductions
in i32: each 8-bit operand is widened (`extui` for ui8, `extsi` for i8) and less its zero point before the product.

Assumes the verifier's operands: 8-bit data, zero points of one element or one per row / column / output channel.
The dot-product forms pass on what the importer found of a weight's values (`graph.weight "w" {minimlc.value_bits =
7 : i64}` -> `llvmx.dot_u8s8 ... {rhs_bits = 7 : i64}`, `vpmaddubsw` on AVX2) and record the weight on the module
(`minimlc.weight_bits`), so that the runtime refuses weights bound later that do not fit.

    %c = te.compute "matmul_integer" ... { %a = te.read ... : ui8 ; ... ; te.yield (a - az) * (b - bz) : i32 } sum
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i8, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, llvm_ext, te
from minimlc.dialects.graph.core import VALUE_BITS_ATTR
from minimlc.lowering.abi import WEIGHT_BITS_ATTR
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    Shape,
    broadcast_indices,
    build_compute,
    constant,
    index_constant,
    read,
)
from minimlc.lowering.graph_to_te.nn import (
    _affine,  # pyright: ignore[reportPrivateUsage]
    _window_coordinates,  # pyright: ignore[reportPrivateUsage]
)
from minimlc.lowering.target import Target, target_of


def _less_zero(value: SSAValue, zero_point: SSAValue, index: SSAValue) -> SSAValue:
    """`value - zero_point[index]` (index 0 for a one-element zero point), both widened to i32."""
    extent = graph.shape_of(zero_point)
    position = [] if not extent else [index if extent[0] > 1 else index_constant(0)]
    zero = scalar.cast(read(zero_point, position), i32)
    return arith.SubiOp(scalar.cast(value, i32), zero).result


class MatMulIntegerLowering(RewritePattern):
    """Lower matmul_integer to each operand less its zero point in i32 ("matmul_integer_lhs", "matmul_integer_rhs":
    a weight's is computed once, at load time) and one i32 sum reduction "matmul_integer" of their products (the
    integer GEMM rule's shape); or, where `_matmul_takes_dot_products`, to the dot-product form
    (`_dot_product_matmul`)."""

    def __init__(self, dot_product_matmuls: set[graph.MatMulIntegerOp]):
        self.dot_product_matmuls = dot_product_matmuls

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MatMulIntegerOp, rewriter: PatternRewriter) -> None:
        lhs, rhs, shape = graph.shape_of(op.lhs), graph.shape_of(op.rhs), graph.shape_of(op.result)
        if op in self.dot_product_matmuls:
            rewriter.replace(op, _dot_product_matmul(op, lhs, shape))
            return
        batch = shape[: len(shape) - (len(lhs) > 1) - (len(rhs) > 1)]

        def less_zero(operand: SSAValue, zero: SSAValue, axis: int) -> te.ComputeOp:
            rank = len(graph.shape_of(operand))

            def body(indices: Indices) -> SSAValue:
                return _less_zero(read(operand, indices), zero, indices[axis % rank])

            tag = "matmul_integer_lhs" if operand is op.lhs else "matmul_integer_rhs"
            return build_compute(tag, graph.shape_of(operand), body)

        left, right = less_zero(op.lhs, op.lhs_zero, -2), less_zero(op.rhs, op.rhs_zero, -1)

        def product(indices: Indices) -> SSAValue:
            outer, k = indices[:-1], indices[-1]

            def batched(operand: Shape, *rows_cols: SSAValue) -> list[SSAValue]:
                return [*broadcast_indices(operand[:-2], batch, outer[: len(batch)]), *rows_cols]

            row = outer[len(batch)] if len(lhs) > 1 else k
            column = outer[-1] if len(rhs) > 1 else k
            a = read(left.result, [k] if len(lhs) == 1 else batched(lhs, row, k))
            b = read(right.result, [k] if len(rhs) == 1 else batched(rhs, k, column))
            return arith.MuliOp(a, b).result

        matmul = build_compute("matmul_integer", shape, product, (lhs[-1],), "sum")
        rewriter.replace(op, [left, right, matmul])


class ConvIntegerLowering(RewritePattern):
    """Lower conv_integer. Group 1 on a target with the u8 x s8 dot product (VNNI), an int8 weight whose zero point
    is known to be 0, and whole vectors of output channels, takes the dot-product form (`_dot_product_conv`).
    Other group-1 ones go channels-last, in the integer convolution rule's shape: the weight less its
    zero point "conv_integer_weight" (computed once, at load time), the input less its zero point, padded with 0 and
    channels last, "conv_integer_input" (N, H', W', C), their i32 products summed over (KH, KW, C) into a
    channels-last "conv_integer" (N, OH, OW, Co), and a "transpose" back to (N, Co, OH, OW). Other groups take one
    direct reduction "conv_integer" over channels and taps (a tap in the padding adds nothing)."""

    def __init__(self, dot_product_convs: set[graph.ConvIntegerOp]):
        self.dot_product_convs = dot_product_convs

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvIntegerOp, rewriter: PatternRewriter) -> None:
        x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result)
        if op in self.dot_product_convs:
            rewriter.replace(op, _dot_product_conv(op, x, w, shape))
            return
        if op.group.value.data == 1:
            rewriter.replace(op, _channels_last_conv(op, x, w, shape))
            return
        spatial = len(x) - 2
        group = op.group.value.data
        in_per_group, out_per_group = w[1], w[0] // group

        def product(indices: Sequence[SSAValue]) -> SSAValue:
            n, co = indices[0], indices[1]
            outputs, c, taps = indices[2 : 2 + spatial], indices[2 + spatial], indices[3 + spatial :]
            g = co if out_per_group == 1 else arith.DivUIOp(co, index_constant(out_per_group)).result
            ci = g if in_per_group == 1 else arith.AddiOp(_affine(g, in_per_group, 0), c).result
            weight = _less_zero(read(op.weight, [co, c, *taps]), op.weight_zero, co)
            return arith.MuliOp(_window_less_zero(op, [n, ci], outputs, taps), weight).result

        rewriter.replace(op, build_compute("conv_integer", shape, product, w[1:], "sum"))


def _window_less_zero(
    op: graph.ConvIntegerOp, leading: Sequence[SSAValue], outputs: Indices, taps: Indices
) -> SSAValue:
    """The input at a window position less its zero point, in i32; 0 in the padding."""
    kernel = graph.shape_of(op.weight)[2:]
    guard, coordinates = _window_coordinates(op.input, outputs, taps, op, kernel)  # pyright: ignore[reportArgumentType]
    value = _less_zero(read(op.input, [*leading, *coordinates]), op.input_zero, leading[0])
    return guard.select(value, constant(0, i32))


def _channels_last_conv(op: graph.ConvIntegerOp, x: Shape, w: Shape, shape: Shape) -> list[te.ComputeOp]:
    spatial = len(x) - 2
    strides, pads, dilations = op.strides.get_values(), op.pads.get_values(), op.dilations.get_values()
    reach = [(shape[2 + a] - 1) * strides[a] + (w[2 + a] - 1) * dilations[a] + 1 for a in range(spatial)]

    def weight(indices: Indices) -> SSAValue:
        return _less_zero(read(op.weight, indices), op.weight_zero, indices[0])

    def padded(indices: Indices) -> SSAValue:
        n, *window, c = indices
        valid: SSAValue | None = None
        coordinates: list[SSAValue] = []
        for axis, position in enumerate(window):
            coordinate = _affine(position, 1, -pads[axis])
            inside = [arith.CmpiOp(coordinate, index_constant(0), "sge").result]
            inside.append(arith.CmpiOp(coordinate, index_constant(x[2 + axis]), "slt").result)
            for condition in inside:
                valid = condition if valid is None else arith.AndIOp(valid, condition).result
            low = arith.MaxSIOp(coordinate, index_constant(0)).result
            coordinates.append(arith.MinSIOp(low, index_constant(x[2 + axis] - 1)).result)
        value = _less_zero(read(op.input, [n, c, *coordinates]), op.input_zero, n)
        assert valid is not None
        return arith.SelectOp(valid, value, constant(0, i32)).result

    weights = build_compute("conv_integer_weight", w, weight)
    data = build_compute("conv_integer_input", (x[0], *reach, x[1]), padded)

    def product(indices: Indices) -> SSAValue:
        n, outputs, co = indices[0], indices[1 : 1 + spatial], indices[1 + spatial]
        taps, c = indices[2 + spatial : 2 + 2 * spatial], indices[-1]
        window = [
            arith.AddiOp(_affine(outputs[a], strides[a], 0), _affine(taps[a], dilations[a], 0)).result
            for a in range(spatial)
        ]
        return arith.MuliOp(read(weights.result, [co, c, *taps]), read(data.result, [n, *window, c])).result

    channels_last = (x[0], *shape[2:], w[0])
    conv = build_compute("conv_integer", channels_last, product, (*w[2:], w[1]), "sum")

    def transposed(indices: Indices) -> SSAValue:
        return read(conv.result, [indices[0], *indices[2:], indices[1]])

    return [weights, data, conv, build_compute("transpose", shape, transposed)]


def _takes_dot_products(op: graph.ConvIntegerOp, target: Target) -> bool:
    """Whether conv_integer takes the u8 x s8 dot-product form: group 1, the target has a fast one, the weight
    is int8 with a zero point known to be 0, and the output channels fill whole vectors."""
    return (
        op.group.value.data == 1
        and target.has_fast_dot_u8s8
        and graph.element_type(op.weight) == i8
        and graph.is_static_zero(op.weight_zero)
        and graph.shape_of(op.weight)[0] % target.dot_u8s8_lanes == 0
    )


def _word_index(word: SSAValue, j: int, extent: int) -> SSAValue:
    """Index `word + j * words` (`words = ceil(extent / 4)`) of an axis of `extent` grouped into words of four bytes,
    clamped into it. Byte j of consecutive words reads consecutive elements, so a word computed per vector lane
    reads four contiguous vectors (`4 word + j` would read every fourth element: shuffles); a dot product sums
    every byte of a word, so which four elements share one is free, as long as both operands agree."""
    index = _unclamped_index(word, j, extent)
    return index if _always_inside(j, extent) else arith.MinSIOp(index, index_constant(extent - 1)).result


def _word_byte(word: SSAValue, j: int, extent: int) -> tuple[SSAValue, SSAValue | None]:
    """`_word_index` and whether the index lies inside the axis (None: always)."""
    if _always_inside(j, extent):
        return _word_index(word, j, extent), None
    inside = arith.CmpiOp(_unclamped_index(word, j, extent), index_constant(extent), "slt").result
    return _word_index(word, j, extent), inside


def _unclamped_index(word: SSAValue, j: int, extent: int) -> SSAValue:
    return _affine(word, 1, j * -(-extent // 4))


def _always_inside(j: int, extent: int) -> bool:
    """Whether byte j of every word lies inside an axis of `extent`."""
    return (j + 1) * -(-extent // 4) <= extent


def _shifted(value: SSAValue) -> SSAValue:
    """An 8-bit value widened to i32 as an unsigned byte: an int8 one plus 128."""
    widened = scalar.cast(value, i32)
    return widened if value.type != i8 else arith.AddiOp(widened, constant(128, i32)).result


def _matmul_takes_dot_products(op: graph.MatMulIntegerOp, target: Target) -> bool:
    """Whether matmul_integer takes the u8 x s8 dot-product form: the target has a fast one, B is a 2-D int8
    matrix with a zero point known to be 0 and columns in whole vectors, A has rows (and B's batch)."""
    lhs, rhs, shape = graph.shape_of(op.lhs), graph.shape_of(op.rhs), graph.shape_of(op.result)
    return (
        target.has_fast_dot_u8s8
        and graph.element_type(op.rhs) == i8
        and graph.is_static_zero(op.rhs_zero)
        and len(rhs) == 2
        and len(lhs) == len(shape)
        and rhs[1] % target.dot_u8s8_lanes == 0
    )


def weight_bits(value: SSAValue) -> int | None:
    """The signed bits an int8 `graph.weight`'s values fit as the importer found them (`VALUE_BITS_ATTR`), or None
    (a value computed in the graph, or a weight of 8 bits)."""
    owner = value.owner
    bits = owner.attributes.get(VALUE_BITS_ATTR) if isinstance(owner, graph.WeightOp) else None
    return bits.value.data if isinstance(bits, IntegerAttr) and 1 <= bits.value.data < 8 else None


def _record_weight_bits(module: ModuleOp, weights: Sequence[SSAValue]) -> None:
    """State on `module` (`WEIGHT_BITS_ATTR`) the bits of the weights its dot products rely on, for the runtime to
    refuse weights that do not fit them."""
    narrow = module.attributes.get(WEIGHT_BITS_ATTR)
    found = dict(narrow.data) if isinstance(narrow, DictionaryAttr) else {}
    for value in weights:
        bits = weight_bits(value)
        if bits is not None:
            assert isinstance(value.owner, graph.WeightOp)
            found[value.owner.weight_name.data] = IntegerAttr(bits, 64)
    if found:
        module.attributes[WEIGHT_BITS_ATTR] = DictionaryAttr(found)


def _dot_product_matmul(op: graph.MatMulIntegerOp, lhs: Shape, shape: Shape) -> list[te.ComputeOp]:
    """The u8 x s8 dot-product form of matmul_integer: A's rows as i32 words of four along k "matmul_integer_lhs"
    (..., M, K/4) of u8 (int8 shifted by +128), B's columns as words "matmul_integer_rhs"
    (K/4, N) of s8 (past K: 0), "matmul_integer" summing `llvmx.dot_u8s8` of them over K/4, and
    "matmul_integer_output" subtracting `a_zero[row] * sum(B[:, n])` ("matmul_integer_rhs_sum")."""
    depth, columns = graph.shape_of(op.rhs)
    words = -(-depth // 4)
    row_zeros = graph.shape_of(op.lhs_zero)[0]

    def lhs_word(indices: Indices) -> SSAValue:
        *outer, word = indices

        def byte(j: int) -> SSAValue:
            k = _word_index(word, j, depth)  # past K, any byte: B's is 0
            return _shifted(read(op.lhs, [*outer, k]))

        return _byte_word(byte)

    def rhs_word(indices: Indices) -> SSAValue:
        word, column = indices

        def byte(j: int) -> SSAValue:
            k, inside = _word_byte(word, j, depth)
            value = scalar.cast(read(op.rhs, [k, column]), i32)
            return value if inside is None else arith.SelectOp(inside, value, constant(0, i32)).result

        return _byte_word(byte)

    def column_sum(indices: Indices) -> SSAValue:
        return scalar.cast(read(op.rhs, [indices[1], indices[0]]), i32)

    left = build_compute("matmul_integer_lhs", (*lhs[:-1], words), lhs_word)
    right = build_compute("matmul_integer_rhs", (words, columns), rhs_word)
    sums = build_compute("matmul_integer_rhs_sum", (columns,), column_sum, (depth,), "sum")

    def product(indices: Indices) -> SSAValue:
        *outer, column, word = indices
        a, b = read(left.result, [*outer, word]), read(right.result, [word, column])
        return llvm_ext.DotU8S8Op(constant(0, i32), a, b, rhs_bits=weight_bits(op.rhs)).result

    matmul = build_compute("matmul_integer", shape, product, (words,), "sum")

    def corrected(indices: Indices) -> SSAValue:
        row, column = indices[-2], indices[-1]
        zero = _shifted(read(op.lhs_zero, [row if row_zeros > 1 else index_constant(0)]))
        share = arith.MuliOp(zero, read(sums.result, [column])).result
        return arith.SubiOp(read(matmul.result, indices), share).result

    return [left, right, sums, matmul, build_compute("matmul_integer_output", shape, corrected)]


def _byte_word(byte_of: Callable[[int], SSAValue]) -> SSAValue:
    """The i32 word of four bytes, `byte_of(j)` (an i32 in [0, 256) or [-128, 128)) in bits 8j..8j+7."""
    word: SSAValue | None = None
    for j in range(4):
        byte = arith.AndIOp(byte_of(j), constant(255, i32)).result
        shifted = byte if j == 0 else arith.ShLIOp(byte, constant(8 * j, i32)).result
        word = shifted if word is None else arith.OrIOp(word, shifted).result
    assert word is not None
    return word


def _dot_product_conv(op: graph.ConvIntegerOp, x: Shape, w: Shape, shape: Shape) -> list[te.ComputeOp]:
    """The u8 x s8 dot-product form (see `ConvIntegerLowering`): channels grouped by four bytes into i32 words
    (byte j of word w is channel `w + j * words`, `_word_index`),
    "conv_integer_input" (N, H', W', C/4) of u8 (an int8 input shifted by +128), padded spatially with the
    (shifted) zero point, "conv_integer_weight" (Co, C/4, KH, KW) of s8 (channels past C are 0, so the input's bytes
    there, clamped reads, add nothing), both at load time where they can be; "conv_integer" (N, OH, OW, Co) sums
    `llvmx.dot_u8s8` of the words over (KH, KW, C/4), and its transposition back to (N, Co, OH, OW),
    "conv_integer_output" (which te-channels-last may keep channels-last), subtracts
    `zero * sum(w[co])` ("conv_integer_zero_share" of "conv_integer_weight_sum", at load time where the zero point
    is a weight): the products summed are of the raw (shifted) bytes, and
    `sum (x - zero) * w = sum x * w - zero * sum w`; the padding reads the zero point, so it adds nothing."""
    spatial, channels = len(x) - 2, x[1]
    words = -(-channels // 4)
    strides, pads, dilations = op.strides.get_values(), op.pads.get_values(), op.dilations.get_values()
    reach = [(shape[2 + a] - 1) * strides[a] + (w[2 + a] - 1) * dilations[a] + 1 for a in range(spatial)]

    def zero_point() -> SSAValue:
        return _shifted(read(op.input_zero, [index_constant(0)]))

    def input_word(indices: Indices) -> SSAValue:
        n, *window, word = indices
        valid: SSAValue | None = None
        coordinates: list[SSAValue] = []
        for axis, position in enumerate(window):
            coordinate = _affine(position, 1, -pads[axis])
            conditions: list[SSAValue] = []
            if pads[axis] > 0:
                conditions.append(arith.CmpiOp(coordinate, index_constant(0), "sge").result)
                coordinate = arith.MaxSIOp(coordinate, index_constant(0)).result
            if reach[axis] - pads[axis] > x[2 + axis]:
                conditions.append(arith.CmpiOp(coordinate, index_constant(x[2 + axis]), "slt").result)
                coordinate = arith.MinSIOp(coordinate, index_constant(x[2 + axis] - 1)).result
            for condition in conditions:
                valid = condition if valid is None else arith.AndIOp(valid, condition).result
            coordinates.append(coordinate)

        def byte(j: int) -> SSAValue:
            c = _word_index(word, j, channels)  # past C, any byte: the weight's is 0
            value = _shifted(read(op.input, [n, c, *coordinates]))
            return value if valid is None else arith.SelectOp(valid, value, zero_point()).result

        return _byte_word(byte)

    def weight_word(indices: Indices) -> SSAValue:
        f, word, *taps = indices

        def byte(j: int) -> SSAValue:
            c, inside = _word_byte(word, j, channels)
            value = scalar.cast(read(op.weight, [f, c, *taps]), i32)
            return value if inside is None else arith.SelectOp(inside, value, constant(0, i32)).result

        return _byte_word(byte)

    def weight(indices: Indices) -> SSAValue:
        return scalar.cast(read(op.weight, indices), i32)

    weights = build_compute("conv_integer_weight", (w[0], words, *w[2:]), weight_word)
    sums = build_compute("conv_integer_weight_sum", (w[0],), weight, w[1:], "sum")
    shares = build_compute(
        "conv_integer_zero_share", (w[0],), lambda f: arith.MuliOp(zero_point(), read(sums.result, f)).result
    )
    data = build_compute("conv_integer_input", (x[0], *reach, words), input_word)

    def product(indices: Indices) -> SSAValue:
        n, outputs, co = indices[0], indices[1 : 1 + spatial], indices[1 + spatial]
        taps, word = indices[2 + spatial : 2 + 2 * spatial], indices[-1]
        window = [
            arith.AddiOp(_affine(outputs[a], strides[a], 0), _affine(taps[a], dilations[a], 0)).result
            for a in range(spatial)
        ]
        pixel, kernel = read(data.result, [n, *window, word]), read(weights.result, [co, word, *taps])
        return llvm_ext.DotU8S8Op(constant(0, i32), pixel, kernel, rhs_bits=weight_bits(op.weight)).result

    channels_last = (x[0], *shape[2:], w[0])
    conv = build_compute("conv_integer", channels_last, product, (*w[2:], words), "sum")

    def corrected(indices: Indices) -> SSAValue:
        total = read(conv.result, [indices[0], *indices[2:], indices[1]])
        return arith.SubiOp(total, read(shares.result, [indices[1]])).result

    return [weights, sums, shares, data, conv, build_compute("conv_integer_output", shape, corrected)]


def patterns(module: ModuleOp) -> list[RewritePattern]:
    """The patterns, told before the walk which convolutions and matmuls take the dot-product form (the walk lowers
    their zero points, which decide it, first)."""
    target = target_of(module)
    ops = list(module.walk())
    convs = {op for op in ops if isinstance(op, graph.ConvIntegerOp) and _takes_dot_products(op, target)}
    matmuls = {op for op in ops if isinstance(op, graph.MatMulIntegerOp) and _matmul_takes_dot_products(op, target)}
    _record_weight_bits(module, [*(op.weight for op in convs), *(op.rhs for op in matmuls)])
    return [MatMulIntegerLowering(matmuls), ConvIntegerLowering(convs)]
