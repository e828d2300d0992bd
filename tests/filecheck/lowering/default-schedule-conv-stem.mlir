// RUN: mini-opt %s --mcpu=skylake-avx512 -p 'default-schedule' | filecheck %s

// A stem convolution (3x3/2, 3 -> 64 channels, channels-last) over a row whose width has no divisor from 4 to 14
// (51 = 3 x 17, as SqueezeNet's 111 = 3 x 37, or ZFNet's prime 109): a tile of 3 columns of two vectors of channels
// would hold 6 accumulators, fewer than the 8 multiply-adds in flight that keep both FMA units busy
// (`CONV_MIN_ACCUMULATORS`), so the tile takes the cheapest column count with a tail, as on 16-register targets:
// three tiles of 14 columns (`i2_o`, 28 accumulators) and one of the 9 left (`i2_t_o`), each over a 32-channel panel
// of the weight packed at load time, its columns unrolled around the vectorized channels, kept in registers and
// written back once.

builtin.module {
  func.func @main(%x: memref<1x3x103x3xf32>, %out0: memref<1x1x51x64xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<64x3x3x3xf32>
    func.call @conv_1(%x, %w, %out0) : (memref<1x3x103x3xf32>, memref<64x3x3x3xf32>, memref<1x1x51x64xf32>) -> ()
    func.return
  }
  func.func private @conv_1(%in0: memref<1x3x103x3xf32> {llvm.noalias}, %in1: memref<64x3x3x3xf32> {llvm.noalias}, %out: memref<1x1x51x64xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 1 step 1 serial {
        loop.for "i2" %i2 = 0 to 51 step 1 serial {
          loop.for "i3" %i3 = 0 to 64 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 3 step 1 serial {
              loop.for "k5" %k5 = 0 to 3 step 1 serial {
                loop.for "k6" %k6 = 0 to 3 step 1 serial {
                  %1 = arith.constant 2 : index
                  %2 = arith.muli %i1, %1 : index
                  %3 = arith.addi %2, %k5 : index
                  %4 = arith.constant 2 : index
                  %5 = arith.muli %i2, %4 : index
                  %6 = arith.addi %5, %k6 : index
                  %7 = memref.load %in0[%i0, %3, %6, %k4] : memref<1x3x103x3xf32>
                  %8 = memref.load %in1[%i3, %k4, %k5, %k6] : memref<64x3x3x3xf32>
                  %9 = arith.mulf %7, %8 fastmath<contract> : f32
                  %10 = memref.load %acc[] : memref<f32>
                  %11 = arith.addf %10, %9 fastmath<reassoc,contract> : f32
                  memref.store %11, %acc[] : memref<f32>
                }
              }
            }
            %12 = memref.load %acc[] : memref<f32>
            memref.store %12, %out[%i0, %i1, %i2, %i3] : memref<1x1x51x64xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      builtin.module attributes {minimlc.target = "skylake-avx512"} {
// CHECK:        %[[W_PACKED:.*]] = loop.precompute @conv_1_pack1(%w) : (memref<64x3x3x3xf32>) -> memref<2x3x3x3x32xf32>
// CHECK-NEXT:   func.call @conv_1(%x, %[[W_PACKED]], %out0) : (memref<1x3x103x3xf32>, memref<2x3x3x3x32xf32>, memref<1x1x51x64xf32>) -> ()
// CHECK:      func.func private @conv_1(%in0: memref<1x3x103x3xf32> {llvm.noalias}, %in1: memref<2x3x3x3x32xf32> {llvm.noalias}, %out: memref<1x1x51x64xf32> {llvm.noalias}) {
// CHECK-NEXT:   %[[TAIL:.*]] = loop.alloc "local" : memref<1x1x9x32xf32>
// CHECK-NEXT:   %[[TILE:.*]] = loop.alloc "local" : memref<1x1x14x32xf32>
// CHECK:        loop.for "i0" %{{.*}} = 0 to 1 step 1 serial {
// CHECK-NEXT:     loop.for "i3_o" %{{.*}} = 0 to 64 step 32 serial {
// CHECK-NEXT:       loop.for "i1" %{{.*}} = 0 to 1 step 1 serial {
// CHECK-NEXT:         loop.for "i2_o" %{{.*}} = 0 to 42 step 14 serial {
// CHECK:                loop.for "k5" %{{.*}} = 0 to 3 step 1 serial {
// CHECK-NEXT:             loop.for "k6" %{{.*}} = 0 to 3 step 1 serial {
// CHECK-NEXT:               loop.for "k4" %{{.*}} = 0 to 3 step 1 serial {
// CHECK-NEXT:                 loop.for "i2_i" %{{.*}} = 0 to 14 step 1 unroll {
// CHECK-NEXT:                   loop.for "i3_i" %{{.*}} = 0 to 32 step 1 vectorize {
// CHECK:                  loop.for "i2_o_st2" %{{.*}} = 0 to 14 step 1 unroll {
// CHECK-NEXT:               loop.for "i2_o_st3" %{{.*}} = 0 to 32 step 1 vectorize {
// CHECK:              loop.for "i2_t_o" %{{.*}} = 42 to 51 step 9 serial {
// CHECK:                  loop.for "i2_t_i" %{{.*}} = 0 to 9 step 1 unroll {
// CHECK-NEXT:               loop.for "i3_i_in_i2_t" %{{.*}} = 0 to 32 step 1 vectorize {
