// RUN: not mini-opt %s -p 'lower-to-loop,loop-split{kernel=nope loop=i factor=2}' --crash-reproducer=%t.mlir 2>&1 | filecheck %s
// RUN: filecheck %s --check-prefix=FILE < %t.mlir
// RUN: not mini-opt --run-reproducer %t.mlir 2>&1 | filecheck %s --check-prefix=REPLAY

// A failing pass writes its pipeline and the input IR to the reproducer; --run-reproducer replays it to the same error.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      mini-opt: error: pass 'loop-split' failed: loop-split: no kernel named 'nope' (kernels: main, relu_0)
// CHECK-NEXT: note: reproducer written to {{.*}} (mini-opt --run-reproducer to replay)

// FILE:       // mini-opt-reproducer: -p 'graph-to-te,te-inline,te-to-loop,loop-split{kernel=nope loop=i factor=2}'
// FILE-NEXT:  builtin.module {
// FILE-NEXT:    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// FILE-NEXT:      %y = graph.relu %x : tensor<2x3xf32>

// REPLAY:     mini-opt: error: pass 'loop-split' failed: loop-split: no kernel named 'nope' (kernels: main, relu_0)
