// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// A GEMM whose one depth block holds the whole reduction (10 x 32 @ a 32 x 16 weight) writes each output once: no
// nest zeroes the output first, and each register tile starts at zero and is stored, not added to the output. No tile
// of 4+ rows divides the 10 rows, so 6-row tiles leave a tail of 4 rows in a nest of its own after theirs; the
// zeroing goes only once both nests' tiles are converted (their copies back write rows 0-5 and 6-9).

builtin.module {
  func.func @main(%a: memref<10x32xf32>, %out0: memref<10x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<32x16xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<10x32xf32>, memref<32x16xf32>, memref<10x16xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<10x32xf32> {llvm.noalias}, %in1: memref<32x16xf32> {llvm.noalias}, %out: memref<10x16xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 10 step 1 serial {
      loop.for "i1" %i1 = 0 to 16 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 32 step 1 serial {
          %1 = memref.load %in0[%i0, %k2] : memref<10x32xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<32x16xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1] : memref<10x16xf32>
      }
    }
    func.return
  }
}

// CHECK-LABEL: func.func private @matmul_0(
// CHECK-NOT:     _init"
// CHECK:         loop.for "k2_o" %k2_o = 0 to 32 step 32 serial {
// CHECK-NEXT:      loop.for "i0_o" %i0_o = 0 to 6 step 6 serial {
// CHECK-NOT:       memref.load %out
// CHECK:           loop.for "i1_o_st1" %i1_o_st1 = 0 to 16 step 1 vectorize {
// CHECK-NEXT:        %[[R:.*]] = arith.addi %i0_o, %i1_o_st0 : index
// CHECK-NEXT:        %[[C:.*]] = arith.addi %i1_o, %i1_o_st1 : index
// CHECK-NEXT:        %[[T:.*]] = memref.load %{{tile.*}}[%i1_o_st0, %i1_o_st1] : memref<6x16xf32>
// CHECK-NEXT:        memref.store %[[T]], %out[%[[R]], %[[C]]] : memref<10x16xf32>
// CHECK-NOT:     memref.load %out
// CHECK:         loop.for "i0_t_o" %i0_t_o = 6 to 10 step 4 serial {
// CHECK-NOT:     memref.load %out
// CHECK:           memref.store %{{.*}}, %out[
// CHECK-NOT:     memref.load %out
// CHECK:         func.return
