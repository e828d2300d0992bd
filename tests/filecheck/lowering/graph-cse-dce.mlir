// RUN: mini-opt %s -p cse | filecheck %s --check-prefix=CSE
// RUN: mini-opt %s -p dce | filecheck %s --check-prefix=DCE

// Every graph op is Pure, so xDSL's cse merges duplicated ops (weights with the same name included) and dce drops
// ops and weight handles nothing uses. Both are numerically neutral.
func.func @duplicates(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = graph.weight "w" : tensor<3xf32>
  %w2 = graph.weight "w" : tensor<3xf32>
  %a = graph.add %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = graph.add %x, %w2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r1 = graph.relu %a : tensor<2x3xf32>
  %r2 = graph.relu %b : tensor<2x3xf32>
  %unused = graph.sigmoid %x : tensor<2x3xf32>
  %u = graph.weight "unused" : tensor<3xf32>
  %other = graph.sub %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m = graph.mul %r1, %r2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = graph.add %m, %other : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CSE-LABEL: func.func @duplicates(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CSE-NEXT:    %w = graph.weight "w" : tensor<3xf32>
// CSE-NEXT:    %a = graph.add %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CSE-NEXT:    %r1 = graph.relu %a : tensor<2x3xf32>
// CSE-NEXT:    %other = graph.sub %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CSE-NEXT:    %m = graph.mul %r1, %r1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CSE-NEXT:    %s = graph.add %m, %other : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CSE-NEXT:    func.return %s : tensor<2x3xf32>

// DCE-LABEL: func.func @duplicates(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// DCE-NEXT:    %w = graph.weight "w" : tensor<3xf32>
// DCE-NEXT:    %w2 = graph.weight "w" : tensor<3xf32>
// DCE-NEXT:    %a = graph.add %x, %w
// DCE-NEXT:    %b = graph.add %x, %w2
// DCE-NEXT:    %r1 = graph.relu %a
// DCE-NEXT:    %r2 = graph.relu %b
// DCE-NEXT:    %other = graph.sub %x, %w
// DCE-NEXT:    %m = graph.mul %r1, %r2
// DCE-NEXT:    %s = graph.add %m, %other
// DCE-NEXT:    func.return %s : tensor<2x3xf32>

// Ops with different properties are not merged.
func.func @different_attributes(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %b = graph.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %c = graph.softmax %x {axis = 0 : i64} : tensor<2x3xf32>
  %d = graph.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
  func.return %a, %b, %c, %d : tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CSE-LABEL: func.func @different_attributes(
// CSE-NEXT:    %a = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
// CSE-NEXT:    %b = graph.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
// CSE-NEXT:    %c = graph.softmax %x {axis = 0 : i64} : tensor<2x3xf32>
// CSE-NEXT:    %d = graph.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
// CSE-NEXT:    func.return %a, %b, %c, %d
