// RUN: mini-opt %s | mini-opt | filecheck %s
// RUN: mini-opt %s --print-op-generic | mini-opt | filecheck %s

func.func @compaction(%x: tensor<2x3xf32>, %c: tensor<2xi1>, %u: tensor<5xi64>) -> (tensor<2x6xi64>, tensor<1xi64>, tensor<2x3xf32>, tensor<1xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>) {
  %nz, %n = graph.nonzero %x : tensor<2x3xf32> -> (tensor<2x6xi64>, tensor<1xi64>)
  %cp, %m = graph.compress %x, %c {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi1>) -> (tensor<2x3xf32>, tensor<1xi64>)
  %v, %i, %inv, %cnt, %k = graph.unique %u {sorted} : tensor<5xi64> -> (tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>)
  func.return %nz, %n, %cp, %m, %v, %i, %inv, %cnt, %k : tensor<2x6xi64>, tensor<1xi64>, tensor<2x3xf32>, tensor<1xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>
}

// CHECK:      func.func @compaction
// CHECK-NEXT:   %nz, %n = graph.nonzero %x : tensor<2x3xf32> -> (tensor<2x6xi64>, tensor<1xi64>)
// CHECK-NEXT:   %cp, %m = graph.compress %x, %c {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi1>) -> (tensor<2x3xf32>, tensor<1xi64>)
// CHECK-NEXT:   %v, %i, %inv, %cnt, %k = graph.unique %u {sorted} : tensor<5xi64> -> (tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>)
// CHECK-NEXT:   func.return %nz, %n, %cp, %m, %v, %i, %inv, %cnt, %k : tensor<2x6xi64>, tensor<1xi64>, tensor<2x3xf32>, tensor<1xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>
