// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @per_lane(%a: vector<8xf32>, %b: vector<8xf32>) -> vector<8xf32> {
  %c = llvmx.fcmp %a, %b {predicate = 4 : i64} : vector<8xf32> -> vector<8xi1>
  %r = llvmx.select %c, %a, %b : vector<8xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
}

// CHECK:      %c = llvmx.fcmp %a, %b {predicate = 4 : i64} : vector<8xf32> -> vector<8xi1>
// CHECK-NEXT: %r = llvmx.select %c, %a, %b : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: func.return %r : vector<8xf32>
