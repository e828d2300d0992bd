// RUN: mini-opt %s --split-input-file --mcpu znver4 -p default-schedule | filecheck %s

// A convolution prefetches the next weight panel in its reduction (`loop-prefetch`) by default only where the
// model's weights exceed the target's L2 (znver4: 1 MiB), so that each run reads them from L3 or memory: the 9 KiB
// of 32 3x3 filters over 8 channels stay in the caches between runs and get no prefetch; the 4.5 MiB of 512 filters
// over 256 channels do: at each step of the reduction's innermost loop, the lines of the next 32-channel panel at
// that step (the last panel's own at the last), one per 16-lane vector.

builtin.module {
  func.func @main(%x: memref<1x8x9x9xf32>, %out0: memref<1x32x7x7xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<32x8x3x3xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x8x9x9xf32>, memref<32x8x3x3xf32>, memref<1x32x7x7xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x8x9x9xf32> {llvm.noalias}, %in1: memref<32x8x3x3xf32> {llvm.noalias}, %out: memref<1x32x7x7xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        loop.for "i2" %i2 = 0 to 7 step 1 serial {
          loop.for "i3" %i3 = 0 to 7 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 8 step 1 serial {
              loop.for "k5" %k5 = 0 to 3 step 1 serial {
                loop.for "k6" %k6 = 0 to 3 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x8x9x9xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<32x8x3x3xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x32x7x7xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK-LABEL: func.func private @conv_0(%in0: memref<1x8x9x9xf32>
// CHECK-NOT:     loop.prefetch
// CHECK:         func.func private @conv_0_pack1(

// -----

builtin.module {
  func.func @main(%x: memref<1x256x9x9xf32>, %out0: memref<1x512x7x7xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<512x256x3x3xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x256x9x9xf32>, memref<512x256x3x3xf32>, memref<1x512x7x7xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x256x9x9xf32> {llvm.noalias}, %in1: memref<512x256x3x3xf32> {llvm.noalias}, %out: memref<1x512x7x7xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 512 step 1 serial {
        loop.for "i2" %i2 = 0 to 7 step 1 serial {
          loop.for "i3" %i3 = 0 to 7 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 256 step 1 serial {
              loop.for "k5" %k5 = 0 to 3 step 1 serial {
                loop.for "k6" %k6 = 0 to 3 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x256x9x9xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<512x256x3x3xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x512x7x7xf32>
          }
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func private @conv_0(%in0: memref<1x256x9x9xf32>
// CHECK:         loop.for "k6" %k6 = 0 to 3 step 1 serial {
// CHECK:           loop.prefetch %in1[%{{[0-9]+}}, %k4, %k5, %k6, %{{[0-9]+}}] : memref<16x256x3x3x32xf32>
// CHECK:           loop.prefetch %in1[%{{[0-9]+}}, %k4, %k5, %k6, %{{[0-9]+}}] : memref<16x256x3x3x32xf32>
// CHECK-NEXT:      loop.for "i3_i" %i3_i = 0 to 7 step 1 unroll {
