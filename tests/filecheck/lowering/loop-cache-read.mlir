// RUN: mini-opt %s -p 'loop-cache-read{kernel=matmul_0 loop=i0_o operand=0}' | filecheck %s
// RUN: env PYTHONHASHSEED=1 mini-opt %s -p 'loop-cache-read{kernel=matmul_0 loop=i0_o operand=0}' | filecheck %s
// RUN: not mini-opt %s -p 'loop-cache-read{kernel=matmul_0 loop=i0_o operand=2}' 2>&1 | filecheck %s --check-prefix=WRITTEN
// RUN: not mini-opt %s -p 'loop-cache-read{kernel=matmul_0 loop=i0_o operand=3}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not mini-opt %s -p 'loop-cache-read{kernel=matmul_0 loop=i0_o operand=0},loop-cache-read{kernel=matmul_0 loop=i0_o operand=0}' 2>&1 | filecheck %s --check-prefix=AGAIN

// The rows of A that one `i0_o` iteration reads (4 rows x 4 deep) become a 2 x 4 x 2 buffer in the order the nest walks
// them: row tiles of 2 (`i0_i`, step 2: index `i0_i / 2`), then depth, then the unrolled rows, filled by a copy nest
// (the last loop unrolled like `i0_ii`) at the start of each iteration.
// The copy's index keeps the read's term order under any hash seed (with seed 1 it once came out reordered).

builtin.module {
  func.func @main(%a: memref<8x4xf32>, %out0: memref<8x16xf32>) attributes {minimlc.entry} {
    %b = loop.weight "b" : memref<4x16xf32>
    func.call @matmul_0(%a, %b, %out0) : (memref<8x4xf32>, memref<4x16xf32>, memref<8x16xf32>) -> ()
    func.return
  }
  func.func private @matmul_0(%in0: memref<8x4xf32> {llvm.noalias}, %in1: memref<4x16xf32> {llvm.noalias}, %out: memref<8x16xf32> {llvm.noalias}) {
    loop.for "i0_o" %i0_o = 0 to 8 step 4 serial {
      loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
        loop.for "i0_i" %i0_i = 0 to 4 step 2 serial {
          loop.for "k2" %k2 = 0 to 4 step 1 serial {
            loop.for "i0_ii" %i0_ii = 0 to 2 step 1 unroll {
              loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
                %i0_p = arith.addi %i0_o, %i0_i : index
                %i0 = arith.addi %i0_p, %i0_ii : index
                %i1 = arith.addi %i1_o, %i1_i : index
                %1 = memref.load %in0[%i0, %k2] : memref<8x4xf32>
                %2 = memref.load %in1[%k2, %i1] : memref<4x16xf32>
                %3 = arith.mulf %1, %2 fastmath<contract> : f32
                %4 = memref.load %out[%i0, %i1] : memref<8x16xf32>
                %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
                memref.store %5, %out[%i0, %i1] : memref<8x16xf32>
              }
            }
          }
        }
      }
    }
    func.return
  }
}

// CHECK:      func.func private @matmul_0(
// CHECK-NEXT:   %cache = loop.alloc "local" : memref<2x4x2xf32>
// CHECK-NEXT:   loop.for "i0_o" %i0_o = 0 to 8 step 4 serial {
// CHECK-NEXT:     loop.for "i0_o_rd0" %i0_o_rd0 = 0 to 2 step 1 serial {
// CHECK-NEXT:       loop.for "i0_o_rd1" %i0_o_rd1 = 0 to 4 step 1 serial {
// CHECK-NEXT:         loop.for "i0_o_rd2" %i0_o_rd2 = 0 to 2 step 1 unroll {
// CHECK-NEXT:           %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:           %[[TILE:.*]] = arith.muli %i0_o_rd0, %[[TWO]] : index
// CHECK-NEXT:           %[[BASE:.*]] = arith.addi %i0_o, %[[TILE]] : index
// CHECK-NEXT:           %[[ROW:.*]] = arith.addi %[[BASE]], %i0_o_rd2 : index
// CHECK-NEXT:           %[[A:.*]] = memref.load %in0[%[[ROW]], %i0_o_rd1] : memref<8x4xf32>
// CHECK-NEXT:           memref.store %[[A]], %cache[%i0_o_rd0, %i0_o_rd1, %i0_o_rd2] : memref<2x4x2xf32>
// CHECK-NEXT:         }
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     loop.for "i1_o" %i1_o = 0 to 16 step 8 serial {
// CHECK:                %[[STEP:.*]] = arith.constant 2 : index
// CHECK-NEXT:           %[[N:.*]] = arith.divui %i0_i, %[[STEP]] : index
// CHECK-NEXT:           %[[CACHED:.*]] = memref.load %cache[%[[N]], %k2, %i0_ii] : memref<2x4x2xf32>
// CHECK-NEXT:           %{{.*}} = memref.load %in1[%k2, %i1] : memref<4x16xf32>
// CHECK-NEXT:           %{{.*}} = arith.mulf %[[CACHED]], %{{.*}} fastmath<contract> : f32
// CHECK-NOT:  memref.load %in0

// WRITTEN: loop-cache-read: operand 2 in loop 'i0_o' of kernel 'matmul_0': the kernel writes it: a copy would go stale
// RANGE: loop-cache-read: operand 3 in loop 'i0_o' of kernel 'matmul_0': no such parameter (the kernel has parameters 0..2)
// AGAIN: loop-cache-read: kernel 'matmul_0' already has a loop named 'i0_o_rd0'
