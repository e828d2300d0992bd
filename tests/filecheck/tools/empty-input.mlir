// RUN: mini-opt %s | filecheck %s
// RUN: mini-opt - < %s | filecheck %s
// RUN: mini-opt < /dev/null | filecheck %s
// RUN: not mini-opt %s --no-implicit-module 2>&1 | filecheck %s --check-prefix=EXPLICIT

// An input of only comments and whitespace (as this file is), from a file or from standard input (`-` or no file), is
// an empty module, as mlir-opt reads it; without the implicit module there is nothing to read.

// CHECK:      builtin.module {
// CHECK-NEXT: }

// EXPLICIT:   mini-opt: error: the input is empty: --no-implicit-module needs a builtin.module operation
