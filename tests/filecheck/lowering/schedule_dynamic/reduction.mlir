// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'loop-decompose-reduction{kernel=sum_0},loop-split{kernel=sum_0 loop=i0_init factor=8},loop-vectorize{kernel=sum_0 loop=i0_init_i},loop-split{kernel=sum_0 loop=i0 factor=8},loop-reorder{kernel=sum_0 order=i0_o,k1,i0_i},loop-vectorize{kernel=sum_0 loop=i0_i},loop-cache-write{kernel=sum_0 loop=i0_o accumulate=true},loop-parallel{kernel=sum_0 loop=i0_t},loop-parallel{kernel=rowsum_0 loop=i0}' | filecheck %s

// The dynamic rule on reductions over a run-time extent (AVX2). @sum_0 sums n rows of 20 columns: the reduction loop
// stays serial; the 20 output columns are split by the vector width, the vector loop moved inside the reduction and
// its 8 sums kept in registers (added to the zeroed output once); the 4 remaining columns reduce one at a time, as 4
// parallel tasks. @rowsum_0 reduces along its innermost (dynamic) loop: nothing to vectorize, its rows run in
// parallel.

builtin.module {
  func.func private @sum_0(%in0: memref<?x20xf32> {llvm.noalias}, %out: memref<20xf32> {llvm.noalias}, %n: index) {
    %x = loop.extents %in0[%n] : memref<?x20xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 20 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k1" %k1 = 0 to %n step 1 serial {
        %1 = memref.load %x[%k1, %i0] : memref<?x20xf32>
        %2 = memref.load %acc[] : memref<f32>
        %3 = arith.addf %2, %1 fastmath<reassoc,contract> : f32
        memref.store %3, %acc[] : memref<f32>
      }
      %4 = memref.load %acc[] : memref<f32>
      memref.store %4, %out[%i0] : memref<20xf32>
    }
    func.return
  }
  func.func private @rowsum_0(%in0: memref<?x?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index, %m: index) {
    %x = loop.extents %in0[%n, %m] : memref<?x?xf32>
    %y = loop.extents %out[%n] : memref<?xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k1" %k1 = 0 to %m step 1 serial {
        %1 = memref.load %x[%i0, %k1] : memref<?x?xf32>
        %2 = memref.load %acc[] : memref<f32>
        %3 = arith.addf %2, %1 fastmath<reassoc,contract> : f32
        memref.store %3, %acc[] : memref<f32>
      }
      %4 = memref.load %acc[] : memref<f32>
      memref.store %4, %y[%i0] : memref<?xf32>
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func private @sum_0(%in0: memref<?x20xf32> {llvm.noalias}, %out: memref<20xf32> {llvm.noalias}, %n: index) {
// CHECK-NEXT:     %tile = loop.alloc "local" : memref<8xf32>
// CHECK-NEXT:     %x = loop.extents %in0[%n] : memref<?x20xf32>
// CHECK-NEXT:     loop.for "i0_init_o" %i0_init_o = 0 to 16 step 8 serial {
// CHECK-NEXT:       loop.for "i0_init_i" %i0_init_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:         %i0_init = arith.addi %i0_init_o, %i0_init_i : index
// CHECK-NEXT:         %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         memref.store %0, %out[%i0_init] : memref<20xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_init_t" %i0_init_t = 16 to 20 step 1 serial {
// CHECK-NEXT:       %1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       memref.store %1, %out[%i0_init_t] : memref<20xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_o" %i0_o = 0 to 16 step 8 serial {
// CHECK-NEXT:       loop.for "i0_o_ld0" %i0_o_ld0 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:         %2 = arith.addi %i0_o, %i0_o_ld0 : index
// CHECK-NEXT:         %3 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         memref.store %3, %tile[%i0_o_ld0] : memref<8xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:       loop.for "k1" %k1 = 0 to %n step 1 serial {
// CHECK-NEXT:         loop.for "i0_i" %i0_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:           %i0 = arith.addi %i0_o, %i0_i : index
// CHECK-NEXT:           %4 = memref.load %x[%k1, %i0] : memref<?x20xf32>
// CHECK-NEXT:           %5 = memref.load %tile[%i0_i] : memref<8xf32>
// CHECK-NEXT:           %6 = arith.addf %5, %4 fastmath<reassoc,contract> : f32
// CHECK-NEXT:           memref.store %6, %tile[%i0_i] : memref<8xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:       loop.for "i0_o_st0" %i0_o_st0 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:         %7 = arith.addi %i0_o, %i0_o_st0 : index
// CHECK-NEXT:         %8 = memref.load %tile[%i0_o_st0] : memref<8xf32>
// CHECK-NEXT:         %9 = memref.load %out[%7] : memref<20xf32>
// CHECK-NEXT:         %10 = arith.addf %9, %8 fastmath<reassoc,contract> : f32
// CHECK-NEXT:         memref.store %10, %out[%7] : memref<20xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_t" %i0_t = 16 to 20 step 1 parallel {
// CHECK-NEXT:       loop.for "k1_in_i0_t" %k1_in_i0_t = 0 to %n step 1 serial {
// CHECK-NEXT:         %11 = memref.load %x[%k1_in_i0_t, %i0_t] : memref<?x20xf32>
// CHECK-NEXT:         %12 = memref.load %out[%i0_t] : memref<20xf32>
// CHECK-NEXT:         %13 = arith.addf %12, %11 fastmath<reassoc,contract> : f32
// CHECK-NEXT:         memref.store %13, %out[%i0_t] : memref<20xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @rowsum_0(%in0: memref<?x?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index, %m: index) {
// CHECK-NEXT:     %x = loop.extents %in0[%n, %m] : memref<?x?xf32>
// CHECK-NEXT:     %y = loop.extents %out[%n] : memref<?xf32>
// CHECK-NEXT:     %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:     loop.for "i0" %i0 = 0 to %n step 1 parallel {
// CHECK-NEXT:       %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       memref.store %0, %acc[] : memref<f32>
// CHECK-NEXT:       loop.for "k1" %k1 = 0 to %m step 1 serial {
// CHECK-NEXT:         %1 = memref.load %x[%i0, %k1] : memref<?x?xf32>
// CHECK-NEXT:         %2 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:         %3 = arith.addf %2, %1 fastmath<reassoc,contract> : f32
// CHECK-NEXT:         memref.store %3, %acc[] : memref<f32>
// CHECK-NEXT:       }
// CHECK-NEXT:       %4 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:       memref.store %4, %y[%i0] : memref<?xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
