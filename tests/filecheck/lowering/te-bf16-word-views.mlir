// RUN: mini-opt %s --split-input-file -p te-bf16-word-views | filecheck %s

// A 1x1 convolution's pack that widens a channels-last bfloat16 activation read at its own indices (channels w and
// w + 2 in word w) becomes a view of that activation (channels 2w and 2w + 1 in word w), and the weight words pair
// the same channels: their per-channel value read at 2w and 2w + 1.
func.func @stored(%a: tensor<1x2x2x4xbf16>, %f: tensor<8x4x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %a[%n, %h, %v, %c] : tensor<1x2x2x4xbf16>
    %lb = arith.bitcast %l : bf16 to i16
    %lw = arith.extui %lb : i16 to i32
    %sixteen = arith.constant 16 : i32
    %lu = arith.shli %lw, %sixteen : i32
    %lf = arith.bitcast %lu : i32 to f32
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %h2 = te.read %a[%n, %h, %v, %c2] : tensor<1x2x2x4xbf16>
    %hb = arith.bitcast %h2 : bf16 to i16
    %hw = arith.extui %hb : i16 to i32
    %sixteen2 = arith.constant 16 : i32
    %hu = arith.shli %hw, %sixteen2 : i32
    %hf = arith.bitcast %hu : i32 to f32
    %word = llvmx.pack_bf16 %lf, %hf : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %x[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @stored(
// CHECK:         %w = te.compute "conv_bf16_weight" (%[[O:.*]], %[[C:.*]], %[[KH:.*]], %[[KW:.*]]) -> tensor<8x2x1x1xi32> {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[EVEN:.*]] = arith.muli %[[C]], %[[TWO]] : index
// CHECK-NEXT:      %[[LO:.*]] = te.read %f[%[[O]], %[[EVEN]], %[[KH]], %[[KW]]] : tensor<8x4x1x1xf32>
// CHECK:           %[[DOUBLE:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[ODD:.*]] = arith.addi %[[DOUBLE]], %[[ONE]] : index
// CHECK-NEXT:      %[[HI:.*]] = te.read %f[%[[O]], %[[ODD]], %[[KH]], %[[KW]]] : tensor<8x4x1x1xf32>
// CHECK-NEXT:      %[[WORD:.*]] = llvmx.pack_bf16 %[[LO]], %[[HI]] : f32 -> i32
// CHECK-NEXT:      te.yield %[[WORD]] : i32
// CHECK-NOT:     "conv_bf16_input"
// CHECK:         %x = te.view %a : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK-NEXT:    %y = te.compute "conv"
// CHECK-NEXT:      %{{.*}} = te.read %x[

// -----

// A pack of an elementwise value (a ReLU of float32 sums, plus a per-channel bias) becomes a "bf16_channels" compute
// of that value on every channel, rounded to bfloat16 as the packs round, and a view of it. (The weight words' index
// added the other way round: `2 + c` is `c + 2`.)
func.func @elementwise(%s: tensor<1x2x2x4xf32>, %b: tensor<4xf32>, %f: tensor<8x4x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %two, %c : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %lb = te.read %b[%c] : tensor<4xf32>
    %ls = arith.addf %l, %lb : f32
    %zero = arith.constant 0.000000e+00 : f32
    %lr = arith.maximumf %ls, %zero : f32
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h, %v, %c2] : tensor<1x2x2x4xf32>
    %hb = te.read %b[%c2] : tensor<4xf32>
    %hs = arith.addf %hv, %hb : f32
    %zero2 = arith.constant 0.000000e+00 : f32
    %hr = arith.maximumf %hs, %zero2 : f32
    %word = llvmx.pack_bf16 %lr, %hr : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %x[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @elementwise(
// CHECK:         %w = te.compute "conv_bf16_weight"
// CHECK:           arith.muli
// CHECK:         %x = te.compute "bf16_channels" (%[[N:.*]], %[[H:.*]], %[[V:.*]], %[[C:.*]]) -> tensor<1x2x2x4xbf16> {
// CHECK-NEXT:      %[[SUM:.*]] = te.read %s[%[[N]], %[[H]], %[[V]], %[[C]]] : tensor<1x2x2x4xf32>
// CHECK-NEXT:      %[[BIAS:.*]] = te.read %b[%[[C]]] : tensor<4xf32>
// CHECK-NEXT:      %[[ADD:.*]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[RELU:.*]] = arith.maximumf %[[ADD]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[NONE:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[WORD:.*]] = llvmx.pack_bf16 %[[RELU]], %[[NONE]] : f32 -> i32
// CHECK-NEXT:      %[[BITS:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK-NEXT:      te.yield %[[ROUNDED]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %x_1 = te.view %x : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK-NEXT:    %y = te.compute "conv"
// CHECK-NEXT:      %{{.*}} = te.read %x_1[

// -----

// Two 1x1 convolutions reading one input (a ResNet stage's first block and its projection shortcut) share one
// "bf16_channels" compute of it: one pass, two views.
func.func @shared(%s: tensor<1x2x2x4xf32>, %f: tensor<8x4x1x1xf32>) -> (tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>) {
  %w1 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x1 = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h, %v, %c2] : tensor<1x2x2x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y1 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %x1[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w1[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  %w2 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x2 = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h, %v, %c2] : tensor<1x2x2x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y2 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %x2[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w2[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y1, %y2 : tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @shared(
// CHECK:         %x1 = te.compute "bf16_channels"
// CHECK-NEXT:      te.read %s[
// CHECK:         %[[FIRST:.*]] = te.view %x1 : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK-NOT:     "bf16_channels"
// CHECK:         %[[SECOND:.*]] = te.view %x1 : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK-NOT:     "bf16_channels"
// CHECK:         func.return

// -----

// A strided 1x1 convolution's pack holds the corner of its input that the stride reads (here 1x1 of 2x2): the view is
// of the whole input, which the convolution reads at its own (strided) indices as it read the pack.
func.func @corner(%a: tensor<1x2x2x4xbf16>, %f: tensor<8x4x1x1xf32>) -> tensor<1x8x1x1xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x1x1x2xi32> {
    %l = te.read %a[%n, %h, %v, %c] : tensor<1x2x2x4xbf16>
    %lb = arith.bitcast %l : bf16 to i16
    %lw = arith.extui %lb : i16 to i32
    %sixteen = arith.constant 16 : i32
    %lu = arith.shli %lw, %sixteen : i32
    %lf = arith.bitcast %lu : i32 to f32
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %h2 = te.read %a[%n, %h, %v, %c2] : tensor<1x2x2x4xbf16>
    %hb = arith.bitcast %h2 : bf16 to i16
    %hw = arith.extui %hb : i16 to i32
    %hu = arith.shli %hw, %sixteen : i32
    %hf = arith.bitcast %hu : i32 to f32
    %word = llvmx.pack_bf16 %lf, %hf : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x1x1xf32> {
    %two = arith.constant 2 : index
    %h2 = arith.muli %h, %two : index
    %v2 = arith.muli %v, %two : index
    %p = te.read %x[%n, %h2, %v2, %c] : tensor<1x1x1x2xi32>
    %q = te.read %w[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x1x1xf32>
}

// CHECK-LABEL: func.func @corner(
// CHECK:         %x = te.view %a : tensor<1x2x2x4xbf16> to tensor<1x2x2x2xi32>
// CHECK:           %{{.*}} = te.read %x[%{{.*}}, %h2, %v2, %{{.*}}] : tensor<1x2x2x2xi32>

// -----

// A padded convolution keeps its pack (0.0 outside the input, its coordinates clamped inside it): words read from a
// view of the value in bfloat16 would still need a pass that pads them, measured no faster (Inception v2: 1.009x).
func.func @padded(%s: tensor<1x2x2x4xf32>, %b: tensor<4xf32>, %f: tensor<8x4x3x3xf32>) -> tensor<1x8x2x2xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x3x3xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x3x3xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x3x3xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x4x4x2xi32> {
    %one = arith.constant 1 : index
    %zero = arith.constant 0 : index
    %last = arith.constant 1 : index
    %size = arith.constant 2 : index
    %hs = arith.subi %h, %one : index
    %hlo = arith.cmpi sge, %hs, %zero : index
    %hhi = arith.cmpi slt, %hs, %size : index
    %hin = arith.andi %hlo, %hhi : i1
    %hc0 = arith.maxsi %hs, %zero : index
    %hc = arith.minsi %hc0, %last : index
    %vs = arith.subi %v, %one : index
    %vlo = arith.cmpi sge, %vs, %zero : index
    %vhi = arith.cmpi slt, %vs, %size : index
    %vin0 = arith.andi %hin, %vlo : i1
    %inside = arith.andi %vin0, %vhi : i1
    %vc0 = arith.maxsi %vs, %zero : index
    %vc = arith.minsi %vc0, %last : index
    %l = te.read %s[%n, %hc, %vc, %c] : tensor<1x2x2x4xf32>
    %lb = te.read %b[%c] : tensor<4xf32>
    %ls = arith.addf %l, %lb : f32
    %fzero = arith.constant 0.000000e+00 : f32
    %lr = arith.maximumf %ls, %fzero : f32
    %lo = arith.select %inside, %lr, %fzero : f32
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %hc, %vc, %c2] : tensor<1x2x2x4xf32>
    %hb = te.read %b[%c2] : tensor<4xf32>
    %hs2 = arith.addf %hv, %hb : f32
    %hr = arith.maximumf %hs2, %fzero : f32
    %hi = arith.select %inside, %hr, %fzero : f32
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 3, %kw : 3, %c : 2) -> tensor<1x8x2x2xf32> {
    %hk = arith.addi %h, %kh : index
    %vk = arith.addi %v, %kw : index
    %p = te.read %x[%n, %hk, %vk, %c] : tensor<1x4x4x2xi32>
    %q = te.read %w[%o, %c, %kh, %kw] : tensor<8x2x3x3xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @padded(
// CHECK-NOT:     te.view
// CHECK:         %x = te.compute "conv_bf16_input"
// CHECK-NOT:     te.view

// -----

// What keeps its pack (and its weight words their pairs): a pack read at other spatial indices without padding
// (a stride inside the pack), halves that are not the same function of the channel (the second reads one channel
// too far), a pack that two convolutions read.
func.func @kept(%s: tensor<1x4x4x4xf32>, %f: tensor<8x4x1x1xf32>) -> (tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>) {
  %w1 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %two, %c : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %strided = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %two = arith.constant 2 : index
    %h2 = arith.muli %h, %two : index
    %l = te.read %s[%n, %h2, %v, %c] : tensor<1x4x4x4xf32>
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h2, %v, %c2] : tensor<1x4x4x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y1 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %strided[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w1[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  %w2 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %two, %c : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %skewed = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x4x4x4xf32>
    %three = arith.constant 3 : index
    %c3 = arith.addi %c, %three : index
    %hv = te.read %s[%n, %h, %v, %c3] : tensor<1x4x4x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y2 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %skewed[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w2[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  %w3 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %two, %c : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %w4 = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %two, %c : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %shared = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x4x4x4xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h, %v, %c2] : tensor<1x4x4x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y3 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %shared[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w3[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  %y4 = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %shared[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w4[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y1, %y2, %y3, %y4 : tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     te.view
// CHECK-NOT:     arith.muli %c
// CHECK:         %strided = te.compute "conv_bf16_input"
// CHECK:         %skewed = te.compute "conv_bf16_input"
// CHECK:         %shared = te.compute "conv_bf16_input"
// CHECK-NOT:     te.view

// -----

// A convolution that takes word w of its input with another word of its weights (here 1 - w) keeps its pairs: both
// re-paired would no longer meet channel for channel.
func.func @crossed(%s: tensor<1x2x2x4xf32>, %f: tensor<8x4x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x4x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hi = te.read %f[%o, %c2, %kh, %kw] : tensor<8x4x1x1xf32>
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x2x2x4xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %hv = te.read %s[%n, %h, %v, %c2] : tensor<1x2x2x4xf32>
    %word = llvmx.pack_bf16 %l, %hv : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %one = arith.constant 1 : index
    %other = arith.subi %one, %c : index
    %p = te.read %x[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w[%o, %other, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @crossed(
// CHECK-NOT:     te.view
// CHECK-NOT:     arith.muli
// CHECK:         %x = te.compute "conv_bf16_input"

// -----

// An odd channel count: the last word's high half is 0.0 past the channels (a select), not the low half's function.
func.func @odd(%s: tensor<1x2x2x3xf32>, %f: tensor<8x3x1x1xf32>) -> tensor<1x8x2x2xf32> {
  %w = te.compute "conv_bf16_weight" (%o, %c, %kh, %kw) -> tensor<8x2x1x1xi32> {
    %lo = te.read %f[%o, %c, %kh, %kw] : tensor<8x3x1x1xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %last = arith.constant 2 : index
    %inside = arith.cmpi ult, %c2, %two : index
    %safe = arith.select %inside, %c2, %last : index
    %hv = te.read %f[%o, %safe, %kh, %kw] : tensor<8x3x1x1xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %hi = arith.select %inside, %hv, %zero : f32
    %word = llvmx.pack_bf16 %lo, %hi : f32 -> i32
    te.yield %word : i32
  }
  %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x2x2x2xi32> {
    %l = te.read %s[%n, %h, %v, %c] : tensor<1x2x2x3xf32>
    %two = arith.constant 2 : index
    %c2 = arith.addi %c, %two : index
    %last = arith.constant 2 : index
    %inside = arith.cmpi ult, %c2, %two : index
    %safe = arith.select %inside, %c2, %last : index
    %hv = te.read %s[%n, %h, %v, %safe] : tensor<1x2x2x3xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %hi = arith.select %inside, %hv, %zero : f32
    %word = llvmx.pack_bf16 %l, %hi : f32 -> i32
    te.yield %word : i32
  }
  %y = te.compute "conv" (%n, %o, %h, %v) reduce sum (%kh : 1, %kw : 1, %c : 2) -> tensor<1x8x2x2xf32> {
    %p = te.read %x[%n, %h, %v, %c] : tensor<1x2x2x2xi32>
    %q = te.read %w[%o, %c, %kh, %kw] : tensor<8x2x1x1xi32>
    %zero = arith.constant 0.000000e+00 : f32
    %d = llvmx.dot_bf16 %zero, %p, %q : f32, i32
    te.yield %d : f32
  }
  func.return %y : tensor<1x8x2x2xf32>
}

// CHECK-LABEL: func.func @odd(
// CHECK-NOT:     te.view
// CHECK:         %x = te.compute "conv_bf16_input"
// CHECK-NOT:     te.view
