// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @nonzero_bound(%x: tensor<2x3xf32>) -> (tensor<2x5xi64>, tensor<1xi64>) {
  // expected-error@+1 {{graph.nonzero: result shape (2, 5) does not match expected shape (2, 6)}}
  %y, %n = graph.nonzero %x : tensor<2x3xf32> -> (tensor<2x5xi64>, tensor<1xi64>)
  func.return %y, %n : tensor<2x5xi64>, tensor<1xi64>
}

// -----

func.func @nonzero_count(%x: tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<2xi64>) {
  // expected-error@+1 {{graph.nonzero: count must be a tensor<1xi64>, got tensor<2xi64>}}
  %y, %n = graph.nonzero %x : tensor<2x3xf32> -> (tensor<2x6xi64>, tensor<2xi64>)
  func.return %y, %n : tensor<2x6xi64>, tensor<2xi64>
}

// -----

func.func @compress_condition(%x: tensor<4x2xf32>, %c: tensor<2x2xi1>) -> (tensor<2x2xf32>, tensor<1xi64>) {
  // expected-error@+1 {{graph.compress: condition must be one non-empty axis, got shape (2, 2)}}
  %y, %n = graph.compress %x, %c {axis = 0 : i64} : (tensor<4x2xf32>, tensor<2x2xi1>) -> (tensor<2x2xf32>, tensor<1xi64>)
  func.return %y, %n : tensor<2x2xf32>, tensor<1xi64>
}

// -----

func.func @compress_bound(%x: tensor<4x2xf32>, %c: tensor<6xi1>) -> (tensor<6x2xf32>, tensor<1xi64>) {
  // expected-error@+1 {{graph.compress: result shape (6, 2) does not match expected shape (4, 2)}}
  %y, %n = graph.compress %x, %c {axis = 0 : i64} : (tensor<4x2xf32>, tensor<6xi1>) -> (tensor<6x2xf32>, tensor<1xi64>)
  func.return %y, %n : tensor<6x2xf32>, tensor<1xi64>
}

// -----

func.func @unique_rank(%x: tensor<2x3x1xf32>) -> (tensor<2x3x1xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>) {
  // expected-error@+1 {{graph.unique: input must be a non-empty vector or matrix, got shape (2, 3, 1)}}
  %v, %i, %inv, %c, %n = graph.unique %x {sorted} : tensor<2x3x1xf32> -> (tensor<2x3x1xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>)
  func.return %v, %i, %inv, %c, %n : tensor<2x3x1xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>
}

// -----

func.func @unique_counts(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>) {
  // expected-error@+1 {{graph.unique: indices, inverse and counts must have shape (2,)}}
  %v, %i, %inv, %c, %n = graph.unique %x {sorted} : tensor<2x3xf32> -> (tensor<2x3xf32>, tensor<6xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>)
  func.return %v, %i, %inv, %c, %n : tensor<2x3xf32>, tensor<6xi64>, tensor<2xi64>, tensor<2xi64>, tensor<1xi64>
}
