// RUN: mini-opt %s -p te-inline | filecheck %s

// An elementwise chain sub -> exp -> div collapses into its last compute.
func.func @chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = te.compute "sub" (%i) -> tensor<4xf32> {
    %a = te.read %x[%i] : tensor<4xf32>
    %b = te.read %y[%i] : tensor<4xf32>
    %d = arith.subf %a, %b : f32
    te.yield %d : f32
  }
  %e = te.compute "exp" (%i) -> tensor<4xf32> {
    %v = te.read %s[%i] : tensor<4xf32>
    %w = math.exp %v : f32
    te.yield %w : f32
  }
  %q = te.compute "div" (%i) -> tensor<4xf32> {
    %n = te.read %e[%i] : tensor<4xf32>
    %m = te.read %y[%i] : tensor<4xf32>
    %r = arith.divf %n, %m : f32
    te.yield %r : f32
  }
  func.return %q : tensor<4xf32>
}

// CHECK-LABEL: func.func @chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %q = te.compute "div" (%i) -> tensor<4xf32> {
// CHECK-NEXT:   %a = te.read %x[%i] : tensor<4xf32>
// CHECK-NEXT:   %b = te.read %y[%i] : tensor<4xf32>
// CHECK-NEXT:   %d = arith.subf %a, %b : f32
// CHECK-NEXT:   %w = math.exp %d : f32
// CHECK-NEXT:   %m = te.read %y[%i] : tensor<4xf32>
// CHECK-NEXT:   %r = arith.divf %w, %m : f32
// CHECK-NEXT:   te.yield %r : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %q : tensor<4xf32>
// CHECK-NEXT: }

// An elementwise producer is inlined into a reduction whose read depends on every consumer index (each producer
// element is computed once): sum_k exp(x[i, k]).
func.func @into_reduction(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %e = te.compute "exp" (%i, %j) -> tensor<2x3xf32> {
    %a = te.read %x[%i, %j] : tensor<2x3xf32>
    %v = math.exp %a : f32
    te.yield %v : f32
  }
  %s = te.compute "sum" (%i) reduce sum (%k : 3) -> tensor<2xf32> {
    %a = te.read %e[%i, %k] : tensor<2x3xf32>
    te.yield %a : f32
  }
  func.return %s : tensor<2xf32>
}

// CHECK-LABEL: func.func @into_reduction(%x: tensor<2x3xf32>) -> tensor<2xf32> {
// CHECK-NEXT: %s = te.compute "sum" (%i) reduce sum (%k : 3) -> tensor<2xf32> {
// CHECK-NEXT:   %a = te.read %x[%i, %k] : tensor<2x3xf32>
// CHECK-NEXT:   %v = math.exp %a : f32
// CHECK-NEXT:   te.yield %v : f32
// CHECK-NEXT: }

