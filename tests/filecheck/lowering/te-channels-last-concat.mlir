// RUN: mini-opt %s -p te-channels-last | filecheck %s

// A channel concatenation of two channels-last convolutions (2 + 3 channels) is stored channels-last too: its reads
// keep their clamped channel offsets and move to the last position, and the convolution reading it takes it as its
// channels-last input (te-conv-layout's copy goes). A concatenation of the network input (NCHW) with a convolution
// stays NCHW, reading the convolution channels-last, and keeps its copy for the convolution after it.

builtin.module {
  func.func @main(%x: tensor<1x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
    %w1 = graph.weight "w1" : tensor<2x2x1x1xf32>
    %w2 = graph.weight "w2" : tensor<3x2x1x1xf32>
    %w3 = graph.weight "w3" : tensor<4x5x1x1xf32>
    %xt = te.compute "conv_input_nhwc" (%0, %1, %2, %3) -> tensor<1x3x3x2xf32> {
      %4 = te.read %x[%0, %3, %1, %2] : tensor<1x2x3x3xf32>
      te.yield %4 : f32
    }
    %a = te.compute "conv" (%5, %6, %7, %8) reduce sum (%9 : 2, %10 : 1, %11 : 1) -> tensor<1x2x3x3xf32> {
      %12 = te.read %xt[%5, %7, %8, %9] : tensor<1x3x3x2xf32>
      %13 = te.read %w1[%6, %9, %10, %11] : tensor<2x2x1x1xf32>
      %14 = arith.mulf %12, %13 : f32
      te.yield %14 : f32
    }
    %b = te.compute "conv" (%15, %16, %17, %18) reduce sum (%19 : 2, %20 : 1, %21 : 1) -> tensor<1x3x3x3xf32> {
      %22 = te.read %xt[%15, %17, %18, %19] : tensor<1x3x3x2xf32>
      %23 = te.read %w2[%16, %19, %20, %21] : tensor<3x2x1x1xf32>
      %24 = arith.mulf %22, %23 : f32
      te.yield %24 : f32
    }
    %cat = te.compute "concat" (%25, %26, %27, %28) -> tensor<1x5x3x3xf32> {
      %29 = arith.constant 1 : index
      %30 = arith.minsi %26, %29 : index
      %31 = te.read %a[%25, %30, %27, %28] : tensor<1x2x3x3xf32>
      %32 = arith.constant 2 : index
      %33 = arith.subi %26, %32 : index
      %34 = arith.constant 0 : index
      %35 = arith.maxsi %33, %34 : index
      %36 = te.read %b[%25, %35, %27, %28] : tensor<1x3x3x3xf32>
      %37 = arith.cmpi slt, %26, %32 : index
      %38 = arith.select %37, %31, %36 : f32
      te.yield %38 : f32
    }
    %catt = te.compute "conv_input_nhwc" (%39, %40, %41, %42) -> tensor<1x3x3x5xf32> {
      %43 = te.read %cat[%39, %42, %40, %41] : tensor<1x5x3x3xf32>
      te.yield %43 : f32
    }
    %y = te.compute "conv" (%44, %45, %46, %47) reduce sum (%48 : 5, %49 : 1, %50 : 1) -> tensor<1x4x3x3xf32> {
      %51 = te.read %catt[%44, %46, %47, %48] : tensor<1x3x3x5xf32>
      %52 = te.read %w3[%45, %48, %49, %50] : tensor<4x5x1x1xf32>
      %53 = arith.mulf %51, %52 : f32
      te.yield %53 : f32
    }
    %mixed = te.compute "concat" (%54, %55, %56, %57) -> tensor<1x5x3x3xf32> {
      %58 = arith.constant 1 : index
      %59 = arith.minsi %55, %58 : index
      %60 = te.read %x[%54, %59, %56, %57] : tensor<1x2x3x3xf32>
      %61 = arith.constant 2 : index
      %62 = arith.subi %55, %61 : index
      %63 = arith.constant 0 : index
      %64 = arith.maxsi %62, %63 : index
      %65 = te.read %b[%54, %64, %56, %57] : tensor<1x3x3x3xf32>
      %66 = arith.cmpi slt, %55, %61 : index
      %67 = arith.select %66, %60, %65 : f32
      te.yield %67 : f32
    }
    %mixedt = te.compute "conv_input_nhwc" (%68, %69, %70, %71) -> tensor<1x3x3x5xf32> {
      %72 = te.read %mixed[%68, %71, %69, %70] : tensor<1x5x3x3xf32>
      te.yield %72 : f32
    }
    %z = te.compute "conv" (%73, %74, %75, %76) reduce sum (%77 : 5, %78 : 1, %79 : 1) -> tensor<1x4x3x3xf32> {
      %80 = te.read %mixedt[%73, %75, %76, %77] : tensor<1x3x3x5xf32>
      %81 = te.read %w3[%74, %77, %78, %79] : tensor<4x5x1x1xf32>
      %82 = arith.mulf %80, %81 : f32
      te.yield %82 : f32
    }
    func.return %y, %z : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<1x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
// CHECK-NEXT:     %w1 = graph.weight "w1" : tensor<2x2x1x1xf32>
// CHECK-NEXT:     %w2 = graph.weight "w2" : tensor<3x2x1x1xf32>
// CHECK-NEXT:     %w3 = graph.weight "w3" : tensor<4x5x1x1xf32>
// CHECK-NEXT:     %xt = te.compute "conv_input_nhwc" (%0, %1, %2, %3) -> tensor<1x3x3x2xf32> {
// CHECK-NEXT:       %4 = te.read %x[%0, %3, %1, %2] : tensor<1x2x3x3xf32>
// CHECK-NEXT:       te.yield %4 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %a = te.compute "conv" (%5, %6, %7, %8) reduce sum (%9 : 2, %10 : 1, %11 : 1) -> tensor<1x3x3x2xf32> {
// CHECK-NEXT:       %12 = te.read %xt[%5, %6, %7, %9] : tensor<1x3x3x2xf32>
// CHECK-NEXT:       %13 = te.read %w1[%8, %9, %10, %11] : tensor<2x2x1x1xf32>
// CHECK-NEXT:       %14 = arith.mulf %12, %13 : f32
// CHECK-NEXT:       te.yield %14 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %b = te.compute "conv" (%15, %16, %17, %18) reduce sum (%19 : 2, %20 : 1, %21 : 1) -> tensor<1x3x3x3xf32> {
// CHECK-NEXT:       %22 = te.read %xt[%15, %16, %17, %19] : tensor<1x3x3x2xf32>
// CHECK-NEXT:       %23 = te.read %w2[%18, %19, %20, %21] : tensor<3x2x1x1xf32>
// CHECK-NEXT:       %24 = arith.mulf %22, %23 : f32
// CHECK-NEXT:       te.yield %24 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %cat = te.compute "concat" (%25, %26, %27, %28) -> tensor<1x3x3x5xf32> {
// CHECK-NEXT:       %29 = arith.constant 1 : index
// CHECK-NEXT:       %30 = arith.minsi %28, %29 : index
// CHECK-NEXT:       %31 = te.read %a[%25, %26, %27, %30] : tensor<1x3x3x2xf32>
// CHECK-NEXT:       %32 = arith.constant 2 : index
// CHECK-NEXT:       %33 = arith.subi %28, %32 : index
// CHECK-NEXT:       %34 = arith.constant 0 : index
// CHECK-NEXT:       %35 = arith.maxsi %33, %34 : index
// CHECK-NEXT:       %36 = te.read %b[%25, %26, %27, %35] : tensor<1x3x3x3xf32>
// CHECK-NEXT:       %37 = arith.cmpi slt, %28, %32 : index
// CHECK-NEXT:       %38 = arith.select %37, %31, %36 : f32
// CHECK-NEXT:       te.yield %38 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %y = te.compute "conv" (%39, %40, %41, %42) reduce sum (%43 : 5, %44 : 1, %45 : 1) -> tensor<1x4x3x3xf32> {
// CHECK-NEXT:       %46 = te.read %cat[%39, %41, %42, %43] : tensor<1x3x3x5xf32>
// CHECK-NEXT:       %47 = te.read %w3[%40, %43, %44, %45] : tensor<4x5x1x1xf32>
// CHECK-NEXT:       %48 = arith.mulf %46, %47 : f32
// CHECK-NEXT:       te.yield %48 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %mixed = te.compute "concat" (%49, %50, %51, %52) -> tensor<1x5x3x3xf32> {
// CHECK-NEXT:       %53 = arith.constant 1 : index
// CHECK-NEXT:       %54 = arith.minsi %50, %53 : index
// CHECK-NEXT:       %55 = te.read %x[%49, %54, %51, %52] : tensor<1x2x3x3xf32>
// CHECK-NEXT:       %56 = arith.constant 2 : index
// CHECK-NEXT:       %57 = arith.subi %50, %56 : index
// CHECK-NEXT:       %58 = arith.constant 0 : index
// CHECK-NEXT:       %59 = arith.maxsi %57, %58 : index
// CHECK-NEXT:       %60 = te.read %b[%49, %51, %52, %59] : tensor<1x3x3x3xf32>
// CHECK-NEXT:       %61 = arith.cmpi slt, %50, %56 : index
// CHECK-NEXT:       %62 = arith.select %61, %55, %60 : f32
// CHECK-NEXT:       te.yield %62 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %mixedt = te.compute "conv_input_nhwc" (%63, %64, %65, %66) -> tensor<1x3x3x5xf32> {
// CHECK-NEXT:       %67 = te.read %mixed[%63, %66, %64, %65] : tensor<1x5x3x3xf32>
// CHECK-NEXT:       te.yield %67 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %z = te.compute "conv" (%68, %69, %70, %71) reduce sum (%72 : 5, %73 : 1, %74 : 1) -> tensor<1x4x3x3xf32> {
// CHECK-NEXT:       %75 = te.read %mixedt[%68, %70, %71, %72] : tensor<1x3x3x5xf32>
// CHECK-NEXT:       %76 = te.read %w3[%69, %72, %73, %74] : tensor<4x5x1x1xf32>
// CHECK-NEXT:       %77 = arith.mulf %75, %76 : f32
// CHECK-NEXT:       te.yield %77 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return %y, %z : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
