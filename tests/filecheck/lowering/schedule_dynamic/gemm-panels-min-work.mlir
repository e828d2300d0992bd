// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// Two projections over `%n` run-time rows by a packed weight (GEMM_PANELS_MIN_WORK = 262,144 multiply-adds a row).
// @small's row is 256 x 128 = 32,768: its row tiles of 6 are the parallel loop, floor(n / 6) tasks at run time, so
// that one row (a decode step) runs on the calling thread and the remainder of rows is serial. @big's row is
// 256 x 1024, the minimum: its 64 column panels are the parallel loop, in 32 tasks of 2 consecutive panels
// (PANEL_TASKS), the row tiles and remainder inside each panel.

// CHECK-LABEL: func.func private @small
// CHECK:         loop.for "i0_o" %{{.*}} = 0 to %{{.*}} step 6 parallel {
// CHECK:           loop.for "i1_o" %{{.*}} = 0 to 128 step 16 serial {
// CHECK:         loop.for "i0_t" %{{.*}} = 0 to %{{.*}} step 1 serial {
// CHECK-LABEL: func.func private @big
// CHECK:         loop.for "i1_o_o" %{{.*}} = 0 to 1024 step 32 parallel {
// CHECK-NEXT:      loop.for "i1_o_i" %{{.*}} = 0 to 32 step 16 serial {
// CHECK:             loop.for "i0_o" %{{.*}} = 0 to %{{.*}} step 6 serial {
// CHECK:             loop.for "i0_t_t" %{{.*}} = 0 to %{{.*}} step 1 serial {

builtin.module {
  func.func @main(%x: memref<?x256xf32>, %y: memref<?x128xf32>, %z: memref<?x1024xf32>, %n: index) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<256x128xf32>
    %v = loop.weight "v" : memref<256x1024xf32>
    func.call @small(%x, %w, %y, %n) : (memref<?x256xf32>, memref<256x128xf32>, memref<?x128xf32>, index) -> ()
    func.call @big(%x, %v, %z, %n) : (memref<?x256xf32>, memref<256x1024xf32>, memref<?x1024xf32>, index) -> ()
    func.return
  }
  func.func private @small(%in0: memref<?x256xf32> {llvm.noalias}, %in1: memref<256x128xf32> {llvm.noalias},
                           %out: memref<?x128xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x256xf32>
    %c = loop.extents %out[%n] : memref<?x128xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 128 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 256 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x256xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<256x128xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<?x128xf32>
      }
    }
    func.return
  }
  func.func private @big(%in0: memref<?x256xf32> {llvm.noalias}, %in1: memref<256x1024xf32> {llvm.noalias},
                         %out: memref<?x1024xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x256xf32>
    %c = loop.extents %out[%n] : memref<?x1024xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 1024 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 256 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x256xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<256x1024xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %c[%i0, %i1] : memref<?x1024xf32>
      }
    }
    func.return
  }
}
