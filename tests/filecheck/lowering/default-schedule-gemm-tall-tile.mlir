// RUN: mini-opt %s --mcpu=znver4 -p 'graph-to-te,te-inline,te-to-loop,default-schedule' | filecheck %s

// On AVX-512, 208 columns take one-vector (16-lane) tiles. Where 8 does not divide the rows (ViT's 197 tokens) the
// tile is 12 rows tall, 12 accumulators, with a tail of 5 rows; where it does (192 rows) it stays 8 x 16, no tail.
func.func @vit_scores(%q: tensor<1x3x197x64xf32>, %k: tensor<1x3x64x208xf32>) -> tensor<1x3x197x208xf32> {
  %s = graph.matmul %q, %k : (tensor<1x3x197x64xf32>, tensor<1x3x64x208xf32>) -> tensor<1x3x197x208xf32>
  func.return %s : tensor<1x3x197x208xf32>
}

func.func @rows_of_eight(%q: tensor<1x3x192x64xf32>, %k: tensor<1x3x64x208xf32>) -> tensor<1x3x192x208xf32> {
  %s = graph.matmul %q, %k : (tensor<1x3x192x64xf32>, tensor<1x3x64x208xf32>) -> tensor<1x3x192x208xf32>
  func.return %s : tensor<1x3x192x208xf32>
}

// CHECK-LABEL: func.func private @matmul_0(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x1x5x16xf32>
// CHECK-NEXT:    %tile_1 = loop.alloc "local" : memref<1x1x12x16xf32>
// CHECK:         loop.for "i2_o" %i2_o = 0 to 192 step 12 serial {
// CHECK:         loop.for "i2_t_o" %i2_t_o = 192 to 197 step 5 serial {

// CHECK-LABEL: func.func private @matmul_1(
// CHECK-NEXT:    %tile = loop.alloc "local" : memref<1x1x8x16xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for "i2_o" %i2_o = 0 to 192 step 8 parallel {
// CHECK-NOT:     "i2_t_o"
