// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A max pool over an input already padded with -inf (graph-pad-max-pool) is a window reduction of plain affine
// reads: default-schedule accumulates it in the output, moves the window loops outside the width loop, makes the
// width loop one vector max per window tap and keeps the row of outputs in a local tile. The -inf pad stays its
// own kernel (te-inline does not inline into overlapping windows).

builtin.module {
  func.func @main(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
    %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0xFF800000 : f32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x10x10xf32>
    %y = graph.max_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x10x10xf32> -> tensor<1x2x8x8xf32>
    func.return %y : tensor<1x2x8x8xf32>
  }
}

// CHECK:      func.call @pad_0(%x, %{{.*}}) : (memref<1x2x8x8xf32>, memref<1x2x10x10xf32>) -> ()
// CHECK:      func.func private @max_pool_1(%in0: memref<1x2x10x10xf32> {llvm.noalias}, %out: memref<1x2x8x8xf32> {llvm.noalias}) {
// CHECK-NEXT:   %tile = loop.alloc "local" : memref<1x1x1x8xf32>
// CHECK:        loop.for "i3_init" %i3_init = 0 to 8 step 1 vectorize {
// CHECK-NEXT:     %0 = arith.constant 0xff800000 : f32
// CHECK:        loop.for "i2" %i2 = 0 to 8 step 1 serial {
// CHECK:          loop.for "i2_ld3" %i2_ld3 = 0 to 8 step 1 vectorize {
// CHECK:          loop.for "k4" %k4 = 0 to 3 step 1 serial {
// CHECK-NEXT:       loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:         loop.for "i3" %i3 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:           %7 = arith.addi %i2, %k4 : index
// CHECK-NEXT:           %8 = arith.addi %i3, %k5 : index
// CHECK-NEXT:           %9 = memref.load %in0[%i0, %i1, %7, %8] : memref<1x2x10x10xf32>
// CHECK:                %13 = memref.load %tile[%10, %11, %12, %i3] : memref<1x1x1x8xf32>
// CHECK-NEXT:           %14 = arith.maximumf %13, %9 : f32
// CHECK:                memref.store %14, %tile[%15, %16, %17, %i3] : memref<1x1x1x8xf32>
// CHECK:          loop.for "i2_st3" %i2_st3 = 0 to 8 step 1 vectorize {
