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
