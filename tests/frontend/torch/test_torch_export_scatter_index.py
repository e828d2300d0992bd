"""`from_exported_program` converters the torchvision and `transformers` models need: slice assignment
(`slice_scatter`, `copy`: Swin's shifted-window mask), index tensors for several leading dims (the masks of
`transformers`), slices of a symbolic size other than to its end, and the identity `as_strided` of a channels-last
mean; each against PyTorch eager (float32: rtol 1e-4, atol 1e-5), with dynamic sizes compiled once. Slice
assignment with a step and index tensors not leading are refused naming the op."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from minimlc import InferenceSession  # noqa: E402
from minimlc.frontend.torch.aten_common import UnsupportedAtenOpsError  # noqa: E402
from minimlc.frontend.torch.exported_program import from_exported_program  # noqa: E402

nn = torch.nn


def run_and_compare(module: nn.Module, inputs: list[tuple[torch.Tensor, ...]], dynamic_shapes: tuple | None = None):
    """Export with the first inputs, compile once, compare with eager on every set of inputs."""
    module = module.eval()
    program = torch.export.export(module, inputs[0], dynamic_shapes=dynamic_shapes)
    imported = from_exported_program(program)
    session = InferenceSession.from_imported(imported, num_threads=1)
    for examples in inputs:
        feeds = {info.name: example.numpy() for info, example in zip(imported.inputs, examples)}
        (got,) = session.run(None, feeds)
        with torch.no_grad():
            want = module(*examples).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert session.stats["compiles"] == 1
    return program


def decomposed_ops(program: torch.export.ExportedProgram) -> set[str]:
    """The ATen ops of the program decomposed as the importer decomposes it (torch's own deprecation warning aside)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning)
        return {str(node.target) for node in program.run_decompositions().graph.nodes}


class SliceAssignment(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.zeros(6, 8)
        mask[:2, 3:5] = 1.0
        mask[4:, :] = x[0]
        mask[:, -3:] = -2.0
        return x + mask


def test_slice_assignments_become_slice_scatter_and_copy() -> None:
    program = run_and_compare(SliceAssignment(), [(torch.randn(6, 8),)])
    assert {"aten.slice_scatter.default", "aten.copy.default"} <= decomposed_ops(program)


class StridedAssignment(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        doubled = x * 2
        doubled[::2] = 1.0
        return doubled


def test_slice_assignment_with_a_step_is_refused() -> None:
    program = torch.export.export(StridedAssignment(), (torch.randn(6, 8),))
    with pytest.raises(UnsupportedAtenOpsError, match=r"aten\.slice_scatter\.default with step 2 \(1 only\)"):
        from_exported_program(program)


class LeadingIndex(nn.Module):
    def forward(self, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
        return x[rows, columns]


def test_index_tensors_of_leading_dims_broadcast_together_negative_ones_from_the_end() -> None:
    rows, columns = torch.tensor([[0], [-1], [2]]), torch.tensor([1, -2, 4, 0])
    run_and_compare(LeadingIndex(), [(torch.randn(4, 5, 3), rows, columns)])


class PairwiseProducts(nn.Module):
    """`x[b, q] * x[b, k]` by index tensors of aranges, as `transformers` builds its masks."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, sequence = x.shape
        in_batch = torch.arange(batch)[:, None, None]
        return x[in_batch, torch.arange(sequence)[None, :, None]] * x[in_batch, torch.arange(sequence)[None, None, :]]


def test_index_tensors_of_symbolic_sizes_compiled_once() -> None:
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("sequence", min=2, max=32)}
    inputs = [(torch.randn(2, 5),), (torch.randn(1, 3),), (torch.randn(4, 9),)]
    run_and_compare(PairwiseProducts(), inputs, (dims,))


class Differences(nn.Module):
    """Neighbour differences of a sequence with one element prepended: slices `[:, 1:]` and `[:, :-1]` of a size
    `sequence + 1` (as `transformers` finds packed sequences from position ids)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        padded = torch.cat([x[:, :1] - 1, x], dim=-1)
        return padded[:, 1:] - padded[:, :-1]


def test_slice_of_a_symbolic_size_all_but_the_last() -> None:
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("sequence", min=2, max=32)}
    inputs = [(torch.randn(2, 5),), (torch.randn(3, 11),)]
    run_and_compare(Differences(), inputs, (dims,))


class ChannelsLastPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(nn.functional.adaptive_avg_pool2d(x.permute(0, 3, 1, 2), 1), 1)


def test_as_strided_restride_of_a_channels_last_mean() -> None:
    inputs = [(torch.randn(2, 4, 4, 8),), (torch.randn(5, 4, 4, 8),)]
    program = run_and_compare(ChannelsLastPool(), inputs, ({0: torch.export.Dim("batch", min=1, max=8)},))
    assert "aten.as_strided.default" in decomposed_ops(program)


class MiddleIndex(nn.Module):
    def forward(self, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
        return x[:, rows, columns]


def test_index_tensors_not_leading_are_refused() -> None:
    program = torch.export.export(MiddleIndex(), (torch.randn(2, 4, 5), torch.tensor([0, 1]), torch.tensor([2, 3])))
    with pytest.raises(UnsupportedAtenOpsError, match=r"aten\.index\.Tensor with several index tensors not all lead"):
        from_exported_program(program)


class ShiftedWindowMask(nn.Module):
    """Scores plus a mask built by slice assignments to constant regions (as Swin's shifted windows build theirs)."""

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        regions = torch.zeros(6, 6)
        for index, (start, end) in enumerate(((0, -3), (-3, -1), (-1, None))):
            regions[start:end, :] += index
            regions[:, start:end] += 3 * index
        flat = regions.view(-1)
        mask = flat.unsqueeze(0) - flat.unsqueeze(1)
        return scores + mask.masked_fill(mask != 0, -100.0)


def test_a_mask_built_from_constants_is_compiled_not_evaluated_by_torch() -> None:
    """Swin's shifted-window mask (slice assignments into zeros): minimlc computes it (its ops are in the graph)."""
    scores = torch.randn(2, 36, 36)
    run_and_compare(ShiftedWindowMask(), [(scores,)])
    imported = from_exported_program(torch.export.export(ShiftedWindowMask(), (scores,)))
    assert "graph.where" in str(imported.module) or "graph.concat" in str(imported.module)
