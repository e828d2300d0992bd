// RUN: mini-opt %s -p 'loop-cache-write{kernel=pool_0 loop=c_o fill=true}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=pool_0 loop=c_o fill=true accumulate=true}' 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=pool_1 loop=c_o fill=true}' 2>&1 | filecheck %s --check-prefix=NOFILL
// RUN: mini-opt %s -p 'loop-cache-write{kernel=pool_2 loop=c_o fill=true}' | filecheck %s --check-prefix=MAIN
// RUN: mini-opt %s -p 'loop-cache-write{kernel=pool_2 loop=c_o fill=true},loop-cache-write{kernel=pool_2 loop=c_t fill=true}' | filecheck %s --check-prefix=TAIL
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=pool_3 loop=c_o fill=true}' 2>&1 | filecheck %s --check-prefix=TWICE

// A max pool decomposed by loop-decompose-reduction: a nest fills the output with -inf, then each block of 8
// channels takes the max over the window. With fill=true the tile starts at -inf itself, the fill nest goes, and
// the tile is copied back once per block (every output element written once). pool_1 fills only half its output
// first: refused. pool_2 has 12 channels, a block of 8 and a tail of 4 (as `loop-split` leaves them): the block's
// tile starts at -inf and is stored, but the fill stays while the tail still reads the output; once the tail's tile
// is converted too, the two copies back write every element once and the fill goes. pool_3 takes the window's rows
// outside the tile loop, so a copy back would overwrite the previous rows' maximum: refused.

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
  func.func private @pool_2(%in0: memref<3x3x12xf32>, %out: memref<12xf32>) {
    loop.for "c_init" %c_init = 0 to 12 step 1 serial {
      %0 = arith.constant 0xff800000 : f32
      memref.store %0, %out[%c_init] : memref<12xf32>
    }
    loop.for "n" %n = 0 to 1 step 1 serial {
      loop.for "c_o" %c_o = 0 to 8 step 8 serial {
        loop.for "k0" %k0 = 0 to 3 step 1 serial {
          loop.for "c_i" %c_i = 0 to 8 step 1 vectorize {
            %c = arith.addi %c_o, %c_i : index
            %1 = memref.load %in0[%k0, %k0, %c] : memref<3x3x12xf32>
            %2 = memref.load %out[%c] : memref<12xf32>
            %3 = arith.maximumf %2, %1 : f32
            memref.store %3, %out[%c] : memref<12xf32>
          }
        }
      }
      loop.for "c_t" %c_t = 8 to 12 step 4 serial {
        loop.for "k0_t" %k0_t = 0 to 3 step 1 serial {
          loop.for "c_i_t" %c_i_t = 0 to 4 step 1 vectorize {
            %c = arith.addi %c_t, %c_i_t : index
            %1 = memref.load %in0[%k0_t, %k0_t, %c] : memref<3x3x12xf32>
            %2 = memref.load %out[%c] : memref<12xf32>
            %3 = arith.maximumf %2, %1 : f32
            memref.store %3, %out[%c] : memref<12xf32>
          }
        }
      }
    }
    func.return
  }
  func.func private @pool_3(%in0: memref<3x3x16xf32>, %out: memref<16xf32>) {
    loop.for "c_init" %c_init = 0 to 16 step 1 serial {
      %0 = arith.constant 0xff800000 : f32
      memref.store %0, %out[%c_init] : memref<16xf32>
    }
    loop.for "k0" %k0 = 0 to 3 step 1 serial {
      loop.for "c_o" %c_o = 0 to 16 step 8 serial {
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
// NOFILL: loop-cache-write: loop 'c_o' of kernel 'pool_1': fill=true needs a nest before it to fill the whole output with a constant

// MAIN-LABEL: func.func private @pool_2(
// MAIN:         loop.for "c_init"
// MAIN:         loop.for "c_o_st0" %c_o_st0 = 0 to 8 step 1 vectorize {
// MAIN-NEXT:      %[[C:.*]] = arith.addi %c_o, %c_o_st0 : index
// MAIN-NEXT:      %[[BEST:.*]] = memref.load %tile[%c_o_st0] : memref<8xf32>
// MAIN-NEXT:      memref.store %[[BEST]], %out[%[[C]]] : memref<12xf32>
// MAIN:         loop.for "c_t"
// MAIN:           memref.load %out

// TAIL-LABEL: func.func private @pool_2(
// TAIL-NOT:     loop.for "c_init"
// TAIL-NOT:     memref.load %out
// TAIL:         loop.for "c_o_st0" %c_o_st0 = 0 to 8 step 1 vectorize {
// TAIL-NOT:     memref.load %out
// TAIL:         loop.for "c_t_st0" %c_t_st0 = 0 to 4 step 1 vectorize {
// TAIL-NOT:     memref.load %out
// TAIL:         func.return

// TWICE: loop-cache-write: loop 'c_o' of kernel 'pool_3': fill=true needs the whole reduction inside the loop: the copy back would write twice
