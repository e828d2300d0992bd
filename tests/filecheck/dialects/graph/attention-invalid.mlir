// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @rank(%q: tensor<8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>) -> tensor<8x5xf32> {
  // expected-error@+1 {{graph.attention: query, key and value_t must have one rank, at least 2}}
  %y = graph.attention %q, %k, %vt, %s : (tensor<8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<8x5xf32>
  func.return %y : tensor<8x5xf32>
}

// -----

func.func @batch(%q: tensor<3x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>) -> tensor<3x8x5xf32> {
  // expected-error@+1 {{graph.attention: batch axes of query (3, 8, 4), key (2, 6, 4), value_t (2, 5, 6) differ}}
  %y = graph.attention %q, %k, %vt, %s : (tensor<3x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<3x8x5xf32>
  func.return %y : tensor<3x8x5xf32>
}

// -----

func.func @chain(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x7xf32>, %s: tensor<1xf32>) -> tensor<2x8x5xf32> {
  // expected-error@+1 {{graph.attention: query (2, 8, 4), key (2, 6, 4) and value_t (2, 5, 7) do not chain ([.., S, D], [.., T, D], [.., E, T])}}
  %y = graph.attention %q, %k, %vt, %s : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x7xf32>, tensor<1xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// -----

func.func @scale(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<2xf32>) -> tensor<2x8x5xf32> {
  // expected-error@+1 {{graph.attention: scale must hold one element, got shape (2,)}}
  %y = graph.attention %q, %k, %vt, %s : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<2xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// -----

func.func @bias(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>, %b: tensor<8x5xf32>) -> tensor<2x8x5xf32> {
  // expected-error@+1 {{graph.attention: bias shape (8, 5) does not broadcast to the scores' (2, 8, 6)}}
  %y = graph.attention %q, %k, %vt, %s, %b : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>, tensor<8x5xf32>) -> tensor<2x8x5xf32>
  func.return %y : tensor<2x8x5xf32>
}

// -----

func.func @result(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %vt: tensor<2x5x6xf32>, %s: tensor<1xf32>) -> tensor<2x8x6xf32> {
  // expected-error@+1 {{graph.attention: result shape (2, 8, 6) does not match expected shape (2, 8, 5)}}
  %y = graph.attention %q, %k, %vt, %s : (tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<1xf32>) -> tensor<2x8x6xf32>
  func.return %y : tensor<2x8x6xf32>
}
