"""ONNX frontend: ModelProto or path -> graph-dialect module + weight store."""
