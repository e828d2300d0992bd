"""minimlc in Google's Model Explorer (the `explorer` extra, `ai-edge-model-explorer`): an adapter showing an ONNX
model at the `graph`, `te` and `loop` levels, and a profile's kernel times as node data.

    model-explorer model.onnx --extensions=minimlc.tools.model_explorer
    python -m minimlc.tools.model_explorer model.onnx model.profile.json -o overlays/   # node data files

Model Explorer loads an extension's `main` module: `main.py` defines the adapter (`MinimlcAdapter`).
"""
