// RUN: mini-opt %s --pass-pipeline='builtin.module(graph-to-te, te-inline)' | filecheck %s
// RUN: mini-opt %s -p graph-to-te,te-inline | filecheck %s
// RUN: mini-opt %s --pass-pipeline='builtin.module(lower-to-loop,loop-split{kernel=relu_0 loop=i1 factor=3})' | filecheck %s --check-prefix=OPTIONS
// RUN: not mini-opt %s --pass-pipeline='builtin.module(func.func(cse))' 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not mini-opt %s -p cse --pass-pipeline='builtin.module(cse)' 2>&1 | filecheck %s --check-prefix=BOTH

// MLIR's pipeline syntax where it maps onto ours: `builtin.module(...)` around module passes (named pipelines and
// options included) is `-p`; op-nested pipelines are refused, since every minimlc pass runs on the module.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK:      func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %y = te.compute "relu"

// OPTIONS:    loop.for "i1_o"

// NESTED:     mini-opt: error: --pass-pipeline: 'func.func(...)' nesting is not supported: minimlc's passes are module passes, list them directly in 'builtin.module(...)'

// BOTH:       mini-opt: error: use either -p or --pass-pipeline, not both