// A producer read by a reduction at indices that skip one of its loops (a GEMM prologue, read at [i, k] by a compute
// over (i, j, k)) would be recomputed for every j: it stays its own kernel.
func.func @not_recomputed_in_gemm(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %r = te.compute "relu" (%i, %j) -> tensor<2x3xf32> {
    %a = te.read %x[%i, %j] : tensor<2x3xf32>
    %z = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %z : f32
    te.yield %m : f32
  }
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 3) -> tensor<2x4xf32> {
    %a = te.read %r[%i, %k] : tensor<2x3xf32>
    %b = te.read %w[%k, %j] : tensor<3x4xf32>
    %p = arith.mulf %a, %b : f32
    te.yield %p : f32
  }
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @not_recomputed_in_gemm(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT: %r = te.compute "relu" (%i, %j) -> tensor<2x3xf32> {
// CHECK:      %y = te.compute "matmul" (%[[I:.*]], %{{.*}}) reduce sum (%[[K:.*]] : 3) -> tensor<2x4xf32> {
// CHECK-NEXT:   %{{.*}} = te.read %r[%[[I]], %[[K]]] : tensor<2x3xf32>

// A row view (a channel slice of a grouped 1x1 convolution's input: coordinates its own indices plus constants, the
// innermost its innermost) moves no data worth keeping: it is read in place by every consumer, GEMMs included.
func.func @row_view_into_gemms(%x: tensor<2x6xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %v = te.compute "slice" (%i, %c) -> tensor<2x3xf32> {
    %three = arith.constant 3 : index
    %o = arith.addi %c, %three : index
    %a = te.read %x[%i, %o] : tensor<2x6xf32>
    te.yield %a : f32
  }
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 3) -> tensor<2x4xf32> {
    %a = te.read %v[%i, %k] : tensor<2x3xf32>
    %b = te.read %w[%k, %j] : tensor<3x4xf32>
    %p = arith.mulf %a, %b : f32
    te.yield %p : f32
  }
  %z = te.compute "matmul" (%i, %j) reduce sum (%k : 3) -> tensor<2x4xf32> {
    %a = te.read %v[%i, %k] : tensor<2x3xf32>
    %b = te.read %w[%k, %j] : tensor<3x4xf32>
    %p = arith.addf %a, %b : f32
    te.yield %p : f32
  }
  func.return %y, %z : tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @row_view_into_gemms(
// CHECK-NOT:  "slice"
// CHECK:      %y = te.compute "matmul" (%[[I:.*]], %{{.*}}) reduce sum (%[[K:.*]] : 3) -> tensor<2x4xf32> {
// CHECK-NEXT:   %[[C:.*]] = arith.constant 3 : index
// CHECK-NEXT:   %[[O:.*]] = arith.addi %[[K]], %[[C]] : index
// CHECK-NEXT:   %{{.*}} = te.read %x[%[[I]], %[[O]]] : tensor<2x6xf32>
// CHECK:      %z = te.compute "matmul" (%[[I2:.*]], %{{.*}}) reduce sum (%[[K2:.*]] : 3) -> tensor<2x4xf32> {
// CHECK-NEXT:   %[[C2:.*]] = arith.constant 3 : index
// CHECK-NEXT:   %[[O2:.*]] = arith.addi %[[K2]], %[[C2]] : index
// CHECK-NEXT:   %{{.*}} = te.read %x[%[[I2]], %[[O2]]] : tensor<2x6xf32>

// A transposing copy is no row view (its innermost coordinate is not its innermost index): read in place, a GEMM
// would stride through the rows, so it stays its own kernel.
func.func @transpose_stays(%x: tensor<3x2xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %t = te.compute "transpose" (%i, %c) -> tensor<2x3xf32> {
    %a = te.read %x[%c, %i] : tensor<3x2xf32>
    te.yield %a : f32
  }
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 3) -> tensor<2x4xf32> {
    %a = te.read %t[%i, %k] : tensor<2x3xf32>
    %b = te.read %w[%k, %j] : tensor<3x4xf32>
    %p = arith.mulf %a, %b : f32
    te.yield %p : f32
  }
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @transpose_stays(
// CHECK-NEXT: %t = te.compute "transpose"
// CHECK:      te.read %t[

// A reduction producer stays a kernel even when an elementwise compute reads it.
func.func @reduction_stays(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %s = te.compute "sum" (%i) reduce sum (%k : 3) -> tensor<2xf32> {
    %a = te.read %x[%i, %k] : tensor<2x3xf32>
    te.yield %a : f32
  }
  %t = te.compute "tanh" (%i) -> tensor<2xf32> {
    %a = te.read %s[%i] : tensor<2xf32>
    %b = math.tanh %a : f32
    te.yield %b : f32
  }
  func.return %t : tensor<2xf32>
}

// CHECK-LABEL: func.func @reduction_stays(%x: tensor<2x3xf32>) -> tensor<2xf32> {
// CHECK-NEXT: %s = te.compute "sum" (%i) reduce sum (%k : 3) -> tensor<2xf32> {
// CHECK-NEXT:   %a = te.read %x[%i, %k] : tensor<2x3xf32>
// CHECK-NEXT:   te.yield %a : f32
// CHECK-NEXT: }
// CHECK-NEXT: %t = te.compute "tanh" (%i_1) -> tensor<2xf32> {
// CHECK-NEXT:   %a_1 = te.read %s[%i_1] : tensor<2xf32>
// CHECK-NEXT:   %b = math.tanh %a_1 : f32
// CHECK-NEXT:   te.yield %b : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %t : tensor<2xf32>
// CHECK-NEXT: }

// A compute that is returned is materialised, even if another compute also reads it.
func.func @returned_stays(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = te.compute "exp" (%i) -> tensor<4xf32> {
    %a = te.read %x[%i] : tensor<4xf32>
    %b = math.exp %a : f32
    te.yield %b : f32
  }
  %n = te.compute "neg" (%i) -> tensor<4xf32> {
    %a = te.read %e[%i] : tensor<4xf32>
    %b = arith.negf %a : f32
    te.yield %b : f32
  }
  func.return %e, %n : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @returned_stays(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %e = te.compute "exp" (%i) -> tensor<4xf32> {
// CHECK-NEXT:   %a = te.read %x[%i] : tensor<4xf32>
// CHECK-NEXT:   %b = math.exp %a : f32
// CHECK-NEXT:   te.yield %b : f32
// CHECK-NEXT: }
// CHECK-NEXT: %n = te.compute "neg" (%i_1) -> tensor<4xf32> {
// CHECK-NEXT:   %a_1 = te.read %e[%i_1] : tensor<4xf32>
// CHECK-NEXT:   %b_1 = arith.negf %a_1 : f32
// CHECK-NEXT:   te.yield %b_1 : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %e, %n : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }

// A producer read twice by its one consumer (once at a constant index) is inlined at every read.
func.func @read_twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %p = te.compute "add" (%i) -> tensor<3xf32> {
    %a = te.read %x[%i] : tensor<3xf32>
    %b = arith.addf %a, %a : f32
    te.yield %b : f32
  }
  %s = te.compute "mul" (%i) -> tensor<3xf32> {
    %c0 = arith.constant 0 : index
    %a = te.read %p[%i] : tensor<3xf32>
    %b = te.read %p[%c0] : tensor<3xf32>
    %c = arith.mulf %a, %b : f32
    te.yield %c : f32
  }
  func.return %s : tensor<3xf32>
}

// CHECK-LABEL: func.func @read_twice(%x: tensor<3xf32>) -> tensor<3xf32> {
// CHECK-NEXT: %s = te.compute "mul" (%i) -> tensor<3xf32> {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %a = te.read %x[%i] : tensor<3xf32>
// CHECK-NEXT:   %b = arith.addf %a, %a : f32
// CHECK-NEXT:   %a_1 = te.read %x[%c0] : tensor<3xf32>
// CHECK-NEXT:   %b_1 = arith.addf %a_1, %a_1 : f32
// CHECK-NEXT:   %c = arith.mulf %b, %b_1 : f32
// CHECK-NEXT:   te.yield %c : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %s : tensor<3xf32>
// CHECK-NEXT: }

// A compute of weights alone is not inlined into one that reads run-time data (it is computed once at load time),
// but constant computes still fuse with each other.
func.func @constants_stay_apart(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = graph.weight "w" : tensor<4xf32>
  %n = te.compute "neg" (%i) -> tensor<4xf32> {
    %a = te.read %w[%i] : tensor<4xf32>
    %b = arith.negf %a : f32
    te.yield %b : f32
  }
  %e = te.compute "exp" (%i) -> tensor<4xf32> {
    %a = te.read %n[%i] : tensor<4xf32>
    %b = math.exp %a : f32
    te.yield %b : f32
  }
  %y = te.compute "add" (%i) -> tensor<4xf32> {
    %a = te.read %x[%i] : tensor<4xf32>
    %b = te.read %e[%i] : tensor<4xf32>
    %c = arith.addf %a, %b : f32
    te.yield %c : f32
  }
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @constants_stay_apart(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %w = graph.weight "w" : tensor<4xf32>
// CHECK-NEXT:    %e = te.compute "exp" (%{{.*}}) -> tensor<4xf32> {
// CHECK-NEXT:      %{{.*}} = te.read %w[%{{.*}}] : tensor<4xf32>
// CHECK-NEXT:      %{{.*}} = arith.negf
// CHECK-NEXT:      %{{.*}} = math.exp
// CHECK:         %y = te.compute "add" (%{{.*}}) -> tensor<4xf32> {
// CHECK-NEXT:      %{{.*}} = te.read %x
// CHECK-NEXT:      %{{.*}} = te.read %e

// A compute that reads no tensor (a graph.constant fill) is a literal: inlined even into run-time computes.
func.func @literal_inlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = te.compute "constant" (%i) -> tensor<4xf32> {
    %v = arith.constant 2.000000e+00 : f32
    te.yield %v : f32
  }
  %y = te.compute "mul" (%i) -> tensor<4xf32> {
    %a = te.read %x[%i] : tensor<4xf32>
    %b = te.read %c[%i] : tensor<4xf32>
    %m = arith.mulf %a, %b : f32
    te.yield %m : f32
  }
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @literal_inlined(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %y = te.compute "mul" (%{{.*}}) -> tensor<4xf32> {
// CHECK-NEXT:      %{{.*}} = te.read %x[%{{.*}}] : tensor<4xf32>
// CHECK-NEXT:      %{{.*}} = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = arith.mulf
// CHECK-NEXT:      te.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4xf32>

// A producer read by two computes (a residual sum feeding the next block and the next residual add) stays its own
// kernel: inlined, each consumer would recompute it. Its single-consumer producer (the relu) still folds into it.
func.func @residual(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = te.compute "relu" (%i) -> tensor<4xf32> {
    %a = te.read %x[%i] : tensor<4xf32>
    %z = arith.constant 0.0 : f32
    %b = arith.maximumf %a, %z : f32
    te.yield %b : f32
  }
  %s = te.compute "add" (%i) -> tensor<4xf32> {
    %a = te.read %r[%i] : tensor<4xf32>
    %b = te.read %y[%i] : tensor<4xf32>
    %c = arith.addf %a, %b : f32
    te.yield %c : f32
  }
  %e = te.compute "exp" (%i) -> tensor<4xf32> {
    %a = te.read %s[%i] : tensor<4xf32>
    %b = math.exp %a : f32
    te.yield %b : f32
  }
  %n = te.compute "neg" (%i) -> tensor<4xf32> {
    %a = te.read %s[%i] : tensor<4xf32>
    %b = arith.negf %a : f32
    te.yield %b : f32
  }
  func.return %e, %n : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @residual(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %s = te.compute "add" (%i) -> tensor<4xf32> {
// CHECK-NEXT:   %a = te.read %x[%i] : tensor<4xf32>
// CHECK-NEXT:   %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %b = arith.maximumf %a, %z : f32
// CHECK-NEXT:   %b_1 = te.read %y[%i] : tensor<4xf32>
// CHECK-NEXT:   %c = arith.addf %b, %b_1 : f32
// CHECK-NEXT:   te.yield %c : f32
// CHECK-NEXT: }
// CHECK-NEXT: %e = te.compute "exp" (%i_1) -> tensor<4xf32> {
// CHECK-NEXT:   %a_1 = te.read %s[%i_1] : tensor<4xf32>
// CHECK-NEXT:   %b_2 = math.exp %a_1 : f32
// CHECK-NEXT:   te.yield %b_2 : f32
// CHECK-NEXT: }
// CHECK-NEXT: %n = te.compute "neg" (%i_2) -> tensor<4xf32> {
// CHECK-NEXT:   %a_2 = te.read %s[%i_2] : tensor<4xf32>
// CHECK-NEXT:   %b_3 = arith.negf %a_2 : f32
// CHECK-NEXT:   te.yield %b_3 : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %e, %n : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }

// A producer read through an overlapping window (a coordinate combining an output index and a window index, as
// in a pool) stays its own kernel: inlined, each element would be recomputed once per window covering it.
func.func @window_stays(%x: tensor<6xf32>) -> tensor<4xf32> {
  %r = te.compute "relu" (%i) -> tensor<6xf32> {
    %v = te.read %x[%i] : tensor<6xf32>
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %z : f32
    te.yield %m : f32
  }
  %p = te.compute "max_pool" (%i) reduce max (%k : 3) -> tensor<4xf32> {
    %j = arith.addi %i, %k : index
    %v = te.read %r[%j] : tensor<6xf32>
    te.yield %v : f32
  }
  func.return %p : tensor<4xf32>
}

// CHECK-LABEL: func.func @window_stays(%x: tensor<6xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %r = te.compute "relu" (%i) -> tensor<6xf32> {
// CHECK:      %p = te.compute "max_pool" (%[[I:.*]]) reduce max (%k : 3) -> tensor<4xf32> {
// CHECK-NEXT:   %j = arith.addi %[[I]], %k : index
// CHECK-NEXT:   %{{.*}} = te.read %r[%j] : tensor<6xf32>

// A stage of a multi-stage kernel (kernel_group) stays, though its one reader is elementwise: its group is one
// kernel, scheduled row by row.
func.func @kernel_group_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = te.compute "scale" (%i) -> tensor<4xf32> {
    %v = te.read %x[%i] : tensor<4xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %n = te.compute "neg" (%i) -> tensor<4xf32> {
    %v = te.read %s[%i] : tensor<4xf32>
    %m = arith.negf %v : f32
    te.yield %m : f32
  }
  func.return %n : tensor<4xf32>
}

// CHECK-LABEL: func.func @kernel_group_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %s = te.compute "scale" (%i) -> tensor<4xf32> {
// CHECK-NEXT:   %v = te.read %x[%i] : tensor<4xf32>
// CHECK-NEXT:   te.yield %v : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %n = te.compute "neg" (%i_1) -> tensor<4xf32> {
// CHECK-NEXT:   %v_1 = te.read %s[%i_1] : tensor<4xf32>

// A float16 producer rounds where it is substituted: its yield (the rounded value) replaces the read, so the fused
// consumer widens the same half its unfused kernel would have loaded.
func.func @half_producer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = te.compute "cast" (%i) -> tensor<4xf16> {
    %a = te.read %x[%i] : tensor<4xf32>
    %r = arith.truncf %a : f32 to f16
    te.yield %r : f16
  }
  %y = te.compute "exp" (%i) -> tensor<4xf32> {
    %v = te.read %h[%i] : tensor<4xf16>
    %w = arith.extf %v : f16 to f32
    %e = math.exp %w : f32
    te.yield %e : f32
  }
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @half_producer(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %y = te.compute "exp" (%i) -> tensor<4xf32> {
// CHECK-NEXT:   %a = te.read %x[%i] : tensor<4xf32>
// CHECK-NEXT:   %r = arith.truncf %a : f32 to f16
// CHECK-NEXT:   %w = arith.extf %r : f16 to f32
// CHECK-NEXT:   %e = math.exp %w : f32
// CHECK-NEXT:   te.yield %e : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y : tensor<4xf32>
// CHECK-NEXT: }

// A constant pad whose bounds test leaves the innermost dimension alone (a channels-last max pool's -inf padding,
// with the ReLU inlined into it) is inlined at every window tap of a max reduction reading it at the reduction's own
// innermost index: the test is one value per row of channels, so the padded copy goes.
func.func @channels_last_pad_into_max_pool(%x: tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %p = te.compute "pad" (%n, %h, %w, %c) -> tensor<1x5x5x8xf32> {
    %one = arith.constant 1 : index
    %zero = arith.constant 0 : index
    %hh = arith.subi %h, %one : index
    %hin = arith.cmpi sge, %hh, %zero : index
    %hc = arith.maxsi %hh, %zero : index
    %ww = arith.subi %w, %one : index
    %win = arith.cmpi sge, %ww, %zero : index
    %inside = arith.andi %hin, %win : i1
    %wc = arith.maxsi %ww, %zero : index
    %v = te.read %x[%n, %hc, %wc, %c] : tensor<1x4x4x8xf32>
    %f0 = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %f0 : f32
    %ninf = arith.constant 0xff800000 : f32
    %s = arith.select %inside, %r, %ninf : f32
    te.yield %s : f32
  }
  %y = te.compute "max_pool" (%a, %b, %d, %e) reduce max (%kh : 3, %kw : 3) -> tensor<1x2x2x8xf32> {
    %two = arith.constant 2 : index
    %b2 = arith.muli %b, %two : index
    %row = arith.addi %b2, %kh : index
    %d2 = arith.muli %d, %two : index
    %col = arith.addi %d2, %kw : index
    %t = te.read %p[%a, %row, %col, %e] : tensor<1x5x5x8xf32>
    te.yield %t : f32
  }
  func.return %y : tensor<1x2x2x8xf32>
}

// CHECK-LABEL: func.func @channels_last_pad_into_max_pool
// CHECK-NOT:   te.compute "pad"
// CHECK:       %y = te.compute "max_pool" (%a, %b, %d, %e) reduce max (%kh : 3, %kw : 3) -> tensor<1x2x2x8xf32> {
// CHECK:         %v = te.read %x[%a, %hc, %wc, %e] : tensor<1x4x4x8xf32>
// CHECK-NEXT:    %f0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %r = arith.maximumf %v, %f0 : f32
// CHECK-NEXT:    %ninf = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %s = arith.select %inside, %r, %ninf : f32
// CHECK-NEXT:    te.yield %s : f32

// Channels-first, the pad tests the width, the innermost dimension: inlined, the test would differ per lane of the
// pool's vectorized row, so the pad stays its own compute.
func.func @channels_first_pad_stays(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32> {
  %p = te.compute "pad" (%n, %c, %h, %w) -> tensor<1x8x5x5xf32> {
    %one = arith.constant 1 : index
    %zero = arith.constant 0 : index
    %hh = arith.subi %h, %one : index
    %hin = arith.cmpi sge, %hh, %zero : index
    %hc = arith.maxsi %hh, %zero : index
    %ww = arith.subi %w, %one : index
    %win = arith.cmpi sge, %ww, %zero : index
    %inside = arith.andi %hin, %win : i1
    %wc = arith.maxsi %ww, %zero : index
    %v = te.read %x[%n, %c, %hc, %wc] : tensor<1x8x4x4xf32>
    %ninf = arith.constant 0xff800000 : f32
    %s = arith.select %inside, %v, %ninf : f32
    te.yield %s : f32
  }
  %y = te.compute "max_pool" (%a, %e, %b, %d) reduce max (%kh : 3, %kw : 3) -> tensor<1x8x2x2xf32> {
    %two = arith.constant 2 : index
    %b2 = arith.muli %b, %two : index
    %row = arith.addi %b2, %kh : index
    %d2 = arith.muli %d, %two : index
    %col = arith.addi %d2, %kw : index
    %t = te.read %p[%a, %e, %row, %col] : tensor<1x8x5x5xf32>
    te.yield %t : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @channels_first_pad_stays
// CHECK:       %p = te.compute "pad" (%n, %c, %h, %w) -> tensor<1x8x5x5xf32> {
// CHECK:       %y = te.compute "max_pool" (%a, %e, %b, %d) reduce max (%kh : 3, %kw : 3) -> tensor<1x8x2x2xf32> {
// CHECK:         %t = te.read %p[%a, %e, %row, %col] : tensor<1x8x5x5xf32>

// A producer read by two stages of one kernel group (a softmax's row max and exp: the logits, scaled and masked) is
// inlined into both, being a few cheap ops: the group runs its stages row after row, so recomputing a row costs less
// than writing the logits to memory and reading them back. The max reads it at [i, k], not at its output's size-1
// axis: still each element once.
func.func @into_one_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %l = te.compute "scale" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %x[%i, %j] : tensor<2x3xf32>
    %c = arith.constant 0.125 : f32
    %s = arith.mulf %v, %c : f32
    te.yield %s : f32
  }
  %m = te.compute "softmax_max" (%i, %o) reduce max (%k : 3) -> tensor<2x1xf32> {
    %v = te.read %l[%i, %k] : tensor<2x3xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %e = te.compute "softmax_exp" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %l[%i, %j] : tensor<2x3xf32>
    %z = arith.constant 0 : index
    %w = te.read %m[%i, %z] : tensor<2x1xf32>
    %d = arith.subf %v, %w : f32
    %r = math.exp %d : f32
    te.yield %r : f32
  } attributes {kernel_group = 0 : i64}
  func.return %e : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @into_one_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %m = te.compute "softmax_max" (%i, %o) reduce max (%k : 3) -> tensor<2x1xf32> {
// CHECK-NEXT:   %v = te.read %x[%i, %k] : tensor<2x3xf32>
// CHECK-NEXT:   %c = arith.constant 1.250000e-01 : f32
// CHECK-NEXT:   %s = arith.mulf %v, %c : f32
// CHECK-NEXT:   te.yield %s : f32
// CHECK-NEXT: } attributes {kernel_group = 0 : i64}
// CHECK-NEXT: %e = te.compute "softmax_exp" (%i_1, %j) -> tensor<2x3xf32> {
// CHECK-NEXT:   %v_1 = te.read %x[%i_1, %j] : tensor<2x3xf32>
// CHECK-NEXT:   %c_1 = arith.constant 1.250000e-01 : f32
// CHECK-NEXT:   %s_1 = arith.mulf %v_1, %c_1 : f32
// CHECK:        %d = arith.subf %s_1, %w : f32

// Read by two stages of one group but dividing (not a cheap op), or read by computes of two groups, a producer
// stays: its recomputation would cost more than the pass it saves, or land in two kernels.
func.func @costly_or_two_groups_stay(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) {
  %l = te.compute "divide" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %x[%i, %j] : tensor<2x3xf32>
    %c = arith.constant 3.0 : f32
    %s = arith.divf %v, %c : f32
    te.yield %s : f32
  }
  %m = te.compute "group_max" (%i, %o) reduce max (%k : 3) -> tensor<2x1xf32> {
    %v = te.read %l[%i, %k] : tensor<2x3xf32>
    te.yield %v : f32
  } attributes {kernel_group = 0 : i64}
  %e = te.compute "group_neg" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %l[%i, %j] : tensor<2x3xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  } attributes {kernel_group = 0 : i64}
  %a = te.compute "scale" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %x[%i, %j] : tensor<2x3xf32>
    %c = arith.constant 0.5 : f32
    %s = arith.mulf %v, %c : f32
    te.yield %s : f32
  }
  %p = te.compute "one_max" (%i, %o) reduce max (%k : 3) -> tensor<2x1xf32> {
    %v = te.read %a[%i, %k] : tensor<2x3xf32>
    te.yield %v : f32
  } attributes {kernel_group = 1 : i64}
  %q = te.compute "other_neg" (%i, %j) -> tensor<2x3xf32> {
    %v = te.read %a[%i, %j] : tensor<2x3xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  } attributes {kernel_group = 2 : i64}
  func.return %m, %e, %p, %q : tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @costly_or_two_groups_stay(
// CHECK-NEXT: %l = te.compute "divide" (%i, %j) -> tensor<2x3xf32> {
// CHECK:      %m = te.compute "group_max"
// CHECK-NEXT:   %{{.*}} = te.read %l[
// CHECK:      %e = te.compute "group_neg"
// CHECK-NEXT:   %{{.*}} = te.read %l[
// CHECK:      %a = te.compute "scale"
// CHECK:      %p = te.compute "one_max"
// CHECK-NEXT:   %{{.*}} = te.read %a[
// CHECK:      %q = te.compute "other_neg"
// CHECK-NEXT:   %{{.*}} = te.read %a[
