// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// The dynamic rule gives rotary embeddings over run-time rows (x * cos + rotate_half(x) * sin, rotate_half a
// concatenation of -x[32:] and x[:32]) the concat rule's schedule: the static innermost loop partitioned where it
// changes input (32), each piece reading one half unclamped, 8 lanes at a time; the rows are the parallel tasks.
builtin.module {
  func.func private @add_0(%in0: memref<?x?x64xf32> {llvm.noalias}, %in1: memref<64xf32> {llvm.noalias}, %in2: memref<64xf32> {llvm.noalias}, %out: memref<?x?x64xf32> {llvm.noalias}, %n0: index, %n1: index) {
    %in0_1 = loop.extents %in0[%n0, %n1] : memref<?x?x64xf32>
    %out_1 = loop.extents %out[%n0, %n1] : memref<?x?x64xf32>
    loop.for "i0" %i0 = 0 to %n0 step 1 serial {
      loop.for "i1" %i1 = 0 to %n1 step 1 serial {
        loop.for "i2" %i2 = 0 to 64 step 1 serial {
          %0 = memref.load %in0_1[%i0, %i1, %i2] : memref<?x?x64xf32>
          %1 = memref.load %in1[%i2] : memref<64xf32>
          %2 = arith.mulf %0, %1 fastmath<contract> : f32
          %3 = arith.constant 31 : index
          %4 = arith.minsi %i2, %3 : index
          %5 = arith.constant 32 : index
          %6 = arith.addi %4, %5 : index
          %7 = memref.load %in0_1[%i0, %i1, %6] : memref<?x?x64xf32>
          %8 = arith.negf %7 : f32
          %9 = arith.constant 32 : index
          %10 = arith.subi %i2, %9 : index
          %11 = arith.constant 0 : index
          %12 = arith.maxsi %10, %11 : index
          %13 = memref.load %in0_1[%i0, %i1, %12] : memref<?x?x64xf32>
          %14 = arith.constant 32 : index
          %15 = arith.cmpi slt, %i2, %14 : index
          %16 = arith.select %15, %8, %13 : f32
          %17 = memref.load %in2[%i2] : memref<64xf32>
          %18 = arith.mulf %16, %17 fastmath<contract> : f32
          %19 = arith.addf %2, %18 fastmath<contract> : f32
          memref.store %19, %out_1[%i0, %i1, %i2] : memref<?x?x64xf32>
        }
      }
    }
    func.return
  }
}

// CHECK-LABEL: func.func private @add_0(
// CHECK:         loop.for "i0" %i0 = 0 to %n0 step 1 parallel {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to %n1 step 1 serial {
// CHECK-NEXT:        loop.for "i2_p0_o" %i2_p0_o = 0 to 32 step 8 serial {
// CHECK-NEXT:          loop.for "i2_p0_i" %i2_p0_i = 0 to 8 step 1 vectorize {
// CHECK-NOT:             arith.minsi
// CHECK-NOT:             arith.select
// CHECK:                 arith.negf
// CHECK:               }
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for "i2_p1_o" %i2_p1_o = 32 to 64 step 8 serial {
// CHECK-NEXT:          loop.for "i2_p1_i" %i2_p1_i = 0 to 8 step 1 vectorize {
// CHECK-NOT:             arith.maxsi
// CHECK-NOT:             arith.negf
// CHECK:                 memref.store
