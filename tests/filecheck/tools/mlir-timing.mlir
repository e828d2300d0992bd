// RUN: mini-opt %s -p lower-to-loop,cse --mlir-timing 2>&1 >/dev/null | filecheck %s
// RUN: mini-opt %s -p lower-to-loop --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=LIST
// RUN: mini-opt %s -p lower-to-loop --time-passes 2>/dev/null | filecheck %s --check-prefix=STDOUT

// The timing report goes to stderr: wall time and share of parsing, each pass and output; `--mlir-timing` nests a
// named pipeline's passes under it, `--time-passes` lists them flat. Stdout holds only the IR.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      ... Execution time report ...
// CHECK:        Total Execution Time: {{[0-9.]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)  lower-to-loop
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)    graph-to-te
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)    te-inline
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)    te-to-loop
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// CHECK-NEXT:   {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// CHECK-NEXT:   {{[0-9.]+}} (100.0%)  Total

// LIST:       Parser
// LIST-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  graph-to-te
// LIST-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  te-inline
// LIST-NEXT:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  te-to-loop

// STDOUT:     builtin.module {
// STDOUT-NOT: Execution time report
