// RUN: mini-opt %s -p loop-plan-memory | filecheck %s

// A chain a -> b -> c -> out: %a is dead once %b is computed, so %c reuses %a's bytes; %b overlaps both.
func.func @chain(%x: memref<256xf32>, %out: memref<256xf32>) {
  %a = loop.alloc "global" : memref<256xf32>
  %b = loop.alloc "global" : memref<256xf32>
  %c = loop.alloc "global" : memref<256xf32>
  func.call @k(%x, %a) : (memref<256xf32>, memref<256xf32>) -> ()
  func.call @k(%a, %b) : (memref<256xf32>, memref<256xf32>) -> ()
  func.call @k(%b, %c) : (memref<256xf32>, memref<256xf32>) -> ()
  func.call @k(%c, %out) : (memref<256xf32>, memref<256xf32>) -> ()
  func.return
}
func.func private @k(%in: memref<256xf32>, %out: memref<256xf32>)

// CHECK-LABEL: func.func @chain(%x: memref<256xf32>, %out: memref<256xf32>) attributes {minimlc.arena_bytes = 2048 : i64, minimlc.intermediate_bytes = 3072 : i64} {
// CHECK-NEXT:    %arena = loop.alloc "global" : memref<2048xi8>
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %arena[%0][] : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    %1 = arith.constant 1024 : index
// CHECK-NEXT:    %b = memref.view %arena[%1][] : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    %2 = arith.constant 0 : index
// CHECK-NEXT:    %c = memref.view %arena[%2][] : memref<2048xi8> to memref<256xf32>

// Sizes are rounded up to 64 bytes; a buffer used by no call still gets its own place.
func.func @odd_sizes(%x: memref<3xf32>, %out: memref<3xf32>) {
  %a = loop.alloc "global" : memref<3xf32>
  %b = loop.alloc "global" : memref<5xf32>
  func.call @k3(%x, %a) : (memref<3xf32>, memref<3xf32>) -> ()
  func.call @k35(%a, %b) : (memref<3xf32>, memref<5xf32>) -> ()
  func.return
}
func.func private @k3(%in: memref<3xf32>, %out: memref<3xf32>)
func.func private @k35(%in: memref<3xf32>, %out: memref<5xf32>)

// CHECK-LABEL: func.func @odd_sizes(
// CHECK-SAME:    minimlc.arena_bytes = 128 : i64, minimlc.intermediate_bytes = 32 : i64
// CHECK:         memref.view %arena[%{{.*}}][] : memref<128xi8> to memref<3xf32>
// CHECK:         memref.view %arena[%{{.*}}][] : memref<128xi8> to memref<5xf32>

// Functions without global buffers are left alone.
func.func @nothing(%x: memref<4xf32>) {
  %acc = loop.alloc "local" : memref<f32>
  func.return
}

// CHECK-LABEL: func.func @nothing(%x: memref<4xf32>) {
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<f32>

// A function already planned keeps its arena: running the pass again changes nothing.
func.func @planned(%x: memref<4xf32>) attributes {minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 16 : i64} {
  %arena = loop.alloc "global" : memref<64xi8>
  func.return
}

// CHECK-LABEL: func.func @planned(%x: memref<4xf32>) attributes {minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 16 : i64} {
// CHECK-NEXT:    %arena = loop.alloc "global" : memref<64xi8>
// CHECK-NEXT:    func.return
