// RUN: not mini-opt %s -p 'loop-vectorize{kernel=relu_0 loop=i0}' 2>&1 | filecheck %s --check-prefix=VECTORIZE
// RUN: not mini-opt %s -p 'loop-unroll{kernel=relu_0 loop=i0}' 2>&1 | filecheck %s --check-prefix=UNROLL
// RUN: not mini-opt %s -p 'loop-partition{kernel=relu_0 loop=i0 points=4}' 2>&1 | filecheck %s --check-prefix=PARTITION
// RUN: mini-opt %s -p 'loop-parallel{kernel=relu_0 loop=i0}' | filecheck %s --check-prefix=PARALLEL

// Primitives that need a loop's trip count refuse a loop of a run-time trip count, naming the kernel and the loop;
// loop-parallel takes it as it is (loop-outline-parallel passes the run-time count to the pool).

builtin.module {
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

// VECTORIZE: loop-vectorize: loop 'i0' of kernel 'relu_0' runs a run-time number of iterations; split it by the vector width first (loop-split) and vectorize 'i0_i'
// UNROLL: loop-unroll: loop 'i0' of kernel 'relu_0' runs a run-time number of iterations; only a static loop can be unrolled: split it first and unroll 'i0_i'
// PARTITION: loop-partition: loop 'i0' of kernel 'relu_0' runs a run-time number of iterations: points inside it cannot be checked
// PARALLEL: loop.for "i0" %i0 = 0 to %n step 1 parallel {
