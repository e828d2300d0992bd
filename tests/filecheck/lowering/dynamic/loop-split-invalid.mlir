// RUN: not mini-opt %s -p 'loop-split{kernel=k loop=i factor=0}' 2>&1 | filecheck %s

func.func @k(%a: memref<?xf32>, %n: index) {
  loop.for "i" %i = 0 to %n step 1 serial {
  }
  func.return
}

// CHECK: loop-split: factor 0 of loop 'i' in kernel 'k' must be positive
