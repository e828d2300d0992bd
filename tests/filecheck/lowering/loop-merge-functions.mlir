// RUN: mini-opt %s -p loop-merge-functions | filecheck %s

// @pack_1 is @pack_0 under other value names: it goes, and its precompute calls @pack_0. @body_3 equals @body_2, so
// after the first round @kernel_5 equals @kernel_4 and goes in the second. @pack_6 differs in a constant and stays.
func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) attributes {minimlc.entry} {
  %w = loop.weight "w" : memref<8xf32>
  %v = loop.weight "v" : memref<8xf32>
  %p = loop.precompute @pack_0(%w) : (memref<8xf32>) -> memref<8xf32>
  %q = loop.precompute @pack_1(%v) : (memref<8xf32>) -> memref<8xf32>
  %r = loop.precompute @pack_6(%v) : (memref<8xf32>) -> memref<8xf32>
  func.call @kernel_4(%x, %p) : (memref<8xf32>, memref<8xf32>) -> ()
  func.call @kernel_5(%x, %q) : (memref<8xf32>, memref<8xf32>) -> ()
  func.call @kernel_5(%y, %r) : (memref<8xf32>, memref<8xf32>) -> ()
  func.return
}
func.func private @pack_0(%a: memref<8xf32>, %b: memref<8xf32>) {
  loop.for "i" %i = 0 to 8 step 1 serial {
    %e = memref.load %a[%i] : memref<8xf32>
    %c = arith.constant 2.000000e+00 : f32
    %m = arith.mulf %e, %c : f32
    memref.store %m, %b[%i] : memref<8xf32>
  }
  func.return
}
func.func private @pack_1(%s: memref<8xf32>, %t: memref<8xf32>) {
  loop.for "i" %j = 0 to 8 step 1 serial {
    %e = memref.load %s[%j] : memref<8xf32>
    %c = arith.constant 2.000000e+00 : f32
    %m = arith.mulf %e, %c : f32
    memref.store %m, %t[%j] : memref<8xf32>
  }
  func.return
}
func.func private @pack_6(%s: memref<8xf32>, %t: memref<8xf32>) {
  loop.for "i" %j = 0 to 8 step 1 serial {
    %e = memref.load %s[%j] : memref<8xf32>
    %c = arith.constant 3.000000e+00 : f32
    %m = arith.mulf %e, %c : f32
    memref.store %m, %t[%j] : memref<8xf32>
  }
  func.return
}
func.func private @body_2(%a: memref<8xf32>) {
  func.return
}
func.func private @body_3(%b: memref<8xf32>) {
  func.return
}
func.func private @kernel_4(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.call @body_2(%a) : (memref<8xf32>) -> ()
  func.return
}
func.func private @kernel_5(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.call @body_3(%a) : (memref<8xf32>) -> ()
  func.return
}

// CHECK:      %p = loop.precompute @pack_0(%w)
// CHECK-NEXT: %q = loop.precompute @pack_0(%v)
// CHECK-NEXT: %r = loop.precompute @pack_6(%v)
// CHECK-NEXT: func.call @kernel_4(%x, %p)
// CHECK-NEXT: func.call @kernel_4(%x, %q)
// CHECK-NEXT: func.call @kernel_4(%y, %r)
// CHECK:      func.func private @pack_0(
// CHECK-NOT:  @pack_1
// CHECK:      func.func private @pack_6(
// CHECK:      func.func private @body_2(
// CHECK-NOT:  @body_3
// CHECK:      func.func private @kernel_4(
// CHECK-NEXT:   func.call @body_2(%a)
// CHECK-NOT:  @kernel_5
