// RUN: mini-opt %s --mcpu x86-64-v3 | filecheck %s
// RUN: mini-opt %s --mcpu x86-64-v3 | mini-opt --mcpu znver4 | filecheck %s --check-prefix=OVERRIDE
// RUN: not mini-opt %s --mcpu pentium-9000 2>&1 | filecheck %s --check-prefix=UNKNOWN

// `--mcpu` pins the module's target; the attribute survives printing and re-parsing, and a later --mcpu wins.

func.func @f() {
  func.return
}

// CHECK:      builtin.module attributes {minimlc.target = "x86-64-v3"} {
// CHECK-NEXT:   func.func @f() {

// OVERRIDE:   builtin.module attributes {minimlc.target = "znver4"} {

// UNKNOWN:    argument --mcpu: unknown target CPU 'pentium-9000'; known: host, x86-64,
