// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x1xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.concat: input shapes (2, 3) and (3, 1) differ outside the concatenation axis 1}}
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.concat: axis 2 is out of range for rank 2}}
  %y = graph.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @concat_wrong_result(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.concat: result shape (2, 5) does not match expected shape (2, 4)}}
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @slice_out_of_bounds(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.slice: axis 1 reads indices 1 to 5 of an extent of 4}}
  %y = graph.slice %x {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>} : tensor<2x4xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.slice: step of axis 1 is zero}}
  %y = graph.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 0>} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @slice_rank(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.slice: starts [0], steps [1], input rank 2 and result rank 2 must all agree}}
  %y = graph.slice %x {starts = array<i64: 0>, steps = array<i64: 1>} : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @gather_index_range(%x: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.gather: indices [3] are out of range for axis 0 of extent 3}}
  %y = graph.gather %x {axis = 0 : i64, indices = array<i64: 0, 3>} : tensor<3x4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @gather_count(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.gather: result dims (3,) at axis 0 hold 3 entries, but 2 indices are given}}
  %y = graph.gather %x {axis = 0 : i64, indices = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @gather_outer_dims(%x: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{graph.gather: result shape (2, 5) does not keep the input's dims (3, 4) around axis 0}}
  %y = graph.gather %x {axis = 0 : i64, indices = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

func.func @expand_not_broadcastable(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.expand: input shape (3,) does not broadcast to the result shape (2, 4)}}
  %y = graph.expand %x : tensor<3xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @tile_repeats(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{graph.tile: repeats [2] must be 2 non-negative counts, one per input dim}}
  %y = graph.tile %x {repeats = array<i64: 2>} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

func.func @tile_wrong_result(%x: tensor<2x3xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{graph.tile: result shape (4, 6) does not match expected shape (4, 3)}}
  %y = graph.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x6xf32>
  func.return %y : tensor<4x6xf32>
}

// -----

func.func @where_not_broadcastable(%c: tensor<2xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{graph.where: operand shapes (2,), (3,), (3,) are not broadcast-compatible}}
  %y = graph.where %c, %x, %x : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error@+1 {{graph.reduce_sum: axes [1, 0] must be sorted, unique and in range for rank 2}}
  %y = graph.reduce_sum %x {axes = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.reduce_max: axes [2] must be sorted, unique and in range for rank 2}}
  %y = graph.reduce_max %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @reduce_keepdims_result(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.reduce_mean: result shape (2,) does not match expected shape (2, 1)}}
  %y = graph.reduce_mean %x {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @reduce_empty_axis(%x: tensor<2x0xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.reduce_prod: reduces an empty axis of the input shape (2, 0)}}
  %y = graph.reduce_prod %x {axes = array<i64: 1>} : tensor<2x0xf32> -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @comparison_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.less: operand shapes (2, 3) and (4,) are not broadcast-compatible}}
  %y = graph.less %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @unary_math_type_changes(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{attribute tensor<2x3xf32> expected from variable 'T', but got tensor<3x2xf32>}}
  %y = "graph.sqrt"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @add_mixed_types(%a: tensor<3xf32>, %b: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{graph.add: operand element types f32, i64 differ}}
  %y = graph.add %a, %b : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @trilu_rank(%x: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{graph.trilu: input must have rank 2 or more, got (5,)}}
  %y = graph.trilu %x {k = 0 : i64} : tensor<5xf32>
  func.return %y : tensor<5xf32>
}

// -----

func.func @less_not_bool(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{graph.less: result element type i64 does not match expected i1}}
  %y = graph.less %a, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// -----

func.func @and_of_floats(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{graph.and: element type f32 is not supported (expected one of i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)}}
  %y = graph.and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

func.func @exp_of_ints(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{graph.exp: element type i64 is not supported (expected one of f32, f64)}}
  %y = graph.exp %a : tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// -----

func.func @mod_of_bools(%a: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error@+1 {{graph.mod: element type i1 is not supported (expected one of f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)}}
  %y = graph.mod %a, %a {fmod} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %y : tensor<3xi1>
}

// -----

func.func @cast_shape(%a: tensor<3xf32>) -> tensor<4xi64> {
  // expected-error@+1 {{graph.cast: result shape (4,) differs from the input shape (3,)}}
  %y = graph.cast %a : tensor<3xf32> -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// -----

func.func @take_float_indices(%t: tensor<5x4xf32>, %i: tensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{graph.take: element type f32 is not supported (expected one of i32, i64)}}
  %y = graph.take %t, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

func.func @take_shape(%t: tensor<5x4xf32>, %i: tensor<2xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{graph.take: result shape (3, 4) does not match expected shape (2, 4)}}
  %y = graph.take %t, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

func.func @take_along_axis_rank(%t: tensor<5x4xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error@+1 {{graph.take_along_axis: indices shape (2,) must have the input's rank and fit its shape (5, 4) outside axis 0}}
  %y = graph.take_along_axis %t, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @cumsum_axis(%x: tensor<5xi64>) -> tensor<5xi64> {
  // expected-error@+1 {{graph.cumsum: axis 1 is out of range for rank 1}}
  %y = graph.cumsum %x {axis = 1 : i64} : tensor<5xi64> -> tensor<5xi64>
  func.return %y : tensor<5xi64>
}

// -----

func.func @argmax_shape(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  // expected-error@+1 {{graph.argmax: result shape (2,) does not match expected shape (2, 1)}}
  %y = graph.argmax %x {axis = 1 : i64, keepdims} : tensor<2x5xf32> -> tensor<2xi64>
  func.return %y : tensor<2xi64>
}

// -----

func.func @trilu_type_changes(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{attribute tensor<2x3xf32> expected from variable 'T', but got tensor<3x2xf32>}}
  %y = "graph.trilu"(%x) <{k = 0 : i64}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
