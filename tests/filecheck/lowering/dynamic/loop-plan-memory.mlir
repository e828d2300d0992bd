// RUN: mini-opt %s -p loop-plan-memory | filecheck %s
// RUN: mini-opt %s -p loop-plan-memory,loop-to-scf,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts | filecheck %s --check-prefix=LLVM

// Buffers with run-time sizes share the one arena (loop_plan_memory.py, arena_slots.py): the static buffers keep
// their static plan at the front, then each slot follows at a run-time offset. Slots come from liveness alone: a
// buffer (in order of first use) joins a slot whose buffers are all dead before it, preferring one that already
// holds its size operands, else opens a new one. A slot is as large as its largest buffer, each buffer's bytes
// rounded up to 64 (`(x + 63) & -64`, left out when the bytes per unit of its sizes are a multiple of 64). The arena
// is one `loop.alloc "global"` of the total, at the start; the attributes count the static part only.

// %a and %b (16 x 4 bytes, disjoint lifetimes) share offset 0 of a 64-byte static part, as without %d: arena_bytes
// 64, intermediate_bytes 128. %d (64 bytes per %n, a multiple of 64) is slot 0, at offset 64: 64 + 64 x %n bytes.
func.func @mixed(%n: index, %i: index) {
  %a = loop.alloc "global" : memref<16xf32>
  %d = loop.alloc "global" [%n] : memref<?x16xf32>
  %b = loop.alloc "global" : memref<16xf32>
  %v = memref.load %a[%i] : memref<16xf32>
  memref.store %v, %b[%i] : memref<16xf32>
  memref.store %v, %d[%i, %i] : memref<?x16xf32>
  func.return
}

// CHECK-LABEL: func.func @mixed(%n: index, %i: index) attributes {minimlc.arena_bytes = 64 : i64, minimlc.intermediate_bytes = 128 : i64} {
// CHECK-NEXT:    %[[STATIC:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[SLOT:.*]] = arith.muli %n, %[[ROW]] : index
// CHECK-NEXT:    %[[TOTAL:.*]] = arith.addi %[[STATIC]], %[[SLOT]] : index
// CHECK-NEXT:    %arena = loop.alloc "global" [%[[TOTAL]]] : memref<?xi8>
// CHECK-NEXT:    %[[OFF_A:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %arena[%[[OFF_A]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NEXT:    %d = memref.view %arena[%[[STATIC]]][%n] : memref<?xi8> to memref<?x16xf32>
// CHECK-NEXT:    %[[OFF_B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %b = memref.view %arena[%[[OFF_B]]][] : memref<?xi8> to memref<16xf32>
// CHECK-NEXT:    %v = memref.load %a[%i] : memref<16xf32>

// A chain a -> b -> c, sizes from the extents argument. Lifetimes (calls 1..3): a 1-2, b 2-3, c 3. a opens slot 0;
// b is alive with a, so it opens slot 1; c is alive with b but not with a: slot 0, whose size becomes
// max(64 x %n, align(4 x %nm)). b's 12 bytes per %n are rounded up at run time. No static part: offset 0, and both
// attributes 0. %nm is computed after a's first use: it and the loads it needs move to the start (they only read
// %extents, which nothing writes), ahead of the arena that needs them.
func.func @chain(%extents: memref<2xi64>, %x: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %e0 = memref.load %extents[%c0] : memref<2xi64>
  %n = arith.index_cast %e0 : i64 to index
  %a = loop.alloc "global" [%n] : memref<?x16xf32>
  func.call @k16(%x, %a) : (memref<?x16xf32>, memref<?x16xf32>) -> ()
  %b = loop.alloc "global" [%n] : memref<?x3xf32>
  func.call @k3(%a, %b) : (memref<?x16xf32>, memref<?x3xf32>) -> ()
  %c1 = arith.constant 1 : index
  %e1 = memref.load %extents[%c1] : memref<2xi64>
  %m = arith.index_cast %e1 : i64 to index
  %nm = arith.muli %n, %m : index
  %c = loop.alloc "global" [%nm] : memref<?xf32>
  func.call @k1(%b, %c) : (memref<?x3xf32>, memref<?xf32>) -> ()
  func.return
}
func.func private @k16(%in: memref<?x16xf32>, %out: memref<?x16xf32>)
func.func private @k3(%in: memref<?x16xf32>, %out: memref<?x3xf32>)
func.func private @k1(%in: memref<?x3xf32>, %out: memref<?xf32>)

