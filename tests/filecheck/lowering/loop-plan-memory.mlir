// RUN: mini-opt %s -p loop-plan-memory | filecheck %s

// Every global buffer becomes a memref.view of one byte arena at a concrete offset. The offsets follow from the
// rule alone (loop_plan_memory.py): a buffer lives from the first to the last top-level op that uses it; buffers
// are placed largest first (ties: earlier first use first), each at the lowest 64-byte-aligned offset where it
// overlaps no placed buffer alive at the same time; the arena is the highest end rounded up to 64 bytes;
// intermediate_bytes is the unrounded sum of the buffer sizes.

// A chain a -> b -> c -> out: %a is dead once %b is computed, so %c reuses %a's bytes; %b overlaps both.
// Each buffer is 256 x 4 = 1024 bytes (already 64-aligned). Lifetimes (calls 1..4): a 1-2, b 2-3, c 3-4.
// a goes first, at 0; b is alive with a at call 2, so it goes past a, at 1024; c is alive with b (call 3) but not
// with a, and 0 + 1024 <= 1024 fits below b: c at 0. Arena 2048 bytes; intermediates 3 x 1024 = 3072 bytes.
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
// CHECK-NEXT:    %[[ARENA:.*]] = loop.alloc "global" : memref<2048xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][] : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[OFF_B]]][] : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    %[[OFF_C:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[ARENA]][%[[OFF_C]]][] : memref<2048xi8> to memref<256xf32>
// CHECK-NEXT:    func.call @k(%x, %[[A]]) : (memref<256xf32>, memref<256xf32>) -> ()
// CHECK-NEXT:    func.call @k(%[[A]], %[[B]]) : (memref<256xf32>, memref<256xf32>) -> ()
// CHECK-NEXT:    func.call @k(%[[B]], %[[C]]) : (memref<256xf32>, memref<256xf32>) -> ()
// CHECK-NEXT:    func.call @k(%[[C]], %out) : (memref<256xf32>, memref<256xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @k(memref<256xf32>, memref<256xf32>) -> ()

// A buffer read through a `loop.view` (its bytes as another type) lives until the view's last use. a = 1024 bytes
// (calls 1-2), b = 1024 bytes (written by call 2, read as %w by calls 3-4), e = 2048 bytes (calls 3-4). e, the
// largest, goes first, at 0; a is not alive with e: 0; b is alive with a (call 2) and with e (calls 3-4): past e, at
// 2048. Arena 3072 bytes. Were b dead after call 2, its own last use, it would sit at 1024 over e's bytes.
func.func @viewed(%x: memref<256xf32>, %out: memref<256xf32>) {
  %a = loop.alloc "global" : memref<256xf32>
  %b = loop.alloc "global" : memref<512xi16>
  %w = loop.view %b : memref<512xi16> to memref<256xi32>
  %e = loop.alloc "global" : memref<512xf32>
  func.call @k(%x, %a) : (memref<256xf32>, memref<256xf32>) -> ()
  func.call @kb(%a, %b) : (memref<256xf32>, memref<512xi16>) -> ()
  func.call @ke(%w, %e) : (memref<256xi32>, memref<512xf32>) -> ()
  func.call @kf(%e, %w, %out) : (memref<512xf32>, memref<256xi32>, memref<256xf32>) -> ()
  func.return
}
func.func private @kb(%in: memref<256xf32>, %out: memref<512xi16>)
func.func private @ke(%in: memref<256xi32>, %out: memref<512xf32>)
func.func private @kf(%in: memref<512xf32>, %words: memref<256xi32>, %out: memref<256xf32>)

// CHECK-LABEL: func.func @viewed(
// CHECK-SAME:    minimlc.arena_bytes = 3072 : i64, minimlc.intermediate_bytes = 4096 : i64
// CHECK:         %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %{{.*}}[%[[OFF_A]]][] : memref<3072xi8> to memref<256xf32>
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 2048 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %{{.*}}[%[[OFF_B]]][] : memref<3072xi8> to memref<512xi16>
// CHECK-NEXT:    %[[W:.*]] = loop.view %[[B]] : memref<512xi16> to memref<256xi32>
// CHECK-NEXT:    %[[OFF_E:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[E:.*]] = memref.view %{{.*}}[%[[OFF_E]]][] : memref<3072xi8> to memref<512xf32>
// CHECK:         func.call @ke(%[[W]], %[[E]])
// CHECK-NEXT:    func.call @kf(%[[E]], %[[W]], %out)

// Offsets are 64-byte aligned and the arena is rounded up to 64 bytes; intermediate_bytes is not rounded.
// a = 3 x 4 = 12 bytes (calls 1-2), b = 5 x 4 = 20 bytes (call 2): 32 intermediate bytes. b, the larger, goes
// first, at 0; a is alive with b at call 2, and 0 + 12 > 0 (b's start), so a goes to the first aligned offset past
// b's 20 bytes: 64. Arena 64 + 12 = 76 bytes, rounded up to 128. The views keep the allocations' order (a, then b).
func.func @odd_sizes(%x: memref<3xf32>, %out: memref<3xf32>) {
  %a = loop.alloc "global" : memref<3xf32>
  %b = loop.alloc "global" : memref<5xf32>
  func.call @k3(%x, %a) : (memref<3xf32>, memref<3xf32>) -> ()
  func.call @k35(%a, %b) : (memref<3xf32>, memref<5xf32>) -> ()
  func.return
}
func.func private @k3(%in: memref<3xf32>, %out: memref<3xf32>)
func.func private @k35(%in: memref<3xf32>, %out: memref<5xf32>)

// CHECK-LABEL: func.func @odd_sizes(%x: memref<3xf32>, %out: memref<3xf32>) attributes {minimlc.arena_bytes = 128 : i64, minimlc.intermediate_bytes = 32 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = loop.alloc "global" : memref<128xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[ARENA]][%[[OFF_A]]][] : memref<128xi8> to memref<3xf32>
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[ARENA]][%[[OFF_B]]][] : memref<128xi8> to memref<5xf32>
// CHECK-NEXT:    func.call @k3(%x, %[[A]]) : (memref<3xf32>, memref<3xf32>) -> ()
// CHECK-NEXT:    func.call @k35(%[[A]], %[[B]]) : (memref<3xf32>, memref<5xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @k3(memref<3xf32>, memref<3xf32>) -> ()
// CHECK-NEXT:  func.func private @k35(memref<3xf32>, memref<5xf32>) -> ()

// Functions without global buffers are left alone.
func.func @nothing(%x: memref<4xf32>) {
  %acc = loop.alloc "local" : memref<f32>
  func.return
}

// CHECK-LABEL: func.func @nothing(%x: memref<4xf32>) {
// CHECK-NEXT:    %[[ACC:.*]] = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A function already planned keeps its arena: running the pass again changes nothing.
func.func @planned(%x: memref<4xf32>) attributes {minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 16 : i64} {
  %arena = loop.alloc "global" : memref<64xi8>
  func.return
}

// CHECK-LABEL: func.func @planned(%x: memref<4xf32>) attributes {minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 16 : i64} {
// CHECK-NEXT:    %[[ARENA:.*]] = loop.alloc "global" : memref<64xi8>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT: }
// CHECK-EMPTY:
