// RUN: rm -rf %t && mini-opt %s -p lower-to-loop --print-ir-tree-dir=%t > /dev/null
// RUN: ls %t | filecheck %s
// RUN: filecheck %s --check-prefix=INLINE < %t/02_te-inline.mlir

// One file per pass run, `<index>_<pass-name>.mlir` with the index from 01, each holding the IR after that pass.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      01_graph-to-te.mlir
// CHECK-NEXT: 02_te-inline.mlir
// CHECK-NEXT: 03_te-to-loop.mlir

// INLINE:      builtin.module {
// INLINE:        te.compute "relu"
