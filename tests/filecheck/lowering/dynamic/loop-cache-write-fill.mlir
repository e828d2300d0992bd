// RUN: mini-opt %s -p 'loop-cache-write{kernel=rows loop=i_o fill=true}' | filecheck %s --check-prefix=MAIN
// RUN: mini-opt %s -p 'loop-cache-write{kernel=rows loop=i_o fill=true},loop-cache-write{kernel=rows loop=i_t fill=true}' | filecheck %s --check-prefix=TAIL
// RUN: mini-opt %s -p 'loop-cache-write{kernel=prefix loop=i fill=true}' | filecheck %s --check-prefix=PREFIX
// RUN: not mini-opt %s -p 'loop-cache-write{kernel=outside loop=i fill=true}' 2>&1 | filecheck %s --check-prefix=TWICE

// A max over k of n rows of 8 channels (`%n` a run-time extent), decomposed by loop-decompose-reduction and its rows
// split by 2 as `loop-split` leaves a dynamic loop: the main part `i_o` to `%main = n - n % 2`, the remainder `i_t`
// to `n % 2` at rows `%main + r`. The main tile starts at -inf and is stored, the fill staying while the remainder
// still reads the output; once the remainder's tile is converted too, [0, main) and [main, n) cover [0, n) once and
// the fill goes. @prefix writes rows [0, m) of an output of n rows: not provably covered, so the fill stays (the
// tile still starts at -inf). @outside takes the reduction loop outside the tile loop: refused.

builtin.module {
  func.func private @rows(%in0: memref<?x3x8xf32>, %in1: memref<?x8xf32>, %n: index) {
    %x = loop.extents %in0[%n] : memref<?x3x8xf32>
    %out = loop.extents %in1[%n] : memref<?x8xf32>
    loop.for "i_init" %i_init = 0 to %n step 1 serial {
      loop.for "c_init" %c_init = 0 to 8 step 1 vectorize {
        %0 = arith.constant 0xff800000 : f32
        memref.store %0, %out[%i_init, %c_init] : memref<?x8xf32>
      }
    }
    %two = arith.constant 2 : index
    %i_rem = arith.remui %n, %two : index
    %i_main = arith.subi %n, %i_rem : index
    loop.for "i_o" %i_o = 0 to %i_main step 2 serial {
      loop.for "k" %k = 0 to 3 step 1 serial {
        loop.for "i_i" %i_i = 0 to 2 step 1 unroll {
          loop.for "c" %c = 0 to 8 step 1 vectorize {
            %i = arith.addi %i_o, %i_i : index
            %1 = memref.load %x[%i, %k, %c] : memref<?x3x8xf32>
            %2 = memref.load %out[%i, %c] : memref<?x8xf32>
            %3 = arith.maximumf %2, %1 : f32
            memref.store %3, %out[%i, %c] : memref<?x8xf32>
          }
        }
      }
    }
    loop.for "i_t" %i_t = 0 to %i_rem step 1 serial {
      %r = arith.addi %i_main, %i_t : index
      loop.for "k_in_i_t" %k_t = 0 to 3 step 1 serial {
        loop.for "c_in_i_t" %c_t = 0 to 8 step 1 vectorize {
          %4 = memref.load %x[%r, %k_t, %c_t] : memref<?x3x8xf32>
          %5 = memref.load %out[%r, %c_t] : memref<?x8xf32>
          %6 = arith.maximumf %5, %4 : f32
          memref.store %6, %out[%r, %c_t] : memref<?x8xf32>
        }
      }
    }
    func.return
  }
  func.func private @prefix(%in0: memref<?x3x8xf32>, %in1: memref<?x8xf32>, %n: index, %m: index) {
    %x = loop.extents %in0[%n] : memref<?x3x8xf32>
    %out = loop.extents %in1[%n] : memref<?x8xf32>
    loop.for "i_init" %i_init = 0 to %n step 1 serial {
      loop.for "c_init" %c_init = 0 to 8 step 1 vectorize {
        %0 = arith.constant 0xff800000 : f32
        memref.store %0, %out[%i_init, %c_init] : memref<?x8xf32>
      }
    }
    loop.for "i" %i = 0 to %m step 1 serial {
      loop.for "k" %k = 0 to 3 step 1 serial {
        loop.for "c" %c = 0 to 8 step 1 vectorize {
          %1 = memref.load %x[%i, %k, %c] : memref<?x3x8xf32>
          %2 = memref.load %out[%i, %c] : memref<?x8xf32>
          %3 = arith.maximumf %2, %1 : f32
          memref.store %3, %out[%i, %c] : memref<?x8xf32>
        }
      }
    }
    func.return
  }
  func.func private @outside(%in0: memref<?x3x8xf32>, %in1: memref<?x8xf32>, %n: index) {
    %x = loop.extents %in0[%n] : memref<?x3x8xf32>
    %out = loop.extents %in1[%n] : memref<?x8xf32>
    loop.for "i_init" %i_init = 0 to %n step 1 serial {
      loop.for "c_init" %c_init = 0 to 8 step 1 vectorize {
        %0 = arith.constant 0xff800000 : f32
        memref.store %0, %out[%i_init, %c_init] : memref<?x8xf32>
      }
    }
    loop.for "k" %k = 0 to 3 step 1 serial {
      loop.for "i" %i = 0 to %n step 1 serial {
        loop.for "c" %c = 0 to 8 step 1 vectorize {
          %1 = memref.load %x[%i, %k, %c] : memref<?x3x8xf32>
          %2 = memref.load %out[%i, %c] : memref<?x8xf32>
          %3 = arith.maximumf %2, %1 : f32
          memref.store %3, %out[%i, %c] : memref<?x8xf32>
        }
      }
    }
    func.return
  }
}

