// RUN: not mini-opt %s --verify-diagnostics 2>&1 | filecheck %s

// An annotation on an op that verifies fails the run: the expected error was not produced.

func.func @valid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{not broadcast-compatible}}
  %y = graph.relu %x : tensor<2x3xf32>
  // expected-warning@-1 {{a warning}}
  func.return %y : tensor<2x3xf32>
}

// CHECK:      mini-opt: error: {{.*}}verify-diagnostics-valid-op.mlir:6: expected error "not broadcast-compatible" was not produced
// CHECK-NEXT: mini-opt: error: {{.*}}verify-diagnostics-valid-op.mlir:8: expected warning "a warning" was not produced
