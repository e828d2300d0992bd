// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @relu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = te.call_extern "env.relu" (%x) : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK: %y = te.call_extern "env.relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
