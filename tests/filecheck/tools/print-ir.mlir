// RUN: mini-opt %s -p graph-to-te,cse,te-to-loop --print-ir-before=cse --print-ir-after=graph-to-te,te-to-loop 2>&1 >/dev/null | filecheck %s
// RUN: mini-opt %s -p lower-to-loop --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: mini-opt %s -p graph-to-te,cse,te-to-loop --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: not mini-opt %s -p 'graph-to-te,te-to-loop,loop-split{kernel=nope loop=i factor=2}' --print-ir-after-failure 2>&1 | filecheck %s --check-prefix=FAILURE
// RUN: mini-opt %s -p graph-to-te,te-to-loop --print-between-passes | filecheck %s --check-prefix=BETWEEN

// The IR dumps go to stderr with MLIR's header; the IR on stdout is unchanged. `--print-ir-after-change` skips cse,
// which finds nothing to merge here; `--print-ir-after-failure` shows the IR as the failing pass left it, then the error.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      // -----// IR Dump After graph-to-te (graph-to-te) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        te.compute "relu"
// CHECK:      // -----// IR Dump Before cse (cse) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        te.compute "relu"
// CHECK-NOT:  IR Dump After cse
// CHECK:      // -----// IR Dump After te-to-loop (te-to-loop) //----- //
// CHECK:        loop.for "i0"

// ALL:        // -----// IR Dump After graph-to-te (graph-to-te) //----- //
// ALL:        // -----// IR Dump After te-inline (te-inline) //----- //
// ALL:        // -----// IR Dump After te-to-loop (te-to-loop) //----- //

// CHANGE:     // -----// IR Dump After graph-to-te (graph-to-te) //----- //
// CHANGE-NOT: IR Dump After cse
// CHANGE:     // -----// IR Dump After te-to-loop (te-to-loop) //----- //

// FAILURE:      // -----// IR Dump After loop-split Failed (loop-split) //----- //
// FAILURE-NEXT: builtin.module {
// FAILURE:        func.func private @relu_0(
// FAILURE:      mini-opt: error: pass 'loop-split' failed: loop-split: no kernel named 'nope' (kernels: main, relu_0)

// BETWEEN:      IR after graph-to-te:
// BETWEEN-NEXT: builtin.module {
// BETWEEN:        te.compute "relu"
// BETWEEN-NOT:  IR after te-to-loop:
// BETWEEN:      builtin.module {
// BETWEEN:        loop.for "i0"
