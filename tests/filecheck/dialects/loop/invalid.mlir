// RUN: mini-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @zero_step() {
  loop.for "i" %i = 0 to 4 step 0 serial {
  }
  func.return
}

// CHECK: loop.for 'i': step must be positive, got 0

// -----

func.func @reversed_bounds() {
  loop.for "i" %i = 8 to 4 step 1 serial {
  }
  func.return
}

// CHECK: loop.for 'i': upper bound 4 is below lower bound 8

// -----

func.func @unknown_kind() {
  loop.for "i" %i = 0 to 4 step 1 gpu {
  }
  func.return
}

// CHECK: loop.for 'i': unknown kind 'gpu' (expected one of serial, parallel, vectorize, unroll)

// -----

func.func @unknown_scope() {
  %t = loop.alloc "shared" : memref<4xf32>
  func.return
}

// CHECK: loop.alloc: unknown scope 'shared' (expected one of global, local)

// -----

func.func @dynamic_alloc() {
  %t = loop.alloc "global" : memref<?xf32>
  func.return
}

// CHECK: loop.alloc: buffer shape must be static, got memref<?xf32>
