// RUN: mini-opt %s -p 'loop-pack{kernel=dot_0 operand=1 dim=2 factor=16 order=1,0}' | filecheck %s

// The loops walk the weight (C=2 x K=3 x F=16) in (k, c) order: with order=1,0 the panel keeps K before C, so the
// packed buffer is 1x3x2x16, read at [j_o / 16, k, c, j_i], and the load-time copy fills it from w[c, k, f].

builtin.module {
  func.func @main(%a: memref<3x2xf32>, %out0: memref<16xf32>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<2x3x16xf32>
    func.call @dot_0(%a, %w, %out0) : (memref<3x2xf32>, memref<2x3x16xf32>, memref<16xf32>) -> ()
    func.return
  }
  func.func private @dot_0(%in0: memref<3x2xf32> {llvm.noalias}, %in1: memref<2x3x16xf32> {llvm.noalias}, %out: memref<16xf32> {llvm.noalias}) {
    loop.for "j_o" %j_o = 0 to 16 step 16 serial {
      loop.for "k" %k = 0 to 3 step 1 serial {
        loop.for "c" %c = 0 to 2 step 1 serial {
          loop.for "j_i" %j_i = 0 to 16 step 1 serial {
            %j = arith.addi %j_o, %j_i : index
            %x = memref.load %in0[%k, %c] : memref<3x2xf32>
            %v = memref.load %in1[%c, %k, %j] : memref<2x3x16xf32>
            %p = arith.mulf %x, %v : f32
            %o = memref.load %out[%j] : memref<16xf32>
            %s = arith.addf %o, %p : f32
            memref.store %s, %out[%j] : memref<16xf32>
          }
        }
      }
    }
    func.return
  }
}

// CHECK:         %w_packed = loop.precompute @dot_0_pack1(%w) : (memref<2x3x16xf32>) -> memref<1x3x2x16xf32>
// CHECK-NEXT:    func.call @dot_0(%a, %w_packed, %out0) : (memref<3x2xf32>, memref<1x3x2x16xf32>, memref<16xf32>) -> ()
// CHECK:         func.func private @dot_0(%in0: memref<3x2xf32> {llvm.noalias}, %in1: memref<1x3x2x16xf32> {llvm.noalias}, %out: memref<16xf32> {llvm.noalias}) {
// CHECK:             %1 = arith.divui %j_o, %0 : index
// CHECK-NEXT:        %v = memref.load %in1[%1, %k, %c, %j_i] : memref<1x3x2x16xf32>
// CHECK:         func.func private @dot_0_pack1(%in0: memref<2x3x16xf32>, %out: memref<1x3x2x16xf32>) {
// CHECK:               %2 = arith.addi %1, %p3 : index
// CHECK-NEXT:          %3 = memref.load %in0[%p2, %p1, %2] : memref<2x3x16xf32>
// CHECK-NEXT:          memref.store %3, %out[%p0, %p1, %p2, %p3] : memref<1x3x2x16xf32>
