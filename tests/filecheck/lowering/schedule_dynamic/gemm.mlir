// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'loop-decompose-reduction{kernel=matmul_0},loop-split{kernel=matmul_0 loop=i1_init factor=16},loop-vectorize{kernel=matmul_0 loop=i1_init_i},loop-split{kernel=matmul_0 loop=i1 factor=16},loop-split{kernel=matmul_0 loop=k2 factor=40},loop-split{kernel=matmul_0 loop=i0 factor=6},loop-reorder{kernel=matmul_0 order=i0_o,k2_o,i1_o,k2_i,i0_i,i1_i},loop-unroll{kernel=matmul_0 loop=i0_i},loop-vectorize{kernel=matmul_0 loop=i1_i},loop-cache-write{kernel=matmul_0 loop=i1_o fill=true},loop-reorder{kernel=matmul_0 order=i0_t,i1_o_in_i0_t,k2_o_in_i0_t,k2_i_in_i0_t,i1_i_in_i0_t},loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t},loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t fill=true},loop-parallel{kernel=matmul_0 loop=i0_o}' | filecheck %s

// The dynamic rule on a GEMM of n rows (M) by 48 columns, depth 40 (AVX2): the rows split by the register tile (6 rows
// x 2 vectors of 8, unrolled and vectorized, the whole depth in a 6x16 register tile that starts at zero and is
// stored once), the row blocks a parallel loop over a run-time count; the remainder of fewer than 6 rows (`i0_t`, a
// run-time count) runs one row at a time with its 16 columns in registers, the depth inside its tile loop. The tiles
// write rows [0, n - n % 6) and [n - n % 6, n): every element once, so no zeroing nest. The split's bound arithmetic
// stays in front of the reordered nest.

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
// CHECK-NEXT:     %0 = arith.constant 6 : index
// CHECK-NEXT:     %i0_rem = arith.remui %n, %0 : index
// CHECK-NEXT:     %i0_main = arith.subi %n, %i0_rem : index
// CHECK-NEXT:     loop.for "i0_o" %i0_o = 0 to %i0_main step 6 parallel {
// CHECK-NEXT:       loop.for "k2_o" %k2_o = 0 to 40 step 40 serial {
// CHECK-NEXT:         loop.for "i1_o" %i1_o = 0 to 48 step 16 serial {
// CHECK-NEXT:           loop.for "i1_o_ld0" %i1_o_ld0 = 0 to 6 step 1 unroll {
// CHECK-NEXT:             loop.for "i1_o_ld1" %i1_o_ld1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %1 = arith.addi %i0_o, %i1_o_ld0 : index
// CHECK-NEXT:               %2 = arith.addi %i1_o, %i1_o_ld1 : index
// CHECK-NEXT:               %3 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:               memref.store %3, %tile_1[%i1_o_ld0, %i1_o_ld1] : memref<6x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "k2_i" %k2_i = 0 to 40 step 1 serial {
// CHECK-NEXT:             loop.for "i0_i" %i0_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:               loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK-NEXT:                 %i0 = arith.addi %i0_o, %i0_i : index
// CHECK-NEXT:                 %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:                 %k2 = arith.addi %k2_o, %k2_i : index
// CHECK-NEXT:                 %4 = memref.load %a[%i0, %k2] : memref<?x40xf32>
// CHECK-NEXT:                 %5 = memref.load %in1[%k2, %i1] : memref<40x48xf32>
// CHECK-NEXT:                 %6 = arith.mulf %4, %5 fastmath<contract> : f32
// CHECK-NEXT:                 %7 = memref.load %tile_1[%i0_i, %i1_i] : memref<6x16xf32>
// CHECK-NEXT:                 %8 = arith.addf %7, %6 fastmath<reassoc,contract> : f32
// CHECK-NEXT:                 memref.store %8, %tile_1[%i0_i, %i1_i] : memref<6x16xf32>
// CHECK-NEXT:               }
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:           loop.for "i1_o_st0" %i1_o_st0 = 0 to 6 step 1 unroll {
// CHECK-NEXT:             loop.for "i1_o_st1" %i1_o_st1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %9 = arith.addi %i0_o, %i1_o_st0 : index
// CHECK-NEXT:               %10 = arith.addi %i1_o, %i1_o_st1 : index
// CHECK-NEXT:               %11 = memref.load %tile_1[%i1_o_st0, %i1_o_st1] : memref<6x16xf32>
// CHECK-NEXT:               memref.store %11, %c[%9, %10] : memref<?x48xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK-NEXT:       loop.for "i1_o_in_i0_t" %i1_o_in_i0_t = 0 to 48 step 16 serial {
// CHECK-NEXT:         %12 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:         loop.for "i1_o_in_i0_t_ld0" %i1_o_in_i0_t_ld0 = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "i1_o_in_i0_t_ld1" %i1_o_in_i0_t_ld1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:             %13 = arith.addi %12, %i1_o_in_i0_t_ld0 : index
// CHECK-NEXT:             %14 = arith.addi %i1_o_in_i0_t, %i1_o_in_i0_t_ld1 : index
// CHECK-NEXT:             %15 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:             memref.store %15, %tile[%i1_o_in_i0_t_ld0, %i1_o_in_i0_t_ld1] : memref<1x16xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:         loop.for "k2_o_in_i0_t" %k2_o_in_i0_t = 0 to 40 step 40 serial {
// CHECK-NEXT:           loop.for "k2_i_in_i0_t" %k2_i_in_i0_t = 0 to 40 step 1 serial {
// CHECK-NEXT:             loop.for "i1_i_in_i0_t" %i1_i_in_i0_t = 0 to 16 step 1 vectorize {
// CHECK-NEXT:               %i0_1 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:               %i1_1 = arith.addi %i1_o_in_i0_t, %i1_i_in_i0_t : index
// CHECK-NEXT:               %k2_1 = arith.addi %k2_o_in_i0_t, %k2_i_in_i0_t : index
// CHECK-NEXT:               %16 = memref.load %a[%i0_1, %k2_1] : memref<?x40xf32>
// CHECK-NEXT:               %17 = memref.load %in1[%k2_1, %i1_1] : memref<40x48xf32>
// CHECK-NEXT:               %18 = arith.mulf %16, %17 fastmath<contract> : f32
// CHECK-NEXT:               %19 = arith.constant 0 : index
// CHECK-NEXT:               %20 = memref.load %tile[%19, %i1_i_in_i0_t] : memref<1x16xf32>
// CHECK-NEXT:               %21 = arith.addf %20, %18 fastmath<reassoc,contract> : f32
// CHECK-NEXT:               %22 = arith.constant 0 : index
// CHECK-NEXT:               memref.store %21, %tile[%22, %i1_i_in_i0_t] : memref<1x16xf32>
// CHECK-NEXT:             }
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:         loop.for "i1_o_in_i0_t_st0" %i1_o_in_i0_t_st0 = 0 to 1 step 1 serial {
// CHECK-NEXT:           loop.for "i1_o_in_i0_t_st1" %i1_o_in_i0_t_st1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:             %23 = arith.addi %12, %i1_o_in_i0_t_st0 : index
// CHECK-NEXT:             %24 = arith.addi %i1_o_in_i0_t, %i1_o_in_i0_t_st1 : index
// CHECK-NEXT:             %25 = memref.load %tile[%i1_o_in_i0_t_st0, %i1_o_in_i0_t_st1] : memref<1x16xf32>
// CHECK-NEXT:             memref.store %25, %c[%23, %24] : memref<?x48xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
