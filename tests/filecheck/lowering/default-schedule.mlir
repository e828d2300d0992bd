// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'loop-decompose-reduction{kernel=conv_0},loop-split{kernel=conv_0 loop=i1 factor=16},loop-split{kernel=conv_0 loop=i3 factor=4},loop-reorder{kernel=conv_0 order=i0,i1_o,i2,i3_o,k4,k5,k6,i3_i,i1_i},loop-pack{kernel=conv_0 operand=1 dim=0 factor=16},loop-unroll{kernel=conv_0 loop=i3_i},loop-vectorize{kernel=conv_0 loop=i1_i},loop-cache-write{kernel=conv_0 loop=i3_o fill=true}' | filecheck %s

// The trace default-schedule applies (what `minimlc compile --emit schedule` prints) replays to the same IR: both
// RUN lines are checked against the same lines. A 3x3 convolution (input already padded) with 16 output channels:
// decompose the reduction, vectorize over output channels (NR = 2 vectors of 8 lanes), register-block MR = 4 output
// columns, pack the weight into 16-wide panels at load time, and keep the 4x16 tile in registers; the tile starts
// at zero (the whole reduction is inside it, so the output is not zeroed first) and is stored into the NCHW output
// once, through a staging tile, transposed by a small serial loop.

builtin.module {
  func.func @main(%x: memref<1x2x6x6xf32>, %out0: memref<1x16x4x4xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<16x2x3x3xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x2x6x6xf32>, memref<16x2x3x3xf32>, memref<1x16x4x4xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x2x6x6xf32> {llvm.noalias}, %in1: memref<16x2x3x3xf32> {llvm.noalias}, %out: memref<1x16x4x4xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 16 step 1 serial {
        loop.for "i2" %i2 = 0 to 4 step 1 serial {
          loop.for "i3" %i3 = 0 to 4 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 2 step 1 serial {
              loop.for "k5" %k5 = 0 to 3 step 1 serial {
                loop.for "k6" %k6 = 0 to 3 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x2x6x6xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<16x2x3x3xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x16x4x4xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @main(%x: memref<1x2x6x6xf32>, %out0: memref<1x16x4x4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:     %w = loop.weight "w" : memref<16x2x3x3xf32>
// CHECK-NEXT:     %w_packed = loop.precompute @conv_0_pack1(%w) : (memref<16x2x3x3xf32>) -> memref<1x2x3x3x16xf32>
// CHECK-NEXT:     func.call @conv_0(%x, %w_packed, %out0) : (memref<1x2x6x6xf32>, memref<1x2x3x3x16xf32>, memref<1x16x4x4xf32>) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @conv_0(%in0: memref<1x2x6x6xf32> {llvm.noalias}, %in1: memref<1x2x3x3x16xf32> {llvm.noalias}, %out: memref<1x16x4x4xf32> {llvm.noalias}) {
// CHECK-NEXT:     %stage = loop.alloc "local" : memref<1x1x4x16xf32>
// CHECK-NEXT:     %tile = loop.alloc "local" : memref<1x1x4x16xf32>
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "i1_o" %i1_o = 0 to 16 step 16 serial {
// CHECK-NEXT:         loop.for "i2" %i2 = 0 to 4 step 1 serial {
// CHECK-NEXT:           loop.for "i3_o" %i3_o = 0 to 4 step 4 serial {
// CHECK-NEXT:             loop.for "i3_o_ld0" %i3_o_ld0 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_ld2" %i3_o_ld2 = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_ld3" %i3_o_ld3 = 0 to 4 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_ld1" %i3_o_ld1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:                     %0 = arith.addi %i0, %i3_o_ld0 : index
// CHECK-NEXT:                     %1 = arith.addi %i1_o, %i3_o_ld1 : index
// CHECK-NEXT:                     %2 = arith.addi %i2, %i3_o_ld2 : index
// CHECK-NEXT:                     %3 = arith.addi %i3_o, %i3_o_ld3 : index
// CHECK-NEXT:                     %4 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:                     memref.store %4, %tile[%i3_o_ld0, %i3_o_ld2, %i3_o_ld3, %i3_o_ld1] : memref<1x1x4x16xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "k4" %k4 = 0 to 2 step 1 serial {
// CHECK-NEXT:               loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:                 loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK-NEXT:                   loop.for "i3_i" %i3_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:                     loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK-NEXT:                       %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:                       %i3 = arith.addi %i3_o, %i3_i : index
// CHECK-NEXT:                       %5 = arith.addi %i2, %k5 : index
// CHECK-NEXT:                       %6 = arith.addi %i3, %k6 : index
// CHECK-NEXT:                       %7 = memref.load %in0[%i0, %k4, %5, %6] : memref<1x2x6x6xf32>
// CHECK-NEXT:                       %8 = arith.constant 16 : index
// CHECK-NEXT:                       %9 = arith.divui %i1_o, %8 : index
// CHECK-NEXT:                       %10 = memref.load %in1[%9, %k4, %k5, %k6, %i1_i] : memref<1x2x3x3x16xf32>
// CHECK-NEXT:                       %11 = arith.mulf %7, %10 fastmath<contract> : f32
// CHECK-NEXT:                       %12 = arith.constant 0 : index
// CHECK-NEXT:                       %13 = arith.constant 0 : index
// CHECK-NEXT:                       %14 = memref.load %tile[%12, %13, %i3_i, %i1_i] : memref<1x1x4x16xf32>
// CHECK-NEXT:                       %15 = arith.addf %14, %11 fastmath<reassoc,contract> : f32
// CHECK-NEXT:                       %16 = arith.constant 0 : index
// CHECK-NEXT:                       %17 = arith.constant 0 : index
// CHECK-NEXT:                       memref.store %15, %tile[%16, %17, %i3_i, %i1_i] : memref<1x1x4x16xf32>
// CHECK-NEXT:                     }
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "i3_o_stt0" %i3_o_stt0 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_stt2" %i3_o_stt2 = 0 to 1 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_stt3" %i3_o_stt3 = 0 to 4 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_o_stt1" %i3_o_stt1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:                     %18 = arith.addi %i0, %i3_o_stt0 : index
// CHECK-NEXT:                     %19 = arith.addi %i1_o, %i3_o_stt1 : index
// CHECK-NEXT:                     %20 = arith.addi %i2, %i3_o_stt2 : index
// CHECK-NEXT:                     %21 = arith.addi %i3_o, %i3_o_stt3 : index
// CHECK-NEXT:                     %22 = memref.load %tile[%i3_o_stt0, %i3_o_stt2, %i3_o_stt3, %i3_o_stt1] : memref<1x1x4x16xf32>
// CHECK-NEXT:                     memref.store %22, %stage[%i3_o_stt0, %i3_o_stt2, %i3_o_stt3, %i3_o_stt1] : memref<1x1x4x16xf32>
// CHECK-NEXT:                   }
// CHECK-NEXT:                 }
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:             loop.for "i3_o_st0" %i3_o_st0 = 0 to 1 step 1 serial {
// CHECK-NEXT:               loop.for "i3_o_st1" %i3_o_st1 = 0 to 16 step 1 serial {
// CHECK-NEXT:                 loop.for "i3_o_st2" %i3_o_st2 = 0 to 1 step 1 serial {
// CHECK-NEXT:                   loop.for "i3_o_st3" %i3_o_st3 = 0 to 4 step 1 serial {
// CHECK-NEXT:                     %23 = arith.addi %i0, %i3_o_st0 : index
// CHECK-NEXT:                     %24 = arith.addi %i1_o, %i3_o_st1 : index
// CHECK-NEXT:                     %25 = arith.addi %i2, %i3_o_st2 : index
// CHECK-NEXT:                     %26 = arith.addi %i3_o, %i3_o_st3 : index
// CHECK-NEXT:                     %27 = memref.load %stage[%i3_o_st0, %i3_o_st2, %i3_o_st3, %i3_o_st1] : memref<1x1x4x16xf32>
// CHECK-NEXT:                     memref.store %27, %out[%23, %24, %25, %26] : memref<1x16x4x4xf32>
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
// CHECK-NEXT:   func.func private @conv_0_pack1(%in0: memref<16x2x3x3xf32>, %out: memref<1x2x3x3x16xf32>) {
// CHECK-NEXT:     loop.for "p0" %p0 = 0 to 1 step 1 serial {
// CHECK-NEXT:       loop.for "p1" %p1 = 0 to 2 step 1 serial {
// CHECK-NEXT:         loop.for "p2" %p2 = 0 to 3 step 1 serial {
// CHECK-NEXT:           loop.for "p3" %p3 = 0 to 3 step 1 serial {
// CHECK-NEXT:             loop.for "p4" %p4 = 0 to 16 step 1 serial {
// CHECK-NEXT:               %0 = arith.constant 16 : index
// CHECK-NEXT:               %1 = arith.muli %p0, %0 : index
// CHECK-NEXT:               %2 = arith.addi %1, %p4 : index
// CHECK-NEXT:               %3 = memref.load %in0[%2, %p1, %p2, %p3] : memref<16x2x3x3xf32>
// CHECK-NEXT:               memref.store %3, %out[%p0, %p1, %p2, %p3, %p4] : memref<1x2x3x3x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
