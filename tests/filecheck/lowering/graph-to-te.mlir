// RUN: mini-opt %s -p graph-to-te --split-input-file --verify-diagnostics --allow-unregistered-dialect | filecheck %s

func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "add" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %a[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %b[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.addf %[[V3]], %[[V4]] : f32
// CHECK-NEXT:   te.yield %[[V5]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @add_rank_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @add_rank_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "add" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %a[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %b[%[[V2]]] : tensor<3xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.addf %[[V3]], %[[V4]] : f32
// CHECK-NEXT:   te.yield %[[V5]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @sub_both_broadcast(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.sub %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sub_both_broadcast(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "sub" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V1]], %[[V3]]] : tensor<2x1xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V6:[0-9]+]] = te.read %b[%[[V5]], %[[V2]]] : tensor<1x3xf32>
// CHECK-NEXT:   %[[V7:[0-9]+]] = arith.subf %[[V4]], %[[V6]] : f32
// CHECK-NEXT:   te.yield %[[V7]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @mul_scalar_like(%a: tensor<1xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = graph.mul %a, %b : (tensor<1xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @mul_scalar_like(%a: tensor<1xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "mul" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<4x5xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V3]]] : tensor<1xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V1]], %[[V2]]] : tensor<4x5xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4x5xf32>
// CHECK-NEXT: }

func.func @div(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @div(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "div" (%[[V1:[0-9]+]]) -> tensor<4xf32> {
// CHECK-NEXT:   %[[V2:[0-9]+]] = te.read %a[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %b[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.divf %[[V2]], %[[V3]] : f32
// CHECK-NEXT:   te.yield %[[V4]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4xf32>
// CHECK-NEXT: }

func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "relu" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x3xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %x[%[[V1]], %[[V2]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.maximumf %[[V3]], %[[V4]] : f32
// CHECK-NEXT:   te.yield %[[V5]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @sigmoid(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.sigmoid %x : tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @sigmoid(%x: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "sigmoid" (%[[V1:[0-9]+]]) -> tensor<8xf32> {
// CHECK-NEXT:   %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<8xf32>
// CHECK-NEXT:   %[[V3:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.negf %[[V2]] : f32
// CHECK-NEXT:   %[[V5:[0-9]+]] = math.exp %[[V4]] : f32
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.addf %[[V3]], %[[V5]] : f32
// CHECK-NEXT:   %[[V7:[0-9]+]] = arith.divf %[[V3]], %[[V6]] : f32
// CHECK-NEXT:   te.yield %[[V7]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<8xf32>
// CHECK-NEXT: }

func.func @tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.tanh %x : tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "tanh" (%[[V1:[0-9]+]]) -> tensor<8xf32> {
// CHECK-NEXT:   %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<8xf32>
// CHECK-NEXT:   %[[V3:[0-9]+]] = math.tanh %[[V2]] : f32
// CHECK-NEXT:   te.yield %[[V3]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<8xf32>
// CHECK-NEXT: }

func.func @exp(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.exp %x : tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @exp(%x: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "exp" (%[[V1:[0-9]+]]) -> tensor<8xf32> {
// CHECK-NEXT:   %[[V2:[0-9]+]] = te.read %x[%[[V1]]] : tensor<8xf32>
// CHECK-NEXT:   %[[V3:[0-9]+]] = math.exp %[[V2]] : f32
// CHECK-NEXT:   te.yield %[[V3]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<8xf32>
// CHECK-NEXT: }

func.func @gemm(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = graph.gemm %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @gemm(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "gemm" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<3x5xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V1]], %[[V3]]] : tensor<3x4xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V3]], %[[V2]]] : tensor<4x5xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x5xf32>
// CHECK-NEXT: }

func.func @gemm_trans_a_alpha(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = graph.gemm %a, %b {trans_a, alpha = 2.0 : f32} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @gemm_trans_a_alpha(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "gemm" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<3x5xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V3]], %[[V1]]] : tensor<4x3xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V3]], %[[V2]]] : tensor<4x5xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   %[[V7:[0-9]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:   %[[V8:[0-9]+]] = arith.mulf %[[V6]], %[[V7]] : f32
// CHECK-NEXT:   te.yield %[[V8]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x5xf32>
// CHECK-NEXT: }

func.func @gemm_bias(%x: tensor<1x784xf32>, %w: tensor<128x784xf32>) -> tensor<1x128xf32> {
  %b = graph.weight "fc0.bias" : tensor<128xf32>
  %0 = graph.gemm %x, %w, %b {trans_b} : (tensor<1x784xf32>, tensor<128x784xf32>, tensor<128xf32>) -> tensor<1x128xf32>
  func.return %0 : tensor<1x128xf32>
}

// CHECK-LABEL: func.func @gemm_bias(%x: tensor<1x784xf32>, %w: tensor<128x784xf32>) -> tensor<1x128xf32> {
// CHECK-NEXT: %b = graph.weight "fc0.bias" : tensor<128xf32>
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "gemm" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 784) -> tensor<1x128xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<1x784xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %w[%[[V2]], %[[V3]]] : tensor<128x784xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V7:[0-9]+]] = te.compute "gemm_bias" (%[[V8:[0-9]+]], %[[V9:[0-9]+]]) -> tensor<1x128xf32> {
// CHECK-NEXT:   %[[V10:[0-9]+]] = te.read %b[%[[V9]]] : tensor<128xf32>
// CHECK-NEXT:   %[[V11:[0-9]+]] = te.read %[[V0]][%[[V8]], %[[V9]]] : tensor<1x128xf32>
// CHECK-NEXT:   %[[V12:[0-9]+]] = arith.addf %[[V11]], %[[V10]] : f32
// CHECK-NEXT:   te.yield %[[V12]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V7]] : tensor<1x128xf32>
// CHECK-NEXT: }

func.func @gemm_bias_beta(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>, %c: tensor<3x1xf32>) -> tensor<3x5xf32> {
  %0 = graph.gemm %a, %b, %c {trans_a, trans_b, alpha = 1.0 : f32, beta = 0.5 : f32} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @gemm_bias_beta(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>, %c: tensor<3x1xf32>) -> tensor<3x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "gemm" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<3x5xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V3]], %[[V1]]] : tensor<4x3xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V2]], %[[V3]]] : tensor<5x4xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V7:[0-9]+]] = te.compute "gemm_bias" (%[[V8:[0-9]+]], %[[V9:[0-9]+]]) -> tensor<3x5xf32> {
// CHECK-NEXT:   %[[V10:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V11:[0-9]+]] = te.read %c[%[[V8]], %[[V10]]] : tensor<3x1xf32>
// CHECK-NEXT:   %[[V12:[0-9]+]] = te.read %[[V0]][%[[V8]], %[[V9]]] : tensor<3x5xf32>
// CHECK-NEXT:   %[[V13:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[V14:[0-9]+]] = arith.mulf %[[V11]], %[[V13]] : f32
// CHECK-NEXT:   %[[V15:[0-9]+]] = arith.addf %[[V12]], %[[V14]] : f32
// CHECK-NEXT:   te.yield %[[V15]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V7]] : tensor<3x5xf32>
// CHECK-NEXT: }

func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "matmul" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<3x5xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V1]], %[[V3]]] : tensor<3x4xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V3]], %[[V2]]] : tensor<4x5xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x5xf32>
// CHECK-NEXT: }

