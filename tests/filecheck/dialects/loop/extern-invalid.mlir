// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @no_output(%x: memref<8xf32>) {
  // expected-error@+1 {{loop.call_extern 'env.sink': num_outputs 0 must be between 1 and the 1 buffers}}
  loop.call_extern "env.sink" (%x) {num_outputs = 0 : i64} : memref<8xf32>
  func.return
}

// -----

func.func @too_many_outputs(%x: memref<8xf32>) {
  // expected-error@+1 {{loop.call_extern 'env.f': num_outputs 2 must be between 1 and the 1 buffers}}
  loop.call_extern "env.f" (%x) {num_outputs = 2 : i64} : memref<8xf32>
  func.return
}
