// RUN: mini-opt %s --mcpu=x86-64-v3 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// The dynamic rule gives a softmax over run-time rows and columns (a prefill's attention scores) the rows rule's
// schedule: every stage moves into the row loop (loop-compute-at, the same run-time bound), the exponentials and the
// division by the sum are 8 lanes at a time with a scalar remainder of the run-time columns, the max and the sum
// stay for LLVM; the rows are the parallel tasks.
func.func @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = graph.softmax %x {axis = 1 : i64} : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func private @softmax_div_0(
// CHECK:         loop.for "i0" %i0 = 0 to %n0 step 1 parallel {
// CHECK-NEXT:      loop.for "i1___" %i1___ = 0 to 1 step 1 serial {
// CHECK:             loop.for "k2_" %k2_ = 0 to %n1 step 1 serial {
// CHECK:               arith.maximumf
// CHECK:           loop.for "i1___o" %i1___o = 0 to %i1___main step 8 serial {
// CHECK-NEXT:        loop.for "i1___i" %i1___i = 0 to 8 step 1 vectorize {
// CHECK:               math.exp
// CHECK:           loop.for "i1___t" %i1___t = 0 to %i1___rem step 1 serial {
// CHECK:           loop.for "i1_" %i1_ = 0 to 1 step 1 serial {
// CHECK:             loop.for "k2" %k2 = 0 to %n1 step 1 serial {
// CHECK:               arith.addf
// CHECK:           loop.for "i1_o" %i1_o = 0 to %i1_main step 8 serial {
// CHECK-NEXT:        loop.for "i1_i" %i1_i = 0 to 8 step 1 vectorize {
// CHECK:               arith.divf
// CHECK:           loop.for "i1_t" %i1_t = 0 to %i1_rem step 1 serial {
// CHECK:               arith.divf
// CHECK-NEXT:          memref.store
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      func.return
