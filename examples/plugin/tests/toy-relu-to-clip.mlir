// RUN: mini-opt --load-plugin minimlc_toy %s -p toy-relu-to-clip | filecheck %s
// RUN: mini-opt --load-plugin minimlc_toy %s -p 'toy-relu-to-clip{max=6.0}' | filecheck %s --check-prefix=RELU6

func.func @relu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.relu %x : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK:      %y = graph.clip %x {min = 0.000000e+00 : f32} : tensor<8xf32>
// CHECK-NEXT: func.return %y : tensor<8xf32>

// RELU6:      %y = graph.clip %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<8xf32>
