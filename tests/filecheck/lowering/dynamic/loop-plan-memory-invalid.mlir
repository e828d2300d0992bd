// RUN: not mini-opt %s --split-input-file -p loop-plan-memory 2>&1 | filecheck %s

// The arena is sized at the start of the function, so every op computing a run-time size moves there: a load from
// an argument that the function also writes could read another value there, and is refused.

func.func @written_size(%sizes: memref<1xindex>, %x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = loop.alloc "global" : memref<4xf32>
  memref.store %c0, %sizes[%c0] : memref<1xindex>
  %n = memref.load %sizes[%c0] : memref<1xindex>
  %d = loop.alloc "global" [%n] : memref<?xf32>
  func.return
}

// CHECK: loop-plan-memory: @written_size: a run-time buffer size comes from 'memref.load', which cannot move to the start of the function to size the arena (only arith ops and loads of an argument the function only reads can)

// -----

// So is a call.

func.func @called_size(%x: memref<?xf32>) {
  %n = func.call @size() : () -> index
  %d = loop.alloc "global" [%n] : memref<?xf32>
  func.return
}
func.func private @size() -> index

// CHECK: loop-plan-memory: @called_size: a run-time buffer size comes from 'func.call', which cannot move
