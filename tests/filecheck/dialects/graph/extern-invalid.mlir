// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @empty_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.call_extern: the callee name is empty}}
  %y = graph.call_extern "" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @no_result(%x: tensor<4xf32>) {
  // expected-error@+1 {{graph.call_extern 'env.sink': an external call needs at least one result to write}}
  graph.call_extern "env.sink" (%x) : (tensor<4xf32>) -> ()
  func.return
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.call_extern 'env.f': a dynamic shape is not supported}}
  %y = graph.call_extern "env.f" (%x) : (tensor<?xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @unsupported_type(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.call_extern 'env.f': element type complex<f32> is not supported}}
  %y = graph.call_extern "env.f" (%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
