// RUN: mini-opt %s -p 'loop-cache-write{kernel=pool_0 loop=c_o fill=true}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=pool_0 loop=c_o fill=true accumulate=true}' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=pool_1 loop=c_o fill=true}' 2>&1 | filecheck %s --check-prefix=NOFILL

// A max pool decomposed by loop-decompose-reduction: a nest fills the output with -inf, then each block of 8
// channels takes the max over the window. With fill=true the tile starts at -inf itself, the fill nest goes, and
// the tile is copied back once per block (every output element written once). pool_1 fills only half its output
// first: refused.

builtin.module {
  func.func private @pool_0(%in0: memref<3x3x16xf32>, %out: memref<16xf32>) {
    loop.for "c_init" %c_init = 0 to 16 step 1 serial {
      %0 = arith.constant 0xff800000 : f32
      memref.store %0, %out[%c_init] : memref<16xf32>
    }
    loop.for "c_o" %c_o = 0 to 16 step 8 serial {
      loop.for "k0" %k0 = 0 to 3 step 1 serial {
        loop.for "k1" %k1 = 0 to 3 step 1 serial {
          loop.for "c_i" %c_i = 0 to 8 step 1 vectorize {
            %c = arith.addi %c_o, %c_i : index
            %1 = memref.load %in0[%k0, %k1, %c] : memref<3x3x16xf32>
            %2 = memref.load %out[%c] : memref<16xf32>
            %3 = arith.maximumf %2, %1 : f32
            memref.store %3, %out[%c] : memref<16xf32>
          }
        }
      }
    }
    func.return
  }
  func.func private @pool_1(%in0: memref<3x3x16xf32>, %out: memref<16xf32>) {
    loop.for "c_init" %c_init = 0 to 8 step 1 serial {
      %0 = arith.constant 0xff800000 : f32
      memref.store %0, %out[%c_init] : memref<16xf32>
    }
    loop.for "c_o" %c_o = 0 to 16 step 8 serial {
      loop.for "k0" %k0 = 0 to 3 step 1 serial {
        loop.for "c_i" %c_i = 0 to 8 step 1 vectorize {
          %c = arith.addi %c_o, %c_i : index
          %1 = memref.load %in0[%k0, %k0, %c] : memref<3x3x16xf32>
          %2 = memref.load %out[%c] : memref<16xf32>
          %3 = arith.maximumf %2, %1 : f32
          memref.store %3, %out[%c] : memref<16xf32>
        }
      }
    }
    func.return
  }
}

// CHECK:      func.func private @pool_0(%in0: memref<3x3x16xf32>, %out: memref<16xf32>) {
// CHECK-NEXT:   %tile = loop.alloc "local" : memref<8xf32>
// CHECK-NEXT:   loop.for "c_o" %c_o = 0 to 16 step 8 serial {
// CHECK-NEXT:     loop.for "c_o_ld0" %c_o_ld0 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:       %{{.*}} = arith.addi %c_o, %c_o_ld0 : index
// CHECK-NEXT:       %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:       memref.store %[[NEG_INF]], %tile[%c_o_ld0] : memref<8xf32>
// CHECK-NEXT:     }
// CHECK:          loop.for "c_o_st0" %c_o_st0 = 0 to 8 step 1 vectorize {
// CHECK-NEXT:       %[[C:.*]] = arith.addi %c_o, %c_o_st0 : index
// CHECK-NEXT:       %[[BEST:.*]] = memref.load %tile[%c_o_st0] : memref<8xf32>
// CHECK-NEXT:       memref.store %[[BEST]], %out[%[[C]]] : memref<16xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// BOTH: loop-cache-write: loop 'c_o' of kernel 'pool_0': fill=true starts the tile at the output's fill; accumulate=true at zero: choose one
// NOFILL: loop-cache-write: loop 'c_o' of kernel 'pool_1': fill=true needs the nest before it to fill the whole output with a constant
