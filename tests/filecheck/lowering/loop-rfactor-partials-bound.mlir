// RUN: not mini-opt %s -p 'loop-split{kernel=gemv_0 loop=k2 factor=8},loop-rfactor{kernel=gemv_0 loop=k2_o}' 2>&1 | filecheck %s
// RUN: mini-opt %s -p 'loop-split{kernel=gemv_0 loop=k2 factor=16},loop-rfactor{kernel=gemv_0 loop=k2_o}' | filecheck %s --check-prefix=FITS

// 65536 output columns: 8 ranges of partial rows would take 2 MiB, over RFACTOR_MAX_BYTES (1 MiB, on the stack of
// the calling thread); 4 ranges take exactly 1 MiB.

builtin.module {
  func.func private @gemv_0(%in0: memref<1x64xf32> {llvm.noalias}, %in1: memref<64x65536xf32> {llvm.noalias}, %out: memref<1x65536xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 1 step 1 serial {
      loop.for "i1" %i1 = 0 to 65536 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 64 step 1 serial {
          %1 = memref.load %in0[%i0, %k2] : memref<1x64xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<64x65536xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1] : memref<1x65536xf32>
      }
    }
    func.return
  }
}

// CHECK: loop-rfactor: loop 'k2_o' of kernel 'gemv_0' would need 2097152 bytes of partials, more than 1048576

// FITS: %partial = loop.alloc "local" : memref<4x1x65536xf32>
// FITS: loop.for "k2_o" %k2_o = 0 to 4 step 1 serial {
// FITS: loop.for "k2_o_r" %k2_o_r = 0 to 4 step 1 serial {
