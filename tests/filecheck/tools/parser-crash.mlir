// RUN: not mini-opt %s 2>&1 | filecheck %s
// xDSL's parser divides by the element size of a dense array; a zero-bit element type crashes it. mini-opt reports
// that as an error on the input (found by tests/fuzz), never a traceback.

"test.op"() {values = array<i0>} : () -> ()

// CHECK: mini-opt: error: could not parse the input: ZeroDivisionError: integer modulo by zero
// CHECK-NOT: Traceback
