// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s
// RUN: mini-opt %s -t llvm | filecheck %s --check-prefix=LLVM

llvm.func @call(%fn: !llvm.ptr, %args: !llvm.ptr) -> i32 {
  %r = llvmx.call_indirect %fn(%args) : (!llvm.ptr) -> i32
  llvm.return %r : i32
}

// CHECK: %r = llvmx.call_indirect %fn(%args) : (!llvm.ptr) -> i32

// LLVM:      %[[FN:.*]] = bitcast ptr %{{.*}} to i32 (ptr)*
// LLVM-NEXT: %[[R:.*]] = call i32 %[[FN]](ptr %{{.*}})
// LLVM-NEXT: ret i32 %[[R]]
