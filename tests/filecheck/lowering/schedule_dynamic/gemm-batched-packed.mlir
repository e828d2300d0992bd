// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// A projection of [batch, sequence, 32] by a 32 x 8192 weight (a BERT layer's linear map with both leading dimensions
// symbolic): the dynamic rule takes the batch loop as a loop around the GEMM, packs the weight into 16-column panels
// at load time, and puts the 512 column panels outside the row tiles (one row is 262,144 multiply-adds,
// GEMM_PANELS_MIN_WORK, so a panel is worth a task; each panel of B serves every row tile from L1); the remainder of
// rows follows the full tiles in each panel, on the panel of B they read, in tiles of 2 rows then one row, added to
// the output a nest zeroes first. The panels are the parallel tasks, 32 of 16 consecutive panels, inside the serial
// batch loop (at batch 1, a generator's, the batch loop would be one task).

builtin.module {
  func.func @main(%x: memref<?x?x32xf32>, %y: memref<?x?x8192xf32>, %e: memref<2xi64>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<32x8192xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %b64 = memref.load %e[%c0] : memref<2xi64>
    %s64 = memref.load %e[%c1] : memref<2xi64>
    %b = arith.index_cast %b64 : i64 to index
    %s = arith.index_cast %s64 : i64 to index
    func.call @matmul_0(%x, %w, %y, %b, %s) : (memref<?x?x32xf32>, memref<32x8192xf32>, memref<?x?x8192xf32>, index, index) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<?x?x32xf32> {llvm.noalias}, %in1: memref<32x8192xf32> {llvm.noalias},
                              %out: memref<?x?x8192xf32> {llvm.noalias}, %n: index, %m: index) {
    %a = loop.extents %in0[%n, %m] : memref<?x?x32xf32>
    %c = loop.extents %out[%n, %m] : memref<?x?x8192xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "b0" %b0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to %m step 1 serial {
        loop.for "i2" %i2 = 0 to 8192 step 1 serial {
          %0 = arith.constant 0.000000e+00 : f32
          memref.store %0, %acc[] : memref<f32>
          loop.for "k3" %k3 = 0 to 32 step 1 serial {
            %1 = memref.load %a[%b0, %i1, %k3] : memref<?x?x32xf32>
            %2 = memref.load %in1[%k3, %i2] : memref<32x8192xf32>
            %3 = arith.mulf %1, %2 fastmath<contract> : f32
            %4 = memref.load %acc[] : memref<f32>
            %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
            memref.store %5, %acc[] : memref<f32>
          }
          %6 = memref.load %acc[] : memref<f32>
          memref.store %6, %c[%b0, %i1, %i2] : memref<?x?x8192xf32>
        }
      }
    }
    func.return
  }
}

// CHECK:        %w_packed = loop.precompute @matmul_0_pack1(%w) : (memref<32x8192xf32>) -> memref<512x32x16xf32>
// CHECK-NEXT:   func.call @matmul_0(%x, %w_packed, %y, %b, %s)
// CHECK:        func.func private @matmul_0(%in0: memref<?x?x32xf32> {llvm.noalias}, %in1: memref<512x32x16xf32> {llvm.noalias}
// CHECK:        loop.for "b0_init" %b0_init = 0 to %n step 1 parallel {
// CHECK:        loop.for "b0" %b0 = 0 to %n step 1 serial {
// CHECK-NEXT:     loop.for "k3_o" %k3_o = 0 to 32 step 32 serial {
// CHECK-NEXT:       loop.for "i2_o_o" %i2_o_o = 0 to 8192 step 256 parallel {
// CHECK-NEXT:         loop.for "i2_o_i" %i2_o_i = 0 to 256 step 16 serial {
// CHECK:              %i1_main = arith.subi %m, %i1_rem : index
// CHECK-NEXT:         loop.for "i1_o" %i1_o = 0 to %i1_main step 6 serial {
// CHECK:                loop.for "k3_i" %k3_i = 0 to 32 step 1 serial {
// CHECK-NEXT:             loop.for "i1_i" %i1_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:               loop.for "i2_i" %i2_i = 0 to 16 step 1 vectorize {
// CHECK:                      memref.load %in1[{{.*}}, %k3, %i2_i] : memref<512x32x16xf32>
// CHECK:              %i1_t_main = arith.subi %i1_rem, %i1_t_rem : index
// CHECK-NEXT:         loop.for "i1_t_o" %i1_t_o = 0 to %i1_t_main step 2 serial {
// CHECK:                loop.for "k3_i_in_i1_t" %k3_i_in_i1_t = 0 to 32 step 1 serial {
// CHECK-NEXT:             loop.for "i1_t_i" %i1_t_i = 0 to 2 step 1 unroll {
// CHECK-NEXT:               loop.for "i2_i_in_i1_t" %i2_i_in_i1_t = 0 to 16 step 1 vectorize {
// CHECK:                      memref.load %in1[{{.*}}, %k3{{.*}}, %i2_i_in_i1_t] : memref<512x32x16xf32>
// CHECK:              loop.for "i1_t_t" %i1_t_t = 0 to %i1_t_rem step 1 serial {
// CHECK:                loop.for "k3_i_in_i1_t_in_i1_t_t" %k3_i_in_i1_t_in_i1_t_t = 0 to 32 step 1 serial {
// CHECK-NEXT:             loop.for "i2_i_in_i1_t_in_i1_t_t" {{.*}} = 0 to 16 step 1 vectorize {
// CHECK:        func.func private @matmul_0_pack1(%in0: memref<32x8192xf32>, %out: memref<512x32x16xf32>) {
