// RUN: mini-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: mini-opt %s --split-input-file --verify-diagnostics --print-op-generic | mini-opt --split-input-file | filecheck %s

// Run-time extents: `te.dim` reads one, `te.compute` takes one index operand per `?` of its result type (after its
// output indices) and one per `?` reduction extent (after its reduction axes); a body may use an outside index value.
func.func @row_mean(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %n = te.dim %x[0] : tensor<?x?xf32>
  %s = te.dim %x[1] : tensor<?x?xf32>
  %sum = te.compute "row_sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %x[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  }
  %mean = te.compute "row_mean" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %sum[%i] : tensor<?xf32>
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.divf %v, %f : f32
    te.yield %r : f32
  }
  func.return %mean : tensor<?xf32>
}

// CHECK-LABEL: func.func @row_mean(%x: tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    %n = te.dim %x[0] : tensor<?x?xf32>
// CHECK-NEXT:    %s = te.dim %x[1] : tensor<?x?xf32>
// CHECK-NEXT:    %sum = te.compute "row_sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
// CHECK-NEXT:      %v = te.read %x[%i, %k] : tensor<?x?xf32>
// CHECK-NEXT:      te.yield %v : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %mean = te.compute "row_mean" (%i_1) [%n] -> tensor<?xf32> {
// CHECK-NEXT:      %v_1 = te.read %sum[%i_1] : tensor<?xf32>
// CHECK-NEXT:      %c = arith.index_cast %s : index to i64

// -----

// Static and run-time reduction extents mixed, a static result; the extent of a static dimension.
func.func @column_sum(%x: tensor<?x4x8xf32>) -> (tensor<8xf32>, index) {
  %n = te.dim %x[0] : tensor<?x4x8xf32>
  %four = te.dim %x[1] : tensor<?x4x8xf32>
  %y = te.compute "column_sum" (%j) reduce sum (%b : ?, %r : 4) [%n] -> tensor<8xf32> {
    %v = te.read %x[%b, %r, %j] : tensor<?x4x8xf32>
    te.yield %v : f32
  }
  func.return %y, %four : tensor<8xf32>, index
}

// CHECK-LABEL: func.func @column_sum(%x: tensor<?x4x8xf32>) -> (tensor<8xf32>, index) {
// CHECK-NEXT:    %n = te.dim %x[0] : tensor<?x4x8xf32>
// CHECK-NEXT:    %four = te.dim %x[1] : tensor<?x4x8xf32>
// CHECK-NEXT:    %y = te.compute "column_sum" (%j) reduce sum (%b : ?, %r : 4) [%n] -> tensor<8xf32> {

// -----

// Several `?`s, kept in order; a static compute prints no brackets.
func.func @outer(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %m = te.dim %a[0] : tensor<?xf32>
  %n = te.dim %b[0] : tensor<?xf32>
  %y = te.compute "outer" (%i, %j) [%m, %n] -> tensor<?x?xf32> {
    %u = te.read %a[%i] : tensor<?xf32>
    %v = te.read %b[%j] : tensor<?xf32>
    %p = arith.mulf %u, %v : f32
    te.yield %p : f32
  }
  %z = te.compute "fill" (%i) -> tensor<4xf32> {
    %c = arith.constant 1.000000e+00 : f32
    te.yield %c : f32
  }
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @outer(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK:         %y = te.compute "outer" (%i, %j) [%m, %n] -> tensor<?x?xf32> {
// CHECK:         %z = te.compute "fill" (%i_1) -> tensor<4xf32> {

// -----

func.func @dim_out_of_range(%x: tensor<?x8xf32>) -> index {
  // expected-error@+1 {{te.dim: axis 2 is out of range for a tensor of rank 2}}
  %n = te.dim %x[2] : tensor<?x8xf32>
  func.return %n : index
}

// -----

func.func @missing_size(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{te.compute 'copy': has 0 size operands, expected 1 (1 for the result's '?' dimensions + 0 for run-time reduction extents)}}
  %y = te.compute "copy" (%i) -> tensor<?xf32> {
    %v = te.read %x[%i] : tensor<?xf32>
    te.yield %v : f32
  }
  func.return %y : tensor<?xf32>
}

// -----

func.func @extra_size(%x: tensor<?xf32>, %n: index) -> tensor<1xf32> {
  // expected-error@+1 {{te.compute 'sum': has 2 size operands, expected 1 (0 for the result's '?' dimensions + 1 for run-time reduction extents)}}
  %y = te.compute "sum" (%i) [%n] reduce sum (%k : ?) [%n] -> tensor<1xf32> {
    %v = te.read %x[%k] : tensor<?xf32>
    te.yield %v : f32
  }
  func.return %y : tensor<1xf32>
}

// -----

func.func @negative_extent(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{te.compute 'bad': reduction extents must be positive (or -1, a run-time extent)}}
  %y = "te.compute"() <{tag = "bad", reduce_extents = array<i64: -2>, combiner = "sum"}> ({
  ^bb0(%i: index, %k: index):
    %v = te.read %x[%k] : tensor<4xf32>
    te.yield %v : f32
  }) : () -> tensor<1xf32>
  func.return %y : tensor<1xf32>
}
