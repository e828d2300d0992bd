"""A decoder rewritten to read its KV cache from buffers the generator allocates once: `sequence_major_cache`.

Exporters write each layer's cache as an input `past [batch, heads, past, size]` and an output
`present = Concat(past, new, axis=2)`, so every step allocates and fills a new cache one position longer. The rewrite
keeps the model's arithmetic and changes only its edges, for each cache whose present is such a Concat:

    past_key_values.0.key [batch, 2, past, 16]           ->  past_key_values.0.key [past, batch, 2, 16]
                                                              Transpose(perm=[1, 2, 0, 3]) -> the old input's uses
    present.0.key = Concat(past, new, axis=2) (output)   ->  Concat stays for attention, not an output
                                                              present.0.key = Transpose(new, perm=[2, 0, 1, 3])
                                                                  [sequence, batch, 2, 16]: the new positions only

Sequence-major, the first `past` positions of a `[max_length, batch, heads, size]` buffer are one contiguous block:
the generator feeds that block as the past (no copy: the runtime takes contiguous arrays as they are) and writes each
step's new positions after it, so the cache is allocated once per generator and no step copies it. In the compiled
model the Transpose and Concat are index maps that fuse into the attention kernels' reads. A cache whose present is
not such a Concat leaves the model as it is (`CacheLayout.rewritten` is then empty for it).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import helper

from minimlc.generation.signature import CacheEntry

TO_BATCH_MAJOR = (1, 2, 0, 3)
TO_SEQUENCE_MAJOR = (2, 0, 1, 3)


@dataclass(frozen=True)
class CacheLayout:
    model: onnx.ModelProto
    rewritten: frozenset[str]
    """The past inputs now sequence-major, whose presents are the new positions only."""


def sequence_major_cache(model: onnx.ModelProto, cache: tuple[CacheEntry, ...]) -> CacheLayout:
    """`model` with every cache of `cache` whose present is `Concat(past, new)` along axis 2 of rank 4 rewritten as
    the module docstring shows (a copy; `model` is not changed)."""
    producers = {output: node for node in model.graph.node for output in node.output}
    rewritable = [entry for entry in cache if _appended(producers.get(entry.present), entry)]
    if not rewritable:
        return CacheLayout(model, frozenset())
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    graph = rewritten.graph
    nodes = list(graph.node)
    inputs = {info.name: info for info in graph.input}
    outputs = {info.name: info for info in graph.output}
    for entry in rewritable:
        batch_major = f"{entry.past}.batch_major"
        for node in nodes:
            node.input[:] = [batch_major if name == entry.past else name for name in node.input]
        concat = next(node for node in nodes if entry.present in node.output)
        concatenated = f"{entry.present}.all"
        concat.output[:] = [concatenated]
        for node in nodes:
            node.input[:] = [concatenated if name == entry.present else name for name in node.input]
        nodes.insert(0, helper.make_node("Transpose", [entry.past], [batch_major], perm=TO_BATCH_MAJOR))
        nodes.append(helper.make_node("Transpose", [concat.input[1]], [entry.present], perm=TO_SEQUENCE_MAJOR))
        _permute(inputs[entry.past], TO_SEQUENCE_MAJOR)
        _permute(outputs[entry.present], TO_SEQUENCE_MAJOR, grown=entry.axis)
    del graph.node[:]
    graph.node.extend(nodes)
    return CacheLayout(rewritten, frozenset(entry.past for entry in rewritable))


def _appended(node: onnx.NodeProto | None, entry: CacheEntry) -> bool:
    """Whether `node` is `Concat(past, new)` along the cache's sequence axis 2 of a rank-4 cache."""
    if node is None or node.op_type != "Concat" or len(node.input) != 2 or node.input[0] != entry.past:
        return False
    axis = next((attribute.i for attribute in node.attribute if attribute.name == "axis"), None)
    return len(entry.shape) == 4 and entry.axis == 2 and axis in (2, -2)


def _permute(info: onnx.ValueInfoProto, perm: tuple[int, ...], grown: int | None = None) -> None:
    """`info`'s declared dims permuted by `perm`; the grown axis of a present becomes unnamed (the new positions)."""
    dims = list(info.type.tensor_type.shape.dim)
    copies = [onnx.TensorShapeProto.Dimension() for _ in dims]
    for copy, source in zip(copies, dims):
        copy.CopyFrom(source)
    if grown is not None:
        copies[grown].Clear()
    del info.type.tensor_type.shape.dim[:]
    info.type.tensor_type.shape.dim.extend(copies[p] for p in perm)
