// RUN: mini-opt %s -p te-channels-last | filecheck %s

// A network's last convolution feeds only a global pool (ResNet-50's stage 4 -> GlobalAveragePool, SqueezeNet's
// classifier): the pool's result has one pixel per channel, the same bytes in either layout, so the chain stays
// channels-last to it instead of transposing the convolution's output to NCHW. The pool is stored 1x1x1xC (its
// channels innermost, for the pool schedule to vectorize) and its reader, a flatten, reads it at permuted indices.

builtin.module {
  func.func @main(%x: tensor<1x2x4x5xf32>) -> tensor<1x3xf32> {
    %w1 = graph.weight "w1" : tensor<3x2x1x1xf32>
    %xt = te.compute "conv_input_nhwc" (%0, %1, %2, %3) -> tensor<1x4x5x2xf32> {
      %4 = te.read %x[%0, %3, %1, %2] : tensor<1x2x4x5xf32>
      te.yield %4 : f32
    }
    %c1 = te.compute "conv" (%5, %6, %7, %8) reduce sum (%9 : 2, %10 : 1, %11 : 1) -> tensor<1x3x4x5xf32> {
      %12 = arith.addi %7, %10 : index
      %13 = arith.addi %8, %11 : index
      %14 = te.read %xt[%5, %12, %13, %9] : tensor<1x4x5x2xf32>
      %15 = te.read %w1[%6, %9, %10, %11] : tensor<3x2x1x1xf32>
      %16 = arith.mulf %14, %15 : f32
      te.yield %16 : f32
    }
    %r = te.compute "relu" (%17, %18, %19, %20) -> tensor<1x3x4x5xf32> {
      %21 = te.read %c1[%17, %18, %19, %20] : tensor<1x3x4x5xf32>
      %22 = arith.constant 0.000000e+00 : f32
      %23 = arith.maximumf %21, %22 : f32
      te.yield %23 : f32
    }
    %p = te.compute "avg_pool_sum" (%24, %25, %26, %27) reduce sum (%28 : 4, %29 : 5) -> tensor<1x3x1x1xf32> {
      %30 = arith.addi %26, %28 : index
      %31 = arith.addi %27, %29 : index
      %32 = te.read %r[%24, %25, %30, %31] : tensor<1x3x4x5xf32>
      te.yield %32 : f32
    }
    %f = te.compute "flatten" (%33, %34) -> tensor<1x3xf32> {
      %35 = arith.constant 0 : index
      %36 = te.read %p[%33, %34, %35, %35] : tensor<1x3x1x1xf32>
      te.yield %36 : f32
    }
    func.return %f : tensor<1x3xf32>
  }
}

// CHECK:      %c1 = te.compute "conv" (%{{.*}}) reduce sum (%{{.*}}) -> tensor<1x4x5x3xf32> {
// CHECK:      %r = te.compute "relu" (%{{.*}}) -> tensor<1x4x5x3xf32> {
// CHECK:      %p = te.compute "avg_pool_sum" (%[[N:.*]], %[[H:.*]], %[[W:.*]], %[[C:.*]]) reduce sum (%[[KH:.*]] : 4, %[[KW:.*]] : 5) -> tensor<1x1x1x3xf32> {
// CHECK-NEXT:   %[[ROW:.*]] = arith.addi %[[H]], %[[KH]] : index
// CHECK-NEXT:   %[[COLUMN:.*]] = arith.addi %[[W]], %[[KW]] : index
// CHECK-NEXT:   te.read %r[%[[N]], %[[ROW]], %[[COLUMN]], %[[C]]] : tensor<1x4x5x3xf32>
// CHECK:      %f = te.compute "flatten" (%[[FN:.*]], %[[FC:.*]]) -> tensor<1x3xf32> {
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   te.read %p[%[[FN]], %[[ZERO]], %[[ZERO]], %[[FC]]] : tensor<1x1x1x3xf32>
// CHECK-NOT:  channels_last_to_nchw
