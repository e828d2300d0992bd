// RUN: mini-opt %s --mcpu=znver4 -p 'te-to-loop,default-schedule' | filecheck %s

// A channels-last global pool over 72 channels (SqueezeNet's has 1000): no multiple of the 16-lane vector divides
// them, so the channel loop is split in blocks of a multiple of half a vector (24 = 1.5 vectors, the largest such
// divisor up to 64), the window loops between the block loop and the vectorized block.

builtin.module {
  func.func @main(%x: tensor<1x4x5x72xf32>) -> tensor<1x1x1x72xf32> {
    %p = te.compute "avg_pool_sum" (%0, %1, %2, %3) reduce sum (%4 : 4, %5 : 5) -> tensor<1x1x1x72xf32> {
      %6 = arith.addi %1, %4 : index
      %7 = arith.addi %2, %5 : index
      %8 = te.read %x[%0, %6, %7, %3] : tensor<1x4x5x72xf32>
      te.yield %8 : f32
    }
    func.return %p : tensor<1x1x1x72xf32>
  }
}

// CHECK:      loop.for "i3_o" %i3_o = 0 to 72 step 24
// CHECK:        loop.for "k4" %k4 = 0 to 4 step 1 serial {
// CHECK-NEXT:     loop.for "k5" %k5 = 0 to 5 step 1 serial {
// CHECK-NEXT:       loop.for "i3_i" %i3_i = 0 to 24 step 1 vectorize {
