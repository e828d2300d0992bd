// RUN: mini-opt %s -p loop-profile-calls | filecheck %s

// The bytes of a call are the summed sizes of the memref buffers it passes, whatever their element types; other
// operands (the pool's pointer) count nothing. A buffer with a run-time extent, or of an element type no runtime
// buffer holds (i4), makes the call's bytes unknown: 0, as a trip count known only at run time makes its flops 0.
func.func @main(%x: memref<4x8xf32>, %codes: memref<16xi8>, %pool: !llvm.ptr, %n: index, %packed: memref<8xi4>) attributes {minimlc.entry} {
  func.call @mixed(%x, %codes, %pool) : (memref<4x8xf32>, memref<16xi8>, !llvm.ptr) -> ()
  %d = loop.alloc "global" [%n] : memref<?x8xf32>
  func.call @dynamic(%d) : (memref<?x8xf32>) -> ()
  func.call @nibbles(%packed) : (memref<8xi4>) -> ()
  func.return
}
func.func private @mixed(%a: memref<4x8xf32>, %b: memref<16xi8>, %p: !llvm.ptr) {
  func.return
}
func.func private @dynamic(%a: memref<?x8xf32>) {
  func.return
}
func.func private @nibbles(%a: memref<8xi4>) {
  func.return
}

// CHECK: minimlc.profile = [{kernel = "mixed", flops = 0 : i64, bf16_flops = 0 : i64, bytes = 144 : i64, schedule = "", tasks = ""}, {kernel = "dynamic", flops = 0 : i64, bf16_flops = 0 : i64, bytes = 0 : i64, schedule = "", tasks = ""}, {kernel = "nibbles", flops = 0 : i64, bf16_flops = 0 : i64, bytes = 0 : i64, schedule = "", tasks = ""}]
