// RUN: mini-opt %s -p loop-to-scf | filecheck %s
// RUN: mini-opt %s -p loop-to-scf,convert-to-llvm | filecheck %s --check-prefix=LLVM

// A read whose last index moves by 2 per lane (a stride-2 pool's window) is one load of the 7 elements the 4 lanes
// span, from lane 0's element to the last lane's and no further, and a shuffle of every other one. A stride of 5,
// past MAX_INTERLEAVE, stays one scalar read per lane through a stack buffer.
func.func private @pool_row(%x: memref<16xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  loop.for "w" %w = 0 to 4 step 1 vectorize {
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c1 = arith.constant 1 : index
    %i = arith.muli %w, %c2 : index
    %j = arith.addi %i, %c1 : index
    %k = arith.muli %w, %c5 : index
    %a = memref.load %x[%j] : memref<16xf32>
    %b = memref.load %x[%k] : memref<16xf32>
    memref.store %a, %y[%w] : memref<4xf32>
    memref.store %b, %z[%w] : memref<4xf32>
  }
  func.return
}

// CHECK:      %[[SPAN:.*]] = vector.load %x[%{{.*}}] : memref<16xf32>, vector<7xf32>
// CHECK-NEXT: %[[ROW:.*]] = vector.shuffle %[[SPAN]], %[[SPAN]] [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>
// CHECK:      memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK-COUNT-4: memref.load %x
// CHECK:      vector.store %[[ROW]], %y

// LLVM:      %[[SPAN:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<7xf32>
// LLVM-NEXT: llvm.shufflevector %[[SPAN]], %[[SPAN]] [0, 2, 4, 6] : vector<7xf32>
