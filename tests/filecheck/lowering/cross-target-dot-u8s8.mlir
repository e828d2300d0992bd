// RUN: mini-opt %s --mcpu aarch64-linux-gnu -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'aarch64-linux-gnu -mcpu=neoverse-v1' -p convert-to-llvm | filecheck %s
// RUN: mini-opt %s --mcpu 'riscv64-linux-gnu -mattr=+v' -p convert-to-llvm | filecheck %s

// Another architecture has no VNNI: the u8 x s8 dot product gets its definition in shifts and multiplies (the
// portable lowering), never an `llvm.x86.*` intrinsic.
func.func @dot(%acc: vector<32xi32>, %a: vector<32xi32>, %b: vector<32xi32>) -> vector<32xi32> {
  %r = llvmx.dot_u8s8 %acc, %a, %b : vector<32xi32>
  func.return %r : vector<32xi32>
}

// CHECK-LABEL: llvm.func @dot
// CHECK-NOT:   llvm.call_intrinsic
// CHECK-COUNT-4: llvm.mul %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK-NOT:   llvm.call_intrinsic
// CHECK:       llvm.return
