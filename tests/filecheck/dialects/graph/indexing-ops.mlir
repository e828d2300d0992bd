// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @reverse(%x: tensor<4x3x2xbf16>, %lens: tensor<3xi64>) -> tensor<4x3x2xbf16> {
  %y = graph.reverse_sequence %x, %lens {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3x2xbf16>, tensor<3xi64>) -> tensor<4x3x2xbf16>
  func.return %y : tensor<4x3x2xbf16>
}

// CHECK: %y = graph.reverse_sequence %x, %lens {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3x2xbf16>, tensor<3xi64>) -> tensor<4x3x2xbf16>
