// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @lanes_differ(%c: vector<4xi1>, %a: vector<8xf32>) -> vector<8xf32> {
  // expected-error@+1 {{llvmx.select: condition vector<4xi1> and values vector<8xf32> differ in lanes}}
  %r = llvmx.select %c, %a, %a : vector<4xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
}

// -----

func.func @scalar_condition(%c: i1, %a: vector<8xf32>) -> vector<8xf32> {
  // expected-error@+1 {{operand 'cond' at position 0 does not verify}}
  %r = "llvmx.select"(%c, %a, %a) : (i1, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  func.return %r : vector<8xf32>
}

// -----

func.func @integer_compare(%a: vector<8xi32>) -> vector<8xi1> {
  %c = llvmx.fcmp %a, %a {predicate = 4 : i64} : vector<8xi32> -> vector<8xi1>
  func.return %c : vector<8xi1>
}

// expected-error@unknown {{Unexpected attribute i32}}

// -----

func.func @dot_lanes_differ(%acc: vector<16xi32>, %b: vector<8xi32>) -> vector<16xi32> {
  // expected-error@+1 {{operand 'rhs' at position 2 does not verify}}
  %r = "llvmx.dot_u8s8"(%acc, %acc, %b) : (vector<16xi32>, vector<16xi32>, vector<8xi32>) -> vector<16xi32>
  func.return %r : vector<16xi32>
}

// -----

func.func @dot_of_floats(%a: vector<16xf32>) -> vector<16xf32> {
  // expected-error@+1 {{operand 'acc' at position 0 does not verify}}
  %r = "llvmx.dot_u8s8"(%a, %a, %a) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
  func.return %r : vector<16xf32>
}

// -----

func.func @dot_of_matrices(%a: vector<4x4xi32>) -> vector<4x4xi32> {
  // expected-error@+1 {{llvmx.dot_u8s8: vector<4x4xi32> is not a one-dimensional vector of i32}}
  %r = "llvmx.dot_u8s8"(%a, %a, %a) : (vector<4x4xi32>, vector<4x4xi32>, vector<4x4xi32>) -> vector<4x4xi32>
  func.return %r : vector<4x4xi32>
}

// -----

func.func @dot_bf16_lanes_differ(%acc: vector<16xf32>, %b: vector<8xi32>) -> vector<16xf32> {
  // expected-error@+1 {{llvmx.dot_bf16: words vector<8xi32> and lanes vector<16xf32> differ in length}}
  %r = "llvmx.dot_bf16"(%acc, %b, %b) : (vector<16xf32>, vector<8xi32>, vector<8xi32>) -> vector<16xf32>
  func.return %r : vector<16xf32>
}

// -----

func.func @dot_bf16_of_integers(%a: vector<16xi32>) -> vector<16xi32> {
  // expected-error@+1 {{operand 'acc' at position 0 does not verify}}
  %r = "llvmx.dot_bf16"(%a, %a, %a) : (vector<16xi32>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
  func.return %r : vector<16xi32>
}

// -----

func.func @dot_bf16_words_differ(%acc: vector<4xf32>, %a: vector<4xi32>, %b: vector<8xi32>) -> vector<4xf32> {
  // expected-error@+1 {{operand 'rhs' at position 2 does not verify}}
  %r = "llvmx.dot_bf16"(%acc, %a, %b) : (vector<4xf32>, vector<4xi32>, vector<8xi32>) -> vector<4xf32>
  func.return %r : vector<4xf32>
}
