"""Bring your own codegen: `partition_for_target` hands regions of a model to another code generator (C source, or
ONNX Runtime), whose functions minimlc's native code calls as external functions."""
