"""The runtime tests build their models with `examples/model_builder.py` and `examples/transformer_models.py`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
