// RUN: mini-opt %s -p loop-generalize-kernels | filecheck %s

// @sum_8 and @sum_16 differ only in their buffers' inner extent and the serial loop over it: both calls go to
// @sum_8, which takes the extent at run time. @unrolled_2 and @unrolled_4 differ in an unrolled loop's extent and
// stay; so does @pack_0, which a precompute names, and @first_3, which reads one element where @sum_8 loops.
func.func @main(%a: memref<4x8xf32>, %b: memref<4x16xf32>, %o: memref<4xf32>, %p: memref<4xf32>) attributes {minimlc.entry} {
  %w = loop.weight "w" : memref<4xf32>
  %q = loop.precompute @pack_0(%w) : (memref<4xf32>) -> memref<4xf32>
  func.call @sum_8(%a, %o) : (memref<4x8xf32>, memref<4xf32>) -> ()
  func.call @sum_16(%b, %p) : (memref<4x16xf32>, memref<4xf32>) -> ()
  func.call @sum_16(%b, %o) : (memref<4x16xf32>, memref<4xf32>) -> ()
  func.call @first_3(%a, %p) : (memref<4x8xf32>, memref<4xf32>) -> ()
  func.call @unrolled_2(%o, %p) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @unrolled_4(%o, %p) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @sum_8(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "k" %k = 0 to 8 step 1 serial {
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %s = memref.load %y[%i] : memref<4xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %y[%i] : memref<4xf32>
    }
  }
  func.return
}
func.func private @sum_16(%x: memref<4x16xf32> {llvm.noalias}, %y: memref<4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 parallel {
    loop.for "k" %k = 0 to 16 step 1 serial {
      %v = memref.load %x[%i, %k] : memref<4x16xf32>
      %s = memref.load %y[%i] : memref<4xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %y[%i] : memref<4xf32>
    }
  }
  func.return
}
func.func private @first_3(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4xf32> {llvm.noalias}) {
  loop.for "i" %i = 0 to 4 step 1 parallel {
    %c = arith.constant 3 : index
    %v = memref.load %x[%i, %c] : memref<4x8xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  func.return
}
func.func private @unrolled_2(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for "i" %i = 0 to 2 step 1 unroll {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  func.return
}
func.func private @unrolled_4(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for "i" %i = 0 to 4 step 1 unroll {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  func.return
}
func.func private @pack_0(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for "i" %i = 0 to 4 step 1 serial {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @main
// CHECK:         %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<4x8xf32> to memref<4x?xf32>
// CHECK-NEXT:    %[[N8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    func.call @sum_8(%[[A]], %o, %[[N8]]) : (memref<4x?xf32>, memref<4xf32>, index) -> ()
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %b : memref<4x16xf32> to memref<4x?xf32>
// CHECK-NEXT:    %[[N16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    func.call @sum_8(%[[B]], %p, %[[N16]])
// CHECK:         func.call @sum_8({{.*}}, %o, {{.*}})
// CHECK-NEXT:    func.call @first_3(%a, %p)
// CHECK-NEXT:    func.call @unrolled_2(%o, %p)
// CHECK-NEXT:    func.call @unrolled_4(%o, %p)
// CHECK:       func.func private @sum_8(%x: memref<4x?xf32> {llvm.noalias}, %y: memref<4xf32> {llvm.noalias}, %n0: index) {
// CHECK-NEXT:    %x_1 = loop.extents %x[%n0] : memref<4x?xf32>
// CHECK-NEXT:    loop.for "i" %i = 0 to 4 step 1 parallel {
// CHECK-NEXT:      loop.for "k" %k = 0 to %n0 step 1 serial {
// CHECK-NEXT:        %v = memref.load %x_1[%i, %k] : memref<4x?xf32>
// CHECK-NOT:   func.func private @sum_16
// CHECK:       func.func private @first_3(%x: memref<4x8xf32> {llvm.noalias}, %y: memref<4xf32> {llvm.noalias})
// CHECK:       func.func private @unrolled_2
// CHECK:       func.func private @unrolled_4
// CHECK:       func.func private @pack_0
