// RUN: mini-opt %s -p cse | filecheck %s

// Pure ops: an equal op earlier in the block or in a block around it is reused; a dead pure op goes.
// CHECK-LABEL: func.func @pure
// CHECK-NEXT:    %[[A:.*]] = arith.addi %x, %y : index
// CHECK-NEXT:    %three = arith.constant 3 : index
// CHECK-NEXT:    scf.for %{{.*}} = %x to %y step %y {
// CHECK-NEXT:      func.call @use(%[[A]], %[[A]]) : (index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @use(%[[A]], %[[A]]) : (index, index) -> ()
// CHECK-NEXT:    func.call @use(%three, %three) : (index, index) -> ()
// CHECK-NEXT:    func.return
func.func @pure(%x: index, %y: index) {
  %a = arith.addi %x, %y : index
  %b = arith.addi %x, %y : index
  %dead = arith.muli %x, %y : index
  %three = arith.constant 3 : index
  scf.for %i = %x to %y step %y {
    %c = arith.addi %x, %y : index
    func.call @use(%a, %c) : (index, index) -> ()
  }
  func.call @use(%a, %b) : (index, index) -> ()
  func.call @use(%three, %three) : (index, index) -> ()
  func.return
}

// Reads: reused within a block while nothing between writes; a store, or a loop that stores, ends that.
// CHECK-LABEL: func.func @reads
// CHECK-NEXT:    %[[L:.*]] = memref.load %m[%i] : memref<8xf32>
// CHECK-NEXT:    func.call @usef(%[[L]], %[[L]]) : (f32, f32) -> ()
// CHECK-NEXT:    memref.store %v, %m[%i] : memref<8xf32>
// CHECK-NEXT:    %[[M:.*]] = memref.load %m[%i] : memref<8xf32>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N:.*]] = memref.load %m[%i] : memref<8xf32>
// CHECK-NEXT:    func.call @usef(%[[M]], %[[N]]) : (f32, f32) -> ()
func.func @reads(%m: memref<8xf32>, %i: index, %v: f32) {
  %l = memref.load %m[%i] : memref<8xf32>
  %k = memref.load %m[%i] : memref<8xf32>
  func.call @usef(%l, %k) : (f32, f32) -> ()
  memref.store %v, %m[%i] : memref<8xf32>
  %p = memref.load %m[%i] : memref<8xf32>
  scf.for %j = %i to %i step %i {
    memref.store %v, %m[%j] : memref<8xf32>
  }
  %q = memref.load %m[%i] : memref<8xf32>
  func.call @usef(%p, %q) : (f32, f32) -> ()
  func.return
}

// A read inside a loop is not replaced by the same read outside it (the loop's body may run after a write).
// CHECK-LABEL: func.func @read_in_loop
// CHECK:         memref.load %m[%i]
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %m[%i]
func.func @read_in_loop(%m: memref<8xf32>, %i: index) {
  %l = memref.load %m[%i] : memref<8xf32>
  func.call @usef(%l, %l) : (f32, f32) -> ()
  scf.for %j = %i to %i step %i {
    %k = memref.load %m[%i] : memref<8xf32>
    func.call @usef(%k, %k) : (f32, f32) -> ()
  }
  func.return
}

// A loop's effects are its ops', at every level: a nest that only reads, used by nothing, is erased whole; one
// that stores deep inside is a write (the read after it is not the read before it).
// CHECK-LABEL: func.func @nested_effects
// CHECK-NEXT:    %[[P:.*]] = memref.load %m[%i] : memref<8xf32>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Q:.*]] = memref.load %m[%i] : memref<8xf32>
// CHECK-NEXT:    func.call @usef(%[[P]], %[[Q]]) : (f32, f32) -> ()
func.func @nested_effects(%m: memref<8xf32>, %i: index, %v: f32) {
  scf.for %j = %i to %i step %i {
    scf.for %k = %i to %i step %i {
      %r = memref.load %m[%k] : memref<8xf32>
      %s = arith.addf %r, %r : f32
    }
  }
  %p = memref.load %m[%i] : memref<8xf32>
  scf.for %j = %i to %i step %i {
    scf.for %k = %i to %i step %i {
      memref.store %v, %m[%k] : memref<8xf32>
    }
  }
  %q = memref.load %m[%i] : memref<8xf32>
  func.call @usef(%p, %q) : (f32, f32) -> ()
  func.return
}

// A function starts with nothing known: each keeps its constant.
// CHECK-LABEL: func.func @isolated
// CHECK-NEXT:    %c = arith.constant 3 : index
// CHECK-NEXT:    func.return %c : index
func.func @isolated() -> index {
  %c = arith.constant 3 : index
  func.return %c : index
}

func.func private @use(index, index)
func.func private @usef(f32, f32)
