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

// -----

func.func @pointer_without_status(%x: memref<8xf32>, %fn: !llvm.ptr) {
  // expected-error@+1 {{loop.call_extern 'env.f': a function pointer needs a status word}}
  "loop.call_extern"(%fn, %x) <{callee = "env.f", num_outputs = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 1>}> : (!llvm.ptr, memref<8xf32>) -> ()
  func.return
}
