// RUN: mini-opt %s --split-input-file --verify-diagnostics -p te-to-loop | filecheck %s

// A reduction feeding an elementwise compute: the intermediate gets a global buffer, the returned value is written
// straight into the output parameter, and the reduction accumulates in a local scalar.
func.func @matmul_relu(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 8) -> tensor<2x4xf32> {
    %a = te.read %x[%i, %k] : tensor<2x8xf32>
    %b = te.read %w[%j, %k] : tensor<4x8xf32>
    %p = arith.mulf %a, %b : f32
    te.yield %p : f32
  }
  %z = te.compute "relu" (%i, %j) -> tensor<2x4xf32> {
    %a = te.read %y[%i, %j] : tensor<2x4xf32>
    %c = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %c : f32
    te.yield %m : f32
  }
  func.return %z : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @matmul_relu(%x: memref<2x8xf32>, %w: memref<4x8xf32>, %out0: memref<2x4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:    %y = loop.alloc "global" : memref<2x4xf32>
// CHECK-NEXT:    func.call @matmul_0(%x, %w, %y) : (memref<2x8xf32>, memref<4x8xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT:    func.call @relu_1(%y, %out0) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @matmul_0(%in0: memref<2x8xf32> {llvm.noalias}, %in1: memref<4x8xf32> {llvm.noalias}, %out: memref<2x4xf32> {llvm.noalias}) {
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT:    loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to 4 step 1 serial {
// CHECK-NEXT:        %0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %0, %acc[] : memref<f32>
// CHECK-NEXT:        loop.for "k" %k = 0 to 8 step 1 serial {
// CHECK-NEXT:          %a = memref.load %in0[%i, %k] : memref<2x8xf32>
// CHECK-NEXT:          %b = memref.load %in1[%j, %k] : memref<4x8xf32>
// CHECK-NEXT:          %p = arith.mulf %a, %b fastmath<contract> : f32
// CHECK-NEXT:          %1 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:          %2 = arith.addf %1, %p fastmath<reassoc,contract> : f32
// CHECK-NEXT:          memref.store %2, %acc[] : memref<f32>
// CHECK-NEXT:        }
// CHECK-NEXT:        %3 = memref.load %acc[] : memref<f32>
// CHECK-NEXT:        memref.store %3, %out[%i, %j] : memref<2x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @relu_1(%in0: memref<2x4xf32> {llvm.noalias}, %out: memref<2x4xf32> {llvm.noalias}) {
// CHECK-NEXT:    loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j = 0 to 4 step 1 serial {
// CHECK-NEXT:        %a = memref.load %in0[%i, %j] : memref<2x4xf32>
// CHECK-NEXT:        %c = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %m = arith.maximumf %a, %c : f32
// CHECK-NEXT:        memref.store %m, %out[%i, %j] : memref<2x4xf32>

// -----

// Max reduction over two axes starts from -inf; weights become loop.weight.
func.func @reduce_max(%x: tensor<3x5xf32>) -> tensor<1xf32> {
  %w = graph.weight "bias" : tensor<3x5xf32>
  %m = te.compute "reduce_max" (%n) reduce max (%h : 3, %v : 5) -> tensor<1xf32> {
    %a = te.read %x[%h, %v] : tensor<3x5xf32>
    %b = te.read %w[%h, %v] : tensor<3x5xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %m : tensor<1xf32>
}

// CHECK-LABEL: func.func @reduce_max(%x: memref<3x5xf32>, %out0: memref<1xf32>) attributes {minimlc.entry} {
// CHECK-NEXT:    %w = loop.weight "bias" : memref<3x5xf32>
// CHECK-NEXT:    func.call @reduce_max_0(%x, %w, %out0)
// CHECK:       func.func private @reduce_max_0(
// CHECK:         %0 = arith.constant 0xff800000 : f32
// CHECK:         loop.for "h" %h = 0 to 3 step 1 serial {
// CHECK-NEXT:      loop.for "v" %v = 0 to 5 step 1 serial {
// CHECK:             arith.maximumf

// -----

// A `max_nnan` maximum (a softmax's row max) is flagged nnan,nsz, which x86 lowers to one vmaxps; `max` propagates
// NaN and has no flags.
func.func @row_max(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %m = te.compute "softmax_max" (%i, %o) reduce max_nnan (%k : 8) -> tensor<2x1xf32> {
    %a = te.read %x[%i, %k] : tensor<2x8xf32>
    te.yield %a : f32
  }
  func.return %m : tensor<2x1xf32>
}

// CHECK-LABEL: func.func private @softmax_max_0(
// CHECK:         %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK:         loop.for "k" %k = 0 to 8 step 1 serial {
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan,nsz> : f32

// -----

// Identical computes share one kernel; an argument returned directly and a value returned twice are copied.
func.func @dedup_and_copies(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = te.compute "exp" (%i) -> tensor<4xf32> {
    %v = te.read %x[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    te.yield %e : f32
  }
  %b = te.compute "exp" (%i) -> tensor<4xf32> {
    %v = te.read %a[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    te.yield %e : f32
  }
  func.return %a, %b, %x, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @dedup_and_copies(%x: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<4xf32>, %out2: memref<4xf32>, %out3: memref<4xf32>)
// CHECK-NEXT:    func.call @exp_0(%x, %out0)
// CHECK-NEXT:    func.call @exp_0(%out0, %out1)
// CHECK-NEXT:    func.call @copy_1(%x, %out2)
// CHECK-NEXT:    func.call @copy_1(%out0, %out3)
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func private @exp_2

// -----

// Computes share a kernel only where their tensors play the same parts (`%b` is `%a` with its inputs swapped,
// `%c` subtracts the other way) and their loops have the same names (`%d`'s is "j").
func.func @share_by_position(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = te.compute "sub" (%i) -> tensor<4xf32> {
    %u = te.read %x[%i] : tensor<4xf32>
    %v = te.read %y[%i] : tensor<4xf32>
    %d = arith.subf %u, %v : f32
    te.yield %d : f32
  }
  %b = te.compute "sub" (%i) -> tensor<4xf32> {
    %u = te.read %y[%i] : tensor<4xf32>
    %v = te.read %x[%i] : tensor<4xf32>
    %d = arith.subf %u, %v : f32
    te.yield %d : f32
  }
  %c = te.compute "sub" (%i) -> tensor<4xf32> {
    %u = te.read %x[%i] : tensor<4xf32>
    %v = te.read %y[%i] : tensor<4xf32>
    %d = arith.subf %v, %u : f32
    te.yield %d : f32
  }
  %d = te.compute "sub" (%j) -> tensor<4xf32> {
    %u = te.read %x[%j] : tensor<4xf32>
    %v = te.read %y[%j] : tensor<4xf32>
    %e = arith.subf %u, %v : f32
    te.yield %e : f32
  }
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @share_by_position(%x: memref<4xf32>, %y: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<4xf32>, %out2: memref<4xf32>, %out3: memref<4xf32>)
// CHECK-NEXT:    func.call @sub_0(%x, %y, %out0)
// CHECK-NEXT:    func.call @sub_0(%y, %x, %out1)
// CHECK-NEXT:    func.call @sub_1(%x, %y, %out2)
// CHECK-NEXT:    func.call @sub_2(%x, %y, %out3)
// CHECK-NEXT:    func.return
// CHECK:       func.func private @sub_1
// CHECK:         arith.subf %{{.*}}, %{{.*}} fastmath<contract>
// CHECK:       func.func private @sub_2
// CHECK-NEXT:    loop.for "j"

// -----

func.func @leftover_graph_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// expected-error@unknown {{te-to-loop: cannot bufferize 'graph.relu' in @leftover_graph_op; lower graph ops with graph-to-te first}}

// -----

// An integer reduction accumulates in its own type: an i64 min starts from INT64_MAX and combines with minsi.
func.func @first_index_of_zero(%x: tensor<2x6xf32>) -> tensor<2xi64> {
  %first = te.compute "first_zero" (%i) reduce min (%k : 6) -> tensor<2xi64> {
    %v = te.read %x[%i, %k] : tensor<2x6xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %hit = arith.cmpf oeq, %v, %zero : f32
    %index = arith.index_cast %k : index to i64
    %none = arith.constant 9223372036854775807 : i64
    %candidate = arith.select %hit, %index, %none : i64
    te.yield %candidate : i64
  }
  func.return %first : tensor<2xi64>
}

// CHECK-LABEL: func.func @first_index_of_zero(%x: memref<2x6xf32>, %out0: memref<2xi64>) attributes {minimlc.entry} {
// CHECK-NEXT:    func.call @first_zero_0(%x, %out0) : (memref<2x6xf32>, memref<2xi64>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @first_zero_0(%in0: memref<2x6xf32> {llvm.noalias}, %out: memref<2xi64> {llvm.noalias}) {
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<i64>
// CHECK-NEXT:    loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT:      %0 = arith.constant 9223372036854775807 : i64
// CHECK-NEXT:      memref.store %0, %acc[] : memref<i64>
// CHECK-NEXT:      loop.for "k" %k = 0 to 6 step 1 serial {
// CHECK-NEXT:        %v = memref.load %in0[%i, %k] : memref<2x6xf32>
// CHECK-NEXT:        %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %hit = arith.cmpf oeq, %v, %zero : f32
// CHECK-NEXT:        %index = arith.index_cast %k : index to i64
// CHECK-NEXT:        %none = arith.constant 9223372036854775807 : i64
// CHECK-NEXT:        %candidate = arith.select %hit, %index, %none : i64
// CHECK-NEXT:        %1 = memref.load %acc[] : memref<i64>
// CHECK-NEXT:        %2 = arith.minsi %1, %candidate : i64
// CHECK-NEXT:        memref.store %2, %acc[] : memref<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      %3 = memref.load %acc[] : memref<i64>
// CHECK-NEXT:      memref.store %3, %out[%i] : memref<2xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }

// -----

// A kernel group: consecutive computes with one kernel_group make one kernel, a loop nest per compute in order
// (accumulators first); the earlier stage's result is a caller buffer, its loops renamed to stay unique.
func.func @row_sum_scale(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s = te.compute "row_sum" (%i, %j) reduce sum (%k : 4) -> tensor<2x1xf32> {
    %a = te.read %x[%i, %k] : tensor<2x4xf32>
    te.yield %a : f32
  } attributes {kernel_group = 0 : i64}
  %y = te.compute "row_scale" (%i, %j) -> tensor<2x4xf32> {
    %c = arith.constant 0 : index
    %a = te.read %x[%i, %j] : tensor<2x4xf32>
    %t = te.read %s[%i, %c] : tensor<2x1xf32>
    %d = arith.divf %a, %t : f32
    te.yield %d : f32
  } attributes {kernel_group = 0 : i64}
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @row_sum_scale(%x: memref<2x4xf32>, %out0: memref<2x4xf32>) attributes {minimlc.entry} {
// CHECK-NEXT: %s = loop.alloc "global" : memref<2x1xf32>
// CHECK-NEXT: func.call @row_scale_0(%x, %s, %out0) : (memref<2x4xf32>, memref<2x1xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT: func.return
// CHECK-NEXT: }
// CHECK-LABEL: func.func private @row_scale_0(%in0: memref<2x4xf32> {llvm.noalias}, %in1: memref<2x1xf32> {llvm.noalias}, %out: memref<2x4xf32> {llvm.noalias}) {
// CHECK-NEXT: %acc = loop.alloc "local" : memref<f32>
// CHECK-NEXT: loop.for "i_" %i_ = 0 to 2 step 1 serial {
// CHECK-NEXT: loop.for "j_" %j_ = 0 to 1 step 1 serial {
// CHECK-NEXT: %[[V0:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: memref.store %[[V0]], %acc[] : memref<f32>
// CHECK-NEXT: loop.for "k" %k = 0 to 4 step 1 serial {
// CHECK-NEXT: %a = memref.load %in0[%i_, %k] : memref<2x4xf32>
// CHECK-NEXT: %[[V1:[0-9]+]] = memref.load %acc[] : memref<f32>
// CHECK-NEXT: %[[V2:[0-9]+]] = arith.addf %[[V1]], %a fastmath<reassoc,contract> : f32
// CHECK-NEXT: memref.store %[[V2]], %acc[] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V3:[0-9]+]] = memref.load %acc[] : memref<f32>
// CHECK-NEXT: memref.store %[[V3]], %in1[%i_, %j_] : memref<2x1xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT: loop.for "j" %j = 0 to 4 step 1 serial {
// CHECK-NEXT: %c = arith.constant 0 : index
// CHECK-NEXT: %a_1 = memref.load %in0[%i, %j] : memref<2x4xf32>
// CHECK-NEXT: %t = memref.load %in1[%i, %c] : memref<2x1xf32>
// CHECK-NEXT: %d = arith.divf %a_1, %t : f32
// CHECK-NEXT: memref.store %d, %out[%i, %j] : memref<2x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: func.return
// CHECK-NEXT: }

// -----

// The tag only names a kernel: computes of different tags with one body share the first one's kernel.
func.func @tags_share(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = te.compute "first" (%i) -> tensor<4xf32> {
    %v = te.read %x[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    te.yield %e : f32
  }
  %b = te.compute "second" (%i) -> tensor<4xf32> {
    %v = te.read %a[%i] : tensor<4xf32>
    %e = math.exp %v : f32
    te.yield %e : f32
  }
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @tags_share(%x: memref<4xf32>, %out0: memref<4xf32>, %out1: memref<4xf32>)
// CHECK-NEXT:    func.call @first_0(%x, %out0)
// CHECK-NEXT:    func.call @first_0(%out0, %out1)
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func private @second

// -----

// A `te.view` is a `loop.view` of its source's buffer: the reader's kernel takes the same memory as words.
func.func @view(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %h = te.compute "half" (%i, %j) -> tensor<2x8xbf16> {
    %v = te.read %x[%i, %j] : tensor<2x8xf32>
    %b = arith.bitcast %v : f32 to i32
    %s = arith.trunci %b : i32 to i16
    %t = arith.bitcast %s : i16 to bf16
    te.yield %t : bf16
  }
  %w = te.view %h : tensor<2x8xbf16> to tensor<2x4xi32>
  %y = te.compute "words" (%i, %k) -> tensor<2x4xf32> {
    %v = te.read %w[%i, %k] : tensor<2x4xi32>
    %f = arith.sitofp %v : i32 to f32
    te.yield %f : f32
  }
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @view(%x: memref<2x8xf32>, %out0: memref<2x4xf32>)
// CHECK-NEXT:    %h = loop.alloc "global" : memref<2x8xi16>
// CHECK-NEXT:    func.call @half_{{[0-9]+}}(%x, %h) : (memref<2x8xf32>, memref<2x8xi16>) -> ()
// CHECK-NEXT:    %w = loop.view %h : memref<2x8xi16> to memref<2x4xi32>
// CHECK-NEXT:    func.call @words_{{[0-9]+}}(%w, %out0) : (memref<2x4xi32>, memref<2x4xf32>) -> ()