// CHECK-LABEL: func.func @chain(%extents: memref<2xi64>, %x: memref<?x16xf32>) attributes {minimlc.arena_bytes = 0 : i64, minimlc.intermediate_bytes = 0 : i64} {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %e0 = memref.load %extents[%c0] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %e0 : i64 to index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %e1 = memref.load %extents[%c1] : memref<2xi64>
// CHECK-NEXT:    %m = arith.index_cast %e1 : i64 to index
// CHECK-NEXT:    %nm = arith.muli %n, %m : index
// CHECK-NEXT:    %[[SLOT0_AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ROW_A:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[BYTES_A:.*]] = arith.muli %n, %[[ROW_A]] : index
// CHECK-NEXT:    %[[UNIT_C:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[BYTES_C:.*]] = arith.muli %nm, %[[UNIT_C]] : index
// CHECK-NEXT:    %[[PAD_C:.*]] = arith.constant 63 : index
// CHECK-NEXT:    %[[UP_C:.*]] = arith.addi %[[BYTES_C]], %[[PAD_C]] : index
// CHECK-NEXT:    %[[MASK_C:.*]] = arith.constant -64 : index
// CHECK-NEXT:    %[[ALIGNED_C:.*]] = arith.andi %[[UP_C]], %[[MASK_C]] : index
// CHECK-NEXT:    %[[SLOT0:.*]] = arith.maxui %[[BYTES_A]], %[[ALIGNED_C]] : index
// CHECK-NEXT:    %[[SLOT1_AT:.*]] = arith.addi %[[SLOT0_AT]], %[[SLOT0]] : index
// CHECK-NEXT:    %[[ROW_B:.*]] = arith.constant 12 : index
// CHECK-NEXT:    %[[BYTES_B:.*]] = arith.muli %n, %[[ROW_B]] : index
// CHECK-NEXT:    %[[PAD_B:.*]] = arith.constant 63 : index
// CHECK-NEXT:    %[[UP_B:.*]] = arith.addi %[[BYTES_B]], %[[PAD_B]] : index
// CHECK-NEXT:    %[[MASK_B:.*]] = arith.constant -64 : index
// CHECK-NEXT:    %[[SLOT1:.*]] = arith.andi %[[UP_B]], %[[MASK_B]] : index
// CHECK-NEXT:    %[[TOTAL:.*]] = arith.addi %[[SLOT1_AT]], %[[SLOT1]] : index
// CHECK-NEXT:    %arena = loop.alloc "global" [%[[TOTAL]]] : memref<?xi8>
// CHECK-NEXT:    %a = memref.view %arena[%[[SLOT0_AT]]][%n] : memref<?xi8> to memref<?x16xf32>
// CHECK-NEXT:    func.call @k16(%x, %a) : (memref<?x16xf32>, memref<?x16xf32>) -> ()
// CHECK-NEXT:    %b = memref.view %arena[%[[SLOT1_AT]]][%n] : memref<?xi8> to memref<?x3xf32>
// CHECK-NEXT:    func.call @k3(%a, %b) : (memref<?x16xf32>, memref<?x3xf32>) -> ()
// CHECK-NEXT:    %c = memref.view %arena[%[[SLOT0_AT]]][%nm] : memref<?xi8> to memref<?xf32>
// CHECK-NEXT:    func.call @k1(%b, %c) : (memref<?x3xf32>, memref<?xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// Lowered, the run allocates the arena once, at its run-time size; each buffer is an address in it; the arena is
// freed once, at the return.

// LLVM-LABEL: llvm.func @chain(
// LLVM:         %[[ARENA:.*]] = llvm.call @aligned_alloc(
// LLVM-NOT:     @aligned_alloc
// LLVM:         %{{a.*}} = llvm.getelementptr inbounds %[[ARENA]][%[[SLOT0_AT:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM:         %{{b.*}} = llvm.getelementptr inbounds %[[ARENA]][%[[SLOT1_AT:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM:         %c = llvm.getelementptr inbounds %[[ARENA]][%[[SLOT0_AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM-NOT:     @aligned_alloc
// LLVM:         llvm.call @free(%[[ARENA]]) : (!llvm.ptr) -> ()
// LLVM-NEXT:    llvm.return
