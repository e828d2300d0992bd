// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @relu(%x: memref<8xf32>, %y: memref<8xf32>, %fn: !llvm.ptr, %st: !llvm.ptr) {
  loop.call_extern "env.relu" (%x, %y) {num_outputs = 1 : i64} : memref<8xf32>, memref<8xf32>
  loop.call_extern "env.relu" via %fn status %st (%x, %y) {num_outputs = 1 : i64} : memref<8xf32>, memref<8xf32>
  func.return
}

// CHECK:      loop.call_extern "env.relu"(%x, %y) {num_outputs = 1 : i64} : memref<8xf32>, memref<8xf32>
// CHECK-NEXT: loop.call_extern "env.relu" via %fn status %st(%x, %y) {num_outputs = 1 : i64} : memref<8xf32>, memref<8xf32>
