// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// A convolution's register tile covers the most output columns (at most 14) that divide the width and fit the
// registers, not only 14, 8, 7, 6, 4, 2 or 1: a 1x1 convolution over a 13-wide row (SqueezeNet's and Inception
// v1's 13x13 maps) gets a 13x8 tile, one weight vector load per 13 multiply-adds instead of one per multiply-add.
//
// Checked in full: the weight is packed at load time into one panel of 8 filters, packed[p, c, kh, kw, f] =
// w[p * 8 + f, c, kh, kw]; for the one 13x8 block (i3_o, i1_o) the kernel zeroes the tile (13 columns x 8 channels,
// channels innermost), accumulates
// tile[0, 0, i3_i, i1_i] += in0[i0, k4, i2 + k5, (i3_o + i3_i) + k6] * packed[i1_o / 8, k4, k5, k6, i1_i]
// with the 13 columns unrolled around the 8 channels vectorized inside the reduction loops (k4 over input channels),
// copies the tile to the stage buffer (same layout) and stores the stage into out[i0, i1_o + st1, i2, i3_o + st3]:
// the whole reduction is inside the tile, so the output is written once and never zeroed first. Index sums that
// nothing reads (the tile loops' output positions, the body's i1) are left unchecked: plain CHECK skips them.

builtin.module {
  func.func @main(%x: memref<1x4x1x13xf32>, %out0: memref<1x8x1x13xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<8x4x1x1xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x4x1x13xf32>, memref<8x4x1x1xf32>, memref<1x8x1x13xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x4x1x13xf32> {llvm.noalias}, %in1: memref<8x4x1x1xf32> {llvm.noalias}, %out: memref<1x8x1x13xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 8 step 1 serial {
        loop.for "i2" %i2 = 0 to 1 step 1 serial {
          loop.for "i3" %i3 = 0 to 13 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 4 step 1 serial {
              loop.for "k5" %k5 = 0 to 1 step 1 serial {
                loop.for "k6" %k6 = 0 to 1 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x4x1x13xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<8x4x1x1xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x8x1x13xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%x: memref<1x4x1x13xf32>, %out0: memref<1x8x1x13xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %[[W:.*]] = loop.weight "w" : memref<8x4x1x1xf32>
// CHECK-NEXT:     %[[W_PACKED:.*]] = loop.precompute @conv_0_pack1(%[[W]]) : (memref<8x4x1x1xf32>) -> memref<1x4x1x1x8xf32>
// CHECK-NEXT:     func.call @conv_0(%x, %[[W_PACKED]], %out0) : (memref<1x4x1x13xf32>, memref<1x4x1x1x8xf32>, memref<1x8x1x13xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @conv_0(%in0: memref<1x4x1x13xf32> {llvm.noalias}, %in1: memref<1x4x1x1x8xf32> {llvm.noalias}, %out: memref<1x8x1x13xf32> {llvm.noalias}) {
// CHECK-NEXT:     %[[STAGE:.*]] = loop.alloc "local" : memref<1x1x13x8xf32>
// CHECK-NEXT:     %[[TILE:.*]] = loop.alloc "local" : memref<1x1x13x8xf32>
// CHECK-NEXT:     loop.for "i0" %[[I0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1_o" %[[I1_O:.*]] = 0 to 8 step 8 serial {
// CHECK-NEXT:         loop.for "i2" %[[I2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "i3_o" %[[I3_O:.*]] = 0 to 13 step 13 serial {
// CHECK-NEXT:             loop.for "i3_o_ld0" %[[I3_O_LD0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_ld2" %[[I3_O_LD2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_ld3" %[[I3_O_LD3:.*]] = 0 to 13 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_ld1" %[[I3_O_LD1:.*]] = 0 to 8 step 1 vectorize {
// CHECK:                          %[[ZERO_T:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:                     memref.store %[[ZERO_T]], %[[TILE]][%[[I3_O_LD0]], %[[I3_O_LD2]], %[[I3_O_LD3]], %[[I3_O_LD1]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "k4" %[[K4:.*]] = 0 to 4 step 1 serial {
// CHECK-NEXT:               loop.for "k5" %[[K5:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "k6" %[[K6:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                   loop.for "i3_i" %[[I3_I:.*]] = 0 to 13 step 1 unroll {
// CHECK-NEXT:                     loop.for "i1_i" %[[I1_I:.*]] = 0 to 8 step 1 vectorize {
// CHECK:                            %[[I3:.*]] = arith.addi %[[I3_O]], %[[I3_I]] : index
// CHECK-NEXT:                       %[[ROW:.*]] = arith.addi %[[I2]], %[[K5]] : index
// CHECK-NEXT:                       %[[COL:.*]] = arith.addi %[[I3]], %[[K6]] : index
// CHECK-NEXT:                       %[[X:.*]] = memref.load %in0[%[[I0]], %[[K4]], %[[ROW]], %[[COL]]] : memref<1x4x1x13xf32>
// CHECK-NEXT:                       %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:                       %[[PANEL:.*]] = arith.divui %[[I1_O]], %[[C8]] : index
// CHECK-NEXT:                       %[[WT:.*]] = memref.load %in1[%[[PANEL]], %[[K4]], %[[K5]], %[[K6]], %[[I1_I]]] : memref<1x4x1x1x8xf32>
// CHECK-NEXT:                       %[[PROD:.*]] = arith.mulf %[[X]], %[[WT]] fastmath<contract> : f32
// CHECK-NEXT:                       %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT:                       %[[T1:.*]] = arith.constant 0 : index
// CHECK-NEXT:                       %[[ACC:.*]] = memref.load %[[TILE]][%[[T0]], %[[T1]], %[[I3_I]], %[[I1_I]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                       %[[SUM:.*]] = arith.addf %[[ACC]], %[[PROD]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:                       %[[T2:.*]] = arith.constant 0 : index
// CHECK-NEXT:                       %[[T3:.*]] = arith.constant 0 : index
// CHECK-NEXT:                       memref.store %[[SUM]], %[[TILE]][%[[T2]], %[[T3]], %[[I3_I]], %[[I1_I]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                     }
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "i3_o_stt0" %[[I3_O_STT0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_stt2" %[[I3_O_STT2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_stt3" %[[I3_O_STT3:.*]] = 0 to 13 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_stt1" %[[I3_O_STT1:.*]] = 0 to 8 step 1 vectorize {
// CHECK:                          %[[TILED:.*]] = memref.load %[[TILE]][%[[I3_O_STT0]], %[[I3_O_STT2]], %[[I3_O_STT3]], %[[I3_O_STT1]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                     memref.store %[[TILED]], %[[STAGE]][%[[I3_O_STT0]], %[[I3_O_STT2]], %[[I3_O_STT3]], %[[I3_O_STT1]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "i3_o_st0" %[[I3_O_ST0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_st1" %[[I3_O_ST1:.*]] = 0 to 8 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_st2" %[[I3_O_ST2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:                   loop.for "i3_o_st3" %[[I3_O_ST3:.*]] = 0 to 13 step 1 serial {
// CHECK-NEXT:                     %[[ST_N:.*]] = arith.addi %[[I0]], %[[I3_O_ST0]] : index
// CHECK-NEXT:                     %[[ST_C:.*]] = arith.addi %[[I1_O]], %[[I3_O_ST1]] : index
// CHECK-NEXT:                     %[[ST_H:.*]] = arith.addi %[[I2]], %[[I3_O_ST2]] : index
// CHECK-NEXT:                     %[[ST_W:.*]] = arith.addi %[[I3_O]], %[[I3_O_ST3]] : index
// CHECK-NEXT:                     %[[STAGED:.*]] = memref.load %[[STAGE]][%[[I3_O_ST0]], %[[I3_O_ST2]], %[[I3_O_ST3]], %[[I3_O_ST1]]] : memref<1x1x13x8xf32>
// CHECK-NEXT:                     memref.store %[[STAGED]], %out[%[[ST_N]], %[[ST_C]], %[[ST_H]], %[[ST_W]]] : memref<1x8x1x13xf32>
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
// CHECK-NEXT:   func.func private @conv_0_pack1(%in0: memref<8x4x1x1xf32>, %out: memref<1x4x1x1x8xf32>) {
// CHECK-NEXT:     loop.for "p0" %[[P0:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "p1" %[[P1:.*]] = 0 to 4 step 1 serial {
// CHECK-NEXT:         loop.for "p2" %[[P2:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "p3" %[[P3:.*]] = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "p4" %[[P4:.*]] = 0 to 8 step 1 serial {
// CHECK-NEXT:               %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:               %[[BASE:.*]] = arith.muli %[[P0]], %[[C8]] : index
// CHECK-NEXT:               %[[F:.*]] = arith.addi %[[BASE]], %[[P4]] : index
// CHECK-NEXT:               %[[W:.*]] = memref.load %in0[%[[F]], %[[P1]], %[[P2]], %[[P3]]] : memref<8x4x1x1xf32>
// CHECK-NEXT:               memref.store %[[W]], %out[%[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[P4]]] : memref<1x4x1x1x8xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
