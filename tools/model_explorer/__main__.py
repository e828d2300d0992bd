"""`python -m minimlc.tools.model_explorer MODEL.onnx PROFILE.json -o DIR`: the profile's node data files for Model
Explorer (`DIR/MODEL.time_ms.json`, `DIR/MODEL.peak_percent.json`), to pass with `--node_data_paths`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from minimlc.tools.model_explorer.graphs import model_graphs
from minimlc.tools.model_explorer.profile import ProfileError, node_data, read_profile


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minimlc.tools.model_explorer", description=__doc__)
    parser.add_argument("model", help="an .onnx model")
    parser.add_argument("profile", help="its profile (minimlc run MODEL --profile --profile-summary FILE.json)")
    parser.add_argument("-o", "--output-dir", default=".", help="where to write the node data files (default .)")
    args = parser.parse_args(argv)
    try:
        profile = read_profile(args.profile)
    except ProfileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not Path(args.model).is_file():
        print(f"error: no model {args.model}", file=sys.stderr)
        return 1
    folder = Path(args.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in node_data(model_graphs(args.model, profile=profile), profile).items():
        path = folder / f"{Path(args.model).stem}.{name}.json"
        data.save_to_file(str(path))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
