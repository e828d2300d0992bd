// RUN: mini-opt %s -p te-conv-layout | filecheck %s

// The convolution reads a channels-last copy of its (padded) input: a new elementwise compute transposes it.

builtin.module {
  func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
    %w = graph.weight "w" : tensor<4x2x3x3xf32>
    %y = te.compute "pad" (%0, %1, %2, %3) -> tensor<1x2x6x6xf32> {
      %4 = arith.constant 1 : index
      %5 = arith.subi %2, %4 : index
      %6 = arith.constant 0 : index
      %7 = arith.cmpi sge, %5, %6 : index
      %8 = arith.constant 4 : index
      %9 = arith.cmpi slt, %5, %8 : index
      %10 = arith.andi %7, %9 : i1
      %11 = arith.constant 0 : index
      %12 = arith.maxsi %5, %11 : index
      %13 = arith.constant 3 : index
      %14 = arith.minsi %12, %13 : index
      %15 = arith.constant 1 : index
      %16 = arith.subi %3, %15 : index
      %17 = arith.constant 0 : index
      %18 = arith.cmpi sge, %16, %17 : index
      %19 = arith.andi %10, %18 : i1
      %20 = arith.constant 4 : index
      %21 = arith.cmpi slt, %16, %20 : index
      %22 = arith.andi %19, %21 : i1
      %23 = arith.constant 0 : index
      %24 = arith.maxsi %16, %23 : index
      %25 = arith.constant 3 : index
      %26 = arith.minsi %24, %25 : index
      %27 = te.read %x[%0, %1, %14, %26] : tensor<1x2x4x4xf32>
      %28 = arith.constant 0.000000e+00 : f32
      %29 = arith.select %22, %27, %28 : f32
      te.yield %29 : f32
    }
    %y_1 = te.compute "conv" (%30, %31, %32, %33) reduce sum (%34 : 2, %35 : 3, %36 : 3) -> tensor<1x4x4x4xf32> {
      %37 = arith.addi %32, %35 : index
      %38 = arith.addi %33, %36 : index
      %39 = te.read %y[%30, %34, %37, %38] : tensor<1x2x6x6xf32>
      %40 = te.read %w[%31, %34, %35, %36] : tensor<4x2x3x3xf32>
      %41 = arith.mulf %39, %40 : f32
      te.yield %41 : f32
    }
    func.return %y_1 : tensor<1x4x4x4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:     %w = graph.weight "w" : tensor<4x2x3x3xf32>
// CHECK-NEXT:     %y = te.compute "pad" (%0, %1, %2, %3) -> tensor<1x2x6x6xf32> {
// CHECK-NEXT:       %4 = arith.constant 1 : index
// CHECK-NEXT:       %5 = arith.subi %2, %4 : index
// CHECK-NEXT:       %6 = arith.constant 0 : index
// CHECK-NEXT:       %7 = arith.cmpi sge, %5, %6 : index
// CHECK-NEXT:       %8 = arith.constant 4 : index
// CHECK-NEXT:       %9 = arith.cmpi slt, %5, %8 : index
// CHECK-NEXT:       %10 = arith.andi %7, %9 : i1
// CHECK-NEXT:       %11 = arith.constant 0 : index
// CHECK-NEXT:       %12 = arith.maxsi %5, %11 : index
// CHECK-NEXT:       %13 = arith.constant 3 : index
// CHECK-NEXT:       %14 = arith.minsi %12, %13 : index
// CHECK-NEXT:       %15 = arith.constant 1 : index
// CHECK-NEXT:       %16 = arith.subi %3, %15 : index
// CHECK-NEXT:       %17 = arith.constant 0 : index
// CHECK-NEXT:       %18 = arith.cmpi sge, %16, %17 : index
// CHECK-NEXT:       %19 = arith.andi %10, %18 : i1
// CHECK-NEXT:       %20 = arith.constant 4 : index
// CHECK-NEXT:       %21 = arith.cmpi slt, %16, %20 : index
// CHECK-NEXT:       %22 = arith.andi %19, %21 : i1
// CHECK-NEXT:       %23 = arith.constant 0 : index
// CHECK-NEXT:       %24 = arith.maxsi %16, %23 : index
// CHECK-NEXT:       %25 = arith.constant 3 : index
// CHECK-NEXT:       %26 = arith.minsi %24, %25 : index
// CHECK-NEXT:       %27 = te.read %x[%0, %1, %14, %26] : tensor<1x2x4x4xf32>
// CHECK-NEXT:       %28 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       %29 = arith.select %22, %27, %28 : f32
// CHECK-NEXT:       te.yield %29 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %30 = te.compute "conv_input_nhwc" (%31, %32, %33, %34) -> tensor<1x6x6x2xf32> {
// CHECK-NEXT:       %35 = te.read %y[%31, %34, %32, %33] : tensor<1x2x6x6xf32>
// CHECK-NEXT:       te.yield %35 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y_1 = te.compute "conv" (%36, %37, %38, %39) reduce sum (%40 : 2, %41 : 3, %42 : 3) -> tensor<1x4x4x4xf32> {
// CHECK-NEXT:       %43 = arith.addi %38, %41 : index
// CHECK-NEXT:       %44 = arith.addi %39, %42 : index
// CHECK-NEXT:       %45 = te.read %30[%36, %43, %44, %40] : tensor<1x6x6x2xf32>
// CHECK-NEXT:       %46 = te.read %w[%37, %40, %41, %42] : tensor<4x2x3x3xf32>
// CHECK-NEXT:       %47 = arith.mulf %45, %46 : f32
// CHECK-NEXT:       te.yield %47 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %y_1 : tensor<1x4x4x4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
