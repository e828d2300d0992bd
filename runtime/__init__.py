"""Compile ONNX models to native code and run them: `from minimlc.runtime import InferenceSession`."""
