// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @zero_step() {
  // expected-error@+1 {{loop.for 'i': step must be positive, got 0}}
  loop.for "i" %i = 0 to 4 step 0 serial {
  }
  func.return
}

// -----

func.func @reversed_bounds() {
  // expected-error@+1 {{loop.for 'i': upper bound 4 is below lower bound 8}}
  loop.for "i" %i = 8 to 4 step 1 serial {
  }
  func.return
}

// -----

func.func @unknown_kind() {
  // expected-error@+1 {{loop.for 'i': unknown kind 'gpu' (expected one of serial, parallel, vectorize, unroll)}}
  loop.for "i" %i = 0 to 4 step 1 gpu {
  }
  func.return
}

// -----

func.func @unknown_scope() {
  // expected-error@+1 {{loop.alloc: unknown scope 'shared' (expected one of global, local)}}
  %t = loop.alloc "shared" : memref<4xf32>
  func.return
}

// -----

func.func @dynamic_alloc() {
  // expected-error@+1 {{loop.alloc: buffer shape must be static, got memref<?xf32>}}
  %t = loop.alloc "global" : memref<?xf32>
  func.return
}

// -----

func.func @prefetch_rank(%w: memref<4x8xf32>, %i: index) {
  // expected-error@+1 {{loop.prefetch: 1 indices for a buffer of rank 2}}
  loop.prefetch %w[%i] : memref<4x8xf32>
  func.return
}

// -----

func.func @view_of_another_size(%a: memref<1x4x8xi16>) {
  // expected-error@+1 {{loop.view: needs static buffers of the same size, got memref<1x4x8xi16> to memref<1x4x8xi32>}}
  %w = loop.view %a : memref<1x4x8xi16> to memref<1x4x8xi32>
  func.return
}

// -----

func.func @view_of_a_run_time_buffer(%a: memref<?x8xi16>) {
  // expected-error@+1 {{loop.view: needs static buffers of the same size, got memref<?x8xi16> to memref<4x4xi32>}}
  %w = loop.view %a : memref<?x8xi16> to memref<4x4xi32>
  func.return
}
