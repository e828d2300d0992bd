// RUN: mini-opt %s -p te-to-loop | filecheck %s

// The loop level is signless: a ui8 max reduction keeps its unsigned combiner (maxui from 0) and division; the
// bitcasts between ui8 and i8 (an unsigned constant is one of a signless constant) disappear; bfloat16 moves as i16.
func.func @unsigned(%x: tensor<2x4xui8>, %h: tensor<3xbf16>) -> (tensor<2xi8>, tensor<3xbf16>) {
  %m = te.compute "reduce_max" (%i) reduce max (%k : 4) -> tensor<2xui8> {
    %a = te.read %x[%i, %k] : tensor<2x4xui8>
    %s8 = arith.constant -56 : i8
    %c = arith.bitcast %s8 : i8 to ui8
    %d = arith.divui %a, %c : ui8
    te.yield %d : ui8
  }
  %s = te.compute "cast" (%i) -> tensor<2xi8> {
    %a = te.read %m[%i] : tensor<2xui8>
    %b = arith.bitcast %a : ui8 to i8
    te.yield %b : i8
  }
  %c = te.compute "copy" (%i) -> tensor<3xbf16> {
    %a = te.read %h[%i] : tensor<3xbf16>
    te.yield %a : bf16
  }
  func.return %s, %c : tensor<2xi8>, tensor<3xbf16>
}

// CHECK-LABEL: func.func @unsigned(%x: memref<2x4xi8>, %h: memref<3xi16>, %out0: memref<2xi8>, %out1: memref<3xi16>) attributes {minimlc.entry} {
// CHECK:       func.func private @reduce_max_0(%in0: memref<2x4xi8> {llvm.noalias}, %out: memref<2xi8> {llvm.noalias}) {
// CHECK-NEXT:    %acc = loop.alloc "local" : memref<i8>
// CHECK-NEXT:    loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT:      %0 = arith.constant 0 : i8
// CHECK-NEXT:      memref.store %0, %acc[] : memref<i8>
// CHECK-NEXT:      loop.for "k" %k = 0 to 4 step 1 serial {
// CHECK-NEXT:        %a = memref.load %in0[%i, %k] : memref<2x4xi8>
// CHECK-NEXT:        %s8 = arith.constant -56 : i8
// CHECK-NEXT:        %d = arith.divui %a, %s8 : i8
// CHECK-NEXT:        %1 = memref.load %acc[] : memref<i8>
// CHECK-NEXT:        %2 = arith.maxui %1, %d : i8
// CHECK-NEXT:        memref.store %2, %acc[] : memref<i8>
// CHECK-NEXT:      }
// CHECK:       func.func private @cast_1(%in0: memref<2xi8> {llvm.noalias}, %out: memref<2xi8> {llvm.noalias}) {
// CHECK-NEXT:    loop.for "i" %i = 0 to 2 step 1 serial {
// CHECK-NEXT:      %a = memref.load %in0[%i] : memref<2xi8>
// CHECK-NEXT:      memref.store %a, %out[%i] : memref<2xi8>
// CHECK:       func.func private @copy_2(%in0: memref<3xi16> {llvm.noalias}, %out: memref<3xi16> {llvm.noalias}) {
