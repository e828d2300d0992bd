// RUN: mini-opt %s --split-input-file -p "te-bf16-activations{min-bytes=0}" | filecheck %s
// RUN: mini-opt %s --split-input-file -p "te-bf16-activations{min-bytes=256}" | filecheck %s --check-prefix=SMALL
// RUN: mini-opt %s --split-input-file --mcpu znver4 -p te-bf16-activations | filecheck %s --check-prefix=SMALL
// RUN: not mini-opt %s --split-input-file -p "te-bf16-activations{min-bytes=-2}" 2>&1 | filecheck %s --check-prefix=BAD

// Only activations of more than `min-bytes` in float32 are stored in bfloat16 (by default, more than the target's L2
// cache: 1 MiB a core on znver4), but for those a 1x1 convolution reads in place (@copied). Here each holds 4 x 16
// floats, 256 bytes.
// SMALL-LABEL: func.func @contraction(
// SMALL-NOT:     te.read {{.*}}xbf16>
// SMALL-NOT:     "to_bf16"
// SMALL-LABEL: func.func @elementwise(
// SMALL-NOT:     te.read {{.*}}xbf16>
// SMALL-LABEL: func.func @copied(
// SMALL:         %r = te.compute "relu" ({{.*}}) -> tensor<1x2x2x4xbf16> {
// SMALL:         %words = te.view %r
// SMALL-LABEL: func.func @sums(
// SMALL-NOT:     "to_bf16"
// BAD: te-bf16-activations: min-bytes must be -1 or at least 0, got -2

