// RUN: mini-opt %s -p te-to-loop | filecheck %s

// A row softmax over `?x?` as one kernel group: reductions over a run-time extent `?` (dynamic reduction loops), an
// intermediate `?x?` buffer, and a row mean whose body uses the outside extent %s (passed as an index parameter).
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %n = te.dim %x[0] : tensor<?x?xf32>
  %s = te.dim %x[1] : tensor<?x?xf32>
  %m = te.compute "softmax_max" (%i) [%n] reduce max (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %x[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %e = te.compute "softmax_exp" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %x[%i, %j] : tensor<?x?xf32>
    %w = te.read %m[%i] : tensor<?xf32>
    %d = arith.subf %v, %w : f32
    %r = math.exp %d : f32
    te.yield %r : f32
  } attributes {kernel_group = 0 : i64}
  %t = te.compute "softmax_sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> {
    %v = te.read %e[%i, %k] : tensor<?x?xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %y = te.compute "softmax" (%i, %j) [%n, %s] -> tensor<?x?xf32> {
    %v = te.read %e[%i, %j] : tensor<?x?xf32>
    %w = te.read %t[%i] : tensor<?xf32>
    %r = arith.divf %v, %w : f32
    te.yield %r : f32
  } attributes {kernel_group = 0 : i64}
  %mean = te.compute "row_mean" (%i) [%n] -> tensor<?xf32> {
    %v = te.read %t[%i] : tensor<?xf32>
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.divf %v, %f : f32
    te.yield %r : f32
  }
  func.return %y, %mean : tensor<?x?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @main(%x: memref<?x?xf32>, %out0: memref<?x?xf32>, %out1: memref<?xf32>, %extents: memref<2xi64>) attributes {minimlc.input_extents = 2 : i64, minimlc.output_extents = 3 : i64, minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %extents[%0] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.constant 1 : index
// CHECK-NEXT:    %3 = memref.load %extents[%2] : memref<2xi64>
// CHECK-NEXT:    %s = arith.index_cast %3 : i64 to index
// CHECK-NEXT:    %m = loop.alloc "global" [%n] : memref<?xf32>
// CHECK-NEXT:    %e = loop.alloc "global" [%n, %s] : memref<?x?xf32>
// CHECK-NEXT:    %t = loop.alloc "global" [%n] : memref<?xf32>
// CHECK-NEXT:    func.call @softmax_0(%x, %m, %e, %t, %out0, %n, %s) : (memref<?x?xf32>, memref<?xf32>, memref<?x?xf32>, memref<?xf32>, memref<?x?xf32>, index, index) -> ()
// CHECK-NEXT:    func.call @row_mean_1(%t, %out1, %n, %s) : (memref<?xf32>, memref<?xf32>, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @main_output_extents(%in: memref<2xi64>, %out: memref<3xi64>) attributes {minimlc.entry} {
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = memref.load %in[%0] : memref<2xi64>
// CHECK-NEXT:    %n = arith.index_cast %1 : i64 to index
// CHECK-NEXT:    %2 = arith.index_cast %n : index to i64
// CHECK-NEXT:    %3 = arith.constant 0 : index
// CHECK-NEXT:    memref.store %2, %out[%3] : memref<3xi64>
// CHECK-NEXT:    %4 = arith.constant 1 : index
// CHECK-NEXT:    %5 = memref.load %in[%4] : memref<2xi64>
// CHECK-NEXT:    %s = arith.index_cast %5 : i64 to index
// CHECK-NEXT:    %6 = arith.index_cast %s : index to i64
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    memref.store %6, %out[%7] : memref<3xi64>
// CHECK-NEXT:    %8 = arith.index_cast %n : index to i64
// CHECK-NEXT:    %9 = arith.constant 2 : index
// CHECK-NEXT:    memref.store %8, %out[%9] : memref<3xi64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @softmax_0(%in0: memref<?x?xf32> {llvm.noalias}, %in1: memref<?xf32> {llvm.noalias}, %in2: memref<?x?xf32> {llvm.noalias}, %in3: memref<?xf32> {llvm.noalias}, %out: memref<?x?xf32> {llvm.noalias}, %n0: index, %n1: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0, %n1] : memref<?x?xf32>
// CHECK-NEXT:    %in1_1 = loop.extents %in1[%n0] : memref<?xf32>
// CHECK-NEXT:    %in2_1 = loop.extents %in2[%n0, %n1] : memref<?x?xf32>
// CHECK-NEXT:    %in3_1 = loop.extents %in3[%n0] : memref<?xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n0, %n1] : memref<?x?xf32>
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    %acc_1 = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    loop.for "i___" %i___ = 0 to %n0 step 1 serial {
// CHECK-NEXT:      %0 = arith.constant 0xff800000 : f32
// CHECK-NEXT:      memref.store %0, %acc[] : memref<f32>
// CHECK-NEXT:      loop.for "k_" %k_ = 0 to %n1 step 1 serial {
// CHECK-NEXT:        %v = memref.load %in0_1[%i___, %k_] : memref<?x?xf32>
// CHECK-NEXT:        %1 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:        %2 = arith.maximumf %1, %v : f32
// CHECK-NEXT:        memref.store %2, %acc[] : memref<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %3 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:      memref.store %3, %in1_1[%i___] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for "i__" %i__ = 0 to %n0 step 1 serial {
// CHECK-NEXT:      loop.for "j_" %j_ = 0 to %n1 step 1 serial {
// CHECK-NEXT:        %v_1 = memref.load %in0_1[%i__, %j_] : memref<?x?xf32>
// CHECK-NEXT:        %w = memref.load %in1_1[%i__] : memref<?xf32>
// CHECK-NEXT:        %d = arith.subf %v_1, %w fastmath<contract> : f32
// CHECK-NEXT:        %r = math.exp %d : f32
// CHECK-NEXT:        memref.store %r, %in2_1[%i__, %j_] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for "i_" %i_ = 0 to %n0 step 1 serial {
// CHECK-NEXT:      %4 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %4, %acc_1[] : memref<f32>
// CHECK-NEXT:      loop.for "k" %k = 0 to %n1 step 1 serial {
// CHECK-NEXT:        %v_2 = memref.load %in2_1[%i_, %k] : memref<?x?xf32>
// CHECK-NEXT:        %5 = memref.load %acc_1[] : memref<f32>
// CHECK-NEXT:        %6 = arith.addf %5, %v_2 fastmath<reassoc,contract> : f32
// CHECK-NEXT:        memref.store %6, %acc_1[] : memref<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %7 = memref.load %acc_1[] : memref<f32>
// CHECK-NEXT:      memref.store %7, %in3_1[%i_] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to %n1 step 1 serial {
// CHECK-NEXT:        %v_3 = memref.load %in2_1[%i, %j] : memref<?x?xf32>
// CHECK-NEXT:        %w_1 = memref.load %in3_1[%i] : memref<?xf32>
// CHECK-NEXT:        %r_1 = arith.divf %v_3, %w_1 : f32
// CHECK-NEXT:        memref.store %r_1, %out_1[%i, %j] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @row_mean_1(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n0: index, %n1: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?xf32>
// CHECK-NEXT:    %out_1 = loop.extents %out[%n0] : memref<?xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK-NEXT:      %v = memref.load %in0_1[%i] : memref<?xf32>
// CHECK-NEXT:      %c = arith.index_cast %n1 : index to i64
// CHECK-NEXT:      %f = arith.sitofp %c : i64 to f32
// CHECK-NEXT:      %r = arith.divf %v, %f : f32
// CHECK-NEXT:      memref.store %r, %out_1[%i] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
