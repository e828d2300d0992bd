"""The Model Explorer adapter, in the module Model Explorer loads of an extension (`main`):

    model-explorer MODEL.onnx --extensions=minimlc.tools.model_explorer

shows the model at minimlc's `graph`, `te` and `loop` levels (`tools/model_explorer/graphs.py`), with each kernel's
measured time, % of peak and schedule on its nodes where a profile summary sits beside the model
(`MODEL.profile.json`, from `minimlc run MODEL.onnx --profile --profile-summary MODEL.profile.json`).
"""

from __future__ import annotations

from pathlib import Path

from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs

from minimlc.tools.model_explorer.graphs import model_graphs
from minimlc.tools.model_explorer.profile import read_profile


def profile_beside(model: str | Path) -> Path | None:
    """`MODEL.profile.json` beside `MODEL.onnx`, if there is one."""
    path = Path(model).with_suffix(".profile.json")
    return path if path.is_file() else None


class MinimlcAdapter(Adapter):
    """ONNX models as minimlc lowers them."""

    metadata = AdapterMetadata(
        id="minimlc",
        name="minimlc",
        description="An ONNX model at minimlc's graph, te and loop levels, with its kernel profile",
        fileExts=["onnx"],
    )

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        """The model's graphs, with the profile beside it (or `settings["profile"]`) if any."""
        profile_path = settings.get("profile") or profile_beside(model_path)
        profile = read_profile(profile_path) if profile_path else None
        return {"graphs": model_graphs(model_path, profile=profile)}
