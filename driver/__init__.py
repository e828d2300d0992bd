"""The compile driver: an ONNX model (or graph-level module) in, native code out.

`compiler.py` runs import -> the opt level's pipeline -> `codegen.py` (object code, partitions compiled at once by
`lowering/workers.py`); `cache.py` keys the result by model, pipeline, target and versions; `session.py` is
`InferenceSession`; `shared_library.py` exports a C library (`minimlc build`); `build.py` is `minimlc.build` for
tensor-expression functions and schedules.
"""
