// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'loop-decompose-reduction{kernel=matmul_0},loop-split{kernel=matmul_0 loop=i1_init factor=16},loop-vectorize{kernel=matmul_0 loop=i1_init_i},loop-split{kernel=matmul_0 loop=i1 factor=16},loop-split{kernel=matmul_0 loop=k2 factor=40},loop-split{kernel=matmul_0 loop=i0 factor=6},loop-reorder{kernel=matmul_0 order=i0_o,k2_o,i1_o,k2_i,i0_i,i1_i},loop-unroll{kernel=matmul_0 loop=i0_i},loop-vectorize{kernel=matmul_0 loop=i1_i},loop-cache-write{kernel=matmul_0 loop=i1_o accumulate=true},loop-reorder{kernel=matmul_0 order=i0_t,k2_o_in_i0_t,i1_o_in_i0_t,k2_i_in_i0_t,i1_i_in_i0_t},loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t},loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t accumulate=true},loop-split{kernel=matmul_0 loop=i0_init factor=11},loop-parallel{kernel=matmul_0 loop=i0_init_o},loop-parallel{kernel=matmul_0 loop=i0_o}' | filecheck %s

// The dynamic rule on a GEMM of n rows (M) by 48 columns, depth 40 (AVX2): the output is zeroed by a vectorized init
// nest (in parallel chunks of 11 rows), the rows split by the register tile (6 rows x 2 vectors of 8, unrolled and
// vectorized, accumulated in a 6x16 register tile and added to the output once per depth block), the row blocks a
// parallel loop over a run-time count; the remainder of fewer than 6 rows (`i0_t`, a run-time count) runs one row at
// a time with its 16 columns in registers. The split's bound arithmetic stays in front of the reordered nest.

