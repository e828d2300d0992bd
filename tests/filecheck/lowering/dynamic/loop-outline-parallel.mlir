// RUN: mini-opt %s -p loop-outline-parallel | filecheck %s

// A parallel loop to a run-time bound passes its run-time trip count to the pool: n for 0 to %n step 1,
// max(0, (n - lower + step - 1) / step) times the static inner members of its band otherwise.

func.func @k(%a: memref<?x8xf32>, %n: index) attributes {minimlc.entry} {
  loop.for "i" %i = 0 to %n step 1 parallel {
    loop.for "j" %j = 0 to 8 step 1 serial {
      %v = memref.load %a[%i, %j] : memref<?x8xf32>
      memref.store %v, %a[%i, %j] : memref<?x8xf32>
    }
  }
  loop.for "s" %s = 2 to %n step 4 parallel {
    loop.for "t" %t = 0 to 8 step 1 parallel {
      %w = memref.load %a[%s, %t] : memref<?x8xf32>
      memref.store %w, %a[%s, %t] : memref<?x8xf32>
    }
  }
  func.return
}

// CHECK:      %[[BODY:.*]] = llvm.mlir.addressof @k_i_body : !llvm.ptr
// CHECK-NEXT: %tasks = arith.index_cast %n : index to i64
// CHECK-NEXT: func.call @minimlc_parallel_for(%{{.*}}, %[[BODY]], %{{.*}}, %tasks) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:      llvm.mlir.addressof @k_s_body : !llvm.ptr
// CHECK-NEXT: %[[LOW:.*]] = arith.constant -1 : index
// CHECK-NEXT: %[[SPAN:.*]] = arith.subi %n, %[[LOW]] : index
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[TRIP:.*]] = arith.divsi %[[SPAN]], %[[STEP]] : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.maxsi %[[TRIP]], %[[ZERO]] : index
// CHECK-NEXT: %[[INNER:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[ALL:.*]] = arith.muli %[[COUNT]], %[[INNER]] : index
// CHECK-NEXT: %tasks_1 = arith.index_cast %[[ALL]] : index to i64
// CHECK-NEXT: func.call @minimlc_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %tasks_1)
// CHECK:      func.func private @k_s_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:   %{{.*}} = llvm.load %ctx : !llvm.ptr -> !llvm.struct<(!llvm.ptr)>
// CHECK:        %{{.*}} = arith.remui %{{.*}}, %{{.*}} : index
// CHECK:      func.func private @k_i_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:   %{{.*}} = llvm.load %ctx : !llvm.ptr -> !llvm.struct<(!llvm.ptr)>
