"""A profile summary (`minimlc run MODEL --profile --profile-summary FILE.json`) on Model Explorer graphs: each
kernel's measured figures as attributes of the node of the op it writes, and as node data overlays (time and % of
peak) that Model Explorer colours the graph by (`--node_data_paths`).

The file is JSON: `{"format": "minimlc-profile-summary", "model", "opt_level", "threads", "runs", "peak_gflops",
"kernels": [Profiler.summary rows]}`; the graphs are lowered at its opt level, so that their kernels are the ones
it timed.

    profile = read_profile("bert.profile.json")
    for name, data in node_data(model_graphs("bert.onnx", profile=profile), profile).items():
        data.save_to_file(f"bert.{name}.json")           # time_ms, peak_percent
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minimlc.tools.model_explorer.graphs import KERNEL_KEY

if TYPE_CHECKING:
    from model_explorer import graph_builder as gb
    from model_explorer.node_data_builder import ModelNodeData

PROFILE_FORMAT = "minimlc-profile-summary"
OVERLAYS = {"time_ms": "ms a call", "peak_percent": "% of peak"}
"""Node data written per profile: name -> what its values are."""


class ProfileError(ValueError):
    """A profile summary file that cannot be read; the message is one line."""


@dataclass(frozen=True)
class Profile:
    """What a profiled run measured per kernel (`Profiler.summary` rows, by kernel)."""

    opt_level: int
    runs: int
    peak_gflops: float | None
    kernels: dict[str, dict[str, Any]]

    def values(self, kernel: str) -> dict[str, float]:
        """What was measured of `kernel` (nothing where it was not timed): `time_ms` a call, `calls_per_run`, and
        where known `gflops`, `peak_percent`, `gbs`."""
        row = self.kernels.get(kernel)
        if row is None:
            return {}
        values = {"time_ms": row["total_ms"] / row["calls"], "calls_per_run": row["calls"] / self.runs}
        return values | {key: row[key] for key in ("gflops", "peak_percent", "gbs") if row.get(key) is not None}

    def figures(self, kernel: str) -> dict[str, str]:
        """`values` as node attributes' text."""
        return {key: f"{value:.6g}" for key, value in self.values(kernel).items()}


def read_profile(path: str | Path) -> Profile:
    """The profile summary at `path`; ProfileError if it is missing or not one."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ProfileError(f"cannot read profile {path}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != PROFILE_FORMAT:
        raise ProfileError(f"{path} is not a profile summary (minimlc run --profile --profile-summary FILE.json)")
    rows = data["kernels"]
    return Profile(data["opt_level"], max(data["runs"], 1), data["peak_gflops"], {row["kernel"]: row for row in rows})


def node_data(graphs: list[gb.Graph], profile: Profile) -> dict[str, ModelNodeData]:
    """Per `OVERLAYS` name, the node data of `graphs` (by graph id and node id): each node whose op a timed kernel
    writes, the kernel's figure."""
    from model_explorer.node_data_builder import GradientItem, GraphNodeData, ModelNodeData, NodeDataResult

    overlays: dict[str, ModelNodeData] = {}
    for name in OVERLAYS:
        per_graph = {}
        for graph in graphs:
            results = {}
            for node in graph.nodes:
                kernel = next((attr.value for attr in node.attrs if attr.key == KERNEL_KEY), None)
                value = profile.values(kernel).get(name) if isinstance(kernel, str) else None
                if value is not None:
                    results[node.id] = NodeDataResult(value=value)
            gradient = [GradientItem(stop=0, bgColor="#ffffff"), GradientItem(stop=1, bgColor="#e6550d")]
            per_graph[graph.id] = GraphNodeData(results=results, name=OVERLAYS[name], gradient=gradient)
        overlays[name] = ModelNodeData(graphsData=per_graph)
    return overlays
