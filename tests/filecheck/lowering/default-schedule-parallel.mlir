// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// default-schedule's parallel loops: after the vector schedule, the outermost loop of a big enough nest with at
// least 4 iterations, among those every store to a parameter moves with, becomes parallel.

builtin.module {
  func.func @main(%x: memref<1x64x32x32xf32>, %s: memref<4x8xf32>, %r: memref<64x1024xf32>, %y: memref<1x64x32x32xf32>, %t: memref<4x8xf32>, %u: memref<1024xf32>) attributes {minimlc.entry} {
    func.call @relu_0(%x, %y) : (memref<1x64x32x32xf32>, memref<1x64x32x32xf32>) -> ()
    func.call @relu_1(%s, %t) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
    func.call @colsum_2(%r, %u) : (memref<64x1024xf32>, memref<1024xf32>) -> ()
    func.return
  }
  func.func private @relu_0(%in0: memref<1x64x32x32xf32> {llvm.noalias}, %out: memref<1x64x32x32xf32> {llvm.noalias}) {
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 64 step 1 serial {
        loop.for "i2" %i2 = 0 to 32 step 1 serial {
          loop.for "i3" %i3 = 0 to 32 step 1 serial {
            %0 = memref.load %in0[%i0, %i1, %i2, %i3] : memref<1x64x32x32xf32>
            %1 = arith.constant 0.000000e+00 : f32
            %2 = arith.maximumf %0, %1 : f32
            memref.store %2, %out[%i0, %i1, %i2, %i3] : memref<1x64x32x32xf32>
          }
        }
      }
    }
    func.return
  }
  func.func private @relu_1(%in0: memref<4x8xf32> {llvm.noalias}, %out: memref<4x8xf32> {llvm.noalias}) {
    loop.for "i0" %i0 = 0 to 4 step 1 serial {
      loop.for "i1" %i1 = 0 to 8 step 1 serial {
        %0 = memref.load %in0[%i0, %i1] : memref<4x8xf32>
        %1 = arith.constant 0.000000e+00 : f32
        %2 = arith.maximumf %0, %1 : f32
        memref.store %2, %out[%i0, %i1] : memref<4x8xf32>
      }
    }
    func.return
  }
  func.func private @colsum_2(%in0: memref<64x1024xf32> {llvm.noalias}, %out: memref<1024xf32> {llvm.noalias}) {
    loop.for "k" %k = 0 to 64 step 1 serial {
      loop.for "i" %i = 0 to 1024 step 1 serial {
        %0 = memref.load %in0[%k, %i] : memref<64x1024xf32>
        %1 = memref.load %out[%i] : memref<1024xf32>
        %2 = arith.addf %1, %0 : f32
        memref.store %2, %out[%i] : memref<1024xf32>
      }
    }
    func.return
  }
}

// A 64K-element elementwise kernel: vectorized innermost, parallel over channels (i0 has one iteration).
// CHECK-LABEL: func.func private @relu_0(
// CHECK-NEXT:    loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 64 step 1 parallel {
// CHECK-NEXT:        loop.for "i2" %i2 = 0 to 32 step 1 serial {
// CHECK-NEXT:          loop.for "i3_o" %i3_o = 0 to 32 step 8 serial {
// CHECK-NEXT:            loop.for "i3_i" %i3_i = 0 to 8 step 1 vectorize {

// A 32-element kernel is not worth a dispatch.
// CHECK-LABEL: func.func private @relu_1(
// CHECK-NEXT:    loop.for "i0" %i0 = 0 to 4 step 1 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 8 step 1 vectorize {

// The outer loop accumulates into every output element (the store does not move with it): the next one is parallel.
// CHECK-LABEL: func.func private @colsum_2(
// CHECK-NEXT:    loop.for "k" %k = 0 to 64 step 1 serial {
// CHECK-NEXT:      loop.for "i_o" %i_o = 0 to 1024 step 8 parallel {
// CHECK-NEXT:        loop.for "i_i" %i_i = 0 to 8 step 1 vectorize {
