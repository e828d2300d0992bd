// RUN: not mini-opt %s --split-input-file -p loop-to-scf 2>&1 | filecheck %s

// A loop of a run-time trip count cannot be vectorized or unrolled: loop-split gives it a static inner loop first.

func.func @vectorize(%a: memref<?xf32>, %n: index) {
  loop.for "i" %i = 0 to %n step 1 vectorize {
    %u = memref.load %a[%i] : memref<?xf32>
  }
  func.return
}

// CHECK: loop-to-scf: cannot vectorize loop 'i': its trip count is a run-time value (split it by a static factor with loop-split first, and mark the static inner loop)

// -----

func.func @unroll(%a: memref<?xf32>, %n: index) {
  loop.for "u" %u = 0 to %n step 1 unroll {
  }
  func.return
}

// CHECK: loop-to-scf: cannot unroll loop 'u': its trip count is a run-time value

// -----

// An access to a parameter with an inner `?` that does not go through loop.extents has no known extents.

func.func @no_extents(%a: memref<4x?xf32>, %n: index) {
  loop.for "i" %i = 0 to %n step 1 serial {
    %c0 = arith.constant 0 : index
    %u = memref.load %a[%c0, %i] : memref<4x?xf32>
  }
  func.return
}

// CHECK: extents_of: the run-time extents of a memref<4x?xf32> defined by a block argument are unknown
