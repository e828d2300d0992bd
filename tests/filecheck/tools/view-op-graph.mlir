// RUN: mini-opt %s --view-op-graph | filecheck %s
// RUN: mini-opt %s --view-op-graph --view-op-graph-print-attrs | filecheck %s --check-prefix=ATTRS
// RUN: mini-opt %s --view-op-graph --view-op-graph-print-result-types | filecheck %s --check-prefix=TYPES
// RUN: mini-opt %s --view-op-graph --view-op-graph-print-attrs --view-op-graph-max-label-len 8 | filecheck %s --check-prefix=CUT
// RUN: mini-opt %s -p graph-to-te --view-op-graph | filecheck %s --check-prefix=TE
// RUN: mini-opt %s --view-op-graph=%t.dot | filecheck %s --check-prefix=IR
// RUN: filecheck %s --check-prefix=CHECK < %t.dot

// DOT of the module as MLIR's --view-op-graph draws it: a node per op and block argument, a cluster per op with
// regions, data-flow edges after the nodes. With a file, the IR still goes to standard output.

func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  %z = graph.matmul %y, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %z : tensor<2x4xf32>
}

// CHECK:      digraph minimlc {
// CHECK-NEXT:   subgraph cluster_0 {
// CHECK-NEXT:     label = "builtin.module";
// CHECK-NEXT:     op0 [label = "builtin.module", shape = box];
// CHECK-NEXT:     subgraph cluster_1 {
// CHECK-NEXT:       label = "func.func @main";
// CHECK-NEXT:       op1 [label = "func.func", shape = box];
// CHECK-NEXT:       arg0 [label = "%x", shape = plain];
// CHECK-NEXT:       arg1 [label = "%w", shape = plain];
// CHECK-NEXT:       op2 [label = "graph.relu", shape = ellipse];
// CHECK-NEXT:       op3 [label = "graph.matmul", shape = ellipse];
// CHECK-NEXT:       op4 [label = "func.return", shape = ellipse];
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   arg0 -> op2;
// CHECK-NEXT:   op2 -> op3;
// CHECK-NEXT:   arg1 -> op3;
// CHECK-NEXT:   op3 -> op4;
// CHECK-NEXT: }

// ATTRS: op1 [label = "func.func\nfunction_type: (tensor<2x3xf32>,...\nsym_name: \"main\"", shape = box];
// ATTRS: op2 [label = "graph.relu", shape = ellipse];

// TYPES: arg0 [label = "%x\ntensor<2x3xf32>", shape = plain];
// TYPES: op3 [label = "graph.matmul\n: tensor<2x4xf32>", shape = ellipse];
// TYPES: op4 [label = "func.return", shape = ellipse];

// CUT: op1 [label = "func.func\nfunction_type: (tens...\nsym_name: \"main\"", shape = box];

// TE:      label = "func.func @main";
// TE:      subgraph cluster_2 {
// TE-NEXT:   label = "te.compute \"relu\"";
// TE-NEXT:   op2 [label = "te.compute", shape = box];
// TE-NEXT:   arg2 [label = "%arg0", shape = plain];
// TE-NEXT:   arg3 [label = "%arg1", shape = plain];
// TE-NEXT:   op3 [label = "te.read", shape = ellipse];
// TE:        op6 [label = "te.yield", shape = ellipse];
// TE-NEXT: }
// TE:      arg0 -> op3;
// TE-NEXT: arg2 -> op3;
// TE-NEXT: arg3 -> op3;

// IR:      func.func @main
// IR-NOT:  digraph
