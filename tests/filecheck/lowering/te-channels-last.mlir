// RUN: mini-opt %s -p te-channels-last | filecheck %s

// The first convolution and the ReLU after it are stored channels-last (1x3x4x5 -> 1x4x5x3) and every read of them
// is permuted; te-conv-layout's copy of the ReLU for the second convolution is the ReLU itself now, so it goes; the
// ReLU is also a result, so it is copied back to NCHW once. The second convolution feeds only the function's result:
// channels-last would just move the transposition there, so it stays NCHW. The global pool (one pixel per channel:
// both layouts are the same bytes) reads the ReLU channels-last and is stored as 1x1x1x3, its channels innermost
// for the pool schedule to vectorize; as a result it is copied back to 1x3x1x1 (the same bytes). The network input
// stays NCHW.

builtin.module {
  func.func @main(%x: tensor<1x2x4x5xf32>) -> (tensor<1x5x4x5xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x5xf32>) {
    %w1 = graph.weight "w1" : tensor<3x2x1x1xf32>
    %w2 = graph.weight "w2" : tensor<5x3x1x1xf32>
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
    %rt = te.compute "conv_input_nhwc" (%24, %25, %26, %27) -> tensor<1x4x5x3xf32> {
      %28 = te.read %r[%24, %27, %25, %26] : tensor<1x3x4x5xf32>
      te.yield %28 : f32
    }
    %c2 = te.compute "conv" (%29, %30, %31, %32) reduce sum (%33 : 3, %34 : 1, %35 : 1) -> tensor<1x5x4x5xf32> {
      %36 = arith.addi %31, %34 : index
      %37 = arith.addi %32, %35 : index
      %38 = te.read %rt[%29, %36, %37, %33] : tensor<1x4x5x3xf32>
      %39 = te.read %w2[%30, %33, %34, %35] : tensor<5x3x1x1xf32>
      %40 = arith.mulf %38, %39 : f32
      te.yield %40 : f32
    }
    %p = te.compute "avg_pool_sum" (%41, %42, %43, %44) reduce sum (%45 : 4, %46 : 5) -> tensor<1x3x1x1xf32> {
      %47 = arith.addi %43, %45 : index
      %48 = arith.addi %44, %46 : index
      %49 = te.read %r[%41, %42, %47, %48] : tensor<1x3x4x5xf32>
      te.yield %49 : f32
    }
    func.return %c2, %p, %r : tensor<1x5x4x5xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x5xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x2x4x5xf32>) -> (tensor<1x5x4x5xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x5xf32>) {
// CHECK-NEXT:     %w1 = graph.weight "w1" : tensor<3x2x1x1xf32>
// CHECK-NEXT:     %w2 = graph.weight "w2" : tensor<5x3x1x1xf32>
// CHECK-NEXT:     %xt = te.compute "conv_input_nhwc" (%0, %1, %2, %3) -> tensor<1x4x5x2xf32> {
// CHECK-NEXT:       %4 = te.read %x[%0, %3, %1, %2] : tensor<1x2x4x5xf32>
// CHECK-NEXT:       te.yield %4 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %c1 = te.compute "conv" (%5, %6, %7, %8) reduce sum (%9 : 2, %10 : 1, %11 : 1) -> tensor<1x4x5x3xf32> {
// CHECK-NEXT:       %12 = arith.addi %6, %10 : index
// CHECK-NEXT:       %13 = arith.addi %7, %11 : index
// CHECK-NEXT:       %14 = te.read %xt[%5, %12, %13, %9] : tensor<1x4x5x2xf32>
// CHECK-NEXT:       %15 = te.read %w1[%8, %9, %10, %11] : tensor<3x2x1x1xf32>
// CHECK-NEXT:       %16 = arith.mulf %14, %15 : f32
// CHECK-NEXT:       te.yield %16 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %r = te.compute "relu" (%17, %18, %19, %20) -> tensor<1x4x5x3xf32> {
// CHECK-NEXT:       %21 = te.read %c1[%17, %18, %19, %20] : tensor<1x4x5x3xf32>
// CHECK-NEXT:       %22 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       %23 = arith.maximumf %21, %22 : f32
// CHECK-NEXT:       te.yield %23 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %24 = te.compute "channels_last_to_nchw" (%25, %26, %27, %28) -> tensor<1x3x4x5xf32> {
// CHECK-NEXT:       %29 = te.read %r[%25, %27, %28, %26] : tensor<1x4x5x3xf32>
// CHECK-NEXT:       te.yield %29 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %c2 = te.compute "conv" (%30, %31, %32, %33) reduce sum (%34 : 3, %35 : 1, %36 : 1) -> tensor<1x5x4x5xf32> {
// CHECK-NEXT:       %37 = arith.addi %32, %35 : index
// CHECK-NEXT:       %38 = arith.addi %33, %36 : index
// CHECK-NEXT:       %39 = te.read %r[%30, %37, %38, %34] : tensor<1x4x5x3xf32>
// CHECK-NEXT:       %40 = te.read %w2[%31, %34, %35, %36] : tensor<5x3x1x1xf32>
// CHECK-NEXT:       %41 = arith.mulf %39, %40 : f32
// CHECK-NEXT:       te.yield %41 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %p = te.compute "avg_pool_sum" (%42, %43, %44, %45) reduce sum (%46 : 4, %47 : 5) -> tensor<1x1x1x3xf32> {
// CHECK-NEXT:       %48 = arith.addi %43, %46 : index
// CHECK-NEXT:       %49 = arith.addi %44, %47 : index
// CHECK-NEXT:       %50 = te.read %r[%42, %48, %49, %45] : tensor<1x4x5x3xf32>
// CHECK-NEXT:       te.yield %50 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %51 = te.compute "channels_last_to_nchw" (%52, %53, %54, %55) -> tensor<1x3x1x1xf32> {
// CHECK-NEXT:       %56 = te.read %p[%52, %54, %55, %53] : tensor<1x1x1x3xf32>
// CHECK-NEXT:       te.yield %56 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %c2, %51, %24 : tensor<1x5x4x5xf32>, tensor<1x3x1x1xf32>, tensor<1x3x4x5xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
