// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// ViT's projection: 197 tokens (prime) x 192 @ a 192 x 192 weight, under a batch loop of one iteration. No tile of
// 4+ rows divides 197, so the default takes the widest that fits AVX2's 16 registers (6 rows of 2 vectors) and the
// tail of 5 rows becomes one more register tile per column panel (vectorized, accumulated in registers, written
// once). Parallel placement looks through the one-iteration batch loop: the full tiles' 32 row blocks and the tail's
// 12 column panels each run on the pool.

builtin.module {
  func.func @main(%a: memref<1x197x192xf32>, %out0: memref<1x197x192xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<192x192xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<1x197x192xf32>, memref<192x192xf32>, memref<1x197x192xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<1x197x192xf32> {llvm.noalias}, %in1: memref<192x192xf32> {llvm.noalias}, %out: memref<1x197x192xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
    loop.for "i1" %i1 = 0 to 197 step 1 serial {
      loop.for "i2" %i2 = 0 to 192 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k3" %k3 = 0 to 192 step 1 serial {
          %1 = memref.load %in0[%i0, %i1, %k3] : memref<1x197x192xf32>
          %2 = memref.load %in1[%k3, %i2] : memref<192x192xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1, %i2] : memref<1x197x192xf32>
      }
    }
    }
    func.return
  }
}

// CHECK:       %[[TAIL:.*]] = loop.alloc "local" : memref<1x5x16xf32>
// CHECK-NEXT:  %[[TILE:.*]] = loop.alloc "local" : memref<1x6x16xf32>
// CHECK-NOT:   _init"
// CHECK:       loop.for "i0" %i0 = 0 to 1 step 1 serial {
// CHECK-NEXT:    loop.for "k3_o" %k3_o = 0 to 192 step 192 serial {
// CHECK-NEXT:      loop.for "i1_o" %i1_o = 0 to 192 step 6 parallel {
// CHECK-NEXT:        loop.for "i2_o" %i2_o = 0 to 192 step 16 serial {
// CHECK:               loop.for "k3_i" %k3_i = 0 to 192 step 1 serial {
// CHECK-NEXT:            loop.for "i1_i" %i1_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:              loop.for "i2_i" %i2_i = 0 to 16 step 1 vectorize {
// CHECK:           loop.for "i2_o_in_i1_t" %i2_o_in_i1_t = 0 to 192 step 16 parallel {
// CHECK-NEXT:        loop.for "k3_o_in_i1_t" %k3_o_in_i1_t = 0 to 192 step 192 serial {
// CHECK-NEXT:          loop.for "i1_t_o" %i1_t_o = 192 to 197 step 5 serial {
// CHECK:                 loop.for "k3_i_in_i1_t" %k3_i_in_i1_t = 0 to 192 step 1 serial {
// CHECK-NEXT:              loop.for "i1_t_i" %i1_t_i = 0 to 5 step 1 unroll {
// CHECK-NEXT:                loop.for "i2_i_in_i1_t" %i2_i_in_i1_t = 0 to 16 step 1 vectorize {
// CHECK:                       memref.store %{{.*}}, %[[TAIL]][%{{.*}}, %i1_t_i, %i2_i_in_i1_t] : memref<1x5x16xf32>