func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  func.return %0 : tensor<2x5x3x6xf32>
}

// CHECK-LABEL: func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "matmul" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]], %[[V4:[0-9]+]]) reduce sum (%[[V5:[0-9]+]] : 4) -> tensor<2x5x3x6xf32> {
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V7:[0-9]+]] = te.read %a[%[[V1]], %[[V6]], %[[V3]], %[[V5]]] : tensor<2x1x3x4xf32>
// CHECK-NEXT:   %[[V8:[0-9]+]] = te.read %b[%[[V2]], %[[V5]], %[[V4]]] : tensor<5x4x6xf32>
// CHECK-NEXT:   %[[V9:[0-9]+]] = arith.mulf %[[V7]], %[[V8]] : f32
// CHECK-NEXT:   te.yield %[[V9]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x5x3x6xf32>
// CHECK-NEXT: }

func.func @matmul_vector_matrix(%a: tensor<4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<4xf32>, tensor<2x4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @matmul_vector_matrix(%a: tensor<4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "matmul" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce sum (%[[V3:[0-9]+]] : 4) -> tensor<2x5xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %a[%[[V3]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %b[%[[V1]], %[[V3]], %[[V2]]] : tensor<2x4x5xf32>
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.mulf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:   te.yield %[[V6]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x5xf32>
// CHECK-NEXT: }

func.func @matmul_matrix_vector(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = graph.matmul %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @matmul_matrix_vector(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "matmul" (%[[V1:[0-9]+]]) reduce sum (%[[V2:[0-9]+]] : 4) -> tensor<3xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %a[%[[V1]], %[[V2]]] : tensor<3x4xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %b[%[[V2]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.mulf %[[V3]], %[[V4]] : f32
// CHECK-NEXT:   te.yield %[[V5]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3xf32>
// CHECK-NEXT: }

func.func @matmul_dot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.matmul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @matmul_dot(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "matmul" () reduce sum (%[[V1:[0-9]+]] : 4) -> tensor<f32> {
// CHECK-NEXT:   %[[V2:[0-9]+]] = te.read %a[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V3:[0-9]+]] = te.read %b[%[[V1]]] : tensor<4xf32>
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.mulf %[[V2]], %[[V3]] : f32
// CHECK-NEXT:   te.yield %[[V4]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<f32>
// CHECK-NEXT: }

func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "softmax_max" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) reduce max_nnan (%[[V3:[0-9]+]] : 5) -> tensor<2x1xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %x[%[[V1]], %[[V3]]] : tensor<2x5xf32>
// CHECK-NEXT:   te.yield %[[V4]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V5:[0-9]+]] = te.compute "softmax_exp" (%[[V6:[0-9]+]], %[[V7:[0-9]+]]) -> tensor<2x5xf32> {
// CHECK-NEXT:   %[[V8:[0-9]+]] = te.read %x[%[[V6]], %[[V7]]] : tensor<2x5xf32>
// CHECK-NEXT:   %[[V9:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V10:[0-9]+]] = te.read %[[V0]][%[[V6]], %[[V9]]] : tensor<2x1xf32>
// CHECK-NEXT:   %[[V11:[0-9]+]] = arith.subf %[[V8]], %[[V10]] : f32
// CHECK-NEXT:   %[[V12:[0-9]+]] = math.exp %[[V11]] : f32
// CHECK-NEXT:   te.yield %[[V12]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V13:[0-9]+]] = te.compute "softmax_sum" (%[[V14:[0-9]+]], %[[V15:[0-9]+]]) reduce sum (%[[V16:[0-9]+]] : 5) -> tensor<2x1xf32> {
// CHECK-NEXT:   %[[V17:[0-9]+]] = te.read %[[V5]][%[[V14]], %[[V16]]] : tensor<2x5xf32>
// CHECK-NEXT:   te.yield %[[V17]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %[[V18:[0-9]+]] = te.compute "softmax_div" (%[[V19:[0-9]+]], %[[V20:[0-9]+]]) -> tensor<2x5xf32> {
// CHECK-NEXT:   %[[V21:[0-9]+]] = te.read %[[V5]][%[[V19]], %[[V20]]] : tensor<2x5xf32>
// CHECK-NEXT:   %[[V22:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V23:[0-9]+]] = te.read %[[V13]][%[[V19]], %[[V22]]] : tensor<2x1xf32>
// CHECK-NEXT:   %[[V24:[0-9]+]] = arith.divf %[[V21]], %[[V23]] : f32
// CHECK-NEXT:   te.yield %[[V24]] : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: func.return %[[V18]] : tensor<2x5xf32>
// CHECK-NEXT: }

func.func @softmax_middle_axis(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @softmax_middle_axis(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "softmax_max" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) reduce max_nnan (%[[V4:[0-9]+]] : 3) -> tensor<2x1x4xf32> {
// CHECK-NEXT:   %[[V5:[0-9]+]] = te.read %x[%[[V1]], %[[V4]], %[[V3]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   te.yield %[[V5]] : f32
// CHECK-NEXT: } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: %[[V6:[0-9]+]] = te.compute "softmax_exp" (%[[V7:[0-9]+]], %[[V8:[0-9]+]], %[[V9:[0-9]+]]) -> tensor<2x3x4xf32> {
// CHECK-NEXT:   %[[V10:[0-9]+]] = te.read %x[%[[V7]], %[[V8]], %[[V9]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   %[[V11:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V12:[0-9]+]] = te.read %[[V0]][%[[V7]], %[[V11]], %[[V9]]] : tensor<2x1x4xf32>
// CHECK-NEXT:   %[[V13:[0-9]+]] = arith.subf %[[V10]], %[[V12]] : f32
// CHECK-NEXT:   %[[V14:[0-9]+]] = math.exp %[[V13]] : f32
// CHECK-NEXT:   te.yield %[[V14]] : f32
// CHECK-NEXT: } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: %[[V15:[0-9]+]] = te.compute "softmax_sum" (%[[V16:[0-9]+]], %[[V17:[0-9]+]], %[[V18:[0-9]+]]) reduce sum (%[[V19:[0-9]+]] : 3) -> tensor<2x1x4xf32> {
// CHECK-NEXT:   %[[V20:[0-9]+]] = te.read %[[V6]][%[[V16]], %[[V19]], %[[V18]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   te.yield %[[V20]] : f32
// CHECK-NEXT: } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: %[[V21:[0-9]+]] = te.compute "softmax_div" (%[[V22:[0-9]+]], %[[V23:[0-9]+]], %[[V24:[0-9]+]]) -> tensor<2x3x4xf32> {
// CHECK-NEXT:   %[[V25:[0-9]+]] = te.read %[[V6]][%[[V22]], %[[V23]], %[[V24]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   %[[V26:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V27:[0-9]+]] = te.read %[[V15]][%[[V22]], %[[V26]], %[[V24]]] : tensor<2x1x4xf32>
// CHECK-NEXT:   %[[V28:[0-9]+]] = arith.divf %[[V25]], %[[V27]] : f32
// CHECK-NEXT:   te.yield %[[V28]] : f32
// CHECK-NEXT: } attributes {kernel_group = 1 : i64}
// CHECK-NEXT: func.return %[[V21]] : tensor<2x3x4xf32>
// CHECK-NEXT: }

func.func @reshape_flatten(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %0 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<2x12xf32>
  func.return %0 : tensor<2x12xf32>
}

// CHECK-LABEL: func.func @reshape_flatten(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "reshape" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<2x12xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.divui %[[V2]], %[[V3]] : index
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.remui %[[V2]], %[[V5]] : index
// CHECK-NEXT:   %[[V7:[0-9]+]] = te.read %x[%[[V1]], %[[V4]], %[[V6]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   te.yield %[[V7]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<2x12xf32>
// CHECK-NEXT: }

func.func @reshape_split(%x: tensor<6x4xf32>) -> tensor<3x2x4xf32> {
  %0 = graph.reshape %x : tensor<6x4xf32> -> tensor<3x2x4xf32>
  func.return %0 : tensor<3x2x4xf32>
}

// CHECK-LABEL: func.func @reshape_split(%x: tensor<6x4xf32>) -> tensor<3x2x4xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "reshape" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<3x2x4xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.muli %[[V1]], %[[V4]] : index
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.addi %[[V2]], %[[V5]] : index
// CHECK-NEXT:   %[[V7:[0-9]+]] = te.read %x[%[[V6]], %[[V3]]] : tensor<6x4xf32>
// CHECK-NEXT:   te.yield %[[V7]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x2x4xf32>
// CHECK-NEXT: }

func.func @reshape_general(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @reshape_general(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "reshape" (%[[V1:[0-9]+]], %[[V2:[0-9]+]]) -> tensor<4x6xf32> {
// CHECK-NEXT:   %[[V3:[0-9]+]] = arith.constant 6 : index
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.muli %[[V1]], %[[V3]] : index
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.addi %[[V2]], %[[V4]] : index
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.constant 12 : index
// CHECK-NEXT:   %[[V7:[0-9]+]] = arith.divui %[[V5]], %[[V6]] : index
// CHECK-NEXT:   %[[V8:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:   %[[V9:[0-9]+]] = arith.divui %[[V5]], %[[V8]] : index
// CHECK-NEXT:   %[[V10:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:   %[[V11:[0-9]+]] = arith.remui %[[V9]], %[[V10]] : index
// CHECK-NEXT:   %[[V12:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:   %[[V13:[0-9]+]] = arith.remui %[[V5]], %[[V12]] : index
// CHECK-NEXT:   %[[V14:[0-9]+]] = te.read %x[%[[V7]], %[[V11]], %[[V13]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   te.yield %[[V14]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4x6xf32>
// CHECK-NEXT: }

func.func @reshape_unit_dims(%x: tensor<1x6xf32>) -> tensor<3x1x2xf32> {
  %0 = graph.reshape %x : tensor<1x6xf32> -> tensor<3x1x2xf32>
  func.return %0 : tensor<3x1x2xf32>
}

// CHECK-LABEL: func.func @reshape_unit_dims(%x: tensor<1x6xf32>) -> tensor<3x1x2xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "reshape" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<3x1x2xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[V5:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT:   %[[V6:[0-9]+]] = arith.muli %[[V1]], %[[V5]] : index
// CHECK-NEXT:   %[[V7:[0-9]+]] = arith.addi %[[V3]], %[[V6]] : index
// CHECK-NEXT:   %[[V8:[0-9]+]] = te.read %x[%[[V4]], %[[V7]]] : tensor<1x6xf32>
// CHECK-NEXT:   te.yield %[[V8]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<3x1x2xf32>
// CHECK-NEXT: }

func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %0 : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
// CHECK-NEXT: %[[V0:[0-9]+]] = te.compute "transpose" (%[[V1:[0-9]+]], %[[V2:[0-9]+]], %[[V3:[0-9]+]]) -> tensor<4x2x3xf32> {
// CHECK-NEXT:   %[[V4:[0-9]+]] = te.read %x[%[[V2]], %[[V3]], %[[V1]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   te.yield %[[V4]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[V0]] : tensor<4x2x3xf32>
// CHECK-NEXT: }

func.func @constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant {value = 5.000000e-01 : f32} : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// CHECK-LABEL: func.func @constant(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT: %c = te.compute "constant" (%{{.*}}) -> tensor<2xf32> {
// CHECK-NEXT:   %[[V1:[0-9]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   te.yield %[[V1]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %c : tensor<2xf32>
// CHECK-NEXT: }

// -----

func.func @no_lowering(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.frobnicate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// expected-error@unknown {{graph-to-te: no lowering for 'graph.frobnicate'}}
