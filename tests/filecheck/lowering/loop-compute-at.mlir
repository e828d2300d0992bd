// RUN: mini-opt %s -p 'loop-compute-at{kernel=two_stages stage=i at=r}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-compute-at{kernel=transposed stage=i at=r}' 2>&1 | filecheck %s --check-prefix=BAD

// The producer stage (t = exp(x)) is computed inside the consumer's row loop: each row of t right before the row of
// y that reads it. The producer's row index becomes the consumer's; its inner loop stays.
func.func @two_stages(%x: memref<4x8xf32>, %t: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 8 step 1 serial {
      %a = memref.load %x[%i, %j] : memref<4x8xf32>
      %e = math.exp %a : f32
      memref.store %e, %t[%i, %j] : memref<4x8xf32>
    }
  }
  loop.for "r" %r = 0 to 4 step 1 serial {
    loop.for "s" %s = 0 to 8 step 1 serial {
      %b = memref.load %t[%r, %s] : memref<4x8xf32>
      %c = arith.addf %b, %b : f32
      memref.store %c, %y[%r, %s] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @two_stages(
// CHECK-NEXT:    loop.for "r" %r = 0 to 4 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to 8 step 1 serial {
// CHECK-NEXT:        %a = memref.load %x[%r, %j] : memref<4x8xf32>
// CHECK-NEXT:        %e = math.exp %a : f32
// CHECK-NEXT:        memref.store %e, %t[%r, %j] : memref<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for "s" %s = 0 to 8 step 1 serial {
// CHECK-NEXT:        %b = memref.load %t[%r, %s] : memref<4x8xf32>
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Row r of y reads column r of t, which the producer finishes only in its last row: refused.
func.func @transposed(%x: memref<4x4xf32>, %t: memref<4x4xf32>, %y: memref<4x4xf32>) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %a, %t[%i, %j] : memref<4x4xf32>
    }
  }
  loop.for "r" %r = 0 to 4 step 1 serial {
    loop.for "s" %s = 0 to 4 step 1 serial {
      %b = memref.load %t[%s, %r] : memref<4x4xf32>
      memref.store %b, %y[%r, %s] : memref<4x4xf32>
    }
  }
  func.return
}

// BAD: loop-compute-at: cannot compute 'i' at 'r' of 'transposed': 't' is not indexed by 'i' and 'r' in the same dimension on both sides
