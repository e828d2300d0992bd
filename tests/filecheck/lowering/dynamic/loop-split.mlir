// RUN: mini-opt %s -p 'loop-split{kernel=k loop=i factor=4}' | filecheck %s
// RUN: mini-opt %s -p 'loop-split{kernel=k loop=s factor=2}' | filecheck %s --check-prefix=STEP

// A loop to a run-time bound %n splits into `i_o` over n - n % 4 around a static `i_i`, then the remainder `i_t`
// from 0 to n % 4 whose body indexes (n - n % 4) + r; loops inside the remainder are renamed as for a static tail.

func.func @k(%a: memref<?x8xf32>, %n: index) {
  loop.for "i" %i = 0 to %n step 1 parallel {
    loop.for "j" %j = 0 to 8 step 1 serial {
      %v = memref.load %a[%i, %j] : memref<?x8xf32>
      memref.store %v, %a[%i, %j] : memref<?x8xf32>
    }
  }
  loop.for "s" %s = 1 to %n step 3 serial {
    %w = memref.load %a[%s, %s] : memref<?x8xf32>
  }
  func.return
}

// CHECK:      %[[F:.*]] = arith.constant 4 : index
// CHECK-NEXT: %i_rem = arith.remui %n, %[[F]] : index
// CHECK-NEXT: %i_main = arith.subi %n, %i_rem : index
// CHECK-NEXT: loop.for "i_o" %i_o = 0 to %i_main step 4 parallel {
// CHECK-NEXT:   loop.for "i_i" %i_i = 0 to 4 step 1 serial {
// CHECK-NEXT:     %i = arith.addi %i_o, %i_i : index
// CHECK-NEXT:     loop.for "j" %j = 0 to 8 step 1 serial {
// CHECK-NEXT:       %v = memref.load %a[%i, %j] : memref<?x8xf32>
// CHECK:      loop.for "i_t" %i_t = 0 to %i_rem step 1 serial {
// CHECK-NEXT:   %[[I:.*]] = arith.addi %i_main, %i_t : index
// CHECK-NEXT:   loop.for "j_in_i_t" %j_in_i_t = 0 to 8 step 1 serial {
// CHECK-NEXT:     %{{.*}} = memref.load %a[%[[I]], %j_in_i_t] : memref<?x8xf32>

// With lower bound 1 and step 3: t = (n - 1 + 2) / 3 iterations, the main part to 1 + (t - t % 2) * 3.

// STEP:      %[[LOW:.*]] = arith.constant -1 : index
// STEP-NEXT: %[[SPAN:.*]] = arith.subi %n, %[[LOW]] : index
// STEP-NEXT: %[[STEP:.*]] = arith.constant 3 : index
// STEP-NEXT: %[[TRIP:.*]] = arith.divsi %[[SPAN]], %[[STEP]] : index
// STEP-NEXT: %[[F:.*]] = arith.constant 2 : index
// STEP-NEXT: %s_rem = arith.remsi %[[TRIP]], %[[F]] : index
// STEP-NEXT: %[[MAINTRIP:.*]] = arith.subi %[[TRIP]], %s_rem : index
// STEP-NEXT: %[[S3:.*]] = arith.constant 3 : index
// STEP-NEXT: %[[MAINSPAN:.*]] = arith.muli %[[MAINTRIP]], %[[S3]] : index
// STEP-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// STEP-NEXT: %s_main = arith.addi %[[MAINSPAN]], %[[ONE]] : index
// STEP-NEXT: loop.for "s_o" %s_o = 1 to %s_main step 6 serial {
// STEP-NEXT:   loop.for "s_i" %s_i = 0 to 6 step 3 serial {
// STEP-NEXT:     %s = arith.addi %s_o, %s_i : index
// STEP:      loop.for "s_t" %s_t = 0 to %s_rem step 1 serial {
// STEP-NEXT:   %[[R3:.*]] = arith.constant 3 : index
// STEP-NEXT:   %[[OFF:.*]] = arith.muli %s_t, %[[R3]] : index
// STEP-NEXT:   %{{.*}} = arith.addi %s_main, %[[OFF]] : index
