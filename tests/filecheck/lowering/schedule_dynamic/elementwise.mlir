// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'loop-split{kernel=add_0 loop=i1 factor=8},loop-vectorize{kernel=add_0 loop=i1_i},loop-split{kernel=add_0 loop=i0 factor=8},loop-parallel{kernel=add_0 loop=i0_o},loop-split{kernel=relu_0 loop=i0 factor=8},loop-vectorize{kernel=relu_0 loop=i0_i},loop-split{kernel=relu_0 loop=i0_o factor=64},loop-parallel{kernel=relu_0 loop=i0_o_o}' | filecheck %s

// The dynamic rule on elementwise kernels (AVX2: 8 lanes), and its trace replayed to the same IR. @add_0 has n rows
// of 64: the static innermost loop is split by the vector width and vectorized; the rows (64 elements each) are
// split into chunks of 8 (512 elements, the grain), whose loop runs a run-time count of parallel tasks, and the
// remainder of fewer than 8 rows runs serially after it. @relu_0's innermost loop is dynamic: its main part runs
// n - n % 8 elements as vectors (in parallel chunks of 64 vectors), the remainder of fewer than 8 elements is scalar.

builtin.module {
  func.func private @add_0(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<64xf32> {llvm.noalias}, %out: memref<?x64xf32> {llvm.noalias}, %n: index) {
    %x = loop.extents %in0[%n] : memref<?x64xf32>
    %y = loop.extents %out[%n] : memref<?x64xf32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 64 step 1 serial {
        %0 = memref.load %x[%i0, %i1] : memref<?x64xf32>
        %1 = memref.load %in1[%i1] : memref<64xf32>
        %2 = arith.addf %0, %1 : f32
        memref.store %2, %y[%i0, %i1] : memref<?x64xf32>
      }
    }
    func.return
  }
  func.func private @relu_0(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index) {
    %x = loop.extents %in0[%n] : memref<?xf32>
    %y = loop.extents %out[%n] : memref<?xf32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      %0 = memref.load %x[%i0] : memref<?xf32>
      %1 = arith.constant 0.000000e+00 : f32
      %2 = arith.maximumf %0, %1 : f32
      memref.store %2, %y[%i0] : memref<?xf32>
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func private @add_0(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<64xf32> {llvm.noalias}, %out: memref<?x64xf32> {llvm.noalias}, %n: index) {
// CHECK-NEXT:     %x = loop.extents %in0[%n] : memref<?x64xf32>
// CHECK-NEXT:     %y = loop.extents %out[%n] : memref<?x64xf32>
// CHECK-NEXT:     %0 = arith.constant 8 : index
// CHECK-NEXT:     %i0_rem = arith.remui %n, %0 : index
// CHECK-NEXT:     %i0_main = arith.subi %n, %i0_rem : index
// CHECK-NEXT:     loop.for "i0_o" %i0_o = 0 to %i0_main step 8 parallel {
// CHECK-NEXT:       loop.for "i0_i" %i0_i = 0 to 8 step 1 serial {
// CHECK-NEXT:         %i0 = arith.addi %i0_o, %i0_i : index
// CHECK-NEXT:         loop.for "i1_o" %i1_o = 0 to 64 step 8 serial {
// CHECK-NEXT:           loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:             %i1 = arith.addi %i1_o, %i1_i : index
// CHECK-NEXT:             %1 = memref.load %x[%i0, %i1] : memref<?x64xf32>
// CHECK-NEXT:             %2 = memref.load %in1[%i1] : memref<64xf32>
// CHECK-NEXT:             %3 = arith.addf %1, %2 : f32
// CHECK-NEXT:             memref.store %3, %y[%i0, %i1] : memref<?x64xf32>
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK-NEXT:       %i0_1 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:       loop.for "i1_o_in_i0_t" %i1_o_in_i0_t = 0 to 64 step 8 serial {
// CHECK-NEXT:         loop.for "i1_i_in_i0_t" %i1_i_in_i0_t = 0 to 8 step 1 vectorize {
// CHECK-NEXT:           %i1_1 = arith.addi %i1_o_in_i0_t, %i1_i_in_i0_t : index
// CHECK-NEXT:           %4 = memref.load %x[%i0_1, %i1_1] : memref<?x64xf32>
// CHECK-NEXT:           %5 = memref.load %in1[%i1_1] : memref<64xf32>
// CHECK-NEXT:           %6 = arith.addf %4, %5 : f32
// CHECK-NEXT:           memref.store %6, %y[%i0_1, %i1_1] : memref<?x64xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @relu_0(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index) {
// CHECK-NEXT:     %x = loop.extents %in0[%n] : memref<?xf32>
// CHECK-NEXT:     %y = loop.extents %out[%n] : memref<?xf32>
// CHECK-NEXT:     %0 = arith.constant 8 : index
// CHECK-NEXT:     %i0_rem = arith.remui %n, %0 : index
// CHECK-NEXT:     %i0_main = arith.subi %n, %i0_rem : index
// CHECK-NEXT:     %1 = arith.constant -7 : index
// CHECK-NEXT:     %2 = arith.subi %i0_main, %1 : index
// CHECK-NEXT:     %3 = arith.constant 8 : index
// CHECK-NEXT:     %4 = arith.divsi %2, %3 : index
// CHECK-NEXT:     %5 = arith.constant 64 : index
// CHECK-NEXT:     %i0_o_rem = arith.remsi %4, %5 : index
// CHECK-NEXT:     %6 = arith.subi %4, %i0_o_rem : index
// CHECK-NEXT:     %7 = arith.constant 8 : index
// CHECK-NEXT:     %8 = arith.muli %6, %7 : index
// CHECK-NEXT:     %9 = arith.constant 0 : index
// CHECK-NEXT:     %i0_o_main = arith.addi %8, %9 : index
// CHECK-NEXT:     loop.for "i0_o_o" %i0_o_o = 0 to %i0_o_main step 512 parallel {
// CHECK-NEXT:       loop.for "i0_o_i" %i0_o_i = 0 to 512 step 8 serial {
// CHECK-NEXT:         %i0_o = arith.addi %i0_o_o, %i0_o_i : index
// CHECK-NEXT:         loop.for "i0_i" %i0_i = 0 to 8 step 1 vectorize {
// CHECK-NEXT:           %i0 = arith.addi %i0_o, %i0_i : index
// CHECK-NEXT:           %10 = memref.load %x[%i0] : memref<?xf32>
// CHECK-NEXT:           %11 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:           %12 = arith.maximumf %10, %11 : f32
// CHECK-NEXT:           memref.store %12, %y[%i0] : memref<?xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_o_t" %i0_o_t = 0 to %i0_o_rem step 1 serial {
// CHECK-NEXT:       %13 = arith.constant 8 : index
// CHECK-NEXT:       %14 = arith.muli %i0_o_t, %13 : index
// CHECK-NEXT:       %i0_o_1 = arith.addi %i0_o_main, %14 : index
// CHECK-NEXT:       loop.for "i0_i_in_i0_o_t" %i0_i_in_i0_o_t = 0 to 8 step 1 vectorize {
// CHECK-NEXT:         %i0_1 = arith.addi %i0_o_1, %i0_i_in_i0_o_t : index
// CHECK-NEXT:         %15 = memref.load %x[%i0_1] : memref<?xf32>
// CHECK-NEXT:         %16 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:         %17 = arith.maximumf %15, %16 : f32
// CHECK-NEXT:         memref.store %17, %y[%i0_1] : memref<?xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK-NEXT:       %i0_2 = arith.addi %i0_main, %i0_t : index
// CHECK-NEXT:       %18 = memref.load %x[%i0_2] : memref<?xf32>
// CHECK-NEXT:       %19 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       %20 = arith.maximumf %18, %19 : f32
// CHECK-NEXT:       memref.store %20, %y[%i0_2] : memref<?xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
