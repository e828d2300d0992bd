"""ONNX's backend interface (`onnx.backend.base.Backend`) over minimlc, for ONNX's node and model tests."""
