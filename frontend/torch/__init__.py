"""PyTorch frontend: FX graphs (`from_fx`) and `torch.export` programs (`from_exported_program`) -> graph-dialect
module + weight store, an `ImportedModel` that `InferenceSession.from_imported` compiles like an ONNX import.

torch is an optional extra (`pip install "minimlc[torch]"`): only this room imports it, and only when used.
"""
