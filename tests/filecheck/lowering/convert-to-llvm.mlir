// RUN: mini-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm | filecheck %s

func.func @load_store(%m: memref<4x8xf32>, %s: memref<f32>, %i: index, %j: index) {
  %v = memref.load %m[%i, %j] : memref<4x8xf32>
  memref.store %v, %s[] : memref<f32>
  func.return
}

// CHECK:      llvm.func @load_store(%m: !llvm.ptr, %s: !llvm.ptr, %i: i64, %j: i64) {
// CHECK-NEXT:   %[[PTR:.*]] = llvm.getelementptr inbounds %m[%i, %j] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:   %v = llvm.load %[[PTR]] : !llvm.ptr -> f32
// CHECK-NEXT:   llvm.store %v, %s : f32, !llvm.ptr
// CHECK-NEXT:   llvm.return

// -----

func.func @buffers(%c: i1) {
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<3x5xf32>
  %idx = memref.alloc() : memref<2xindex>
  cf.cond_br %c, ^local, ^done
^local:
  %acc = memref.alloca() {alignment = 64 : i64} : memref<f32>
  cf.br ^done
^done:
  memref.dealloc %tmp : memref<3x5xf32>
  memref.dealloc %idx : memref<2xindex>
  func.return
}

// The alloca is hoisted from ^local into the entry block; heap sizes are rounded up to 64 bytes.
// CHECK:      llvm.func @buffers(%c: i1) {
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %acc = llvm.alloca %[[ONE]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:   %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %[[SIZE:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %tmp = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:   %[[ALIGN2:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %[[SIZE2:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %idx = llvm.call @aligned_alloc(%[[ALIGN2]], %[[SIZE2]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:   llvm.cond_br %c, ^local, ^done
// CHECK-NEXT: ^local:
// CHECK-NEXT:   llvm.br ^done
// CHECK-NEXT: ^done:
// CHECK-NEXT:   llvm.call @free(%tmp) : (!llvm.ptr) -> ()
// CHECK-NEXT:   llvm.call @free(%idx) : (!llvm.ptr) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @free(!llvm.ptr)

// -----

func.func private @helper(%x: f32) -> f32 {
  func.return %x : f32
}
func.func private @external(memref<4xf32>) -> index
func.func @caller(%x: f32, %m: memref<4xf32>) -> index {
  %y = func.call @helper(%x) : (f32) -> f32
  %n = func.call @external(%m) : (memref<4xf32>) -> index
  func.return %n : index
}

// CHECK:      llvm.func internal @helper(%x: f32) -> f32 {
// CHECK-NEXT:   llvm.return %x : f32
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @external(!llvm.ptr) -> i64
// CHECK-NEXT: llvm.func @caller(%[[X:.*]]: f32, %m: !llvm.ptr) -> i64 {
// CHECK-NEXT:   %y = llvm.call @helper(%[[X]]) : (f32) -> f32
// CHECK-NEXT:   %n = llvm.call @external(%m) : (!llvm.ptr) -> i64
// CHECK-NEXT:   llvm.return %n : i64

// -----

func.func @main(%x: memref<2x3xf32> {llvm.noalias}, %y: memref<6xf32> {llvm.noalias}, %unused: memref<4xf32>) attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %x[%c0, %c1] : memref<2x3xf32>
  memref.store %v, %y[%c1] : memref<6xf32>
  func.return
}

// An entry becomes @main_packed, its body reading each buffer from the array where first used (nothing for a
// buffer it never reads), and @main a wrapper that packs its arguments (no call with one argument per buffer).
// CHECK:      llvm.func @main_packed(%args: !llvm.ptr) attributes {minimlc.entry} {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %[[SLOT0:.*]] = llvm.getelementptr inbounds %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %x = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[AT:.*]] = llvm.getelementptr inbounds %x[%c0, %c1]
// CHECK-NEXT:   %v = llvm.load %[[AT]] : !llvm.ptr -> f32
// CHECK-NEXT:   %[[SLOT1:.*]] = llvm.getelementptr inbounds %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %y = llvm.load %[[SLOT1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[TO:.*]] = llvm.getelementptr inbounds %y[%c1]
// CHECK-NEXT:   llvm.store %v, %[[TO]] : f32, !llvm.ptr
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @main(%[[WX:x.*]]: !llvm.ptr {llvm.noalias}, %[[WY:y.*]]: !llvm.ptr {llvm.noalias}, %unused: !llvm.ptr) {
// CHECK-NEXT:   %[[COUNT:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:   %[[ARRAY:.*]] = llvm.alloca %[[COUNT]] x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:   %[[TO0:.*]] = llvm.getelementptr inbounds %[[ARRAY]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   llvm.store %[[WX]], %[[TO0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[TO1:.*]] = llvm.getelementptr inbounds %[[ARRAY]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   llvm.store %[[WY]], %[[TO1]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[TO2:.*]] = llvm.getelementptr inbounds %[[ARRAY]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   llvm.store %unused, %[[TO2]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   llvm.call @main_packed(%[[ARRAY]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:   llvm.return

// -----

func.func @loop(%m: memref<16xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 16 : index
  cf.br ^head(%c0 : index)
^head(%i: index):
  %more = arith.cmpi slt, %i, %n : index
  cf.cond_br %more, ^body, ^exit
^body:
  %v = arith.index_cast %i : index to i64
  memref.store %v, %m[%i] : memref<16xi64>
  %next = arith.addi %i, %c1 : index
  cf.br ^head(%next : index)
^exit:
  func.return
}

// Block arguments of type index become i64; index_cast to i64 disappears.
// CHECK:      llvm.func @loop(%m: !llvm.ptr) {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %n = llvm.mlir.constant(16) : i64
// CHECK-NEXT:   llvm.br ^head(%c0 : i64)
// CHECK-NEXT: ^head(%i: i64):
// CHECK-NEXT:   %more = llvm.icmp "slt" %i, %n : i64
// CHECK-NEXT:   llvm.cond_br %more, ^body, ^exit
// CHECK-NEXT: ^body:
// CHECK-NEXT:   %[[PTR:.*]] = llvm.getelementptr inbounds %m[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %i, %[[PTR]] : i64, !llvm.ptr
// CHECK-NEXT:   %next = llvm.add %i, %c1 : i64
// CHECK-NEXT:   llvm.br ^head(%next : i64)
// CHECK-NEXT: ^exit:
// CHECK-NEXT:   llvm.return

// -----

func.func @integers(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b overflow<nsw> : i32
  %1 = arith.subi %0, %b : i32
  %2 = arith.muli %1, %b overflow<nsw, nuw> : i32
  %3 = arith.divsi %2, %b : i32
  %4 = arith.divui %3, %b : i32
  %5 = arith.remsi %4, %b : i32
  %6 = arith.remui %5, %b : i32
  %7 = arith.andi %6, %b : i32
  %8 = arith.ori %7, %b : i32
  %9 = arith.xori %8, %b : i32
  %10 = arith.shli %9, %b : i32
  %11 = arith.shrsi %10, %b : i32
  %12 = arith.shrui %11, %b : i32
  %13 = arith.maxsi %12, %b : i32
  %14 = arith.minui %13, %b : i32
  %15 = arith.cmpi uge, %14, %b : i32
  %16 = arith.select %15, %14, %a : i32
  %17 = arith.ceildivui %16, %b : i32
  func.return %17 : i32
}

// CHECK:      llvm.func @integers(%a: i32, %b: i32) -> i32 {
// CHECK-NEXT:   %0 = llvm.add %a, %b overflow<nsw> : i32
// CHECK-NEXT:   %1 = llvm.sub %0, %b : i32
// CHECK-NEXT:   %2 = llvm.mul %1, %b overflow<nsw,nuw> : i32
// CHECK-NEXT:   %3 = llvm.sdiv %2, %b : i32
// CHECK-NEXT:   %4 = llvm.udiv %3, %b : i32
// CHECK-NEXT:   %5 = llvm.srem %4, %b : i32
// CHECK-NEXT:   %6 = llvm.urem %5, %b : i32
// CHECK-NEXT:   %7 = llvm.and %6, %b : i32
// CHECK-NEXT:   %8 = llvm.or %7, %b : i32
// CHECK-NEXT:   %9 = llvm.xor %8, %b : i32
// CHECK-NEXT:   %10 = llvm.shl %9, %b : i32
// CHECK-NEXT:   %11 = llvm.ashr %10, %b : i32
// CHECK-NEXT:   %12 = llvm.lshr %11, %b : i32
// CHECK-NEXT:   %13 = llvm.call_intrinsic "llvm.smax.i32"(%12, %b) : (i32, i32) -> i32
// CHECK-NEXT:   %14 = llvm.call_intrinsic "llvm.umin.i32"(%13, %b) : (i32, i32) -> i32
// CHECK-NEXT:   %15 = llvm.icmp "uge" %14, %b : i32
// CHECK-NEXT:   %16 = llvm.select %15, %14, %a : i1, i32
// CHECK-NEXT:   %17 = llvm.udiv %16, %b : i32
// CHECK-NEXT:   %18 = llvm.urem %16, %b : i32
// CHECK-NEXT:   %19 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %20 = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %21 = llvm.icmp "ne" %18, %19 : i32
// CHECK-NEXT:   %22 = llvm.add %17, %20 : i32
// CHECK-NEXT:   %23 = llvm.select %21, %22, %17 : i1, i32
// CHECK-NEXT:   llvm.return %23 : i32

// -----

func.func @floats(%x: f32, %y: f32) -> f32 {
  %0 = arith.addf %x, %y fastmath<fast> : f32
  %1 = arith.subf %0, %y fastmath<nnan,ninf> : f32
  %2 = arith.mulf %1, %y fastmath<contract> : f32
  %3 = arith.divf %2, %y : f32
  %4 = arith.negf %3 : f32
  %5 = arith.maximumf %4, %y fastmath<nnan> : f32
  %6 = arith.minimumf %5, %y : f32
  %7 = arith.maxnumf %6, %y : f32
  %8 = arith.minnumf %7, %y : f32
  %9 = arith.cmpf ogt, %8, %y fastmath<nnan> : f32
  %10 = arith.select %9, %8, %y : f32
  %11 = arith.constant 2.5 : f32
  %12 = arith.addf %10, %11 : f32
  func.return %12 : f32
}

// CHECK:      llvm.func @floats(%x: f32, %y: f32) -> f32 {
// CHECK-NEXT:   %0 = llvm.fadd %x, %y {fastmathFlags = #llvm.fastmath<fast>} : f32
// CHECK-NEXT:   %1 = llvm.fsub %0, %y {fastmathFlags = #llvm.fastmath<nnan,ninf>} : f32
// CHECK-NEXT:   %2 = llvm.fmul %1, %y {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:   %3 = llvm.fdiv %2, %y : f32
// CHECK-NEXT:   %4 = llvm.fneg %3 : f32
// CHECK-NEXT:   %5 = llvm.call_intrinsic "llvm.maximum.f32"(%4, %y) {fastmathFlags = #llvm.fastmath<nnan>} : (f32, f32) -> f32
// CHECK-NEXT:   %6 = llvm.call_intrinsic "llvm.minimum.f32"(%5, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %7 = llvm.call_intrinsic "llvm.maxnum.f32"(%6, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %8 = llvm.call_intrinsic "llvm.minnum.f32"(%7, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %9 = llvm.fcmp "ogt" %8, %y {fastmathFlags = #llvm.fastmath<nnan>} : f32
// CHECK-NEXT:   %10 = llvm.select %9, %8, %y : i1, f32
// CHECK-NEXT:   %11 = llvm.mlir.constant(2.500000e+00 : f32) : f32
// CHECK-NEXT:   %12 = llvm.fadd %10, %11 : f32
// CHECK-NEXT:   llvm.return %12 : f32

// -----

func.func @casts(%x: f32, %i: i64, %d: f64, %s: i32) {
  %0 = arith.sitofp %i : i64 to f32
  %1 = arith.uitofp %i : i64 to f32
  %2 = arith.fptosi %x : f32 to i64
  %3 = arith.fptoui %x : f32 to i64
  %4 = arith.extf %x : f32 to f64
  %5 = arith.truncf %d : f64 to f32
  %6 = arith.extsi %s : i32 to i64
  %7 = arith.extui %s : i32 to i64
  %8 = arith.trunci %i : i64 to i32
  %9 = arith.bitcast %x : f32 to i32
  %10 = arith.index_cast %s : i32 to index
  %11 = arith.index_cast %10 : index to i64
  func.return
}

// CHECK:      llvm.func @casts(%x: f32, %i: i64, %d: f64, %s: i32) {
// CHECK-NEXT:   %0 = llvm.sitofp %i : i64 to f32
// CHECK-NEXT:   %1 = llvmx.uitofp %i : i64 to f32
// CHECK-NEXT:   %2 = llvmx.fptosi %x : f32 to i64
// CHECK-NEXT:   %3 = llvmx.fptoui %x : f32 to i64
// CHECK-NEXT:   %4 = llvm.fpext %x : f32 to f64
// CHECK-NEXT:   %5 = llvm.fptrunc %d : f64 to f32
// CHECK-NEXT:   %6 = llvm.sext %s : i32 to i64
// CHECK-NEXT:   %7 = llvm.zext %s : i32 to i64
// CHECK-NEXT:   %8 = llvm.trunc %i : i64 to i32
// CHECK-NEXT:   %9 = llvm.bitcast %x : f32 to i32
// CHECK-NEXT:   %10 = llvm.sext %s : i32 to i64
// CHECK-NEXT:   llvm.return

// -----

func.func @math(%x: f32, %y: f32, %d: f64) -> f32 {
  %0 = math.exp %x fastmath<fast> : f32
  %1 = math.log %0 : f32
  %2 = math.tanh %1 : f32
  %3 = math.sqrt %2 : f32
  %4 = math.absf %3 : f32
  %5 = math.floor %4 : f32
  %6 = math.ceil %5 : f32
  %7 = math.powf %6, %y : f32
  %8 = math.fma %7, %x, %y fastmath<contract> : f32
  %9 = math.erf %8 : f32
  %10 = math.erf %d : f64
  %11 = math.rsqrt %9 fastmath<afn> : f32
  func.return %11 : f32
}

// CHECK:      llvm.func @math(%x: f32, %y: f32, %d: f64) -> f32 {
// CHECK-NEXT:   %0 = llvm.call_intrinsic "llvm.exp.f32"(%x) {fastmathFlags = #llvm.fastmath<fast>} : (f32) -> f32
// CHECK-NEXT:   %1 = llvm.call_intrinsic "llvm.log.f32"(%0) : (f32) -> f32
// CHECK-NEXT:   %2 = llvm.call_intrinsic "llvm.tanh.f32"(%1) : (f32) -> f32
// CHECK-NEXT:   %3 = llvm.call_intrinsic "llvm.sqrt.f32"(%2) : (f32) -> f32
// CHECK-NEXT:   %4 = llvm.call_intrinsic "llvm.fabs.f32"(%3) : (f32) -> f32
// CHECK-NEXT:   %5 = llvm.call_intrinsic "llvm.floor.f32"(%4) : (f32) -> f32
// CHECK-NEXT:   %6 = llvm.call_intrinsic "llvm.ceil.f32"(%5) : (f32) -> f32
// CHECK-NEXT:   %7 = llvm.call_intrinsic "llvm.pow.f32"(%6, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %8 = llvm.call_intrinsic "llvm.fma.f32"(%7, %x, %y) {fastmathFlags = #llvm.fastmath<contract>} : (f32, f32, f32) -> f32
// CHECK-NEXT:   %9 = llvm.call @erff(%8) : (f32) -> f32
// CHECK-NEXT:   %10 = llvm.call @erf(%d) : (f64) -> f64
// CHECK-NEXT:   %11 = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:   %12 = llvm.call_intrinsic "llvm.sqrt.f32"(%9) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK-NEXT:   %13 = llvm.fdiv %11, %12 {fastmathFlags = #llvm.fastmath<afn>} : f32
// CHECK-NEXT:   llvm.return %13 : f32
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @erff(f32) -> f32
// CHECK-NEXT: llvm.func @erf(f64) -> f64

// -----

func.func @unsupported(%x: i32) -> i32 {
  %0 = math.ctlz %x : i32
  func.return %0 : i32
}

// expected-error@unknown {{convert-to-llvm: cannot lower 'math.ctlz'}}

// -----


// Views of a byte arena (from loop-plan-memory) are addresses at a byte offset; no copy, no allocation.
func.func @views() {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %a = memref.view %arena[%c0][] : memref<1024xi8> to memref<4x8xf32>
  %b = memref.view %arena[%c512][] : memref<1024xi8> to memref<128xf32>
  %v = memref.load %a[%c0, %c0] : memref<4x8xf32>
  memref.store %v, %b[%c0] : memref<128xf32>
  memref.dealloc %arena : memref<1024xi8>
  func.return
}

// CHECK:      llvm.func @views() {
// CHECK-NEXT:   %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:   %[[SIZE:.*]] = llvm.mlir.constant(1024) : i64
// CHECK-NEXT:   %arena = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %c512 = llvm.mlir.constant(512) : i64
// CHECK-NEXT:   %a = llvm.getelementptr inbounds %arena[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:   %b = llvm.getelementptr inbounds %arena[%c512] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:        llvm.load
// CHECK:        llvm.store
// CHECK:        llvm.call @free(%arena) : (!llvm.ptr) -> ()

// -----

// A `loop.view` is its source's pointer: the load reads the source's bytes as an i32.
func.func @view(%a: memref<2x8xi16>, %i: index) -> i32 {
  %w = loop.view %a : memref<2x8xi16> to memref<16xi16>
  %v = loop.view %a : memref<2x8xi16> to memref<8xi32>
  %x = memref.load %v[%i] : memref<8xi32>
  func.return %x : i32
}

// CHECK-LABEL: llvm.func @view(%a: !llvm.ptr, %i: i64) -> i32
// CHECK-NOT:     loop.view
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT:    %{{.*}} = llvm.load %[[P]]
