// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @wrong_arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{te.compute 'bad': body has 2 index arguments, expected 1 (1 output + 0 reduction)}}
  %y = "te.compute"() <{tag = "bad", reduce_extents = array<i64>}> ({
  ^bb0(%i: index, %j: index):
    %v = te.read %x[%i] : tensor<4xf32>
    te.yield %v : f32
  }) : () -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @reduce_without_combiner(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{te.compute 'bad': a combiner is required exactly when there are reduction axes}}
  %y = "te.compute"() <{tag = "bad", reduce_extents = array<i64: 4>}> ({
  ^bb0(%i: index, %k: index):
    %v = te.read %x[%k] : tensor<4xf32>
    te.yield %v : f32
  }) : () -> tensor<1xf32>
  func.return %y : tensor<1xf32>
}

// -----

func.func @unknown_combiner(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{te.compute 'bad': unknown combiner 'mean' (expected one of sum, max, min, prod, maxnum, max_nnan)}}
  %y = te.compute "bad" (%i) reduce mean (%k : 4) -> tensor<1xf32> {
    %v = te.read %x[%k] : tensor<4xf32>
    te.yield %v : f32
  }
  func.return %y : tensor<1xf32>
}

// -----

func.func @wrong_yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{te.compute 'bad': yields i32 but the result element type is f32}}
  %y = te.compute "bad" (%i) -> tensor<4xf32> {
    %c = arith.constant 1 : i32
    te.yield %c : i32
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @read_rank_mismatch(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %y = te.compute "bad" (%i) -> tensor<4xf32> {
    // expected-error@+1 {{te.read: 1 indices given for a tensor of rank 2}}
    %v = te.read %x[%i] : tensor<4x4xf32>
    te.yield %v : f32
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @view_of_another_size(%a: tensor<1x4x8xbf16>) -> tensor<1x4x8xi32> {
  // expected-error@+1 {{te.view: needs static tensors of the same size, got tensor<1x4x8xbf16> to tensor<1x4x8xi32>}}
  %w = te.view %a : tensor<1x4x8xbf16> to tensor<1x4x8xi32>
  func.return %w : tensor<1x4x8xi32>
}
