// RUN: mini-opt %s -p convert-to-llvm,reconcile-unrealized-casts | filecheck %s

// memref.alloc with run-time sizes: max(bytes, 1) rounded up to 64 at run time. An outermost `?` needs nothing
// in the address; a 1-D view (memref.collapse_shape) is its source's pointer.

func.func @alloc(%n: index, %i: index) {
  %t = memref.alloc(%n) {alignment = 64 : i64} : memref<?x768xf32>
  %v = memref.load %t[%i, %i] : memref<?x768xf32>
  %f = memref.collapse_shape %t [[0, 1]] : memref<?x768xf32> into memref<?xf32>
  memref.store %v, %f[%i] : memref<?xf32>
  memref.dealloc %t : memref<?x768xf32>
  func.return
}

// CHECK:      llvm.func @alloc(%n: i64, %i: i64) {
// CHECK-NEXT:   %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %[[ROW:.*]] = llvm.mlir.constant(3072) : i64
// CHECK-NEXT:   %[[BYTES:.*]] = llvm.mul %[[ROW]], %n : i64
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %[[SOME:.*]] = llvm.call_intrinsic "llvm.umax.i64"(%[[BYTES]], %[[ONE]]) : (i64, i64) -> i64
// CHECK-NEXT:   %[[PAD:.*]] = llvm.mlir.constant(63) : i64
// CHECK-NEXT:   %[[UP:.*]] = llvm.add %[[SOME]], %[[PAD]] : i64
// CHECK-NEXT:   %[[MASK:.*]] = llvm.mlir.constant(-64) : i64
// CHECK-NEXT:   %[[SIZE:.*]] = llvm.and %[[UP]], %[[MASK]] : i64
// CHECK-NEXT:   %t = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:   %[[AT:.*]] = llvm.getelementptr inbounds %t[%i, %i] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<768 x f32>
// CHECK-NEXT:   %v = llvm.load %[[AT]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[FLAT:.*]] = llvm.getelementptr inbounds %t[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %v, %[[FLAT]] : f32, !llvm.ptr
// CHECK-NEXT:   llvm.call @free(%t) : (!llvm.ptr) -> ()
