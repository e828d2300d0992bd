// RUN: mini-opt %s -p loop-plan-memory | filecheck %s

// A buffer with run-time sizes stays out of the arena: its own allocation per call.

func.func @main(%n: index, %i: index) attributes {minimlc.entry} {
  %a = loop.alloc "global" : memref<16xf32>
  %d = loop.alloc "global" [%n] : memref<?x16xf32>
  %b = loop.alloc "global" : memref<16xf32>
  %v = memref.load %a[%i] : memref<16xf32>
  memref.store %v, %b[%i] : memref<16xf32>
  memref.store %v, %d[%i, %i] : memref<?x16xf32>
  func.return
}

// CHECK:      func.func @main(%n: index, %i: index) attributes {minimlc.entry, minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 128 : i64} {
// CHECK-NEXT:   %arena = loop.alloc "global" : memref<64xi8>
// CHECK:        %a = memref.view %arena
// CHECK-NEXT:   %d = loop.alloc "global" [%n] : memref<?x16xf32>
// CHECK:        %b = memref.view %arena
