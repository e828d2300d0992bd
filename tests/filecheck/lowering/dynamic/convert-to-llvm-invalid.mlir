// RUN: not mini-opt %s -p convert-to-llvm 2>&1 | filecheck %s


// An access to a buffer with an inner `?` that reached convert-to-llvm is refused (loop-to-scf linearises them).

func.func @inner(%a: memref<4x?xf32>, %i: index) {
  %v = memref.load %a[%i, %i] : memref<4x?xf32>
  func.return
}

// CHECK: convert-to-llvm: 'memref.load' on memref<4x?xf32>: a run-time extent below the outermost dimension needs a linear index (loop-to-scf rewrites such accesses to a one-dimensional view)
