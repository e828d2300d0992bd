// RUN: mini-opt %s -p te-to-loop | filecheck %s

// An entry with dynamic outputs: a concatenation whose extent is computed from two input extents (arith on index,
// cloned into `@main_output_extents`), a returned argument copied by a dynamic copy kernel, and a static output
// (no extent). Outside extents used in the body (%m) are index parameters of the kernel.
func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %w: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) {
  %m = te.dim %a[0] : tensor<?x4xf32>
  %n = te.dim %b[0] : tensor<?x4xf32>
  %total = arith.addi %m, %n : index
  %y = te.compute "concat" (%i, %j) [%total] -> tensor<?x4xf32> {
    %inside = arith.cmpi ult, %i, %m : index
    %c1 = arith.constant 1 : index
    %last = arith.subi %m, %c1 : index
    %ia = arith.minui %i, %last : index
    %u = te.read %a[%ia, %j] : tensor<?x4xf32>
    %k = arith.subi %i, %m : index
    %c0 = arith.constant 0 : index
    %ib0 = arith.select %inside, %c0, %k : index
    %v = te.read %b[%ib0, %j] : tensor<?x4xf32>
    %r = arith.select %inside, %u, %v : f32
    te.yield %r : f32
  }
  %s = te.compute "scale" (%j) -> tensor<4xf32> {
    %v = te.read %w[%j] : tensor<4xf32>
    %t = arith.addf %v, %v : f32
    te.yield %t : f32
  }
  func.return %y, %a, %s : tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @main(%a: memref<?x4xf32>, %b: memref<?x4xf32>, %w: memref<4xf32>, %out0: memref<?x4xf32>, %out1: memref<?x4xf32>, %out2: memref<4xf32>, %extents: memref<2xi64>) attributes {minimlc.input_extents = 2 : i64, minimlc.output_extents = 2 : i64, minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %extents[%0] : memref<2xi64>
// CHECK-NEXT:    %m = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.constant 1 : index
// CHECK-NEXT:    %3 = memref.load %extents[%2] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %3 : i64 to index
// CHECK-NEXT:    %total = arith.addi %m, %n : index
// CHECK-NEXT:    func.call @concat_0(%a, %b, %out0, %m, %n, %total) : (memref<?x4xf32>, memref<?x4xf32>, memref<?x4xf32>, index, index, index) -> ()
// CHECK-NEXT:    func.call @scale_1(%w, %out2) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    func.call @copy_2(%a, %out1, %m) : (memref<?x4xf32>, memref<?x4xf32>, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main_output_extents(%in: memref<2xi64>, %out: memref<2xi64>) attributes {minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %in[%0] : memref<2xi64>
// CHECK-NEXT:    %m = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.constant 1 : index
// CHECK-NEXT:    %3 = memref.load %in[%2] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %3 : i64 to index
// CHECK-NEXT:    %total = arith.addi %m, %n : index
// CHECK-NEXT:    %4 = arith.index_cast %total : index to i64
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    memref.store %4, %out[%5] : memref<2xi64>
// CHECK-NEXT:    %6 = arith.index_cast %m : index to i64
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    memref.store %6, %out[%7] : memref<2xi64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @concat_0(%in0: memref<?x4xf32> {llvm.noalias}, %in1: memref<?x4xf32> {llvm.noalias}, %out: memref<?x4xf32> {llvm.noalias}, %n0: index, %n1: index, %n2: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?x4xf32>
// CHECK-NEXT:    %in1_1 = loop.extents %in1[%n1] : memref<?x4xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n2] : memref<?x4xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to %n2 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to 4 step 1 serial {
// CHECK-NEXT:        %inside = arith.cmpi ult, %i, %n0 : index
// CHECK-NEXT:        %c1 = arith.constant 1 : index
// CHECK-NEXT:        %last = arith.subi %n0, %c1 : index
// CHECK-NEXT:        %ia = arith.minui %i, %last : index
// CHECK-NEXT:        %u = memref.load %in0_1[%ia, %j] : memref<?x4xf32>
// CHECK-NEXT:        %k = arith.subi %i, %n0 : index
// CHECK-NEXT:        %c0 = arith.constant 0 : index
// CHECK-NEXT:        %ib0 = arith.select %inside, %c0, %k : index
// CHECK-NEXT:        %v = memref.load %in1_1[%ib0, %j] : memref<?x4xf32>
// CHECK-NEXT:        %r = arith.select %inside, %u, %v : f32
// CHECK-NEXT:        memref.store %r, %out_1[%i, %j] : memref<?x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @scale_1(%in0: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
// CHECK-NEXT:    loop.for "j" %j = 0 to 4 step 1 serial {
// CHECK-NEXT:      %v = memref.load %in0[%j] : memref<4xf32>
// CHECK-NEXT:      %t = arith.addf %v, %v fastmath<contract> : f32
// CHECK-NEXT:      memref.store %t, %out[%j] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @copy_2(%in0: memref<?x4xf32> {llvm.noalias}, %out: memref<?x4xf32> {llvm.noalias}, %n0: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?x4xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n0] : memref<?x4xf32>
// CHECK-NEXT:    loop.for "i0" %i0 = 0 to %n0 step 1 serial {
// CHECK-NEXT:      loop.for "i1" %i1 = 0 to 4 step 1 serial {
// CHECK-NEXT:        %0 = memref.load %in0_1[%i0, %i1] : memref<?x4xf32>
// CHECK-NEXT:        memref.store %0, %out_1[%i0, %i1] : memref<?x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
