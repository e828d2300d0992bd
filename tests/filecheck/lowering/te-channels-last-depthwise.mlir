// RUN: mini-opt %s --split-input-file -p te-channels-last | filecheck %s

// A depthwise convolution whose output a convolution reads is stored channels-last (1x8x4x4 -> 1x4x4x8) when its
// channels fill the depthwise schedule's vectors (8 on x86-64-v3); its input, a function argument that stays NCHW,
// is read through a new channels-last copy, and the convolution's te-conv-layout copy of it goes. The second one has
// 6 channels (no 8- or 4-lane vectors): it stays NCHW with its pool-rule schedule. In the second case an im2col GEMM
// (a 1x1 convolution's `conv_gemm`) reads the depthwise convolution directly: that reader keeps it channels-last
// too, and the GEMM's A operand becomes a row-major [pixels, channels] read.

builtin.module attributes {minimlc.target = "x86-64-v3"} {
  func.func @main(%x: tensor<1x8x6x6xf32>, %z: tensor<1x6x6x6xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
    %wd = graph.weight "wd" : tensor<8x1x3x3xf32>
    %w1 = graph.weight "w1" : tensor<4x8x1x1xf32>
    %d = te.compute "depthwise_conv" (%0, %1, %2, %3) reduce sum (%4 : 1, %5 : 3, %6 : 3) -> tensor<1x8x4x4xf32> {
      %7 = arith.addi %2, %5 : index
      %8 = arith.addi %3, %6 : index
      %9 = te.read %x[%0, %1, %7, %8] : tensor<1x8x6x6xf32>
      %10 = te.read %wd[%1, %4, %5, %6] : tensor<8x1x3x3xf32>
      %11 = arith.mulf %9, %10 : f32
      te.yield %11 : f32
    }
    %dt = te.compute "conv_input_nhwc" (%12, %13, %14, %15) -> tensor<1x4x4x8xf32> {
      %16 = te.read %d[%12, %15, %13, %14] : tensor<1x8x4x4xf32>
      te.yield %16 : f32
    }
    %c = te.compute "conv" (%17, %18, %19, %20) reduce sum (%21 : 8, %22 : 1, %23 : 1) -> tensor<1x4x4x4xf32> {
      %24 = arith.addi %19, %22 : index
      %25 = arith.addi %20, %23 : index
      %26 = te.read %dt[%17, %24, %25, %21] : tensor<1x4x4x8xf32>
      %27 = te.read %w1[%18, %21, %22, %23] : tensor<4x8x1x1xf32>
      %28 = arith.mulf %26, %27 : f32
      te.yield %28 : f32
    }
    %wz = graph.weight "wz" : tensor<6x1x3x3xf32>
    %w2 = graph.weight "w2" : tensor<4x6x1x1xf32>
    %e = te.compute "depthwise_conv" (%30, %31, %32, %33) reduce sum (%34 : 1, %35 : 3, %36 : 3) -> tensor<1x6x4x4xf32> {
      %37 = arith.addi %32, %35 : index
      %38 = arith.addi %33, %36 : index
      %39 = te.read %z[%30, %31, %37, %38] : tensor<1x6x6x6xf32>
      %40 = te.read %wz[%31, %34, %35, %36] : tensor<6x1x3x3xf32>
      %41 = arith.mulf %39, %40 : f32
      te.yield %41 : f32
    }
    %et = te.compute "conv_input_nhwc" (%42, %43, %44, %45) -> tensor<1x4x4x6xf32> {
      %46 = te.read %e[%42, %45, %43, %44] : tensor<1x6x4x4xf32>
      te.yield %46 : f32
    }
    %f = te.compute "conv" (%47, %48, %49, %50) reduce sum (%51 : 6, %52 : 1, %53 : 1) -> tensor<1x4x4x4xf32> {
      %54 = arith.addi %49, %52 : index
      %55 = arith.addi %50, %53 : index
      %56 = te.read %et[%47, %54, %55, %51] : tensor<1x4x4x6xf32>
      %57 = te.read %w2[%48, %51, %52, %53] : tensor<4x6x1x1xf32>
      %58 = arith.mulf %56, %57 : f32
      te.yield %58 : f32
    }
    func.return %c, %f : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
  }
}
// -----
builtin.module attributes {minimlc.target = "x86-64-v3"} {
  func.func @gemm_reader(%x: tensor<1x8x6x6xf32>) -> tensor<16x16xf32> {
    %wd = graph.weight "wd" : tensor<8x1x3x3xf32>
    %wm = graph.weight "wm" : tensor<8x16xf32>
    %d = te.compute "depthwise_conv" (%0, %1, %2, %3) reduce sum (%4 : 1, %5 : 3, %6 : 3) -> tensor<1x8x4x4xf32> {
      %7 = arith.addi %2, %5 : index
      %8 = arith.addi %3, %6 : index
      %9 = te.read %x[%0, %1, %7, %8] : tensor<1x8x6x6xf32>
      %10 = te.read %wd[%1, %4, %5, %6] : tensor<8x1x3x3xf32>
      %11 = arith.mulf %9, %10 : f32
      te.yield %11 : f32
    }
    %g = te.compute "conv_gemm" (%12, %13) reduce sum (%14 : 8) -> tensor<16x16xf32> {
      %15 = arith.constant 0 : index
      %16 = arith.constant 4 : index
      %17 = arith.divui %12, %16 : index
      %18 = arith.remui %12, %16 : index
      %19 = te.read %d[%15, %14, %17, %18] : tensor<1x8x4x4xf32>
      %20 = te.read %wm[%14, %13] : tensor<8x16xf32>
      %21 = arith.mulf %19, %20 : f32
      te.yield %21 : f32
    }
    func.return %g : tensor<16x16xf32>
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%x: tensor<1x8x6x6xf32>, %z: tensor<1x6x6x6xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
// CHECK-NEXT:     %wd = graph.weight "wd" : tensor<8x1x3x3xf32>
// CHECK-NEXT:     %w1 = graph.weight "w1" : tensor<4x8x1x1xf32>
// CHECK-NEXT:     %0 = te.compute "conv_input_nhwc" (%1, %2, %3, %4) -> tensor<1x6x6x8xf32> {
// CHECK-NEXT:       %5 = te.read %x[%1, %4, %2, %3] : tensor<1x8x6x6xf32>
// CHECK-NEXT:       te.yield %5 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %d = te.compute "depthwise_conv" (%6, %7, %8, %9) reduce sum (%10 : 1, %11 : 3, %12 : 3) -> tensor<1x4x4x8xf32> {
// CHECK-NEXT:       %13 = arith.addi %7, %11 : index
// CHECK-NEXT:       %14 = arith.addi %8, %12 : index
// CHECK-NEXT:       %15 = te.read %0[%6, %13, %14, %9] : tensor<1x6x6x8xf32>
// CHECK-NEXT:       %16 = te.read %wd[%9, %10, %11, %12] : tensor<8x1x3x3xf32>
// CHECK-NEXT:       %17 = arith.mulf %15, %16 : f32
// CHECK-NEXT:       te.yield %17 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %c = te.compute "conv" (%18, %19, %20, %21) reduce sum (%22 : 8, %23 : 1, %24 : 1) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:       %25 = arith.addi %20, %23 : index
// CHECK-NEXT:       %26 = arith.addi %21, %24 : index
// CHECK-NEXT:       %27 = te.read %d[%18, %25, %26, %22] : tensor<1x4x4x8xf32>
// CHECK-NEXT:       %28 = te.read %w1[%19, %22, %23, %24] : tensor<4x8x1x1xf32>
// CHECK-NEXT:       %29 = arith.mulf %27, %28 : f32
// CHECK-NEXT:       te.yield %29 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %wz = graph.weight "wz" : tensor<6x1x3x3xf32>
// CHECK-NEXT:     %w2 = graph.weight "w2" : tensor<4x6x1x1xf32>
// CHECK-NEXT:     %e = te.compute "depthwise_conv" (%30, %31, %32, %33) reduce sum (%34 : 1, %35 : 3, %36 : 3) -> tensor<1x6x4x4xf32> {
// CHECK-NEXT:       %37 = arith.addi %32, %35 : index
// CHECK-NEXT:       %38 = arith.addi %33, %36 : index
// CHECK-NEXT:       %39 = te.read %z[%30, %31, %37, %38] : tensor<1x6x6x6xf32>
// CHECK-NEXT:       %40 = te.read %wz[%31, %34, %35, %36] : tensor<6x1x3x3xf32>
// CHECK-NEXT:       %41 = arith.mulf %39, %40 : f32
// CHECK-NEXT:       te.yield %41 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %et = te.compute "conv_input_nhwc" (%42, %43, %44, %45) -> tensor<1x4x4x6xf32> {
// CHECK-NEXT:       %46 = te.read %e[%42, %45, %43, %44] : tensor<1x6x4x4xf32>
// CHECK-NEXT:       te.yield %46 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %f = te.compute "conv" (%47, %48, %49, %50) reduce sum (%51 : 6, %52 : 1, %53 : 1) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:       %54 = arith.addi %49, %52 : index
// CHECK-NEXT:       %55 = arith.addi %50, %53 : index
// CHECK-NEXT:       %56 = te.read %et[%47, %54, %55, %51] : tensor<1x4x4x6xf32>
// CHECK-NEXT:       %57 = te.read %w2[%48, %51, %52, %53] : tensor<4x6x1x1xf32>
// CHECK-NEXT:       %58 = arith.mulf %56, %57 : f32
// CHECK-NEXT:       te.yield %58 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %c, %f : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @gemm_reader(%x: tensor<1x8x6x6xf32>) -> tensor<16x16xf32> {
// CHECK-NEXT:     %wd = graph.weight "wd" : tensor<8x1x3x3xf32>
// CHECK-NEXT:     %wm = graph.weight "wm" : tensor<8x16xf32>
// CHECK-NEXT:     %0 = te.compute "conv_input_nhwc" (%1, %2, %3, %4) -> tensor<1x6x6x8xf32> {
// CHECK-NEXT:       %5 = te.read %x[%1, %4, %2, %3] : tensor<1x8x6x6xf32>
// CHECK-NEXT:       te.yield %5 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %d = te.compute "depthwise_conv" (%6, %7, %8, %9) reduce sum (%10 : 1, %11 : 3, %12 : 3) -> tensor<1x4x4x8xf32> {
// CHECK-NEXT:       %13 = arith.addi %7, %11 : index
// CHECK-NEXT:       %14 = arith.addi %8, %12 : index
// CHECK-NEXT:       %15 = te.read %0[%6, %13, %14, %9] : tensor<1x6x6x8xf32>
// CHECK-NEXT:       %16 = te.read %wd[%9, %10, %11, %12] : tensor<8x1x3x3xf32>
// CHECK-NEXT:       %17 = arith.mulf %15, %16 : f32
// CHECK-NEXT:       te.yield %17 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %g = te.compute "conv_gemm" (%18, %19) reduce sum (%20 : 8) -> tensor<16x16xf32> {
// CHECK-NEXT:       %21 = arith.constant 0 : index
// CHECK-NEXT:       %22 = arith.constant 4 : index
// CHECK-NEXT:       %23 = arith.divui %18, %22 : index
// CHECK-NEXT:       %24 = arith.remui %18, %22 : index
// CHECK-NEXT:       %25 = te.read %d[%21, %23, %24, %20] : tensor<1x4x4x8xf32>
// CHECK-NEXT:       %26 = te.read %wm[%20, %19] : tensor<8x16xf32>
// CHECK-NEXT:       %27 = arith.mulf %25, %26 : f32
// CHECK-NEXT:       te.yield %27 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %g : tensor<16x16xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