// MAIN-LABEL: func.func private @rows
// MAIN:         %tile = loop.alloc "local" : memref<2x8xf32>
// MAIN:         loop.for "i_init" %i_init = 0 to %n step 1 serial {
// MAIN:         loop.for "i_o" %i_o = 0 to %i_main step 2 serial {
// MAIN:           loop.for "i_o_ld0" %i_o_ld0 = 0 to 2 step 1 unroll {
// MAIN-NEXT:        loop.for "i_o_ld1" %i_o_ld1 = 0 to 8 step 1 vectorize {
// MAIN:               %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// MAIN-NEXT:          memref.store %[[NEGINF]], %tile[%i_o_ld0, %i_o_ld1] : memref<2x8xf32>
// MAIN:           loop.for "i_o_st0" %i_o_st0 = 0 to 2 step 1 unroll {
// MAIN-NOT:         memref.load %out
// MAIN:             memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : memref<?x8xf32>
// MAIN:         loop.for "i_t" %i_t = 0 to %i_rem step 1 serial {
// MAIN:           memref.load %out[%r, %c_t] : memref<?x8xf32>
// MAIN-LABEL: func.func private @prefix

// TAIL-LABEL: func.func private @rows
// TAIL-NOT:     "i_init"
// TAIL:         loop.for "i_o" %i_o = 0 to %i_main step 2 serial {
// TAIL:         loop.for "i_t" %i_t = 0 to %i_rem step 1 serial {
// TAIL-NEXT:      %[[ROW:.*]] = arith.addi %i_main, %i_t : index
// TAIL:           loop.for "i_t_ld0" %i_t_ld0 = 0 to 1 step 1 serial {
// TAIL-NEXT:        loop.for "i_t_ld1" %i_t_ld1 = 0 to 8 step 1 vectorize {
// TAIL:               %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// TAIL-NEXT:          memref.store %[[NEGINF]], %tile[%i_t_ld0, %i_t_ld1] : memref<1x8xf32>
// TAIL-NOT:       memref.load %out
// TAIL:           loop.for "i_t_st0" %i_t_st0 = 0 to 1 step 1 serial {
// TAIL-NEXT:        loop.for "i_t_st1" %i_t_st1 = 0 to 8 step 1 vectorize {
// TAIL-NEXT:          %[[R:.*]] = arith.addi %[[ROW]], %i_t_st0 : index
// TAIL:               memref.store %{{.*}}, %out[%[[R]], %{{.*}}] : memref<?x8xf32>
// TAIL-LABEL: func.func private @prefix

// PREFIX-LABEL: func.func private @prefix
// PREFIX:         loop.for "i_init" %i_init = 0 to %n step 1 serial {
// PREFIX:         loop.for "i" %i = 0 to %m step 1 serial {
// PREFIX:           loop.for "i_ld0" %i_ld0 = 0 to 1 step 1 serial {
// PREFIX:               %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// PREFIX-NEXT:          memref.store %[[NEGINF]], %tile[%i_ld0, %i_ld1] : memref<1x8xf32>
// PREFIX:           loop.for "i_st0" %i_st0 = 0 to 1 step 1 serial {
// PREFIX-NOT:         memref.load %out
// PREFIX:             memref.store %{{.*}}, %out[%{{.*}}, %{{.*}}] : memref<?x8xf32>

// TWICE: loop-cache-write: loop 'i' of kernel 'outside': fill=true needs the whole reduction inside the loop: the copy back may write an element twice
