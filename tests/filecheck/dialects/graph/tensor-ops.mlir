// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

// Round trip of the tensor-family graph ops and the elementwise math, comparison and logic ops.

func.func @tensor_ops(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<3x1xf32>, %d: tensor<1x3xf32>, %m: tensor<2x1xi1>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  %cat = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sl = graph.slice %cat {starts = array<i64: 0, 3>, steps = array<i64: 1, -2>} : tensor<2x4xf32> -> tensor<2x2xf32>
  %g = graph.gather %a {axis = 1 : i64, indices = array<i64: 2, 0, 1, 1>} : tensor<2x3xf32> -> tensor<2x2x2xf32>
  %e = graph.expand %c : tensor<3x1xf32> -> tensor<2x3x2xf32>
  %t = graph.tile %a {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  %w = graph.where %m, %a, %d : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %cat, %sl, %g, %e, %t, %w : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}

// CHECK:      func.func @tensor_ops(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<3x1xf32>, %d: tensor<1x3xf32>, %m: tensor<2x1xi1>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:   %cat = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %sl = graph.slice %cat {starts = array<i64: 0, 3>, steps = array<i64: 1, -2>} : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:   %g = graph.gather %a {axis = 1 : i64, indices = array<i64: 2, 0, 1, 1>} : tensor<2x3xf32> -> tensor<2x2x2xf32>
// CHECK-NEXT:   %e = graph.expand %c : tensor<3x1xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:   %t = graph.tile %a {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:   %w = graph.where %m, %a, %d : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   func.return %cat, %sl, %g, %e, %t, %w : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x3x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>
// CHECK-NEXT: }

func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3x4xf32>) {
  %sum = graph.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %mean = graph.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<4xf32>
  %max = graph.reduce_max %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
  %min = graph.reduce_min %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %prod = graph.reduce_prod %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %l1 = graph.reduce_l1 %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %l2 = graph.reduce_l2 %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %ls = graph.reduce_log_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %lse = graph.reduce_log_sum_exp %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %ss = graph.reduce_sum_square %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %each = graph.reduce_l1 %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %sum, %mean, %max, %each : tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3x4xf32>
}

// CHECK:      func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3x4xf32>) {
// CHECK-NEXT:   %sum = graph.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:   %mean = graph.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<4xf32>
// CHECK-NEXT:   %max = graph.reduce_max %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:   %min = graph.reduce_min %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %prod = graph.reduce_prod %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %l1 = graph.reduce_l1 %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %l2 = graph.reduce_l2 %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %ls = graph.reduce_log_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %lse = graph.reduce_log_sum_exp %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %ss = graph.reduce_sum_square %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:   %each = graph.reduce_l1 %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:   func.return %sum, %mean, %max, %each : tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>, tensor<2x3x4xf32>
// CHECK-NEXT: }

func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %max = graph.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %min = graph.min %max, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %pow = graph.pow %min, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %eq = graph.equal %pow, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %lt = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %le = graph.less_or_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %gt = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %ge = graph.greater_or_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %and = graph.and %eq, %lt : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %or = graph.or %and, %le : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %xor = graph.xor %or, %gt : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %not = graph.not %xor : tensor<2x3xi1>
  %sel = graph.where %not, %pow, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %neg = graph.neg %sel : tensor<2x3xf32>
  %abs = graph.abs %neg : tensor<2x3xf32>
  %sqrt = graph.sqrt %abs : tensor<2x3xf32>
  %rec = graph.reciprocal %sqrt : tensor<2x3xf32>
  %log = graph.log %rec : tensor<2x3xf32>
  %floor = graph.floor %log : tensor<2x3xf32>
  %ceil = graph.ceil %floor : tensor<2x3xf32>
  %round = graph.round %ceil : tensor<2x3xf32>
  %sign = graph.sign %round : tensor<2x3xf32>
  %erf = graph.erf %sign : tensor<2x3xf32>
  %sin = graph.sin %erf : tensor<2x3xf32>
  %cos = graph.cos %sin : tensor<2x3xf32>
  %tan = graph.tan %cos : tensor<2x3xf32>
  %asin = graph.asin %tan : tensor<2x3xf32>
  %acos = graph.acos %asin : tensor<2x3xf32>
  %atan = graph.atan %acos : tensor<2x3xf32>
  %sinh = graph.sinh %atan : tensor<2x3xf32>
  %cosh = graph.cosh %sinh : tensor<2x3xf32>
  %asinh = graph.asinh %cosh : tensor<2x3xf32>
  %acosh = graph.acosh %asinh : tensor<2x3xf32>
  %atanh = graph.atanh %acosh : tensor<2x3xf32>
  func.return %atanh : tensor<2x3xf32>
}

