// RUN: mini-opt %s -p loop-outline-parallel | filecheck %s

// The body moves to @<function>_<loop>_body; captured buffers and scalars travel in a stack struct, constants are
// cloned, the induction variable is lower + task * step; a perfectly nested parallel loop joins the task range
// (2 x 64 tasks, the inner index fastest).
func.func private @kernel(%x: memref<4x64xf32> {llvm.noalias}, %y: memref<4x64xf32> {llvm.noalias}, %s: f32) {
  %two = arith.constant 2.0 : f32
  loop.for "i" %i = 1 to 4 step 2 parallel {
    loop.for "j" %j = 0 to 64 step 1 parallel {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %p = arith.mulf %v, %two : f32
      %q = arith.addf %p, %s : f32
      memref.store %q, %y[%i, %j] : memref<4x64xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func private @kernel(%x: memref<4x64xf32> {llvm.noalias}, %y: memref<4x64xf32> {llvm.noalias}, %s: f32, %pool: !llvm.ptr) attributes {minimlc.pool = 3 : i64} {
// CHECK-NEXT:    %0 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %ctx = llvm.alloca %0 x !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)> {alignment = 32 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %1 = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %2 = builtin.unrealized_conversion_cast %x : memref<4x64xf32> to !llvm.ptr
// CHECK-NEXT:    %3 = llvm.insertvalue %2, %1[0] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %4 = llvm.insertvalue %s, %3[1] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %5 = builtin.unrealized_conversion_cast %y : memref<4x64xf32> to !llvm.ptr
// CHECK-NEXT:    %6 = llvm.insertvalue %5, %4[2] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    llvm.store %6, %ctx : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>, !llvm.ptr
// CHECK-NEXT:    %7 = llvm.mlir.addressof @kernel_i_body : !llvm.ptr
// CHECK-NEXT:    %8 = llvm.mlir.constant(128) : i64
// CHECK-NEXT:    func.call @minimlc_parallel_for(%pool, %7, %ctx, %8) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @kernel_i_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %0 = llvm.load %ctx : !llvm.ptr -> !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %1 = llvm.extractvalue %0[0] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4x64xf32>
// CHECK-NEXT:    %s = llvm.extractvalue %0[1] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %2 = llvm.extractvalue %0[2] : !llvm.struct<(!llvm.ptr, f32, !llvm.ptr)>
// CHECK-NEXT:    %y = builtin.unrealized_conversion_cast %2 : !llvm.ptr to memref<4x64xf32>
// CHECK-NEXT:    %3 = arith.index_cast %task : i64 to index
// CHECK-NEXT:    %4 = arith.constant 64 : index
// CHECK-NEXT:    %j = arith.remui %3, %4 : index
// CHECK-NEXT:    %5 = arith.divui %3, %4 : index
// CHECK-NEXT:    %6 = arith.constant 2 : index
// CHECK-NEXT:    %7 = arith.muli %5, %6 : index
// CHECK-NEXT:    %8 = arith.constant 1 : index
// CHECK-NEXT:    %i = arith.addi %7, %8 : index
// CHECK-NEXT:    %v = memref.load %x[%i, %j] : memref<4x64xf32>
// CHECK-NEXT:    %p = arith.mulf %v, %two : f32
// CHECK-NEXT:    %q = arith.addf %p, %s : f32
// CHECK-NEXT:    memref.store %q, %y[%i, %j] : memref<4x64xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// The pool becomes a trailing parameter of every function on the way from the entry, recorded in minimlc.pool;
// weights used inside an outlined loop are hoisted in front of it, for loop-to-scf to bind in the entry.
func.func @main(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {minimlc.entry} {
  %s = arith.constant 0.5 : f32
  func.call @kernel(%x, %y, %s) : (memref<4x64xf32>, memref<4x64xf32>, f32) -> ()
  loop.for "k" %k = 0 to 64 step 1 parallel {
    %w = loop.weight "bias" : memref<64xf32>
    %b = memref.load %w[%k] : memref<64xf32>
    memref.store %b, %y[%k, %k] : memref<4x64xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %pool: !llvm.ptr) attributes {minimlc.entry, minimlc.pool = 2 : i64} {
// CHECK-NEXT:    %0 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %ctx = llvm.alloca %0 x !llvm.struct<(!llvm.ptr, !llvm.ptr)> {alignment = 32 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    %s = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    func.call @kernel(%x, %y, %s, %pool) : (memref<4x64xf32>, memref<4x64xf32>, f32, !llvm.ptr) -> ()
// CHECK-NEXT:    %w = loop.weight "bias" : memref<64xf32>
// CHECK-NEXT:    %1 = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    %2 = builtin.unrealized_conversion_cast %w : memref<64xf32> to !llvm.ptr
// CHECK-NEXT:    %3 = llvm.insertvalue %2, %1[0] : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    %4 = builtin.unrealized_conversion_cast %y : memref<4x64xf32> to !llvm.ptr
// CHECK-NEXT:    %5 = llvm.insertvalue %4, %3[1] : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    llvm.store %5, %ctx : !llvm.struct<(!llvm.ptr, !llvm.ptr)>, !llvm.ptr
// CHECK-NEXT:    %6 = llvm.mlir.addressof @main_k_body : !llvm.ptr
// CHECK-NEXT:    %7 = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    func.call @minimlc_parallel_for(%pool, %6, %ctx, %7) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @main_k_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:    %0 = llvm.load %ctx : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    %1 = llvm.extractvalue %0[0] : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    %w = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<64xf32>
// CHECK-NEXT:    %2 = llvm.extractvalue %0[1] : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:    %y = builtin.unrealized_conversion_cast %2 : !llvm.ptr to memref<4x64xf32>
// CHECK-NEXT:    %k = arith.index_cast %task : i64 to index
// CHECK-NEXT:    %b = memref.load %w[%k] : memref<64xf32>
// CHECK-NEXT:    memref.store %b, %y[%k, %k] : memref<4x64xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A loop that captures nothing gets a null context; a kernel only referenced by loop.precompute runs at load time
// without a pool, so it keeps its signature and its parallel loop.
func.func @scratch() attributes {minimlc.entry} {
  loop.for "t" %t = 0 to 4 step 1 parallel {
    %tmp = loop.alloc "local" : memref<16xf32>
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %tmp[%c0] : memref<16xf32>
  }
  func.return
}
func.func private @fill(%out: memref<8xf32>) {
  loop.for "p" %p = 0 to 8 step 1 parallel {
    %c = arith.constant 1.0 : f32
    memref.store %c, %out[%p] : memref<8xf32>
  }
  func.return
}
func.func @uses_precompute(%x: memref<8xf32>) attributes {minimlc.entry} {
  %w = loop.weight "w" : memref<8xf32>
  %packed = loop.precompute @fill(%w) : (memref<8xf32>) -> memref<8xf32>
  func.return
}

// CHECK-LABEL: func.func @scratch(%pool: !llvm.ptr) attributes {minimlc.entry, minimlc.pool = 0 : i64} {
// CHECK-NEXT:    %ctx = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    %0 = llvm.mlir.addressof @scratch_t_body : !llvm.ptr
// CHECK-NEXT:    %1 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    func.call @minimlc_parallel_for(%pool, %0, %ctx, %1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @scratch_t_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:    %t = arith.index_cast %task : i64 to index
// CHECK-NEXT:    %tmp = loop.alloc "local" : memref<16xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %one = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    memref.store %one, %tmp[%c0] : memref<16xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func private @fill(%out: memref<8xf32>) {
// CHECK-NEXT:    loop.for "p" %p = 0 to 8 step 1 parallel {
// CHECK-NEXT:      %c = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      memref.store %c, %out[%p] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @uses_precompute(%x: memref<8xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:    %w = loop.weight "w" : memref<8xf32>
// CHECK-NEXT:    %packed = loop.precompute @fill(%w) : (memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A local scratch buffer used only inside the parallel loop (a register tile) is private to each task: cloned into
// the body, not shared through the context.
func.func private @tiled(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<8xf32>
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "j" %j = 0 to 8 step 1 serial {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %tile[%j] : memref<8xf32>
    }
    loop.for "j2" %j2 = 0 to 8 step 1 serial {
      %w = memref.load %tile[%j2] : memref<8xf32>
      memref.store %w, %y[%i, %j2] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func private @tiled(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}, %pool: !llvm.ptr) attributes {minimlc.pool = 2 : i64} {
// CHECK-NEXT:    %0 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %ctx = llvm.alloca %0 x !llvm.struct<(!llvm.ptr, !llvm.ptr)> {alignment = 32 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    %1 = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NOT:     loop.alloc
// CHECK:         func.call @minimlc_parallel_for
// CHECK-LABEL: func.func private @tiled_i_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<8xf32>
// CHECK-NEXT:    %0 = llvm.load %ctx : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// A parallel loop that is not the only op of its parent's body stays in the task body (it runs serially).
func.func private @nested(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4x8xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 parallel {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %y[%i, %i] : memref<4x8xf32>
    loop.for "j" %j = 0 to 8 step 1 parallel {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func private @nested(
// CHECK:         %{{.*}} = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    func.call @minimlc_parallel_for
// CHECK-LABEL: func.func private @nested_i_body(%ctx: !llvm.ptr, %task: i64) {
// CHECK:         loop.for "j" %j = 0 to 8 step 1 parallel {
// CHECK-LABEL: func.func private @minimlc_parallel_for(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
