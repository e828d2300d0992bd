// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-pad-conv,graph-to-te,te-conv-im2col,te-conv-layout,te-channels-last,te-inline,te-to-loop,default-schedule' | filecheck %s

// ShuffleNet's channel shuffle (groups 2), a padded 3x3 depthwise convolution and a 1x1 convolution. The depthwise
// convolution is stored channels-last and reads a channels-last copy of its padded, shuffled input.
// - The copy (`shuffle` rule): its channel loop reads channel (i3 % 2) * 4 + i3 / 2; split by the group count 2 and
//   unrolled, so in each copy the remainder is a constant (LLVM folds a concatenation's selection on it).
// - The depthwise convolution (`depthwise` rule): a tile of 4 columns x 8 channels (one vector of x86-64-v3) with the
//   taps (k4, k5, k6) outside it, the columns unrolled and the channels vectorized, the weight packed at load time
//   into [C / 8, 1, 3, 3, 8] panels (one contiguous vector per tap), the tile accumulated in registers
//   from zero and stored into the output once (the output is not zeroed first).

builtin.module {
  func.func @main(%X: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
    %S_r = graph.reshape %X : tensor<1x8x4x4xf32> -> tensor<1x2x4x4x4xf32>
    %S_t = graph.transpose %S_r {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x2x4x4x4xf32> -> tensor<1x4x2x4x4xf32>
    %S = graph.reshape %S_t : tensor<1x4x2x4x4xf32> -> tensor<1x8x4x4xf32>
    %WD = graph.weight "WD" : tensor<8x1x3x3xf32>
    %D = graph.pad %S {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.000000e+00 : f32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x6x6xf32>
    %D_1 = graph.conv %D, %WD {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
    %W1 = graph.weight "W1" : tensor<8x8x1x1xf32>
    %Y = graph.conv %D_1, %W1 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    func.return %Y : tensor<1x8x4x4xf32>
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%X: memref<1x8x4x4xf32>, %out0: memref<1x8x4x4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %WD = loop.weight "WD" : memref<8x1x3x3xf32>
// CHECK-NEXT:     %0 = loop.alloc "global" : memref<1x6x6x8xf32>
// CHECK-NEXT:     func.call @conv_input_nhwc_0(%X, %0) : (memref<1x8x4x4xf32>, memref<1x6x6x8xf32>) -> ()
// CHECK-NEXT:     %D = loop.alloc "global" : memref<1x4x4x8xf32>
// CHECK-NEXT:     %WD_packed = loop.precompute @depthwise_conv_1_pack1(%WD) : (memref<8x1x3x3xf32>) -> memref<1x1x3x3x8xf32>
// CHECK-NEXT:     func.call @depthwise_conv_1(%0, %WD_packed, %D) : (memref<1x6x6x8xf32>, memref<1x1x3x3x8xf32>, memref<1x4x4x8xf32>) -> ()
// CHECK-NEXT:     %W1 = loop.weight "W1" : memref<8x8x1x1xf32>
// CHECK-NEXT:     %Y = loop.alloc "global" : memref<8x16xf32>
// CHECK-NEXT:     func.call @conv_weight_matrix_2(%W1, %Y) : (memref<8x8x1x1xf32>, memref<8x16xf32>) -> ()
// CHECK-NEXT:     %Y_1 = loop.alloc "global" : memref<16x16xf32>
// CHECK-NEXT:     func.call @conv_gemm_3(%D, %Y, %Y_1) : (memref<1x4x4x8xf32>, memref<8x16xf32>, memref<16x16xf32>) -> ()
// CHECK-NEXT:     func.call @conv_output_4(%Y_1, %out0) : (memref<16x16xf32>, memref<1x8x4x4xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @conv_input_nhwc_0(%in0: memref<1x8x4x4xf32> {llvm.noalias}, %out: memref<1x6x6x8xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %i1 = 0 to 6 step 1 serial {
// CHECK-NEXT:         loop.for "i2" %i2 = 0 to 6 step 1 serial {
// CHECK-NEXT:           loop.for "i3_o" %i3_o = 0 to 8 step 2 serial {
// CHECK-NEXT:             loop.for "i3_i" %i3_i = 0 to 2 step 1 unroll {
// CHECK-NEXT:               %i3 = arith.addi %i3_o, %i3_i : index
// CHECK-NEXT:               %0 = arith.constant 1 : index
// CHECK-NEXT:               %1 = arith.subi %i1, %0 : index
// CHECK-NEXT:               %2 = arith.constant 0 : index
// CHECK-NEXT:               %3 = arith.cmpi sge, %1, %2 : index
// CHECK-NEXT:               %4 = arith.constant 4 : index
// CHECK-NEXT:               %5 = arith.cmpi slt, %1, %4 : index
// CHECK-NEXT:               %6 = arith.andi %3, %5 : i1
// CHECK-NEXT:               %7 = arith.constant 0 : index
// CHECK-NEXT:               %8 = arith.maxsi %1, %7 : index
// CHECK-NEXT:               %9 = arith.constant 3 : index
// CHECK-NEXT:               %10 = arith.minsi %8, %9 : index
// CHECK-NEXT:               %11 = arith.constant 1 : index
// CHECK-NEXT:               %12 = arith.subi %i2, %11 : index
// CHECK-NEXT:               %13 = arith.constant 0 : index
// CHECK-NEXT:               %14 = arith.cmpi sge, %12, %13 : index
// CHECK-NEXT:               %15 = arith.andi %6, %14 : i1
// CHECK-NEXT:               %16 = arith.constant 4 : index
// CHECK-NEXT:               %17 = arith.cmpi slt, %12, %16 : index
// CHECK-NEXT:               %18 = arith.andi %15, %17 : i1
// CHECK-NEXT:               %19 = arith.constant 0 : index
// CHECK-NEXT:               %20 = arith.maxsi %12, %19 : index
// CHECK-NEXT:               %21 = arith.constant 3 : index
// CHECK-NEXT:               %22 = arith.minsi %20, %21 : index
// CHECK-NEXT:               %23 = arith.constant 2 : index
// CHECK-NEXT:               %24 = arith.divui %i3, %23 : index
// CHECK-NEXT:               %25 = arith.constant 2 : index
// CHECK-NEXT:               %26 = arith.remui %i3, %25 : index
// CHECK-NEXT:               %27 = arith.constant 4 : index
// CHECK-NEXT:               %28 = arith.muli %26, %27 : index
// CHECK-NEXT:               %29 = arith.addi %24, %28 : index
// CHECK-NEXT:               %30 = memref.load %in0[%i0, %29, %10, %22] : memref<1x8x4x4xf32>
// CHECK-NEXT:               %31 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:               %32 = arith.select %18, %30, %31 : f32
// CHECK-NEXT:               memref.store %32, %out[%i0, %i1, %i2, %i3] : memref<1x6x6x8xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @depthwise_conv_1(%in0: memref<1x6x6x8xf32> {llvm.noalias}, %in1: memref<1x1x3x3x8xf32> {llvm.noalias}, %out: memref<1x4x4x8xf32> {llvm.noalias}) {
// CHECK-NEXT:     %tile = loop.alloc "local" : memref<1x1x4x8xf32>
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %i1 = 0 to 4 step 1 serial {
// CHECK-NEXT:         loop.for "i2_o" %i2_o = 0 to 4 step 4 serial {
// CHECK-NEXT:           loop.for "i3_o" %i3_o = 0 to 8 step 8 serial {
// CHECK-NEXT:             loop.for "i3_o_ld0" %i3_o_ld0 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_ld1" %i3_o_ld1 = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_ld2" %i3_o_ld2 = 0 to 4 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_ld3" %i3_o_ld3 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                     %0 = arith.addi %i0, %i3_o_ld0 : index
// CHECK-NEXT:                     %1 = arith.addi %i1, %i3_o_ld1 : index
// CHECK-NEXT:                     %2 = arith.addi %i2_o, %i3_o_ld2 : index
// CHECK-NEXT:                     %3 = arith.addi %i3_o, %i3_o_ld3 : index
// CHECK-NEXT:                     %4 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:                     memref.store %4, %tile[%i3_o_ld0, %i3_o_ld1, %i3_o_ld2, %i3_o_ld3] : memref<1x1x4x8xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "k4" %k4 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:                 loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK-NEXT:                   loop.for "i2_i" %i2_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:                     loop.for "i3_i" %i3_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                       %i2 = arith.addi %i2_o, %i2_i : index
// CHECK-NEXT:                       %i3 = arith.addi %i3_o, %i3_i : index
// CHECK-NEXT:                       %5 = arith.addi %i1, %k5 : index
// CHECK-NEXT:                       %6 = arith.addi %i2, %k6 : index
// CHECK-NEXT:                       %7 = memref.load %in0[%i0, %5, %6, %i3] : memref<1x6x6x8xf32>
// CHECK-NEXT:                       %8 = arith.constant 8 : index
// CHECK-NEXT:                       %9 = arith.divui %i3_o, %8 : index
// CHECK-NEXT:                       %10 = memref.load %in1[%9, %k4, %k5, %k6, %i3_i] : memref<1x1x3x3x8xf32>
// CHECK-NEXT:                       %11 = arith.mulf %7, %10 fastmath<contract> : f32
// CHECK-NEXT:                       %12 = arith.constant 0 : index
// CHECK-NEXT:                       %13 = arith.constant 0 : index
// CHECK-NEXT:                       %14 = memref.load %tile[%12, %13, %i2_i, %i3_i] : memref<1x1x4x8xf32>
// CHECK-NEXT:                       %15 = arith.addf %14, %11 fastmath<reassoc,contract> : f32
// CHECK-NEXT:                       %16 = arith.constant 0 : index
// CHECK-NEXT:                       %17 = arith.constant 0 : index
// CHECK-NEXT:                       memref.store %15, %tile[%16, %17, %i2_i, %i3_i] : memref<1x1x4x8xf32>
// CHECK-NEXT:                     }
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "i3_o_st0" %i3_o_st0 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_st1" %i3_o_st1 = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_st2" %i3_o_st2 = 0 to 4 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_st3" %i3_o_st3 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                     %18 = arith.addi %i0, %i3_o_st0 : index
// CHECK-NEXT:                     %19 = arith.addi %i1, %i3_o_st1 : index
// CHECK-NEXT:                     %20 = arith.addi %i2_o, %i3_o_st2 : index
// CHECK-NEXT:                     %21 = arith.addi %i3_o, %i3_o_st3 : index
// CHECK-NEXT:                     %22 = memref.load %tile[%i3_o_st0, %i3_o_st1, %i3_o_st2, %i3_o_st3] : memref<1x1x4x8xf32>
// CHECK-NEXT:                     memref.store %22, %out[%18, %19, %20, %21] : memref<1x4x4x8xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
