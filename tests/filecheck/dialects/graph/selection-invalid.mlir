// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @scatter_reduction(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_elements: reduction 'or' is not one of none, add, mul, max, min}}
  %y = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "or"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_elements_updates(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_elements: updates shape (2, 3) must be the indices' (2, 4)}}
  %y = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_elements_indices(%x: tensor<3x4xf32>, %i: tensor<2x5xi64>, %u: tensor<2x5xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_elements: indices shape (2, 5) must have the data's rank and fit its shape (3, 4) outside axis 0}}
  %y = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3x4xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_float_indices(%x: tensor<3x4xf32>, %i: tensor<2x4xf32>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_elements: element type f32 is not supported (expected one of i32, i64)}}
  %y = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_nd_updates(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_nd: updates shape (2, 3) must be (2, 4)}}
  %y = graph.scatter_nd %x, %i, %u {reduction = "none"} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @scatter_nd_depth(%x: tensor<3x4xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.scatter_nd: indices shape (2, 3) must end in a dim from 1 to the data's rank 2}}
  %y = graph.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<3x4xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @gather_nd_batch(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.gather_nd: batch_dims 1 must be leading dims shared by data (3, 4) and indices (2, 1)}}
  %y = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @gather_nd_shape(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.gather_nd: result shape (2,) does not match expected shape (2, 4)}}
  %y = graph.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @one_hot_values(%i: tensor<5xi64>, %v: tensor<3xf32>) -> tensor<5x3xf32> {
  // expected-error@+1 {{graph.one_hot: values must hold (off, on), got shape (3,)}}
  %y = graph.one_hot %i, %v {axis = 1 : i64, depth = 3 : i64} : (tensor<5xi64>, tensor<3xf32>) -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}

// -----

func.func @one_hot_shape(%i: tensor<5xi64>, %v: tensor<2xf32>) -> tensor<5x3xf32> {
  // expected-error@+1 {{graph.one_hot: result shape (5, 3) does not match expected shape (3, 5)}}
  %y = graph.one_hot %i, %v {axis = 0 : i64, depth = 3 : i64} : (tensor<5xi64>, tensor<2xf32>) -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}

// -----

func.func @top_k_k(%x: tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  // expected-error@+1 {{graph.top_k: k = 5 must be from 1 to the axis' extent 4}}
  %v, %i = graph.top_k %x {axis = 1 : i64, k = 5 : i64, largest} : tensor<3x4xf32> -> (tensor<3x5xf32>, tensor<3x5xi64>)
  func.return %v, %i : tensor<3x5xf32>, tensor<3x5xi64>
}

// -----

func.func @top_k_bool(%x: tensor<3x4xi1>) -> (tensor<3x2xi1>, tensor<3x2xi64>) {
  // expected-error@+1 {{graph.top_k: element type i1 is not supported (expected one of f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)}}
  %v, %i = graph.top_k %x {axis = 1 : i64, k = 2 : i64} : tensor<3x4xi1> -> (tensor<3x2xi1>, tensor<3x2xi64>)
  func.return %v, %i : tensor<3x2xi1>, tensor<3x2xi64>
}