// CHECK:      func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:   %max = graph.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %min = graph.min %max, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %pow = graph.pow %min, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %eq = graph.equal %pow, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %lt = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %le = graph.less_or_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %gt = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %ge = graph.greater_or_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:   %and = graph.and %eq, %lt : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %or = graph.or %and, %le : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %xor = graph.xor %or, %gt : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %not = graph.not %xor : tensor<2x3xi1>
// CHECK-NEXT:   %sel = graph.where %not, %pow, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %neg = graph.neg %sel : tensor<2x3xf32>
// CHECK-NEXT:   %abs = graph.abs %neg : tensor<2x3xf32>
// CHECK-NEXT:   %sqrt = graph.sqrt %abs : tensor<2x3xf32>
// CHECK-NEXT:   %rec = graph.reciprocal %sqrt : tensor<2x3xf32>
// CHECK-NEXT:   %log = graph.log %rec : tensor<2x3xf32>
// CHECK-NEXT:   %floor = graph.floor %log : tensor<2x3xf32>
// CHECK-NEXT:   %ceil = graph.ceil %floor : tensor<2x3xf32>
// CHECK-NEXT:   %round = graph.round %ceil : tensor<2x3xf32>
// CHECK-NEXT:   %sign = graph.sign %round : tensor<2x3xf32>
// CHECK-NEXT:   %erf = graph.erf %sign : tensor<2x3xf32>
// CHECK-NEXT:   %sin = graph.sin %erf : tensor<2x3xf32>
// CHECK-NEXT:   %cos = graph.cos %sin : tensor<2x3xf32>
// CHECK-NEXT:   %tan = graph.tan %cos : tensor<2x3xf32>
// CHECK-NEXT:   %asin = graph.asin %tan : tensor<2x3xf32>
// CHECK-NEXT:   %acos = graph.acos %asin : tensor<2x3xf32>
// CHECK-NEXT:   %atan = graph.atan %acos : tensor<2x3xf32>
// CHECK-NEXT:   %sinh = graph.sinh %atan : tensor<2x3xf32>
// CHECK-NEXT:   %cosh = graph.cosh %sinh : tensor<2x3xf32>
// CHECK-NEXT:   %asinh = graph.asinh %cosh : tensor<2x3xf32>
// CHECK-NEXT:   %acosh = graph.acosh %asinh : tensor<2x3xf32>
// CHECK-NEXT:   %atanh = graph.atanh %acosh : tensor<2x3xf32>
// CHECK-NEXT:   func.return %atanh : tensor<2x3xf32>
// CHECK-NEXT: }

func.func @typed(%ids: tensor<2x3xi64>, %t: tensor<5x4xf32>, %n: tensor<3xi32>, %m: tensor<2x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x1xi64>, tensor<3xi64>, tensor<2x3xi1>, tensor<3xi32>) {
  %take = graph.take %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %along = graph.take_along_axis %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %sum = graph.add %ids, %ids : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %mod = graph.mod %sum, %ids : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %fmod = graph.mod %n, %n {fmod} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %cum = graph.cumsum %mod {axis = 1 : i64, exclusive, reverse} : tensor<2x3xi64> -> tensor<2x3xi64>
  %amax = graph.argmax %cum {axis = 1 : i64, keepdims, select_last_index} : tensor<2x3xi64> -> tensor<2x1xi64>
  %amin = graph.argmin %ids {axis = 0 : i64} : tensor<2x3xi64> -> tensor<3xi64>
  %cast = graph.cast %ids : tensor<2x3xi64> -> tensor<2x3xi1>
  %both = graph.and %cast, %m : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %abs = graph.abs %fmod : tensor<3xi32>
  func.return %take, %along, %cum, %amax, %amin, %both, %abs : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x1xi64>, tensor<3xi64>, tensor<2x3xi1>, tensor<3xi32>
}

// CHECK:      func.func @typed(%ids: tensor<2x3xi64>, %t: tensor<5x4xf32>, %n: tensor<3xi32>, %m: tensor<2x3xi1>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x1xi64>, tensor<3xi64>, tensor<2x3xi1>, tensor<3xi32>) {
// CHECK-NEXT:   %take = graph.take %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:   %along = graph.take_along_axis %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:   %sum = graph.add %ids, %ids : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:   %mod = graph.mod %sum, %ids : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT:   %fmod = graph.mod %n, %n {fmod} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:   %cum = graph.cumsum %mod {axis = 1 : i64, exclusive, reverse} : tensor<2x3xi64> -> tensor<2x3xi64>
// CHECK-NEXT:   %amax = graph.argmax %cum {axis = 1 : i64, keepdims, select_last_index} : tensor<2x3xi64> -> tensor<2x1xi64>
// CHECK-NEXT:   %amin = graph.argmin %ids {axis = 0 : i64} : tensor<2x3xi64> -> tensor<3xi64>
// CHECK-NEXT:   %cast = graph.cast %ids : tensor<2x3xi64> -> tensor<2x3xi1>
// CHECK-NEXT:   %both = graph.and %cast, %m : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %abs = graph.abs %fmod : tensor<3xi32>
// CHECK-NEXT:   func.return %take, %along, %cum, %amax, %amin, %both, %abs : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x1xi64>, tensor<3xi64>, tensor<2x3xi1>, tensor<3xi32>
// CHECK-NEXT: }

func.func @trilu(%x: tensor<2x4x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>) {
  %u = graph.trilu %x {k = 1 : i64, upper} : tensor<2x4x5xf32>
  %l = graph.trilu %x {k = -2 : i64} : tensor<2x4x5xf32>
  func.return %u, %l : tensor<2x4x5xf32>, tensor<2x4x5xf32>
}

// CHECK:      func.func @trilu
// CHECK-NEXT:   %u = graph.trilu %x {k = 1 : i64, upper} : tensor<2x4x5xf32>
// CHECK-NEXT:   %l = graph.trilu %x {k = -2 : i64} : tensor<2x4x5xf32>
// CHECK-NEXT:   func.return %u, %l
