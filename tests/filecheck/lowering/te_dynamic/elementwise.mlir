// RUN: mini-opt %s --split-input-file -p te-to-loop | filecheck %s

// A dynamic elementwise add. The entry takes the `memref<Kxi64>` of its K dynamic input extents after its outputs
// (input order, then axis order; named after `minimlc.input_symbols`) and loads them at its start;
// `@main_output_extents` stores its output's extent. The kernel takes the extents after its buffers, each caller
// value once, and gives each dynamic buffer its extents with `loop.extents`; its loop over `?` is dynamic.
func.func @main(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32>
    attributes {minimlc.input_symbols = ["batch", "batch"]} {
  %n = te.dim %x[0] : tensor<?x8xf32>
  %z = te.compute "add" (%i, %j) [%n] -> tensor<?x8xf32> {
    %a = te.read %x[%i, %j] : tensor<?x8xf32>
    %b = te.read %y[%i, %j] : tensor<?x8xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %z : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @main(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %out0: memref<?x8xf32>, %extents: memref<2xi64>) attributes {minimlc.input_symbols = ["batch", "batch"], minimlc.input_extents = 2 : i64, minimlc.output_extents = 1 : i64, minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %extents[%0] : memref<2xi64>
// CHECK-NEXT:    %batch = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.constant 1 : index
// CHECK-NEXT:    %3 = memref.load %extents[%2] : memref<2xi64>
// CHECK-NEXT:    %batch_1 = arith.index_cast %3 : i64 to index
// CHECK-NEXT:    func.call @add_0(%x, %y, %out0, %batch, %batch_1) : (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main_output_extents(%in: memref<2xi64>, %out: memref<1xi64>) attributes {minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %in[%0] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.index_cast %n : index to i64
// CHECK-NEXT:    %3 = arith.constant 0 : index
// CHECK-NEXT:    memref.store %2, %out[%3] : memref<1xi64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @add_0(%in0: memref<?x8xf32> {llvm.noalias}, %in1: memref<?x8xf32> {llvm.noalias}, %out: memref<?x8xf32> {llvm.noalias}, %n0: index, %n1: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?x8xf32>
// CHECK-NEXT:    %in1_1 = loop.extents %in1[%n1] : memref<?x8xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n0] : memref<?x8xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to 8 step 1 serial {
// CHECK-NEXT:        %a = memref.load %in0_1[%i, %j] : memref<?x8xf32>
// CHECK-NEXT:        %b = memref.load %in1_1[%i, %j] : memref<?x8xf32>
// CHECK-NEXT:        %s = arith.addf %a, %b fastmath<contract> : f32
// CHECK-NEXT:        memref.store %s, %out_1[%i, %j] : memref<?x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// -----

// Intermediates with `?` dimensions are `loop.alloc "global"` with their sizes. Kernels are interned by structure:
// the two dynamic ReLUs share one kernel, the static one (same body, static extent) gets its own.
func.func @relus(%x: tensor<?xf32>, %w: tensor<16xf32>) -> (tensor<?xf32>, tensor<16xf32>) {
  %n = te.dim %x[0] : tensor<?xf32>
  %a = te.compute "relu" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %x[%i] : tensor<?xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    te.yield %r : f32
  }
  %b = te.compute "relu" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %a[%i] : tensor<?xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    te.yield %r : f32
  }
  %s = te.compute "relu" (%i) -> tensor<16xf32> {
    %v = te.read %w[%i] : tensor<16xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    te.yield %r : f32
  }
  func.return %b, %s : tensor<?xf32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @relus(%x: memref<?xf32>, %w: memref<16xf32>, %out0: memref<?xf32>, %out1: memref<16xf32>, %extents: memref<1xi64>) attributes {minimlc.input_extents = 1 : i64, minimlc.output_extents = 1 : i64, minimlc.entry} {
// CHECK:         %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %a = loop.alloc "global" [%n] : memref<?xf32>
// CHECK-NEXT:    func.call @relu_0(%x, %a, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:    func.call @relu_0(%a, %out0, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:    func.call @relu_1(%w, %out1) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK:       func.func private @relu_0(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n0: index) {
// CHECK:         loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK:       func.func private @relu_1(%in0: memref<16xf32> {llvm.noalias}, %out: memref<16xf32> {llvm.noalias}) {
// CHECK-NEXT:    loop.for "i" %i = 0 to 16 step 1 serial {
// CHECK-NOT:   func.func

// -----

// `te.dim` of a compute's result is its size operand, of a static dimension a constant.
func.func @dims(%x: tensor<?x3xf32>) -> tensor<?xf32> {
  %n = te.dim %x[0] : tensor<?x3xf32>
  %y = te.compute "first" (%i) [%n] -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %v = te.read %x[%i, %c0] : tensor<?x3xf32>
    te.yield %v : f32
  }
  %m = te.dim %y[0] : tensor<?xf32>
  %three = te.dim %x[1] : tensor<?x3xf32>
  %size = arith.muli %m, %three : index
  %z = te.compute "flat" (%i) [%size] -> tensor<?xf32> {
    %c3 = arith.constant 3 : index
    %row = arith.divui %i, %c3 : index
    %v = te.read %y[%row] : tensor<?xf32>
    te.yield %v : f32
  }
  func.return %z : tensor<?xf32>
}

// CHECK-LABEL: func.func @dims(
// CHECK:         %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %y = loop.alloc "global" [%n] : memref<?xf32>
// CHECK-NEXT:    func.call @first_0(%x, %y, %n) : (memref<?x3xf32>, memref<?xf32>, index) -> ()
// CHECK-NEXT:    %three = arith.constant 3 : index
// CHECK-NEXT:    %size = arith.muli %n, %three : index
// CHECK-NEXT:    func.call @flat_1(%y, %out0, %n, %size) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
// CHECK:       func.func @dims_output_extents(%in: memref<1xi64>, %out: memref<1xi64>) attributes {minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %in[%0] : memref<1xi64>
// CHECK-NEXT:    %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %three = arith.constant 3 : index
// CHECK-NEXT:    %size = arith.muli %n, %three : index
// CHECK-NEXT:    %2 = arith.index_cast %size : index to i64
// CHECK-NEXT:    %3 = arith.constant 0 : index
// CHECK-NEXT:    memref.store %2, %out[%3] : memref<1xi64>
// CHECK-NEXT:    func.return
// CHECK:       func.func private @flat_1(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n0: index, %n1: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n1] : memref<?xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to %n1 step 1 serial {
