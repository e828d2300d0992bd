// RUN: mini-opt %s -p graph-to-te,cse --print-ir-before-all 2>&1 >/dev/null | filecheck %s
// RUN: mini-opt %s -p graph-to-te,cse --mlir-print-ir-before-all --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=MLIR

// `--print-ir-before-all` dumps the IR to stderr before every pass, with MLIR's header; mlir-opt's `--mlir-` spellings
// of the IR printing flags are aliases.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      // -----// IR Dump Before graph-to-te (graph-to-te) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        graph.relu
// CHECK:      // -----// IR Dump Before cse (cse) //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        te.compute "relu"
// CHECK-NOT:  IR Dump After

// MLIR:       // -----// IR Dump Before graph-to-te (graph-to-te) //----- //
// MLIR:       // -----// IR Dump After graph-to-te (graph-to-te) //----- //
// MLIR:       // -----// IR Dump Before cse (cse) //----- //
// MLIR:       // -----// IR Dump After cse (cse) //----- //
