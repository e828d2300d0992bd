// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @extents_count(%a: memref<?x?xf32>, %n: index) {
  // expected-error@+1 {{loop.extents: got memref<?x?xf32> with 1 sizes, but it needs one index operand per '?' (2)}}
  %x = "loop.extents"(%a, %n) : (memref<?x?xf32>, index) -> memref<?x?xf32>
  func.return
}

// -----

func.func @extents_type(%a: memref<?xf32>, %n: index) {
  // expected-error@+1 {{attribute memref<?xf32> expected from variable 'T', but got memref<?xf64>}}
  %x = "loop.extents"(%a, %n) : (memref<?xf32>, index) -> memref<?xf64>
  func.return
}

// -----

func.func @alloc_missing_size() {
  // expected-error@+1 {{loop.alloc: buffer shape must be static, got memref<?x768xf32> with 0 sizes, but it needs one index operand per '?' (1)}}
  %t = loop.alloc "global" : memref<?x768xf32>
  func.return
}

// -----

func.func @alloc_local_dynamic(%n: index) {
  // expected-error@+1 {{loop.alloc: a local buffer's shape must be static, got memref<?xf32>}}
  %t = loop.alloc "local" [%n] : memref<?xf32>
  func.return
}

// -----

func.func @upper_without_operand() {
  // expected-error@+1 {{loop.for 'i': upper bound -1 marks a run-time bound, but it has no operand}}
  "loop.for"() <{loop_name = "i", lower = 0 : i64, upper = -1 : i64, step = 1 : i64, kind = "serial"}> ({
  ^bb0(%i: index):
  }) : () -> ()
  func.return
}

// -----

func.func @operand_with_static_upper(%n: index) {
  // expected-error@+1 {{loop.for 'i': has a run-time upper bound operand, but its upper property is 8, not -1}}
  "loop.for"(%n) <{loop_name = "i", lower = 0 : i64, upper = 8 : i64, step = 1 : i64, kind = "serial"}> ({
  ^bb0(%i: index):
  }) : (index) -> ()
  func.return
}
