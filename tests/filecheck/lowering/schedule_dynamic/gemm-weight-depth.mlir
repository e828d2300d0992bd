// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule{annotate=true}' | filecheck %s

// A projection over run-time rows (a prefill's [sequence, 640] x [640, 32] weight): B is a weight packed into
// 16-column panels, so the dynamic rule takes the whole 640-deep reduction in one block (the largest divisor of the
// depth up to 1024): each 6 x 16 tile starts at zero and is stored once, and no nest zeroes the output first.
// @activations multiplies by a B that is not a weight (not packed): its depth is blocked by at most 256 (160), the
// tiles added to the zeroed output.

builtin.module {
  func.func @main(%x: memref<?x640xf32>, %y: memref<?x32xf32>, %e: memref<1xi64>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<640x32xf32>
    %c0 = arith.constant 0 : index
    %n64 = memref.load %e[%c0] : memref<1xi64>
    %n = arith.index_cast %n64 : i64 to index
    func.call @matmul_0(%x, %w, %y, %n) : (memref<?x640xf32>, memref<640x32xf32>, memref<?x32xf32>, index) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<?x640xf32> {llvm.noalias}, %in1: memref<640x32xf32> {llvm.noalias},
                              %out: memref<?x32xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x640xf32>
    %c = loop.extents %out[%n] : memref<?x32xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 640 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x640xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<640x32xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<?x32xf32>
      }
    }
    func.return
  }
  func.func @activations(%x: memref<?x640xf32>, %v: memref<640x32xf32>, %y: memref<?x32xf32>, %e: memref<1xi64>) attributes {minimlc.entry} {
    %c0 = arith.constant 0 : index
    %n64 = memref.load %e[%c0] : memref<1xi64>
    %n = arith.index_cast %n64 : i64 to index
    func.call @matmul_1(%x, %v, %y, %n) : (memref<?x640xf32>, memref<640x32xf32>, memref<?x32xf32>, index) -> ()
    func.return
  }
  func.func private @matmul_1(%in0: memref<?x640xf32> {llvm.noalias}, %in1: memref<640x32xf32> {llvm.noalias},
                              %out: memref<?x32xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x640xf32>
    %c = loop.extents %out[%n] : memref<?x32xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 640 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x640xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<640x32xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<?x32xf32>
      }
    }
    func.return
  }
}

// CHECK:        %w_packed = loop.precompute @matmul_0_pack1(%w) : (memref<640x32xf32>) -> memref<2x640x16xf32>
// CHECK:        func.func private @matmul_0({{.*}}) attributes {minimlc.schedule = "dynamic mr=6 nr=16 kc=640 {{.*}}"
// CHECK-NOT:      i0_init
// CHECK:          loop.for "i0_o" %i0_o = 0 to %i0_main step 6 parallel {
// CHECK-NEXT:       loop.for "k2_o" %k2_o = 0 to 640 step 640 serial {
// CHECK:              loop.for "k2_i" %k2_i = 0 to 640 step 1 serial {
// CHECK-NEXT:           loop.for "i0_i" %i0_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:             loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK:          loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK:              loop.for "k2_i_in_i0_t" %k2_i_in_i0_t = 0 to 640 step 1 serial {
// CHECK:        func.func private @matmul_1({{.*}}) attributes {minimlc.schedule = "dynamic mr=6 nr=16 kc=160 {{.*}}"
// CHECK:          loop.for "i0_init_o" %i0_init_o = 0 to %i0_init_main step 16 parallel {
// CHECK:          loop.for "i0_o" %i0_o = 0 to %i0_main step 6 parallel {
// CHECK-NEXT:       loop.for "k2_o" %k2_o = 0 to 640 step 160 serial {
