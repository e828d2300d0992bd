// RUN: mini-opt %s -p graph-to-te | filecheck %s --check-prefix=TE
// RUN: mini-opt %s -p graph-to-te,te-to-loop | filecheck %s --check-prefix=LOOP
// RUN: mini-opt %s -p graph-to-te,te-to-loop,loop-to-scf | filecheck %s --check-prefix=SCF
// RUN: mini-opt %s -p lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM

// An external call stays one opaque call at every level: te.call_extern, then loop.call_extern on buffers (its
// result a new buffer, or the output parameter when returned), then a call through a function-pointer parameter.

func.func @main(%x: tensor<1x8xf32>, %w: tensor<4x8xf32>) -> tensor<1x4xf32> {
  %y = graph.call_extern "env.linear" (%x, %w) : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
  %r = graph.relu %y : tensor<1x4xf32>
  %z = graph.call_extern "env.relu" (%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %z : tensor<1x4xf32>
}

// TE:      %y = te.call_extern "env.linear"(%x, %w) : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
// TE:      %z = te.call_extern "env.relu"(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>

// LOOP:      func.func @main(%x: memref<1x8xf32>, %w: memref<4x8xf32>, %out0: memref<1x4xf32>)
// LOOP-NEXT:   %y = loop.alloc "global" : memref<1x4xf32>
// LOOP-NEXT:   loop.call_extern "env.linear"(%x, %w, %y) {num_outputs = 1 : i64} : memref<1x8xf32>, memref<4x8xf32>, memref<1x4xf32>
// LOOP-NEXT:   %r = loop.alloc "global" : memref<1x4xf32>
// LOOP-NEXT:   func.call @relu_0(%y, %r)
// LOOP-NEXT:   loop.call_extern "env.relu"(%r, %out0) {num_outputs = 1 : i64} : memref<1x4xf32>, memref<1x4xf32>
// LOOP-NEXT:   func.return

// SCF:      func.func @main(%x: memref<1x8xf32>, %w: memref<4x8xf32>, %out0: memref<1x4xf32>, %extern: !llvm.ptr, %extern_1: !llvm.ptr, %extern_status: !llvm.ptr)
// SCF-SAME:   minimlc.externs = [{callee = "env.linear", slot = 3 : i64, buffers = [memref<1x8xf32>, memref<4x8xf32>, memref<1x4xf32>], num_outputs = 1 : i64}, {callee = "env.relu", slot = 4 : i64, buffers = [memref<1x4xf32>, memref<1x4xf32>], num_outputs = 1 : i64}]
// SCF-SAME:   minimlc.extern_status = 5 : i64
// SCF:        loop.call_extern "env.linear" via %extern status %extern_status(%x, %w, %y)
// SCF:        loop.call_extern "env.relu" via %extern_1 status %extern_status(%r, %out0)

// The first failing call (non-zero result) is recorded in the status word: its parameter index + 1, its result.

// The native entry reads each parameter from its pointer array where first used: the function pointer (3) and the
// status word (5) just before the first call.

// LLVM:      define void @main_packed(ptr %[[PACKED:.*]])
// LLVM:        %[[LINEAR_SLOT:.*]] = getelementptr inbounds ptr, ptr %[[PACKED]], i32 3
// LLVM-NEXT:   %[[LINEAR:.*]] = load ptr, ptr %[[LINEAR_SLOT]]
// LLVM-NEXT:   %[[STATUS_SLOT:.*]] = getelementptr inbounds ptr, ptr %[[PACKED]], i32 5
// LLVM-NEXT:   %[[STATUS:.*]] = load ptr, ptr %[[STATUS_SLOT]]
// LLVM:        %[[ARGS:.*]] = alloca ptr, i64 3
// LLVM:        %[[FN:.*]] = bitcast ptr %[[LINEAR]] to i32 (ptr)*
// LLVM-NEXT:   %[[RC:.*]] = call i32 %[[FN]](ptr %[[ARGS]])
// LLVM-NEXT:   %[[FIRST:.*]] = load i32, ptr %[[STATUS]]
// LLVM-NEXT:   %[[CLEAR:.*]] = icmp eq i32 %[[FIRST]], 0
// LLVM-NEXT:   %[[FAILED:.*]] = icmp ne i32 %[[RC]], 0
// LLVM-NEXT:   %[[RECORD:.*]] = and i1 %[[CLEAR]], %[[FAILED]]
// LLVM-NEXT:   %[[SECOND:.*]] = getelementptr inbounds i32, ptr %[[STATUS]], i32 1
// LLVM-NEXT:   %[[OLD:.*]] = load i32, ptr %[[SECOND]]
// LLVM-NEXT:   %[[SITE:.*]] = select i1 %[[RECORD]], i32 4, i32 %[[FIRST]]
// LLVM-NEXT:   %[[VALUE:.*]] = select i1 %[[RECORD]], i32 %[[RC]], i32 %[[OLD]]
// LLVM-NEXT:   store i32 %[[SITE]], ptr %[[STATUS]]
// LLVM-NEXT:   store i32 %[[VALUE]], ptr %[[SECOND]]