// A contraction (a sum of bfloat16 dot products) that a word pack reads keeps its float32 sums; a "to_bf16" compute
// after it rounds them as the packs round (the low half of a word of `llvmx.pack_bf16`), and the pack reads that,
// widened back to float32 (the bits moved up into a float32's), its ReLU, inlined, still in float32.
func.func @contraction(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) -> tensor<4x8xi32> {
  %y = te.compute "matmul" (%i, %j) reduce sum (%k : 8) -> tensor<4x16xf32> {
    %l = te.read %a[%i, %k] : tensor<4x8xi32>
    %r = te.read %b[%k, %j] : tensor<8x16xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %l, %r : f32, i32
    te.yield %d : f32
  }
  %words = te.compute "matmul_bf16_lhs" (%i, %w) -> tensor<4x8xi32> {
    %lo = te.read %y[%i, %w] : tensor<4x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %relu = arith.maximumf %lo, %zero : f32
    %eight = arith.constant 8 : index
    %w8 = arith.addi %w, %eight : index
    %hi = te.read %y[%i, %w8] : tensor<4x16xf32>
    %word = llvmx.pack_bf16 %relu, %hi : f32 -> i32
    te.yield %word : i32
  }
  func.return %words : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @contraction(
// CHECK:         %y = te.compute "matmul" (%i, %j) reduce sum (%k : 8) -> tensor<4x16xf32> {
// CHECK:         %y_bf16 = te.compute "to_bf16" (%[[I:.*]], %[[J:.*]]) -> tensor<4x16xbf16> {
// CHECK-NEXT:      %[[SUM:.*]] = te.read %y[%[[I]], %[[J]]] : tensor<4x16xf32>
// CHECK-NEXT:      %[[NO_HIGH:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[WORD:.*]] = llvmx.pack_bf16 %[[SUM]], %[[NO_HIGH]] : f32 -> i32
// CHECK-NEXT:      %[[BITS:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK-NEXT:      te.yield %[[ROUNDED]] : bf16
// CHECK:         %words = te.compute "matmul_bf16_lhs" (%[[WI:.*]], %w) -> tensor<4x8xi32> {
// CHECK-NEXT:      %[[LO:.*]] = te.read %y_bf16[%[[WI]], %w] : tensor<4x16xbf16>
// CHECK-NEXT:      %[[LO_BITS:.*]] = arith.bitcast %[[LO]] : bf16 to i16
// CHECK-NEXT:      %[[LO_WORD:.*]] = arith.extui %[[LO_BITS]] : i16 to i32
// CHECK-NEXT:      %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-NEXT:      %[[LO_UP:.*]] = arith.shli %[[LO_WORD]], %[[SIXTEEN]] : i32
// CHECK-NEXT:      %[[LO_F32:.*]] = arith.bitcast %[[LO_UP]] : i32 to f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %relu = arith.maximumf %[[LO_F32]], %[[ZERO]] : f32
// CHECK:           %[[HI:.*]] = te.read %y_bf16[%[[WI]], %w8] : tensor<4x16xbf16>
// CHECK:           %[[HI_F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %word = llvmx.pack_bf16 %relu, %[[HI_F32]] : f32 -> i32

// -----

// An elementwise activation read by a pack and by a residual add yields its value rounded to bfloat16; both readers
// read it widened. The add, returned, stays float32.
func.func @elementwise(%x: tensor<4x16xf32>) -> (tensor<4x8xi32>, tensor<4x16xf32>) {
  %r = te.compute "relu" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %x[%i, %j] : tensor<4x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %zero : f32
    te.yield %m : f32
  }
  %words = te.compute "matmul_bf16_lhs" (%i, %w) -> tensor<4x8xi32> {
    %lo = te.read %r[%i, %w] : tensor<4x16xf32>
    %eight = arith.constant 8 : index
    %w8 = arith.addi %w, %eight : index
    %hi = te.read %r[%i, %w8] : tensor<4x16xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %sum = te.compute "add" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %r[%i, %j] : tensor<4x16xf32>
    %s = arith.addf %v, %v : f32
    te.yield %s : f32
  }
  func.return %words, %sum : tensor<4x8xi32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @elementwise(
// CHECK:         %r = te.compute "relu" (%i, %j) -> tensor<4x16xbf16> {
// CHECK:           %m = arith.maximumf %v, %zero : f32
// CHECK-NEXT:      %[[NO_HIGH:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[WORD:.*]] = llvmx.pack_bf16 %m, %[[NO_HIGH]] : f32 -> i32
// CHECK-NEXT:      %[[BITS:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK-NEXT:      te.yield %[[ROUNDED]] : bf16
// CHECK:         %words = te.compute "matmul_bf16_lhs" (%[[WI:.*]], %w) -> tensor<4x8xi32> {
// CHECK-NEXT:      %[[LO:.*]] = te.read %r[%[[WI]], %w] : tensor<4x16xbf16>
// CHECK:           %[[LO_F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:           %[[HI:.*]] = te.read %r[%[[WI]], %w8] : tensor<4x16xbf16>
// CHECK:           %[[HI_F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %word = llvmx.pack_bf16 %[[LO_F32]], %[[HI_F32]] : f32 -> i32
// CHECK:         %sum = te.compute "add" (%[[AI:.*]], %[[AJ:.*]]) -> tensor<4x16xf32> {
// CHECK-NEXT:      %[[V:.*]] = te.read %r[%[[AI]], %[[AJ]]] : tensor<4x16xbf16>
// CHECK:           %[[V_F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %s = arith.addf %[[V_F32]], %[[V_F32]] : f32

// -----

// Stay float32: a result of the function, a compute of weights alone (a bias the pack adds), a reduction that is no
// contraction (a max), and an activation no pack reads.
func.func @float32(%x: tensor<4x16xf32>) -> (tensor<4x8xi32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %weight = graph.weight "w" : tensor<16xf32>
  %returned = te.compute "relu" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %x[%i, %j] : tensor<4x16xf32>
    te.yield %v : f32
  }
  %bias = te.compute "double" (%j) -> tensor<16xf32> {
    %v = te.read %weight[%j] : tensor<16xf32>
    %d = arith.addf %v, %v : f32
    te.yield %d : f32
  }
  %max = te.compute "max" (%i, %j) reduce max (%k : 16) -> tensor<4x16xf32> {
    %v = te.read %x[%i, %k] : tensor<4x16xf32>
    te.yield %v : f32
  }
  %unpacked = te.compute "neg" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %x[%i, %j] : tensor<4x16xf32>
    %n = arith.negf %v : f32
    te.yield %n : f32
  }
  %words = te.compute "matmul_bf16_lhs" (%i, %w) -> tensor<4x8xi32> {
    %a = te.read %returned[%i, %w] : tensor<4x16xf32>
    %b = te.read %bias[%w] : tensor<16xf32>
    %c = te.read %max[%i, %w] : tensor<4x16xf32>
    %s = arith.addf %a, %b : f32
    %word = llvmx.pack_bf16 %s, %c : f32 -> i32
    te.yield %word : i32
  }
  %plain = te.compute "add" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %unpacked[%i, %j] : tensor<4x16xf32>
    %s = arith.addf %v, %v : f32
    te.yield %s : f32
  }
  func.return %words, %returned, %plain : tensor<4x8xi32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @float32(
// CHECK-NOT:     xbf16
// CHECK-NOT:     arith.trunci
// CHECK:         func.return

// -----

// A "bf16_channels" compute (`te-bf16-word-views`: a 1x1 convolution's input in bfloat16, read through a view) makes
// an elementwise activation it reads stored in bfloat16, whatever its size; one that only copies the activation so,
// at its own indices, is replaced by the stored activation. Its other reader (a residual add) reads it widened.
func.func @copied(%x: tensor<1x2x2x4xf32>) -> (tensor<1x2x2x2xi32>, tensor<1x2x2x4xf32>) {
  %r = te.compute "relu" (%n, %h, %v, %c) -> tensor<1x2x2x4xf32> {
    %a = te.read %x[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %zero : f32
    te.yield %m : f32
  }
  %e = te.compute "bf16_channels" (%n, %h, %v, %c) -> tensor<1x2x2x4xbf16> {
    %a = te.read %r[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %word = llvmx.pack_bf16 %a, %zero : f32 -> i32
    %bits = arith.trunci %word : i32 to i16
    %b = arith.bitcast %bits : i16 to bf16
    te.yield %b : bf16
  }
  %words = te.view %e : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
  %sum = te.compute "add" (%n, %h, %v, %c) -> tensor<1x2x2x4xf32> {
    %a = te.read %r[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %s = arith.addf %a, %a : f32
    te.yield %s : f32
  }
  func.return %words, %sum : tensor<1x2x2x2xi32>, tensor<1x2x2x4xf32>
}

// CHECK-LABEL: func.func @copied(
// CHECK:         %r = te.compute "relu" ({{.*}}) -> tensor<1x2x2x4xbf16> {
// CHECK-NOT:     "bf16_channels"
// CHECK:         %words = te.view %r : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK:         %sum = te.compute "add"
// CHECK:           arith.shli
// CHECK:         func.return %words, %sum

// -----

// Convolution sums that only a "bf16_channels" compute reads stay float32: it adds their bias and rounds once, in the
// convolution's write-back (`loop-fuse-kernels`); rounding the sums first would round twice.
func.func @sums(%a: tensor<1x2x2x2xi32>, %w: tensor<4x2x1x1xi32>, %b: tensor<4xf32>) -> tensor<1x2x2x2xi32> {
  %y = te.compute "conv" (%n, %h, %v, %o) reduce sum (%c : 2) -> tensor<1x2x2x4xf32> {
    %p = te.read %a[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w[%o, %c, %n, %n] : tensor<4x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  %e = te.compute "bf16_channels" (%n, %h, %v, %c) -> tensor<1x2x2x4xbf16> {
    %s = te.read %y[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %bias = te.read %b[%c] : tensor<4xf32>
    %t = arith.addf %s, %bias : f32
    %zero = arith.constant 0.000000e+00 : f32
    %word = llvmx.pack_bf16 %t, %zero : f32 -> i32
    %bits = arith.trunci %word : i32 to i16
    %r = arith.bitcast %bits : i16 to bf16
    te.yield %r : bf16
  }
  %words = te.view %e : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
  func.return %words : tensor<1x2x2x2xi32>
}

// CHECK-LABEL: func.func @sums(
// CHECK:         %y = te.compute "conv" {{.*}} -> tensor<1x2x2x4xf32> {
// CHECK-NOT:     "to_bf16"
// CHECK:         %e = te.compute "bf16_channels"
// CHECK-NEXT:      te.read %y[

// -----

// An activation that a result of the function copies (a model output in another layout) stays float32: the output
// is the computed value, not its rounding.
func.func @output_copy(%x: tensor<4x16xf32>) -> (tensor<4x8xi32>, tensor<16x4xf32>) {
  %r = te.compute "relu" (%i, %j) -> tensor<4x16xf32> {
    %v = te.read %x[%i, %j] : tensor<4x16xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %v, %zero : f32
    te.yield %m : f32
  }
  %words = te.compute "matmul_bf16_lhs" (%i, %w) -> tensor<4x8xi32> {
    %lo = te.read %r[%i, %w] : tensor<4x16xf32>
    %eight = arith.constant 8 : index
    %w8 = arith.addi %w, %eight : index
    %hi = te.read %r[%i, %w8] : tensor<4x16xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %t = te.compute "transpose" (%j, %i) -> tensor<16x4xf32> {
    %v = te.read %r[%i, %j] : tensor<4x16xf32>
    te.yield %v : f32
  }
  func.return %words, %t : tensor<4x8xi32>, tensor<16x4xf32>
}

// CHECK-LABEL: func.func @output_copy(
// CHECK-NOT:     xbf16
// CHECK:         func.return
