// A language-model head: tokens x hidden @ hidden x 20 (8 lanes: padded to 24); B not a weight, and 16 columns, are
// left alone.
builtin.module {
  func.func @main(%x: tensor<1x3x8xf32>, %act: tensor<8x20xf32>) -> (tensor<1x3x20xf32>, tensor<1x3x20xf32>, tensor<1x3x16xf32>) {
    %w = graph.weight "w" : tensor<8x20xf32>
    %y = graph.matmul %x, %w : (tensor<1x3x8xf32>, tensor<8x20xf32>) -> tensor<1x3x20xf32>
    %z = graph.matmul %x, %act : (tensor<1x3x8xf32>, tensor<8x20xf32>) -> tensor<1x3x20xf32>
    %w16 = graph.weight "w16" : tensor<8x16xf32>
    %v = graph.matmul %x, %w16 : (tensor<1x3x8xf32>, tensor<8x16xf32>) -> tensor<1x3x16xf32>
    func.return %y, %z, %v : tensor<1x3x20xf32>, tensor<1x3x20xf32>, tensor<1x3x16xf32>
  }
}
