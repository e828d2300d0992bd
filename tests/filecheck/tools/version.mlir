// RUN: mini-opt --version | filecheck %s
// RUN: mini-opt -v | filecheck %s
// RUN: mini-opt --help | filecheck %s --check-prefix=HELP
// RUN: not mini-opt %s -t x86-asm 2>&1 | filecheck %s --check-prefix=TARGET

// mini-opt names itself, minimlc's version and xDSL's, and offers only the output targets that print minimlc's IR.

// CHECK:       mini-opt (minimlc {{[0-9]+\.[0-9]+\.[0-9]+}}) on xDSL {{[0-9]+\.[0-9]+\.[0-9]+}}

// HELP:        usage: mini-opt
// HELP:        mini-opt: minimlc's IR driver
// HELP:        output format: mlir (default) or llvm (LLVM IR text)

// TARGET:      mini-opt: error: argument -t/--target: invalid choice: 'x86-asm' (choose from mlir, llvm)
