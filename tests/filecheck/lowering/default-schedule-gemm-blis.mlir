// RUN: mini-opt %s --mcpu=znver4 -p 'default-schedule' | filecheck %s --check-prefix=ZEN4
// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s --check-prefix=AVX2

// A MatMul whose weight's 256-deep row of panels (256 x 1024 floats) fills a 1 MB L2 gets BLIS's loop order: one
// 512-deep block (the output read and written once), row blocks of A whose 512-deep rows fill a quarter of L2
// (128 rows), the weight's column panels inside a row block and the register tiles inside a panel, so that a
// panel serves the whole row block. With AVX-512 (znver4) 8 x 32 tiles of 16 zmm accumulators; with AVX2 6 x 16
// (12 ymm accumulators) in row blocks of 21 tiles (126 rows), and the 4 rows left one more tile per column panel.

builtin.module {
  func.func @main(%a: memref<256x512xf32>, %out0: memref<256x1024xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<512x1024xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<256x512xf32>, memref<512x1024xf32>, memref<256x1024xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<256x512xf32> {llvm.noalias}, %in1: memref<512x1024xf32> {llvm.noalias}, %out: memref<256x1024xf32> {llvm.noalias}) {
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to 256 step 1 serial {
      loop.for "i1" %i1 = 0 to 1024 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 512 step 1 serial {
          %1 = memref.load %in0[%i0, %k2] : memref<256x512xf32>
          %2 = memref.load %in1[%k2, %i1] : memref<512x1024xf32>
          %3 = arith.mulf %1, %2 fastmath<contract> : f32
          %4 = memref.load %acc[] : memref<f32>
          %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
          memref.store %5, %acc[] : memref<f32>
        }
        %6 = memref.load %acc[] : memref<f32>
        memref.store %6, %out[%i0, %i1] : memref<256x1024xf32>
      }
    }
    func.return
  }
}

// ZEN4:      %b_packed = loop.precompute @matmul_0_pack1(%b) : (memref<512x1024xf32>) -> memref<32x512x32xf32>
// ZEN4-LABEL: func.func private @matmul_0(
// ZEN4-NEXT:    %tile = loop.alloc "local" : memref<8x32xf32>
// ZEN4:         loop.for "k2_o" %k2_o = 0 to 512 step 512 serial {
// ZEN4-NEXT:      loop.for "i0_o_o" %i0_o_o = 0 to 256 step 128 parallel {
// ZEN4-NEXT:        loop.for "i1_o" %i1_o = 0 to 1024 step 32 parallel {
// ZEN4-NEXT:          loop.for "i0_o_i" %i0_o_i = 0 to 128 step 8 serial {
// ZEN4:                 loop.for "k2_i" %k2_i = 0 to 512 step 1 serial {
// ZEN4-NEXT:              loop.for "i0_i" %i0_i = 0 to 8 step 1 unroll {
// ZEN4-NEXT:                loop.for "i1_i" %i1_i = 0 to 32 step 1 vectorize {
// ZEN4:                       memref.load %in1[

// AVX2:      %b_packed = loop.precompute @matmul_0_pack1(%b) : (memref<512x1024xf32>) -> memref<64x512x16xf32>
// AVX2-LABEL: func.func private @matmul_0(
// AVX2-NEXT:    %tile = loop.alloc "local" : memref<4x16xf32>
// AVX2-NEXT:    %tile_1 = loop.alloc "local" : memref<6x16xf32>
// AVX2:         loop.for "k2_o" %k2_o = 0 to 512 step 512 serial {
// AVX2-NEXT:      loop.for "i0_o_o" %i0_o_o = 0 to 252 step 126 parallel {
// AVX2-NEXT:        loop.for "i1_o" %i1_o = 0 to 1024 step 16 parallel {
// AVX2-NEXT:          loop.for "i0_o_i" %i0_o_i = 0 to 126 step 6 serial {
// AVX2:                 loop.for "k2_i" %k2_i = 0 to 512 step 1 serial {
// AVX2-NEXT:              loop.for "i0_i" %i0_i = 0 to 6 step 1 unroll {
// AVX2-NEXT:                loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// AVX2:         loop.for "i1_o_in_i0_t" %i1_o_in_i0_t = 0 to 1024 step 16 parallel {
// AVX2-NEXT:      loop.for "k2_o_in_i0_t" %k2_o_in_i0_t = 0 to 512 step 512 serial {
// AVX2-NEXT:        loop.for "i0_t_o" %i0_t_o = 252 to 256 step 4 serial {
// AVX2:               loop.for "k2_i_in_i0_t" %k2_i_in_i0_t = 0 to 512 step 1 serial {
// AVX2-NEXT:            loop.for "i0_t_i" %i0_t_i = 0 to 4 step 1 unroll {
