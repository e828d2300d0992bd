// RUN: mini-opt %s --split-input-file -p loop-fuse-kernels | filecheck %s

// Kernels of a dynamic model take their run-time extents after their buffers (program/kernel_params.py): a GEMM
// over %n rows (contraction) -> bias add -> ReLU (elementwise, each the only reader of its input) is one group, as
// in a static model. The fused kernel takes the buffers (inputs, internal, output) then one parameter per distinct
// extent the calls pass (%n, passed to all three, once); each stage's loops run to that parameter. Write-backs under
// run-time loops are not folded (yet): the internal buffers stay.
func.func @gemm_bias_relu(%x: memref<?x8xf32>, %w: memref<8x5xf32>, %b: memref<5xf32>, %out0: memref<?x5xf32>, %n: index) {
  %y = loop.alloc "global" [%n] : memref<?x5xf32>
  func.call @matmul_0(%x, %w, %y, %n) : (memref<?x8xf32>, memref<8x5xf32>, memref<?x5xf32>, index) -> ()
  %z = loop.alloc "global" [%n] : memref<?x5xf32>
  func.call @add_1(%y, %b, %z, %n) : (memref<?x5xf32>, memref<5xf32>, memref<?x5xf32>, index) -> ()
  func.call @relu_2(%z, %out0, %n) : (memref<?x5xf32>, memref<?x5xf32>, index) -> ()
  func.return
}
func.func private @matmul_0(%in0: memref<?x8xf32> {llvm.noalias}, %in1: memref<8x5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
  %in0_1 = loop.extents %in0[%n0] : memref<?x8xf32>
  %out_1 = loop.extents %out[%n0] : memref<?x5xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to %n0 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k" %k = 0 to 8 step 1 serial {
        %a = memref.load %in0_1[%i, %k] : memref<?x8xf32>
        %c = memref.load %in1[%k, %j] : memref<8x5xf32>
        %m = arith.mulf %a, %c fastmath<contract> : f32
        %1 = memref.load %acc[] : memref<f32>
        %2 = arith.addf %1, %m fastmath<reassoc,contract> : f32
        memref.store %2, %acc[] : memref<f32>
      }
      %3 = memref.load %acc[] : memref<f32>
      memref.store %3, %out_1[%i, %j] : memref<?x5xf32>
    }
  }
  func.return
}
func.func private @add_1(%in0: memref<?x5xf32> {llvm.noalias}, %in1: memref<5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
  %in0_1 = loop.extents %in0[%n0] : memref<?x5xf32>
  %out_1 = loop.extents %out[%n0] : memref<?x5xf32>
  loop.for "i" %i = 0 to %n0 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %a = memref.load %in0_1[%i, %j] : memref<?x5xf32>
      %c = memref.load %in1[%j] : memref<5xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      memref.store %s, %out_1[%i, %j] : memref<?x5xf32>
    }
  }
  func.return
}
func.func private @relu_2(%in0: memref<?x5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
  %in0_1 = loop.extents %in0[%n0] : memref<?x5xf32>
  %out_1 = loop.extents %out[%n0] : memref<?x5xf32>
  loop.for "i" %i = 0 to %n0 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %a = memref.load %in0_1[%i, %j] : memref<?x5xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %m = arith.maximumf %a, %zero : f32
      memref.store %m, %out_1[%i, %j] : memref<?x5xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_bias_relu(
// CHECK-NEXT:    %y = loop.alloc "global" [%n] : memref<?x5xf32>
// CHECK-NEXT:    %z = loop.alloc "global" [%n] : memref<?x5xf32>
// CHECK-NEXT:    func.call @fused_matmul_add_relu_0(%x, %w, %b, %y, %z, %out0, %n) : (memref<?x8xf32>, memref<8x5xf32>, memref<5xf32>, memref<?x5xf32>, memref<?x5xf32>, memref<?x5xf32>, index) -> ()
// CHECK-NEXT:    func.return
// CHECK-NOT:   func.func private @matmul_0
// CHECK-NOT:   func.func private @add_1
// CHECK-NOT:   func.func private @relu_2
// CHECK:       func.func private @fused_matmul_add_relu_0(%in0: memref<?x8xf32> {llvm.noalias}, %in1: memref<8x5xf32> {llvm.noalias}, %in2: memref<5xf32> {llvm.noalias}, %in3: memref<?x5xf32> {llvm.noalias}, %in4: memref<?x5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?x8xf32>
// CHECK-NEXT:    %out_1 = loop.extents %in3[%n0] : memref<?x5xf32>
// CHECK:         loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK:           memref.store %{{.*}}, %out_1[%i, %j] : memref<?x5xf32>
// CHECK:         %in0_2 = loop.extents %in3[%n0] : memref<?x5xf32>
// CHECK-NEXT:    %out_2 = loop.extents %in4[%n0] : memref<?x5xf32>
// CHECK-NEXT:    loop.for "i" %i_1 = 0 to %n0 step 1 serial {
// CHECK:         %in0_3 = loop.extents %in4[%n0] : memref<?x5xf32>
// CHECK-NEXT:    %out_3 = loop.extents %out[%n0] : memref<?x5xf32>
// CHECK-NEXT:    loop.for "i" %i_2 = 0 to %n0 step 1 serial {
// CHECK:           memref.store %{{.*}}, %out_3[%i_2, %j_2] : memref<?x5xf32>
// CHECK:         func.return

// -----

// The producer's and the consumer's calls pass different values (%n, %m) as the row extent: they stay two parameters
// of the fused kernel, each stage's loop running to its own (nothing merges loops of different run-time bounds).
func.func @different_extents(%x: memref<?x5xf32>, %b: memref<5xf32>, %out0: memref<?x5xf32>, %n: index, %m: index) {
  %y = loop.alloc "global" [%n] : memref<?x5xf32>
  func.call @relu_0(%x, %y, %n) : (memref<?x5xf32>, memref<?x5xf32>, index) -> ()
  func.call @add_1(%y, %b, %out0, %m) : (memref<?x5xf32>, memref<5xf32>, memref<?x5xf32>, index) -> ()
  func.return
}
func.func private @relu_0(%in0: memref<?x5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
  %in0_1 = loop.extents %in0[%n0] : memref<?x5xf32>
  %out_1 = loop.extents %out[%n0] : memref<?x5xf32>
  loop.for "i" %i = 0 to %n0 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %a = memref.load %in0_1[%i, %j] : memref<?x5xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %a, %zero : f32
      memref.store %r, %out_1[%i, %j] : memref<?x5xf32>
    }
  }
  func.return
}
func.func private @add_1(%in0: memref<?x5xf32> {llvm.noalias}, %in1: memref<5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index) {
  %in0_1 = loop.extents %in0[%n0] : memref<?x5xf32>
  %out_1 = loop.extents %out[%n0] : memref<?x5xf32>
  loop.for "i" %i = 0 to %n0 step 1 serial {
    loop.for "j" %j = 0 to 5 step 1 serial {
      %a = memref.load %in0_1[%i, %j] : memref<?x5xf32>
      %c = memref.load %in1[%j] : memref<5xf32>
      %s = arith.addf %a, %c fastmath<contract> : f32
      memref.store %s, %out_1[%i, %j] : memref<?x5xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @different_extents(
// CHECK-NEXT:    %y = loop.alloc "global" [%n] : memref<?x5xf32>
// CHECK-NEXT:    func.call @fused_relu_add_0(%x, %b, %y, %out0, %n, %m) : (memref<?x5xf32>, memref<5xf32>, memref<?x5xf32>, memref<?x5xf32>, index, index) -> ()
// CHECK:       func.func private @fused_relu_add_0(%in0: memref<?x5xf32> {llvm.noalias}, %in1: memref<5xf32> {llvm.noalias}, %in2: memref<?x5xf32> {llvm.noalias}, %out: memref<?x5xf32> {llvm.noalias}, %n0: index, %n1: index) {
// CHECK-NEXT:    %in0_1 = loop.extents %in0[%n0] : memref<?x5xf32>
// CHECK-NEXT:    %out_1 = loop.extents %in2[%n0] : memref<?x5xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to %n0 step 1 serial {
// CHECK:         %in0_2 = loop.extents %in2[%n1] : memref<?x5xf32>
// CHECK-NEXT:    %out_2 = loop.extents %out[%n1] : memref<?x5xf32>
// CHECK-NEXT:    loop.for "i" %i_1 = 0 to %n1 step 1 serial {
// CHECK:         func.return
