// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// A convolution's register tile covers the most output columns (at most 14) that divide the width and fit the
// registers, not only 14, 8, 7, 6, 4, 2 or 1: a 1x1 convolution over a 13-wide row (SqueezeNet's and Inception
// v1's 13x13 maps) gets a 13x8 tile, one weight vector load per 13 multiply-adds instead of one per multiply-add.

builtin.module {
  func.func @main(%x: memref<1x4x1x13xf32>, %out0: memref<1x8x1x13xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<8x4x1x1xf32>
    func.call @conv_0(%x, %w, %out0) : (memref<1x4x1x13xf32>, memref<8x4x1x1xf32>, memref<1x8x1x13xf32>) -> ()
    func.return
  }
  func.func private @conv_0(%in0: memref<1x4x1x13xf32> {llvm.noalias}, %in1: memref<8x4x1x1xf32> {llvm.noalias}, %out: memref<1x8x1x13xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 8 step 1 serial {
        loop.for "i2" %i2 = 0 to 1 step 1 serial {
          loop.for "i3" %i3 = 0 to 13 step 1 serial {
            %0 = arith.constant 0.000000e+00 : f32
            memref.store %0, %acc[] : memref<f32>
            loop.for "k4" %k4 = 0 to 4 step 1 serial {
              loop.for "k5" %k5 = 0 to 1 step 1 serial {
                loop.for "k6" %k6 = 0 to 1 step 1 serial {
                  %1 = arith.addi %i2, %k5 : index
                  %2 = arith.addi %i3, %k6 : index
                  %3 = memref.load %in0[%i0, %k4, %1, %2] : memref<1x4x1x13xf32>
                  %4 = memref.load %in1[%i1, %k4, %k5, %k6] : memref<8x4x1x1xf32>
                  %5 = arith.mulf %3, %4 fastmath<contract> : f32
                  %6 = memref.load %acc[] : memref<f32>
                  %7 = arith.addf %6, %5 fastmath<reassoc,contract> : f32
                  memref.store %7, %acc[] : memref<f32>
                }
              }
            }
            %8 = memref.load %acc[] : memref<f32>
            memref.store %8, %out[%i0, %i1, %i2, %i3] : memref<1x8x1x13xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      func.func private @conv_0(%in0: memref<1x4x1x13xf32> {llvm.noalias}, %in1: memref<1x4x1x1x8xf32> {llvm.noalias}, %out: memref<1x8x1x13xf32> {llvm.noalias}) {
// CHECK-NEXT:   %stage = loop.alloc "local" : memref<1x1x13x8xf32>
// CHECK-NEXT:   %tile = loop.alloc "local" : memref<1x1x13x8xf32>
// CHECK:        loop.for "i3_o" %i3_o = 0 to 13 step 13 serial {
// CHECK:        loop.for "k4" %k4 = 0 to 4 step 1 serial {
// CHECK:        loop.for "i3_i" %i3_i = 0 to 13 step 1 unroll {
// CHECK-NEXT:     loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
