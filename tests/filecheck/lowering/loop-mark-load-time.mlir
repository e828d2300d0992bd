// RUN: mini-opt %s -p loop-mark-load-time | filecheck %s
// RUN: mini-opt %s -p loop-mark-load-time,loop-to-scf,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts -t llvm | filecheck %s --check-prefix=LLVM

// @pack_0 runs at load time (a precompute's kernel), and so does @helper_1, which only it calls; @shared_2 is also
// called at run time, and @run_3 only then: they and the entry stay unmarked.
func.func @main(%x: memref<8xf32>, %out: memref<8xf32>) attributes {minimlc.entry} {
  %w = loop.weight "w" : memref<8xf32>
  %p = loop.precompute @pack_0(%w) : (memref<8xf32>) -> memref<8xf32>
  %q = loop.precompute @shared_2(%p) : (memref<8xf32>) -> memref<8xf32>
  %t = loop.alloc "global" : memref<8xf32>
  func.call @shared_2(%x, %t) : (memref<8xf32>, memref<8xf32>) -> ()
  func.call @run_3(%t, %q, %out) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  func.return
}
func.func private @pack_0(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.call @helper_1(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
  func.return
}
func.func private @helper_1(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.return
}
func.func private @shared_2(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.return
}
func.func private @run_3(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  func.return
}

// CHECK:      func.func @main(%x: memref<8xf32>, %out: memref<8xf32>) attributes {minimlc.entry} {
// CHECK:      func.func private @pack_0(%a: memref<8xf32>, %b: memref<8xf32>) attributes {minimlc.load_time} {
// CHECK:      func.func private @helper_1(%a: memref<8xf32>, %b: memref<8xf32>) attributes {minimlc.load_time} {
// CHECK:      func.func private @shared_2(%a: memref<8xf32>, %b: memref<8xf32>) {
// CHECK:      func.func private @run_3(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {

// LLVM:      define void @main_packed(ptr {{.*}}){{$}}
// LLVM:      define void @main(ptr {{.*}}){{$}}
// LLVM:      define internal void @pack_0(ptr %{{.*}}, ptr %{{.*}}) minsize optsize
// LLVM:      define internal void @helper_1(ptr %{{.*}}, ptr %{{.*}}) minsize optsize
// LLVM:      define internal void @shared_2(ptr %{{.*}}, ptr %{{.*}}){{$}}
// LLVM:      define internal void @run_3(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}){{$}}
