// RUN: %python %S/make_onnx.py unsupported %t.onnx
// RUN: not mini-opt %t.onnx 2>&1 | filecheck %s

// Every unsupported node is reported at once, with its opset and node names, before anything is converted.

// CHECK: mini-opt: error: model has 1 unsupported operator type: GlobalLpPool (opset 13): pool1, pool2
