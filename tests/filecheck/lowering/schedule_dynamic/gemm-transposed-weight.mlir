// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'default-schedule' | filecheck %s

// ONNX Gemm with `transB` over a run-time batch (an MLP layer, [batch, 64] x [32, 64]^T): B is read at [j, k], a
// stride of 64 along the columns, but it is a weight, so the dynamic rule packs it at load time into 16-column panels
// along its first dimension (`dim=0`), walked with unit stride, and gives it the register tiles of `b[k, j]`.
// @activations reads a B that is not a weight at [j, k]: no packing can make its columns unit-stride, so the GEMM
// micro-kernel leaves it alone (parallel placement only).

builtin.module {
  func.func @main(%x: memref<?x64xf32>, %y: memref<?x32xf32>, %e: memref<1xi64>) attributes {minimlc.entry} {
    %w = loop.weight "w" : memref<32x64xf32>
    %c0 = arith.constant 0 : index
    %b64 = memref.load %e[%c0] : memref<1xi64>
    %b = arith.index_cast %b64 : i64 to index
    func.call @gemm_0(%x, %w, %y, %b) : (memref<?x64xf32>, memref<32x64xf32>, memref<?x32xf32>, index) -> ()
    func.return
  }
  func.func private @gemm_0(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<32x64xf32> {llvm.noalias},
                            %out: memref<?x32xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x64xf32>
    %c = loop.extents %out[%n] : memref<?x32xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 64 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x64xf32>
          %2 = memref.load %in1[%i1, %k2] : memref<32x64xf32>
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
  func.func @activations(%x: memref<?x64xf32>, %v: memref<32x64xf32>, %y: memref<?x32xf32>, %e: memref<1xi64>) attributes {minimlc.entry} {
    %c0 = arith.constant 0 : index
    %b64 = memref.load %e[%c0] : memref<1xi64>
    %b = arith.index_cast %b64 : i64 to index
    func.call @gemm_1(%x, %v, %y, %b) : (memref<?x64xf32>, memref<32x64xf32>, memref<?x32xf32>, index) -> ()
    func.return
  }
  func.func private @gemm_1(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<32x64xf32> {llvm.noalias},
                            %out: memref<?x32xf32> {llvm.noalias}, %n: index) {
    %a = loop.extents %in0[%n] : memref<?x64xf32>
    %c = loop.extents %out[%n] : memref<?x32xf32>
    %acc = loop.alloc "local" : memref<f32>
    loop.for "i0" %i0 = 0 to %n step 1 serial {
      loop.for "i1" %i1 = 0 to 32 step 1 serial {
        %0 = arith.constant 0.000000e+00 : f32
        memref.store %0, %acc[] : memref<f32>
        loop.for "k2" %k2 = 0 to 64 step 1 serial {
          %1 = memref.load %a[%i0, %k2] : memref<?x64xf32>
          %2 = memref.load %in1[%i1, %k2] : memref<32x64xf32>
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

// CHECK:        %w_packed = loop.precompute @gemm_0_pack1(%w) : (memref<32x64xf32>) -> memref<2x64x16xf32>
// CHECK-NEXT:   func.call @gemm_0(%x, %w_packed, %y, %b)
// CHECK:        func.func private @gemm_0(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<2x64x16xf32> {llvm.noalias}
// CHECK:            loop.for "i0_i" %i0_i = 0 to 6 step 1 unroll {
// CHECK-NEXT:         loop.for "i1_i" %i1_i = 0 to 16 step 1 vectorize {
// CHECK:                memref.load %in1[{{.*}}, %k2, %i1_i] : memref<2x64x16xf32>
// CHECK:          loop.for "i0_t" %i0_t = 0 to %i0_rem step 1 serial {
// CHECK:        func.func private @gemm_1(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<32x64xf32> {llvm.noalias}
// CHECK-NOT:      vectorize
// CHECK-NOT:      unroll
// CHECK:          func.return
// CHECK:        func.func private @gemm_0_pack1(%in0: memref<32x64xf32>, %out: memref<2x64x16xf32>) {
