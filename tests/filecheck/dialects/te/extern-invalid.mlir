// RUN: mini-opt %s --split-input-file --verify-diagnostics

func.func @no_result(%x: tensor<8xf32>) {
  // expected-error@+1 {{te.call_extern: needs a callee name and at least one result}}
  te.call_extern "env.sink" (%x) : (tensor<8xf32>) -> ()
  func.return
}
