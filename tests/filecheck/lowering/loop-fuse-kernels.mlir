// RUN: mini-opt %s --split-input-file -p loop-fuse-kernels | filecheck %s

// pad (injective, read only by the matmul) -> matmul (contraction) -> bias + residual + ReLU (elementwise, the
// matmul's only reader): one group, whose stages run in order. Called twice with the same buffers' shapes, the fused
// kernel is emitted once; the member kernels, no longer called, are erased.
func.func @pad_matmul_residual(%x: memref<4x6xf32>, %w: memref<8x5xf32>, %b: memref<5xf32>, %r: memref<4x5xf32>, %out0: memref<4x5xf32>, %out1: memref<4x5xf32>) {
  %p = loop.alloc "global" : memref<4x8xf32>
  func.call @pad_0(%x, %p) : (memref<4x6xf32>, memref<4x8xf32>) -> ()
  %y = loop.alloc "global" : memref<4x5xf32>
  func.call @matmul_1(%p, %w, %y) : (memref<4x8xf32>, memref<8x5xf32>, memref<4x5xf32>) -> ()
  func.call @relu_2(%y, %b, %r, %out0) : (memref<4x5xf32>, memref<5xf32>, memref<4x5xf32>, memref<4x5xf32>) -> ()
  %p2 = loop.alloc "global" : memref<4x8xf32>
  func.call @pad_0(%x, %p2) : (memref<4x6xf32>, memref<4x8xf32>) -> ()
  %y2 = loop.alloc "global" : memref<4x5xf32>
  func.call @matmul_1(%p2, %w, %y2) : (memref<4x8xf32>, memref<8x5xf32>, memref<4x5xf32>) -> ()
  func.call @relu_2(%y2, %b, %out0, %out1) : (memref<4x5xf32>, memref<5xf32>, memref<4x5xf32>, memref<4x5xf32>) -> ()
  func.return
}
func.func private @pad_0(%in0: memref<4x6xf32> {llvm.noalias}, %out: memref<4x8xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "k" %k = 0 to 8 step 1 serial {
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      %lo = arith.cmpi uge, %k, %c1 : index
      %hi = arith.cmpi ult, %k, %c7 : index
      %in = arith.andi %lo, %hi : i1
      %km = arith.subi %k, %c1 : index
      %c0 = arith.constant 0 : index
      %ks = arith.select %in, %km, %c0 : index
      %v = memref.load %in0[%i, %ks] : memref<4x6xf32>
      %z = arith.constant 0.000000e+00 : f32
      %s = arith.select %in, %v, %z : f32
      memref.store %s, %out[%i, %k] : memref<4x8xf32>
    }
  }
  func.return
}
func.func private @matmul_1(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x5xf32> {llvm.noalias}, %out: memref<4x5xf32> {llvm.noalias}) {
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k" %k = 0 to 8 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x5xf32>
        %m = arith.mulf %a, %c fastmath<contract> : f32
        %1 = memref.load %acc[] : memref<f32>
        %2 = arith.addf %1, %m fastmath<reassoc,contract> : f32
        memref.store %2, %acc[] : memref<f32>
      }
      %3 = memref.load %acc[] : memref<f32>
      memref.store %3, %out[%i, %j] : memref<4x5xf32>
    }
  }
  func.return
}
func.func private @relu_2(%in0: memref<4x5xf32> {llvm.noalias}, %in1: memref<5xf32> {llvm.noalias}, %in2: memref<4x5xf32> {llvm.noalias}, %out: memref<4x5xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x5xf32>
      %c = memref.load %in1[%j] : memref<5xf32>
      %e = memref.load %in2[%i, %j] : memref<4x5xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      %t = arith.addf %s, %e fastmath<contract> : f32
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %t, %zero : f32
      memref.store %m, %out[%i, %j] : memref<4x5xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @pad_matmul_residual(
// CHECK-NEXT:    %p = loop.alloc "global" : memref<4x8xf32>
// CHECK-NEXT:    %y = loop.alloc "global" : memref<4x5xf32>
// CHECK-NEXT:    func.call @fused_pad_matmul_relu_0(%x, %w, %b, %r, %p, %y, %out0) : (memref<4x6xf32>, memref<8x5xf32>, memref<5xf32>, memref<4x5xf32>, memref<4x8xf32>, memref<4x5xf32>, memref<4x5xf32>) -> ()
// CHECK-NEXT:    %p2 = loop.alloc "global" : memref<4x8xf32>
// CHECK-NEXT:    %y2 = loop.alloc "global" : memref<4x5xf32>
// CHECK-NEXT:    func.call @fused_pad_matmul_relu_0(%x, %w, %b, %out0, %p2, %y2, %out1)
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func private @pad_0
// CHECK-NOT:   func.func private @matmul_1
// CHECK-NOT:   func.func private @relu_2

// The fused kernel: inputs, then the internal buffers, then the output; the stages in program order. The matmul
// stores each finished sum once, but the epilogue reads a residual (`%r`, a whole tensor at the output's indices), so
// it stays a stage (`epilogue.py`).
// CHECK:       func.func private @fused_pad_matmul_relu_0(%in0: memref<4x6xf32> {llvm.noalias}, %in1: memref<8x5xf32> {llvm.noalias}, %in2: memref<5xf32> {llvm.noalias}, %in3: memref<4x5xf32> {llvm.noalias}, %in4: memref<4x8xf32> {llvm.noalias}, %in5: memref<4x5xf32> {llvm.noalias}, %out: memref<4x5xf32> {llvm.noalias}) {
// CHECK-NEXT:    loop.for "i" %i = 0 to 4 step 1 serial {
// CHECK:             %v = memref.load %in0[%i, %ks] : memref<4x6xf32>
// CHECK:             memref.store %s, %in4[%i, %k] : memref<4x8xf32>
// CHECK:         %acc = loop.alloc "local" : memref<f32>
// CHECK:               %a = memref.load %in4[%i_1, %k_1] : memref<4x8xf32>
// CHECK-NEXT:          %c = memref.load %in1[%k_1, %j] : memref<8x5xf32>
// CHECK:           memref.store %{{.*}}, %in5[%i_1, %j] : memref<4x5xf32>
// CHECK:             %a_1 = memref.load %in5[%i_2, %j_1] : memref<4x5xf32>
// CHECK-NEXT:        %c_1 = memref.load %in2[%j_1] : memref<5xf32>
// CHECK-NEXT:        %e = memref.load %in3[%i_2, %j_1] : memref<4x5xf32>
// CHECK:             memref.store %m_1, %out[%i_2, %j_1] : memref<4x5xf32>
// CHECK:         func.return
// CHECK-NEXT:  }

// -----

// Not fused: a transpose read by two kernels (fusing it into either would leave the other without it), a reduction
// and its elementwise consumer (reductions are their own groups), and a contraction and an injective consumer.
// The matmul's elementwise reader (exp) is fused as an epilogue of the matmul, its only reader: at the store of
// each finished sum (a scalar write-back: the libm call needs no vector form).
func.func @not_fused(%x: memref<5x4xf32>, %w: memref<4x5xf32>, %out0: memref<4x4xf32>, %out1: memref<4xf32>, %out2: memref<4x4xf32>) {
  %t = loop.alloc "global" : memref<4x5xf32>
  func.call @transpose_3(%x, %t) : (memref<5x4xf32>, memref<4x5xf32>) -> ()
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_4(%t, %w, %y) : (memref<4x5xf32>, memref<4x5xf32>, memref<4x4xf32>) -> ()
  func.call @exp_5(%y, %out0) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  %m = loop.alloc "global" : memref<4xf32>
  func.call @row_max_6(%t, %m) : (memref<4x5xf32>, memref<4xf32>) -> ()
  func.call @exp_7(%m, %out1) : (memref<4xf32>, memref<4xf32>) -> ()
  %z = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_4(%t, %w, %z) : (memref<4x5xf32>, memref<4x5xf32>, memref<4x4xf32>) -> ()
  func.call @transpose_8(%z, %out2) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @transpose_3(%in0: memref<5x4xf32> {llvm.noalias}, %out: memref<4x5xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %v = memref.load %in0[%j, %i] : memref<5x4xf32>
      memref.store %v, %out[%i, %j] : memref<4x5xf32>
    }
  }
  func.return
}
func.func private @matmul_4(%in0: memref<4x5xf32> {llvm.noalias}, %in1: memref<4x5xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k" %k = 0 to 5 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x5xf32>
        %c = memref.load %in1[%j, %k] : memref<4x5xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %1 = memref.load %acc[] : memref<f32>
        %2 = arith.addf %1, %p fastmath<reassoc,contract> : f32
        memref.store %2, %acc[] : memref<f32>
      }
      %3 = memref.load %acc[] : memref<f32>
      memref.store %3, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @exp_5(%in0: memref<4x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %v = memref.load %in0[%i, %j] : memref<4x4xf32>
      %e = math.exp %v : f32
      memref.store %e, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @row_max_6(%in0: memref<4x5xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 4 step 1 serial {
    %0 = arith.constant 0xFF800000 : f32
    memref.store %0, %acc[] : memref<f32>
    loop.for "j" %j = 0 to 5 step 1 serial {
      %v = memref.load %in0[%i, %j] : memref<4x5xf32>
      %1 = memref.load %acc[] : memref<f32>
      %2 = arith.maximumf %1, %v : f32
      memref.store %2, %acc[] : memref<f32>
    }
    %3 = memref.load %acc[] : memref<f32>
    memref.store %3, %out[%i] : memref<4xf32>
  }
  func.return
}
func.func private @exp_7(%in0: memref<4xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    %v = memref.load %in0[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %out[%i] : memref<4xf32>
  }
  func.return
}
func.func private @transpose_8(%in0: memref<4x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %v = memref.load %in0[%j, %i] : memref<4x4xf32>
      memref.store %v, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @not_fused(
// CHECK-NEXT:    %t = loop.alloc "global" : memref<4x5xf32>
// CHECK-NEXT:    func.call @transpose_3(%x, %t)
// CHECK-NEXT:    func.call @fused_matmul_exp_0(%t, %w, %out0)
// CHECK-NEXT:    %m = loop.alloc "global" : memref<4xf32>
// CHECK-NEXT:    func.call @row_max_6(%t, %m)
// CHECK-NEXT:    func.call @exp_7(%m, %out1)
// CHECK-NEXT:    %z = loop.alloc "global" : memref<4x4xf32>
// CHECK-NEXT:    func.call @matmul_4(%t, %w, %z)
// CHECK-NEXT:    func.call @transpose_8(%z, %out2)
// CHECK-NEXT:    func.return
// CHECK:       func.func private @transpose_3(
// CHECK:       func.func private @matmul_4(
// CHECK-NOT:   func.func private @exp_5(
// CHECK:       func.func private @row_max_6(
// CHECK:       func.func private @exp_7(
// CHECK:       func.func private @transpose_8(
// CHECK:       func.func private @fused_matmul_exp_0(%in0: memref<4x5xf32> {llvm.noalias}, %in1: memref<4x5xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
// CHECK:             memref.store %2, %acc[] : memref<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.*]] = memref.load %acc[] : memref<f32>
// CHECK-NEXT:      %e = math.exp %[[SUM]] : f32
// CHECK-NEXT:      memref.store %e, %out[%i, %j] : memref<4x4xf32>

// -----

// A scheduled contraction (output zeroed, each element's sum added once from a register tile) followed by its
// elementwise stage: the stage runs at the write-back, on the tile's value, so neither the zeroing nor the pass over
// the intermediate remains, and the intermediate buffer is dropped. The second matmul adds two partial sums per
// element (the write-back is inside the loop over `k_o`), so its epilogue stays a stage of its own.
func.func @epilogue(%x: memref<4x8xf32>, %w: memref<8x4xf32>, %b: memref<4xf32>, %out0: memref<4x4xf32>, %out1: memref<4x4xf32>) {
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @relu_1(%y, %b, %out0) : (memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
  %z = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_2(%x, %w, %z) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @relu_1(%z, %b, %out1) : (memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 serial {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @matmul_2(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "k_o" %k_o = 0 to 8 step 4 serial {
    loop.for "i" %i = 0 to 4 step 1 serial {
      loop.for "i_ld" %l = 0 to 4 step 1 serial {
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %tile[%l] : memref<4xf32>
      }
      loop.for "k_i" %k_i = 0 to 4 step 1 serial {
        loop.for "j" %j = 0 to 4 step 1 serial {
          %k = arith.addi %k_o, %k_i : index
          %a = memref.load %in0[%i, %k] : memref<4x8xf32>
          %c = memref.load %in1[%k, %j] : memref<8x4xf32>
          %p = arith.mulf %a, %c fastmath<contract> : f32
          %t = memref.load %tile[%j] : memref<4xf32>
          %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
          memref.store %s, %tile[%j] : memref<4xf32>
        }
      }
      loop.for "i_st" %st = 0 to 4 step 1 serial {
        %v = memref.load %tile[%st] : memref<4xf32>
        %o = memref.load %out[%i, %st] : memref<4x4xf32>
        %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
        memref.store %n, %out[%i, %st] : memref<4x4xf32>
      }
    }
  }
  func.return
}
func.func private @relu_1(%in0: memref<4x4xf32> {llvm.noalias}, %in1: memref<4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %c = memref.load %in1[%j] : memref<4xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %s, %zero : f32
      memref.store %m, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @epilogue(
// CHECK-NEXT:    func.call @fused_matmul_relu_0(%x, %w, %b, %out0) : (memref<4x8xf32>, memref<8x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
// CHECK-NEXT:    %z = loop.alloc "global" : memref<4x4xf32>
// CHECK-NEXT:    func.call @fused_matmul_relu_1(%x, %w, %b, %z, %out1)
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_relu_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %in2: memref<4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<4xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to 4 step 1 parallel {
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 serial {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %c_1 = memref.load %in2[%st] : memref<4xf32>
// CHECK-NEXT:        %s_1 = arith.addf %v, %c_1 fastmath<contract> : f32
// CHECK-NEXT:        %zero_1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %m = arith.maximumf %s_1, %zero_1 : f32
// CHECK-NEXT:        memref.store %m, %out[%i, %st] : memref<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_relu_1(
// CHECK:         loop.for "i_init"
// CHECK:         loop.for "k_o"
// CHECK:         loop.for "i" %i_1 = 0 to 4 step 1 serial {
// CHECK:             %a_1 = memref.load %in3[%i_1, %j_1] : memref<4x4xf32>

// -----

// The contraction writes 8 columns, its elementwise reader keeps the first 4 (a slice, as graph-pad-conv-channels
// leaves after a convolution whose channels it rounded up): the write-back visits elements the stage does not, so
// the stage is fused as a stage of its own, not folded into the write-back (which would store past the output).
func.func @sliced_epilogue(%x: memref<4x8xf32>, %w: memref<8x8xf32>, %out0: memref<4x4xf32>) {
  %y = loop.alloc "global" : memref<4x8xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>) -> ()
  func.call @slice_relu_1(%y, %out0) : (memref<4x8xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x8xf32> {llvm.noalias}, %out: memref<4x8xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<8xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 8 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x8xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 8 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<8xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 8 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x8xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<8xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<8xf32>
      }
    }
    loop.for "i_st" %st = 0 to 8 step 1 serial {
      %v = memref.load %tile[%st] : memref<8xf32>
      %o = memref.load %out[%i, %st] : memref<4x8xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x8xf32>
    }
  }
  func.return
}
func.func private @slice_relu_1(%in0: memref<4x8xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x8xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %a, %zero : f32
      memref.store %m, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @sliced_epilogue(
// CHECK-NEXT:    %y = loop.alloc "global" : memref<4x8xf32>
// CHECK-NEXT:    func.call @fused_matmul_slice_relu_0(%x, %w, %y, %out0)
// CHECK-NEXT:    func.return
// CHECK:       func.func private @fused_matmul_slice_relu_0(
// CHECK:         loop.for "i_init"
// CHECK:         loop.for "i_st" %st = 0 to 8 step 1 serial {
// CHECK-NEXT:      %v = memref.load %tile[%st] : memref<8xf32>
// CHECK-NEXT:      %o = memref.load %in2[%i, %st] : memref<4x8xf32>
// CHECK:         loop.for "i" %i_1 = 0 to 4 step 1 serial {
// CHECK-NEXT:      loop.for "j" %j_1 = 0 to 4 step 1 serial {
// CHECK-NEXT:        %a_1 = memref.load %in2[%i_1, %j_1] : memref<4x8xf32>

// -----

// With a vectorized write-back (a channels-last convolution's tile goes back one vector per row) the epilogue still
// moves into it, and becomes vector code with it; an epilogue with a libm call (no vector form) stays a stage.
func.func @vector_epilogue(%x: memref<4x8xf32>, %w: memref<8x4xf32>, %b: memref<4xf32>, %out0: memref<4x4xf32>, %out1: memref<4x4xf32>) {
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @relu_1(%y, %b, %out0) : (memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
  %z = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_0(%x, %w, %z) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @erf_2(%z, %out1) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "i_ld" %l = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 vectorize {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 vectorize {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @relu_1(%in0: memref<4x4xf32> {llvm.noalias}, %in1: memref<4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 vectorize {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %c = memref.load %in1[%j] : memref<4xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %s, %zero : f32
      memref.store %m, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @erf_2(%in0: memref<4x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %e = math.erf %a : f32
      memref.store %e, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @vector_epilogue(
// CHECK-NEXT:    func.call @fused_matmul_relu_0(%x, %w, %b, %out0) : (memref<4x8xf32>, memref<8x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
// CHECK-NEXT:    %z = loop.alloc "global" : memref<4x4xf32>
// CHECK-NEXT:    func.call @fused_matmul_erf_1(%x, %w, %z, %out1)
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_relu_0(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<4xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to 4 step 1 serial {
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %c_1 = memref.load %in2[%st] : memref<4xf32>
// CHECK-NEXT:        %s_1 = arith.addf %v, %c_1 fastmath<contract> : f32
// CHECK-NEXT:        %zero_1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %m = arith.maximumf %s_1, %zero_1 : f32
// CHECK-NEXT:        memref.store %m, %out[%i, %st] : memref<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_erf_1(
// CHECK:         loop.for "i_init"
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %o = memref.load %in2[%i, %st] : memref<4x4xf32>
// CHECK:         loop.for "i" %i_1 = 0 to 4 step 1 serial {
// CHECK:             %e = math.erf %a_1 : f32

// -----

// An epilogue that loads bool (i1) elements (a mask) stays a stage after a vectorized write-back: LLVM packs i1
// vectors into bits, so the loads have no vector form.
func.func @bool_epilogue(%x: memref<4x8xf32>, %w: memref<8x4xf32>, %mask: memref<4x4xi1>, %out: memref<4x4xf32>) {
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @where_1(%y, %mask, %out) : (memref<4x4xf32>, memref<4x4xi1>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "i_ld" %l = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 vectorize {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 vectorize {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @where_1(%in0: memref<4x4xf32> {llvm.noalias}, %in1: memref<4x4xi1> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %m = memref.load %in1[%i, %j] : memref<4x4xi1>
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %m, %ninf, %a : f32
      memref.store %r, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @bool_epilogue(
// CHECK-NEXT:    %y = loop.alloc "global" : memref<4x4xf32>
// CHECK-NEXT:    func.call @fused_matmul_where_0(%x, %w, %mask, %y, %out)
// CHECK:       func.func private @fused_matmul_where_0(
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %o = memref.load %in3[%i, %st] : memref<4x4xf32>
// CHECK:         loop.for "i" %i_1 = 0 to 4 step 1 serial {
// CHECK:             %m = memref.load %in2[%i_1, %j_1] : memref<4x4xi1>
// CHECK-NEXT:        %ninf = arith.constant 0xff800000 : f32
// CHECK-NEXT:        %r = arith.select %m, %ninf, %a_1 : f32

// -----

// A contraction whose output nothing fuses into, zeroed and then written back element by element from its tile (as
// a convolution vectorized over channels writes an NCHW output): each sum is stored, not added, and the zeroing
// pass goes. A vectorized write-back (a channels-last output) keeps both.
func.func @scalar_write_back(%x: memref<4x8xf32>, %w: memref<8x4xf32>, %out0: memref<4x4xf32>, %out1: memref<4x4xf32>) {
  func.call @matmul_0(%x, %w, %out0) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @matmul_1(%x, %w, %out1) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 parallel {
    loop.for "j_init" %ji = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 serial {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @matmul_1(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 parallel {
    loop.for "j_init" %ji = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 vectorize {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 vectorize {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @scalar_write_back(
// CHECK-NEXT:    func.call @matmul_0(%x, %w, %out0)
// CHECK-NEXT:    func.call @matmul_1(%x, %w, %out1)
// CHECK-NEXT:    func.return

// CHECK:       func.func private @matmul_0(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<4xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to 4 step 1 parallel {
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 serial {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        memref.store %v, %out[%i, %st] : memref<4x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// CHECK:       func.func private @matmul_1(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<4xf32>
// CHECK-NEXT:    loop.for "i_init" %ii = 0 to 4 step 1 parallel {
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %o = memref.load %out[%i, %st] : memref<4x4xf32>
// CHECK-NEXT:        %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
// CHECK-NEXT:        memref.store %n, %out[%i, %st] : memref<4x4xf32>

// -----

// Register tiles that start at zero and are stored (`loop-cache-write fill=true`): a 4-row tile and a 2-row tail
// tile, sibling nests whose stores together write every element once. The bias + ReLU stage after them moves into
// both write-backs and the intermediate goes. The second matmul stores its tile inside the loop over `k_o`, so each
// element is written twice (only the last is the sum): the stage stays.
func.func @stored_epilogue(%x: memref<6x8xf32>, %w: memref<8x4xf32>, %b: memref<4xf32>, %out0: memref<6x4xf32>, %out1: memref<6x4xf32>) {
  %y = loop.alloc "global" : memref<6x4xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<6x8xf32>, memref<8x4xf32>, memref<6x4xf32>) -> ()
  func.call @relu_1(%y, %b, %out0) : (memref<6x4xf32>, memref<4xf32>, memref<6x4xf32>) -> ()
  %z = loop.alloc "global" : memref<6x4xf32>
  func.call @matmul_2(%x, %w, %z) : (memref<6x8xf32>, memref<8x4xf32>, memref<6x4xf32>) -> ()
  func.call @relu_1(%z, %b, %out1) : (memref<6x4xf32>, memref<4xf32>, memref<6x4xf32>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<6x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<6x4xf32> {llvm.noalias}) {
  %tail = loop.alloc "local" : memref<2x4xf32>
  %tile = loop.alloc "local" : memref<4x4xf32>
  loop.for "i_o" %i_o = 0 to 4 step 4 serial {
    loop.for "i_o_ld0" %l0 = 0 to 4 step 1 unroll {
      loop.for "i_o_ld1" %l1 = 0 to 4 step 1 vectorize {
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %tile[%l0, %l1] : memref<4x4xf32>
      }
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "i_i" %i_i = 0 to 4 step 1 unroll {
        loop.for "j" %j = 0 to 4 step 1 vectorize {
          %i = arith.addi %i_o, %i_i : index
          %a = memref.load %in0[%i, %k] : memref<6x8xf32>
          %c = memref.load %in1[%k, %j] : memref<8x4xf32>
          %p = arith.mulf %a, %c fastmath<contract> : f32
          %t = memref.load %tile[%i_i, %j] : memref<4x4xf32>
          %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
          memref.store %s, %tile[%i_i, %j] : memref<4x4xf32>
        }
      }
    }
    loop.for "i_o_st0" %s0 = 0 to 4 step 1 unroll {
      loop.for "i_o_st1" %s1 = 0 to 4 step 1 vectorize {
        %row = arith.addi %i_o, %s0 : index
        %v = memref.load %tile[%s0, %s1] : memref<4x4xf32>
        memref.store %v, %out[%row, %s1] : memref<6x4xf32>
      }
    }
  }
  loop.for "i_t" %i_t = 4 to 6 step 2 serial {
    loop.for "i_t_ld0" %l0 = 0 to 2 step 1 unroll {
      loop.for "i_t_ld1" %l1 = 0 to 4 step 1 vectorize {
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %tail[%l0, %l1] : memref<2x4xf32>
      }
    }
    loop.for "k_t" %k = 0 to 8 step 1 serial {
      loop.for "i_i_t" %i_i = 0 to 2 step 1 unroll {
        loop.for "j_t" %j = 0 to 4 step 1 vectorize {
          %i = arith.addi %i_t, %i_i : index
          %a = memref.load %in0[%i, %k] : memref<6x8xf32>
          %c = memref.load %in1[%k, %j] : memref<8x4xf32>
          %p = arith.mulf %a, %c fastmath<contract> : f32
          %t = memref.load %tail[%i_i, %j] : memref<2x4xf32>
          %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
          memref.store %s, %tail[%i_i, %j] : memref<2x4xf32>
        }
      }
    }
    loop.for "i_t_st0" %s0 = 0 to 2 step 1 unroll {
      loop.for "i_t_st1" %s1 = 0 to 4 step 1 vectorize {
        %row = arith.addi %i_t, %s0 : index
        %v = memref.load %tail[%s0, %s1] : memref<2x4xf32>
        memref.store %v, %out[%row, %s1] : memref<6x4xf32>
      }
    }
  }
  func.return
}
func.func private @matmul_2(%in0: memref<6x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<6x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "k_o" %k_o = 0 to 8 step 4 serial {
    loop.for "i" %i = 0 to 6 step 1 serial {
      loop.for "i_ld" %l = 0 to 4 step 1 vectorize {
        %zero = arith.constant 0.000000e+00 : f32
        memref.store %zero, %tile[%l] : memref<4xf32>
      }
      loop.for "k_i" %k_i = 0 to 4 step 1 serial {
        loop.for "j" %j = 0 to 4 step 1 vectorize {
          %k = arith.addi %k_o, %k_i : index
          %a = memref.load %in0[%i, %k] : memref<6x8xf32>
          %c = memref.load %in1[%k, %j] : memref<8x4xf32>
          %p = arith.mulf %a, %c fastmath<contract> : f32
          %t = memref.load %tile[%j] : memref<4xf32>
          %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
          memref.store %s, %tile[%j] : memref<4xf32>
        }
      }
      loop.for "i_st" %st = 0 to 4 step 1 vectorize {
        %v = memref.load %tile[%st] : memref<4xf32>
        memref.store %v, %out[%i, %st] : memref<6x4xf32>
      }
    }
  }
  func.return
}
func.func private @relu_1(%in0: memref<6x4xf32> {llvm.noalias}, %in1: memref<4xf32> {llvm.noalias}, %out: memref<6x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 6 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 vectorize {
      %a = memref.load %in0[%i, %j] : memref<6x4xf32>
      %c = memref.load %in1[%j] : memref<4xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %s, %zero : f32
      memref.store %m, %out[%i, %j] : memref<6x4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @stored_epilogue(
// CHECK-NEXT:    func.call @fused_matmul_relu_0(%x, %w, %b, %out0) : (memref<6x8xf32>, memref<8x4xf32>, memref<4xf32>, memref<6x4xf32>) -> ()
// CHECK-NEXT:    %z = loop.alloc "global" : memref<6x4xf32>
// CHECK-NEXT:    func.call @fused_matmul_relu_1(%x, %w, %b, %z, %out1)
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_relu_0(%in0: memref<6x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %in2: memref<4xf32> {llvm.noalias}, %out: memref<6x4xf32> {llvm.noalias}) {
// CHECK:           loop.for "i_o_st1" %s1 = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %row = arith.addi %i_o, %s0 : index
// CHECK-NEXT:        %v = memref.load %tile[%s0, %s1] : memref<4x4xf32>
// CHECK-NEXT:        %c_1 = memref.load %in2[%s1] : memref<4xf32>
// CHECK-NEXT:        %s_1 = arith.addf %v, %c_1 fastmath<contract> : f32
// CHECK-NEXT:        %zero_1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %m = arith.maximumf %s_1, %zero_1 : f32
// CHECK-NEXT:        memref.store %m, %out[%row, %s1] : memref<6x4xf32>
// CHECK-NEXT:      }
// CHECK:           loop.for "i_t_st1" %s1_1 = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %row_1 = arith.addi %i_t, %s0_1 : index
// CHECK-NEXT:        %v_1 = memref.load %tail[%s0_1, %s1_1] : memref<2x4xf32>
// CHECK-NEXT:        %[[BIAS:.*]] = memref.load %in2[%s1_1] : memref<4xf32>
// CHECK-NEXT:        %[[SUM:.*]] = arith.addf %v_1, %[[BIAS]] fastmath<contract> : f32
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
// CHECK-NEXT:        memref.store %[[RELU]], %out[%row_1, %s1_1] : memref<6x4xf32>
// CHECK-NEXT:      }
// CHECK-NOT:     memref.load %out
// CHECK:         func.return

// CHECK:       func.func private @fused_matmul_relu_1(
// CHECK:         loop.for "k_o"
// CHECK:             memref.store %v, %in3[%i, %st] : memref<6x4xf32>
// CHECK:         loop.for "i" %i_1 = 0 to 6 step 1 serial {
// CHECK:             %a_1 = memref.load %in3[%i_1, %j_1] : memref<6x4xf32>

// -----

// A contraction over packed words: `llvmx.dot_bf16` of two input reads (bfloat16 pairs) and `llvmx.dot_u8s8` (int8
// quads) are products as `arith.mulf` is, so each kernel takes the bias and ReLU that alone read it into its register
// tile's write-back, as a float32 convolution does.
func.func @dot_product_epilogues(%x: memref<4x8xi32>, %w: memref<8x4xi32>, %b: memref<4xf32>, %out0: memref<4x4xf32>, %out1: memref<4x4xi32>) {
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_bf16_0(%x, %w, %y) : (memref<4x8xi32>, memref<8x4xi32>, memref<4x4xf32>) -> ()
  func.call @relu_1(%y, %b, %out0) : (memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) -> ()
  %z = loop.alloc "global" : memref<4x4xi32>
  func.call @matmul_int8_2(%x, %w, %z) : (memref<4x8xi32>, memref<8x4xi32>, memref<4x4xi32>) -> ()
  func.call @relu_3(%z, %out1) : (memref<4x4xi32>, memref<4x4xi32>) -> ()
  func.return
}
func.func private @matmul_bf16_0(%in0: memref<4x8xi32> {llvm.noalias}, %in1: memref<8x4xi32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 4 step 1 serial {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xi32>
        %c = memref.load %in1[%k, %j] : memref<8x4xi32>
        %zero = arith.constant 0.000000e+00 : f32
        %p = llvmx.dot_bf16 %zero, %a, %c : f32, i32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 serial {
      %v = memref.load %tile[%st] : memref<4xf32>
      memref.store %v, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @relu_1(%in0: memref<4x4xf32> {llvm.noalias}, %in1: memref<4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %e = memref.load %in1[%j] : memref<4xf32>
      %s = arith.addf %a, %e fastmath<contract> : f32
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %s, %zero : f32
      memref.store %m, %out[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @matmul_int8_2(%in0: memref<4x8xi32> {llvm.noalias}, %in1: memref<8x4xi32> {llvm.noalias}, %out: memref<4x4xi32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xi32>
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "i_ld" %l = 0 to 4 step 1 serial {
      %zero = arith.constant 0 : i32
      memref.store %zero, %tile[%l] : memref<4xi32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 serial {
        %a = memref.load %in0[%i, %k] : memref<4x8xi32>
        %c = memref.load %in1[%k, %j] : memref<8x4xi32>
        %t = memref.load %tile[%j] : memref<4xi32>
        %s = llvmx.dot_u8s8 %t, %a, %c : i32
        memref.store %s, %tile[%j] : memref<4xi32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 serial {
      %v = memref.load %tile[%st] : memref<4xi32>
      memref.store %v, %out[%i, %st] : memref<4x4xi32>
    }
  }
  func.return
}
func.func private @relu_3(%in0: memref<4x4xi32> {llvm.noalias}, %out: memref<4x4xi32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 serial {
      %a = memref.load %in0[%i, %j] : memref<4x4xi32>
      %zero = arith.constant 0 : i32
      %m = arith.maxsi %a, %zero : i32
      memref.store %m, %out[%i, %j] : memref<4x4xi32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dot_product_epilogues(
// CHECK-NEXT:    func.call @fused_matmul_bf16_relu_0(%x, %w, %b, %out0) : (memref<4x8xi32>, memref<8x4xi32>, memref<4xf32>, memref<4x4xf32>) -> ()
// CHECK-NEXT:    func.call @fused_matmul_int8_relu_1(%x, %w, %out1) : (memref<4x8xi32>, memref<8x4xi32>, memref<4x4xi32>) -> ()
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_bf16_relu_0(
// CHECK:           %p = llvmx.dot_bf16 %zero_1, %a, %c : f32, i32
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 serial {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %e = memref.load %in2[%st] : memref<4xf32>
// CHECK-NEXT:        %s_1 = arith.addf %v, %e fastmath<contract> : f32
// CHECK-NEXT:        %zero_2 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %m = arith.maximumf %s_1, %zero_2 : f32
// CHECK-NEXT:        memref.store %m, %out[%i, %st] : memref<4x4xf32>

// CHECK:       func.func private @fused_matmul_int8_relu_1(
// CHECK:           %s = llvmx.dot_u8s8 %t, %a, %c : i32
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 serial {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xi32>
// CHECK-NEXT:        %zero_1 = arith.constant 0 : i32
// CHECK-NEXT:        %m = arith.maxsi %v, %zero_1 : i32
// CHECK-NEXT:        memref.store %m, %out[%i, %st] : memref<4x4xi32>

// -----

// An epilogue may store another element type than the buffer it replaces: the rounding to bfloat16 of a bf16 build's
// activations (`te-bf16-activations`) moves into the float32 tile's write-back, which then stores the rounded bits,
// and the float32 intermediate goes.
func.func @narrowing_epilogue(%x: memref<4x8xf32>, %w: memref<8x4xf32>, %out: memref<4x4xi16>) {
  %y = loop.alloc "global" : memref<4x4xf32>
  func.call @matmul_0(%x, %w, %y) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>) -> ()
  func.call @to_bf16_1(%y, %out) : (memref<4x4xf32>, memref<4x4xi16>) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<4x8xf32> {llvm.noalias}, %in1: memref<8x4xf32> {llvm.noalias}, %out: memref<4x4xf32> {llvm.noalias}) {
  %tile = loop.alloc "local" : memref<4xf32>
  loop.for "i_init" %ii = 0 to 4 step 1 serial {
    loop.for "j_init" %ji = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %out[%ii, %ji] : memref<4x4xf32>
    }
  }
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "i_ld" %l = 0 to 4 step 1 vectorize {
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %tile[%l] : memref<4xf32>
    }
    loop.for "k" %k = 0 to 8 step 1 serial {
      loop.for "j" %j = 0 to 4 step 1 vectorize {
        %a = memref.load %in0[%i, %k] : memref<4x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x4xf32>
        %p = arith.mulf %a, %c fastmath<contract> : f32
        %t = memref.load %tile[%j] : memref<4xf32>
        %s = arith.addf %t, %p fastmath<reassoc,contract> : f32
        memref.store %s, %tile[%j] : memref<4xf32>
      }
    }
    loop.for "i_st" %st = 0 to 4 step 1 vectorize {
      %v = memref.load %tile[%st] : memref<4xf32>
      %o = memref.load %out[%i, %st] : memref<4x4xf32>
      %n = arith.addf %o, %v fastmath<reassoc,contract> : f32
      memref.store %n, %out[%i, %st] : memref<4x4xf32>
    }
  }
  func.return
}
func.func private @to_bf16_1(%in0: memref<4x4xf32> {llvm.noalias}, %out: memref<4x4xi16> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    loop.for "j" %j = 0 to 4 step 1 vectorize {
      %a = memref.load %in0[%i, %j] : memref<4x4xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %word = llvmx.pack_bf16 %a, %zero : f32 -> i32
      %b = arith.trunci %word : i32 to i16
      memref.store %b, %out[%i, %j] : memref<4x4xi16>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @narrowing_epilogue(
// CHECK-NEXT:    func.call @fused_matmul_to_bf16_0(%x, %w, %out) : (memref<4x8xf32>, memref<8x4xf32>, memref<4x4xi16>) -> ()
// CHECK-NEXT:    func.return

// CHECK:       func.func private @fused_matmul_to_bf16_0(
// CHECK-NOT:     memref<4x4xf32>
// CHECK:           loop.for "i_st" %st = 0 to 4 step 1 vectorize {
// CHECK-NEXT:        %v = memref.load %tile[%st] : memref<4xf32>
// CHECK-NEXT:        %zero_1 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %word = llvmx.pack_bf16 %v, %zero_1 : f32 -> i32
// CHECK-NEXT:        %b = arith.trunci %word : i32 to i16
// CHECK-NEXT:        memref.store %b, %out[%i, %st] : memref<4x4xi16>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
