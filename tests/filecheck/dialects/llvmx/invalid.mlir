// RUN: mini-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @lanes_differ(%c: vector<4xi1>, %a: vector<8xf32>) -> vector<8xf32> {
  %r = llvmx.select %c, %a, %a : vector<4xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
}

// CHECK: llvmx.select: condition vector<4xi1> and values vector<8xf32> differ in lanes

// -----

func.func @scalar_condition(%c: i1, %a: vector<8xf32>) -> vector<8xf32> {
  %r = "llvmx.select"(%c, %a, %a) : (i1, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  func.return %r : vector<8xf32>
}

// CHECK: operand 'cond' at position 0 does not verify

// -----

func.func @integer_compare(%a: vector<8xi32>) -> vector<8xi1> {
  %c = llvmx.fcmp %a, %a {predicate = 4 : i64} : vector<8xi32> -> vector<8xi1>
  func.return %c : vector<8xi1>
}

// CHECK: Unexpected attribute i32
