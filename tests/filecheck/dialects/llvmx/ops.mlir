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

func.func @dot_u8s8(%acc: vector<16xi32>, %a: vector<16xi32>, %b: vector<16xi32>, %s: i32) -> vector<16xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<16xi32>
  %t = llvmx.dot_u8s8 %s, %s, %s : i32
  func.return %r : vector<16xi32>
}

// CHECK:      %r = llvmx.dot_u8s8 %acc, %a, %b : vector<16xi32>
// CHECK-NEXT: %t = llvmx.dot_u8s8 %s, %s, %s : i32
// CHECK-NEXT: func.return %r : vector<16xi32>

func.func @dot_bf16(%acc: vector<16xf32>, %a: vector<16xi32>, %b: vector<16xi32>, %s: f32, %w: i32) -> vector<16xf32> {
  %r = llvmx.dot_bf16 %acc, %a, %b : vector<16xf32>, vector<16xi32>
  %t = llvmx.dot_bf16 %s, %w, %w : f32, i32
  func.return %r : vector<16xf32>
}

// CHECK:      %r = llvmx.dot_bf16 %acc, %a, %b : vector<16xf32>, vector<16xi32>
// CHECK-NEXT: %t = llvmx.dot_bf16 %s, %w, %w : f32, i32
// CHECK-NEXT: func.return %r : vector<16xf32>

func.func @pack_bf16(%lo: vector<16xf32>, %hi: vector<16xf32>, %s: f32) -> vector<16xi32> {
  %w = llvmx.pack_bf16 %lo, %hi : vector<16xf32> -> vector<16xi32>
  %t = llvmx.pack_bf16 %s, %s : f32 -> i32
  func.return %w : vector<16xi32>
}

// CHECK:      %w = llvmx.pack_bf16 %lo, %hi : vector<16xf32> -> vector<16xi32>
// CHECK-NEXT: %t = llvmx.pack_bf16 %s, %s : f32 -> i32
// CHECK-NEXT: func.return %w : vector<16xi32>
