// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-pad-conv,graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A depthwise convolution is a window reduction like a pool, with each tap multiplied by its channel's weight (a
// read the width loop does not move): the same schedule applies. The window loops move outside the width loop, which
// becomes one vector multiply-add per tap (the weight broadcast), and the row of outputs stays in a local tile that
// starts at zero and is stored (`loop-cache-write fill=true`: no pass zeroing the output first).
//
// graph-pad-conv's kernel is partitioned at its border columns (the concat rule: its select compares the column
// with constants), the interior 1..8 vectorized; its values are the op tests' to check. Checked in full: per output
// row (i0, i1, i2) the convolution kernel zeroes its 1x1x1x8 tile, accumulates
// tile[0, 0, 0, i3] += in0[i0, i1, i2 + k5, i3 + k6] * in1[i1, k4, k5, k6] over the taps (one input channel per
// group, so channel i1 reads its own input channel i1 and its own filter i1; k4 has extent 1) with the width loop
// i3 innermost and vectorized (the weight read does not depend on i3: a broadcast), and stores the tile to the row.

builtin.module {
  func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %w = graph.weight "w" : tensor<4x1x3x3xf32>
    %y = graph.conv %x, %w {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%x: memref<1x4x8x8xf32>, %out0: memref<1x4x8x8xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %[[W:.*]] = loop.weight "w" : memref<4x1x3x3xf32>
// CHECK-NEXT:     %[[Y:.*]] = loop.alloc "global" : memref<1x4x10x10xf32>
// CHECK-NEXT:     func.call @pad_0(%x, %[[Y]]) : (memref<1x4x8x8xf32>, memref<1x4x10x10xf32>) -> ()
// CHECK-NEXT:     func.call @depthwise_conv_1(%[[Y]], %[[W]], %out0) : (memref<1x4x10x10xf32>, memref<4x1x3x3xf32>, memref<1x4x8x8xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @pad_0(%in0: memref<1x4x8x8xf32> {llvm.noalias}, %out: memref<1x4x10x10xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i0" %{{.*}} = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %{{.*}} = 0 to 4 step 1 serial {
// CHECK-NEXT:         loop.for "i2" %{{.*}} = 0 to 10 step 1 serial {
// CHECK-NEXT:           loop.for "i3_p0" %{{.*}} = 0 to 1 step 1 serial {
// CHECK:                  memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p0]
// CHECK:                loop.for "i3_p1_o" %{{.*}} = 1 to 9 step 8 serial {
// CHECK-NEXT:             loop.for "i3_p1_i" %{{.*}} = 0 to 8 step 1 vectorize {
// CHECK:                    memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p1]
// CHECK:                loop.for "i3_p2" %{{.*}} = 9 to 10 step 1 serial {
// CHECK:                  memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p2]
// CHECK:        func.func private @depthwise_conv_1(%in0: memref<1x4x10x10xf32> {llvm.noalias}, %in1: memref<4x1x3x3xf32> {llvm.noalias}, %out: memref<1x4x8x8xf32> {llvm.noalias}) {
// CHECK-NEXT:     %[[TILE:.*]] = loop.alloc "local" : memref<1x1x1x8xf32>
// CHECK-NEXT:     loop.for "i0" %[[I0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %[[I1:.*]] = 0 to 4 step 1 serial {
// CHECK-NEXT:         loop.for "i2" %[[I2:.*]] = 0 to 8 step 1 serial {
// CHECK-NEXT:           %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:           loop.for "i2_ld0" %[[I2_LD0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "i2_ld1" %[[I2_LD1:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i2_ld2" %[[I2_LD2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i2_ld3" %[[I2_LD3:.*]] = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                   %[[LD_N:.*]] = arith.addi %[[I0]], %[[I2_LD0]] : index
// CHECK-NEXT:                   %[[LD_C:.*]] = arith.addi %[[I1]], %[[I2_LD1]] : index
// CHECK-NEXT:                   %[[LD_H:.*]] = arith.addi %[[I2]], %[[I2_LD2]] : index
// CHECK-NEXT:                   %[[LD_W:.*]] = arith.addi %[[ZERO]], %[[I2_LD3]] : index
// CHECK-NEXT:                   %[[ZERO_F:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:                   memref.store %[[ZERO_F]], %[[TILE]][%[[I2_LD0]], %[[I2_LD1]], %[[I2_LD2]], %[[I2_LD3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "k4" %[[K4:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "k5" %[[K5:.*]] = 0 to 3 step 1 serial {
// CHECK-NEXT:               loop.for "k6" %[[K6:.*]] = 0 to 3 step 1 serial {
// CHECK-NEXT:                 loop.for "i3" %[[I3:.*]] = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                   %[[ROW:.*]] = arith.addi %[[I2]], %[[K5]] : index
// CHECK-NEXT:                   %[[COL:.*]] = arith.addi %[[I3]], %[[K6]] : index
// CHECK-NEXT:                   %[[X:.*]] = memref.load %in0[%[[I0]], %[[I1]], %[[ROW]], %[[COL]]] : memref<1x4x10x10xf32>
// CHECK-NEXT:                   %[[WT:.*]] = memref.load %in1[%[[I1]], %[[K4]], %[[K5]], %[[K6]]] : memref<4x1x3x3xf32>
// CHECK-NEXT:                   %[[PROD:.*]] = arith.mulf %[[X]], %[[WT]] fastmath<contract> : f32
// CHECK-NEXT:                   %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   %[[T1:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   %[[T2:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   %[[ACC:.*]] = memref.load %[[TILE]][%[[T0]], %[[T1]], %[[T2]], %[[I3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                   %[[SUM:.*]] = arith.addf %[[ACC]], %[[PROD]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:                   %[[T3:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   %[[T4:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   %[[T5:.*]] = arith.constant 0 : index
// CHECK-NEXT:                   memref.store %[[SUM]], %[[TILE]][%[[T3]], %[[T4]], %[[T5]], %[[I3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "i2_st0" %[[I2_ST0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "i2_st1" %[[I2_ST1:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i2_st2" %[[I2_ST2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i2_st3" %[[I2_ST3:.*]] = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                   %[[ST_N:.*]] = arith.addi %[[I0]], %[[I2_ST0]] : index
// CHECK-NEXT:                   %[[ST_C:.*]] = arith.addi %[[I1]], %[[I2_ST1]] : index
// CHECK-NEXT:                   %[[ST_H:.*]] = arith.addi %[[I2]], %[[I2_ST2]] : index
// CHECK-NEXT:                   %[[ST_W:.*]] = arith.addi %[[ZERO]], %[[I2_ST3]] : index
// CHECK-NEXT:                   %[[RESULT:.*]] = memref.load %[[TILE]][%[[I2_ST0]], %[[I2_ST1]], %[[I2_ST2]], %[[I2_ST3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                   memref.store %[[RESULT]], %out[%[[ST_N]], %[[ST_C]], %[[ST_H]], %[[ST_W]]] : memref<1x4x8x8xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
