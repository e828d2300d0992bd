// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// A max pool over an input already padded with -inf (graph-pad-max-pool) is a window reduction of plain affine
// reads: default-schedule moves the window loops outside the width loop, makes the
// width loop one vector max per window tap and keeps the row of outputs in a local tile. The -inf pad stays its
// own kernel (te-inline does not inline a pad that tests the width, the innermost dimension, into the windows).
//
// The pad kernel is partitioned at its border columns (the concat rule: its select compares the column with
// constants), the interior 1..8 vectorized; its values are the op tests' to check. Checked in full: the pool kernel
// has no pass filling the output with NaN (the identity of maxnum, the max that passes over NaNs): per output row
// (i0, i1, i2) its 1x1x1x8 tile starts at NaN (`loop-cache-write fill=true`), takes tile[0, 0, 0, i3] =
// maxnum(tile[0, 0, 0, i3], in0[i0, i1, i2 + k4, i3 + k5]) over the 3x3 taps (k4 over rows, k5 over columns) with the width loop i3 innermost and vectorized, and is
// stored to the same row.

builtin.module {
  func.func @main(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
    %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0xFF800000 : f32} : (tensor<1x2x8x8xf32>) -> tensor<1x2x10x10xf32>
    %y = graph.max_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x2x10x10xf32> -> tensor<1x2x8x8xf32>
    func.return %y : tensor<1x2x8x8xf32>
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%x: memref<1x2x8x8xf32>, %out0: memref<1x2x8x8xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %[[P:.*]] = loop.alloc "global" : memref<1x2x10x10xf32>
// CHECK-NEXT:     func.call @pad_0(%x, %[[P]]) : (memref<1x2x8x8xf32>, memref<1x2x10x10xf32>) -> ()
// CHECK-NEXT:     func.call @max_pool_1(%[[P]], %out0) : (memref<1x2x10x10xf32>, memref<1x2x8x8xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @pad_0(%in0: memref<1x2x8x8xf32> {llvm.noalias}, %out: memref<1x2x10x10xf32> {llvm.noalias}) {
// CHECK-NEXT:     loop.for "i0" %{{.*}} = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %{{.*}} = 0 to 2 step 1 serial {
// CHECK-NEXT:         loop.for "i2" %{{.*}} = 0 to 10 step 1 serial {
// CHECK-NEXT:           loop.for "i3_p0" %{{.*}} = 0 to 1 step 1 serial {
// CHECK:                  memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p0]
// CHECK:                loop.for "i3_p1_o" %{{.*}} = 1 to 9 step 8 serial {
// CHECK-NEXT:             loop.for "i3_p1_i" %{{.*}} = 0 to 8 step 1 vectorize {
// CHECK:                    memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p1]
// CHECK:                loop.for "i3_p2" %{{.*}} = 9 to 10 step 1 serial {
// CHECK:                  memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}, %{{.*}}, %i3_p2]
// CHECK:        func.func private @max_pool_1(%in0: memref<1x2x10x10xf32> {llvm.noalias}, %out: memref<1x2x8x8xf32> {llvm.noalias}) {
// CHECK-NEXT:     %[[TILE:.*]] = loop.alloc "local" : memref<1x1x1x8xf32>
// CHECK-NEXT:     loop.for "i0" %[[I0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1" %[[I1:.*]] = 0 to 2 step 1 serial {
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
// CHECK-NEXT:                   %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:                   memref.store %[[NAN]], %[[TILE]][%[[I2_LD0]], %[[I2_LD1]], %[[I2_LD2]], %[[I2_LD3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "k4" %[[K4:.*]] = 0 to 3 step 1 serial {
// CHECK-NEXT:             loop.for "k5" %[[K5:.*]] = 0 to 3 step 1 serial {
// CHECK-NEXT:               loop.for "i3" %[[I3:.*]] = 0 to 8 step 1 vectorize {
// CHECK-NEXT:                 %[[ROW:.*]] = arith.addi %[[I2]], %[[K4]] : index
// CHECK-NEXT:                 %[[COL:.*]] = arith.addi %[[I3]], %[[K5]] : index
// CHECK-NEXT:                 %[[X:.*]] = memref.load %in0[%[[I0]], %[[I1]], %[[ROW]], %[[COL]]] : memref<1x2x10x10xf32>
// CHECK-NEXT:                 %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 %[[T1:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 %[[T2:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 %[[ACC:.*]] = memref.load %[[TILE]][%[[T0]], %[[T1]], %[[T2]], %[[I3]]] : memref<1x1x1x8xf32>
// CHECK-NEXT:                 %[[MAX:.*]] = arith.maxnumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:                 %[[T3:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 %[[T4:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 %[[T5:.*]] = arith.constant 0 : index
// CHECK-NEXT:                 memref.store %[[MAX]], %[[TILE]][%[[T3]], %[[T4]], %[[T5]], %[[I3]]] : memref<1x1x1x8xf32>
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
// CHECK-NEXT:                   memref.store %[[RESULT]], %out[%[[ST_N]], %[[ST_C]], %[[ST_H]], %[[ST_W]]] : memref<1x2x8x8xf32>
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
