// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// On a 16-register target (AVX2) a convolution's register tile of two vectors takes the column count whose tiles
// cost the fewest cycles, whether or not it divides the width: 14 columns become two tiles of 5 (`i3_o`, 0 to 10
// step 5: 10 accumulators) and a tail of 4 (`i3_t`, split whole into `i3_t_o`/`i3_t_i`: 8 accumulators), where
// divisors allowed only 2 or 7 (4 or 14 accumulators). The tail keeps the main nest's order (reduction loops, then
// the unrolled columns around the 16 vectorized channels), reads the same packed weight and has its own 4x16
// register tile, zeroed before and written back after its reduction.

builtin.module {
  func.func @main(%x: memref<1x8x3x16xf32>, %out0: memref<1x16x1x14xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<16x8x3x3xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x8x3x16xf32>, memref<16x8x3x3xf32>, memref<1x16x1x14xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x8x3x16xf32> {llvm.noalias}, %in1: memref<16x8x3x3xf32> {llvm.noalias}, %out: memref<1x16x1x14xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 16 step 1 serial {
        loop.for "i2" %i2 = 0 to 1 step 1 serial {
          loop.for "i3" %i3 = 0 to 14 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 8 step 1 serial {
              loop.for "k5" %k5 = 0 to 3 step 1 serial {
                loop.for "k6" %k6 = 0 to 3 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x8x3x16xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<16x8x3x3xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x16x1x14xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK-LABEL: func.func private @conv_0(
// CHECK-SAME:      %in1: memref<1x8x3x3x16xf32>
// CHECK-DAG:     %[[TAIL_TILE:tile[_0-9]*]] = loop.alloc "local" : memref<1x1x4x16xf32>
// CHECK-DAG:     %[[TILE:tile[_0-9]*]] = loop.alloc "local" : memref<1x1x5x16xf32>
// CHECK:         loop.for "i2" %i2 = 0 to 1 step 1 serial {
// CHECK-NEXT:      loop.for "i3_o" %i3_o = 0 to 10 step 5 serial {
// CHECK:             loop.for "k4" %k4 = 0 to 8 step 1 serial {
// CHECK-NEXT:          loop.for "k5" %k5 = 0 to 3 step 1 serial {
// CHECK-NEXT:            loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK-NEXT:              loop.for "i3_i" %i3_i = 0 to 5 step 1 unroll {
// CHECK-NEXT:                loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK:                       memref.load %in1[%{{.*}}, %k4, %k5, %k6, %i1_i] : memref<1x8x3x3x16xf32>
// CHECK:                       memref.store %{{.*}}, %[[TILE]]{{\[}}%{{.*}}, %{{.*}}, %i3_i, %i1_i] : memref<1x1x5x16xf32>
// CHECK:             loop.for "i3_o_stt3" %i3_o_stt3 = 0 to 5 step 1 unroll {
// CHECK:           loop.for "i3_t_o" %i3_t_o = 10 to 14 step 4 serial {
// CHECK:             loop.for "i3_t_o_ld3" %i3_t_o_ld3 = 0 to 4 step 1 unroll {
// CHECK:             loop.for "k4_in_i3_t" %k4_in_i3_t = 0 to 8 step 1 serial {
// CHECK-NEXT:          loop.for "k5_in_i3_t" %k5_in_i3_t = 0 to 3 step 1 serial {
// CHECK-NEXT:            loop.for "k6_in_i3_t" %k6_in_i3_t = 0 to 3 step 1 serial {
// CHECK-NEXT:              loop.for "i3_t_i" %i3_t_i = 0 to 4 step 1 unroll {
// CHECK-NEXT:                loop.for "i1_i_in_i3_t" %i1_i_in_i3_t = 0 to 16 step 1 vectorize {
// CHECK:                       memref.load %in1[%{{.*}}, %k4_in_i3_t, %k5_in_i3_t, %k6_in_i3_t, %i1_i_in_i3_t] : memref<1x8x3x3x16xf32>
// CHECK:                       memref.store %{{.*}}, %[[TAIL_TILE]]{{\[}}%{{.*}}, %{{.*}}, %i3_t_i, %i1_i_in_i3_t] : memref<1x1x4x16xf32>
// CHECK:             loop.for "i3_t_o_stt3" %i3_t_o_stt3 = 0 to 4 step 1 unroll {
