// RUN: not mini-opt %s -p 'loop-distribute{kernel=shift loop=i}' 2>&1 | filecheck %s --check-prefix=SHIFT
// RUN: not mini-opt %s -p 'loop-distribute{kernel=one loop=i}' 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not mini-opt %s -p 'loop-distribute{kernel=effect loop=i}' 2>&1 | filecheck %s --check-prefix=EFFECT

// The second nest reads t[i + 1], which the first writes in the next iteration: distributing would read it written.
func.func private @shift(%x: memref<9xf32>, %t: memref<9xf32>, %y: memref<8xf32>) {
  loop.for "i" %i = 0 to 8 step 1 serial {
    loop.for "a" %a = 0 to 1 step 1 serial {
      %0 = memref.load %x[%i] : memref<9xf32>
      memref.store %0, %t[%i] : memref<9xf32>
    }
    loop.for "b" %b = 0 to 1 step 1 serial {
      %c1 = arith.constant 1 : index
      %next = arith.addi %i, %c1 : index
      %1 = memref.load %t[%next] : memref<9xf32>
      memref.store %1, %y[%i] : memref<8xf32>
    }
  }
  func.return
}

func.func private @one(%x: memref<8xf32>, %y: memref<8xf32>) {
  loop.for "i" %i = 0 to 8 step 1 serial {
    loop.for "a" %a = 0 to 1 step 1 serial {
      %0 = memref.load %x[%i] : memref<8xf32>
      memref.store %0, %y[%i] : memref<8xf32>
    }
  }
  func.return
}

func.func private @effect(%x: memref<8xf32>, %y: memref<8xf32>) {
  loop.for "i" %i = 0 to 8 step 1 serial {
    %0 = memref.load %x[%i] : memref<8xf32>
    loop.for "a" %a = 0 to 1 step 1 serial {
      memref.store %0, %y[%i] : memref<8xf32>
    }
    loop.for "b" %b = 0 to 1 step 1 serial {
      memref.store %0, %x[%i] : memref<8xf32>
    }
  }
  func.return
}

// SHIFT: loop-distribute: cannot distribute 'i' of 'shift': 't' is written by one nest and accessed by another, not both at one affine function of the loop's index
// ONE: loop-distribute: cannot distribute 'i' of 'one': its body holds fewer than two loop nests
// EFFECT: loop-distribute: cannot distribute 'i' of 'effect': its body holds 'memref.load', which is neither a loop nor a pure computation
