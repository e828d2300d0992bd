// RUN: mini-opt %s --split-input-file --verify-diagnostics
// RUN: sed -e 's/axis 2 is out/axis 3 is out/' %s | not mini-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG-TEXT
// RUN: sed -e 's/expected-error@+1 {{graph.add/expected-error@+2 {{graph.add/' %s | not mini-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG-LINE
// RUN: sed -e '/expected-error@above/d' %s | not mini-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// Every diagnostic must be expected on its op's line and every annotation met: same line, `@+N`/`@-N`, `@above`,
// `@below`; the expected text is a substring of the message. A mismatch is an error naming the line (exit 1).

func.func @same_line(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32> // expected-error {{axis 2 is out of range for rank 2}}
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @next_line(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible}}
  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @above(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // expected-error@above {{result shape (3,) does not match expected shape (2, 3)}}
  func.return %y : tensor<3xf32>
}

// -----

func.func @below_and_minus(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@below {{axis 5 is out of range}}
  %y = graph.softmax %x {axis = 5 : i64} : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @valid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// WRONG-TEXT:      mini-opt: error: stdin:10: unexpected error: graph.softmax: axis 2 is out of range for rank 2
// WRONG-TEXT-NEXT: mini-opt: error: stdin:10: expected error "axis 3 is out of range for rank 2" was not produced

// WRONG-LINE:      mini-opt: error: stdin:18: unexpected error: graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible
// WRONG-LINE-NEXT: mini-opt: error: stdin:17: expected error "graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible" was not produced

// MISSING:         mini-opt: error: stdin:24: unexpected error: graph.mul: result shape (3,) does not match expected shape (2, 3)
