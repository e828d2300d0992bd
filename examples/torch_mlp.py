"""A PyTorch MLP (784-128-10, the seed's) compiled by minimlc three ways, each checked against PyTorch eager:
`torch.export` (`minimlc.from_exported_program`), an FX trace (`minimlc.from_fx`) and `torch.compile(backend=
"minimlc")`. Needs the `torch` extra (`pip install ".[torch]"`).

    python examples/torch_mlp.py        # prints the largest difference from eager of each path
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import minimlc


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear0 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear1(self.relu(self.linear0(x)))


def main() -> dict[str, float]:
    """Compile and run the MLP each way; the largest absolute difference from eager of each."""
    torch.manual_seed(0)
    model = MLP().eval()
    images = torch.rand(4, 784)
    with torch.no_grad():
        expected = model(images).numpy()
    exported = minimlc.from_exported_program(torch.export.export(model, (images,)))
    traced = minimlc.from_fx(torch.fx.symbolic_trace(model), [(4, 784)])
    differences = {}
    for name, imported in (("torch.export", exported), ("torch.fx", traced)):
        session = minimlc.InferenceSession.from_imported(imported)
        (logits,) = session.run(None, {session.get_inputs()[0].name: images.numpy()})
        differences[name] = float(np.abs(logits - expected).max())
    with torch.no_grad():
        compiled = torch.compile(model, backend="minimlc")
        differences["torch.compile"] = float(np.abs(compiled(images).numpy() - expected).max())
    for name, difference in differences.items():
        print(f"{name:14s} max |minimlc - eager| = {difference:.2e}")
    return differences


if __name__ == "__main__":
    assert max(main().values()) < 1e-4