builtin.module {
  func.func private @matmul_0(%in0: memref<?x40xf32> {llvm.noalias}, %in1: memref<40x48xf32> {llvm.noalias}, %out: memref<?x48xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x40xf32>
    %c = loop.extents %out[%n] : memref<?x48xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 48 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 40 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x40xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<40x48xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<?x48xf32>
      }
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func private @matmul_0(%in0: memref<?x40xf32> {llvm.noalias}, %in1: memref<40x48xf32> {llvm.noalias}, %out: memref<?x48xf32> {llvm.noalias}, %n: index) {
// CHECK-NEXT:     %tile = loop.alloc "local" : memref<1x16xf32>
// CHECK-NEXT:     %tile_1 = loop.alloc "local" : memref<6x16xf32>
// CHECK-NEXT:     %a = loop.extents %in0[%n] : memref<?x40xf32>
// CHECK-NEXT:     %c = loop.extents %out[%n] : memref<?x48xf32>
// CHECK-NEXT:     %0 = arith.constant 11 : index
// CHECK-NEXT:     %i0_init_rem = arith.remui %n, %0 : index
// CHECK-NEXT:     %i0_init_main = arith.subi %n, %i0_init_rem : index
// CHECK-NEXT:     loop.for "i0_init_o" %i0_init_o = 0 to %i0_init_main step 11 parallel {
// CHECK-NEXT:       loop.for "i0_init_i" %i0_init_i = 0 to 11 step 1 serial {
// CHECK-NEXT:         %i0_init = arith.addi %i0_init_o, %i0_init_i : index
// CHECK-NEXT:         loop.for "i1_init_o" %i1_init_o = 0 to 48 step 16 serial {
// CHECK-NEXT:           loop.for "i1_init_i" %i1_init_i = 0 to 16 step 1 vectorize {
// CHECK-NEXT:             %i1_init = arith.addi %i1_init_o, %i1_init_i : index
// CHECK-NEXT:             %1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:             memref.store %1, %c[%i0_init, %i1_init] : memref<?x48xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_init_t" %i0_init_t = 0 to %i0_init_rem step 1 serial {
// CHECK-NEXT:       %i0_init_1 = arith.addi %i0_init_main, %i0_init_t : index
// CHECK-NEXT:       loop.for "i1_init_o_in_i0_init_t" %i1_init_o_in_i0_init_t = 0 to 48 step 16 serial {
// CHECK-NEXT:         loop.for "i1_init_i_in_i0_init_t" %i1_init_i_in_i0_init_t = 0 to 16 step 1 vectorize {
// CHECK-NEXT:           %i1_init_1 = arith.addi %i1_init_o_in_i0_init_t, %i1_init_i_in_i0_init_t : index
// CHECK-NEXT:           %2 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:           memref.store %2, %c[%i0_init_1, %i1_init_1] : memref<?x48xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     %3 = arith.constant 6 : index
// CHECK-NEXT:     %i0_rem = arith.remui %n, %3 : index
// CHECK-NEXT:     %i0_main = arith.subi %n, %i0_rem : index
// CHECK-NEXT:     loop.for "i0_o" %i0_o = 0 to %i0_main step 6 parallel {
// CHECK-NEXT:       loop.for "k2_o" %k2_o = 0 to 40 step 40 serial {
// CHECK-NEXT:         loop.for "i1_o" %i1_o = 0 to 48 step 16 serial {
// CHECK-NEXT:           loop.for "i1_o_ld0" %i1_o_ld0 = 0 to 6 step 1 unroll {
// CHECK-NEXT:             loop.for "i1_o_ld1" %i1_o_ld1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %4 = arith.addi %i0_o, %i1_o_ld0 : index
// CHECK-NEXT:               %5 = arith.addi %i1_o, %i1_o_ld1 : index
// CHECK-NEXT:               %6 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:               memref.store %6, %tile_1[%i1_o_ld0, %i1_o_ld1] : memref<6x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "k2_i" %k2_i = 0 to 40 step 1 serial {
// CHECK-NEXT:             loop.for "i0_i" %i0_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:               loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK-NEXT:                 %i0 = arith.addi %i0_o, %i0_i : index
// CHECK-NEXT:                 %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:                 %k2 = arith.addi %k2_o, %k2_i : index
// CHECK-NEXT:                 %7 = memref.load %a[%i0, %k2] : memref<?x40xf32>
// CHECK-NEXT:                 %8 = memref.load %in1[%k2, %i1] : memref<40x48xf32>
// CHECK-NEXT:                 %9 = arith.mulf %7, %8 fastmath<contract> : f32
// CHECK-NEXT:                 %10 = memref.load %tile_1[%i0_i, %i1_i] : memref<6x16xf32>
// CHECK-NEXT:                 %11 = arith.addf %10, %9 fastmath<reassoc,contract> : f32
// CHECK-NEXT:                 memref.store %11, %tile_1[%i0_i, %i1_i] : memref<6x16xf32>
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "i1_o_st0" %i1_o_st0 = 0 to 6 step 1 unroll {
// CHECK-NEXT:             loop.for "i1_o_st1" %i1_o_st1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %12 = arith.addi %i0_o, %i1_o_st0 : index
// CHECK-NEXT:               %13 = arith.addi %i1_o, %i1_o_st1 : index
// CHECK-NEXT:               %14 = memref.load %tile_1[%i1_o_st0, %i1_o_st1] : memref<6x16xf32>
// CHECK-NEXT:               %15 = memref.load %c[%12, %13] : memref<?x48xf32>
// CHECK-NEXT:               %16 = arith.addf %15, %14 fastmath<reassoc,contract> : f32
// CHECK-NEXT:               memref.store %16, %c[%12, %13] : memref<?x48xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK-NEXT:       loop.for "k2_o_in_i0_t" %k2_o_in_i0_t = 0 to 40 step 40 serial {
// CHECK-NEXT:         loop.for "i1_o_in_i0_t" %i1_o_in_i0_t = 0 to 48 step 16 serial {
// CHECK-NEXT:           %17 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:           loop.for "i1_o_in_i0_t_ld0" %i1_o_in_i0_t_ld0 = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "i1_o_in_i0_t_ld1" %i1_o_in_i0_t_ld1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %18 = arith.addi %17, %i1_o_in_i0_t_ld0 : index
// CHECK-NEXT:               %19 = arith.addi %i1_o_in_i0_t, %i1_o_in_i0_t_ld1 : index
// CHECK-NEXT:               %20 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:               memref.store %20, %tile[%i1_o_in_i0_t_ld0, %i1_o_in_i0_t_ld1] : memref<1x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "k2_i_in_i0_t" %k2_i_in_i0_t = 0 to 40 step 1 serial {
// CHECK-NEXT:             loop.for "i1_i_in_i0_t" %i1_i_in_i0_t = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %i0_1 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:               %i1_1 = arith.addi %i1_o_in_i0_t, %i1_i_in_i0_t : index
// CHECK-NEXT:               %k2_1 = arith.addi %k2_o_in_i0_t, %k2_i_in_i0_t : index
// CHECK-NEXT:               %21 = memref.load %a[%i0_1, %k2_1] : memref<?x40xf32>
// CHECK-NEXT:               %22 = memref.load %in1[%k2_1, %i1_1] : memref<40x48xf32>
// CHECK-NEXT:               %23 = arith.mulf %21, %22 fastmath<contract> : f32
// CHECK-NEXT:               %24 = arith.constant 0 : index
// CHECK-NEXT:               %25 = memref.load %tile[%24, %i1_i_in_i0_t] : memref<1x16xf32>
// CHECK-NEXT:               %26 = arith.addf %25, %23 fastmath<reassoc,contract> : f32
// CHECK-NEXT:               %27 = arith.constant 0 : index
// CHECK-NEXT:               memref.store %26, %tile[%27, %i1_i_in_i0_t] : memref<1x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "i1_o_in_i0_t_st0" %i1_o_in_i0_t_st0 = 0 to 1 step 1 serial {
// CHECK-NEXT:             loop.for "i1_o_in_i0_t_st1" %i1_o_in_i0_t_st1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %28 = arith.addi %17, %i1_o_in_i0_t_st0 : index
// CHECK-NEXT:               %29 = arith.addi %i1_o_in_i0_t, %i1_o_in_i0_t_st1 : index
// CHECK-NEXT:               %30 = memref.load %tile[%i1_o_in_i0_t_st0, %i1_o_in_i0_t_st1] : memref<1x16xf32>
// CHECK-NEXT:               %31 = memref.load %c[%28, %29] : memref<?x48xf32>
// CHECK-NEXT:               %32 = arith.addf %31, %30 fastmath<reassoc,contract> : f32
// CHECK-NEXT:               memref.store %32, %c[%28, %29] : memref<?x48xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
