// RUN: mini-opt %s -p lower-to-scf | filecheck %s --check-prefix=SCF
// RUN: mini-opt %s -p lower-to-llvm | filecheck %s --check-prefix=LLVM

// The pipelines plan memory after the schedules and before loop-outline-parallel: a chain of four GEMMs has three
// 64-byte intermediates, and h2 reuses h0's bytes, so the one arena the entry allocates per call holds 128 bytes.
func.func @main(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %w0 = graph.weight "w0" : tensor<16x16xf32>
  %w1 = graph.weight "w1" : tensor<16x16xf32>
  %w2 = graph.weight "w2" : tensor<16x16xf32>
  %w3 = graph.weight "w3" : tensor<16x16xf32>
  %h0 = graph.gemm %x, %w0 {trans_b} : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %h1 = graph.gemm %h0, %w1 {trans_b} : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %h2 = graph.gemm %h1, %w2 {trans_b} : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %y = graph.gemm %h2, %w3 {trans_b} : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  func.return %y : tensor<1x16xf32>
}

// SCF:      func.func @main(
// SCF-SAME:   minimlc.arena_bytes = 128 : i64, minimlc.intermediate_bytes = 192 : i64
// SCF-NEXT:   %arena = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// SCF-NEXT:   %[[AT0:.*]] = arith.constant 0 : index
// SCF-NEXT:   %h0 = memref.view %arena[%[[AT0]]][] : memref<128xi8> to memref<1x16xf32>
// SCF-NEXT:   func.call @gemm_0(%x, %{{.*}}, %h0)
// SCF-NEXT:   %[[AT64:.*]] = arith.constant 64 : index
// SCF-NEXT:   %h1 = memref.view %arena[%[[AT64]]][] : memref<128xi8> to memref<1x16xf32>
// SCF-NEXT:   func.call @gemm_0(%h0, %{{.*}}, %h1)
// SCF-NEXT:   %[[AT0_AGAIN:.*]] = arith.constant 0 : index
// SCF-NEXT:   %h2 = memref.view %arena[%[[AT0_AGAIN]]][] : memref<128xi8> to memref<1x16xf32>
// SCF-NEXT:   func.call @gemm_0(%h1, %{{.*}}, %h2)
// SCF-NEXT:   func.call @gemm_0(%h2, %{{.*}}, %out0)
// SCF-NEXT:   memref.dealloc %arena : memref<128xi8>
// SCF-NEXT:   func.return

// In LLVM, a view is the arena's address plus its offset (h2 and h0 share offset 0; LLVM's own CSE merges them).
// LLVM:      llvm.func @main_packed(%args: !llvm.ptr)
// LLVM-NEXT:   %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// LLVM-NEXT:   %[[SIZE:.*]] = llvm.mlir.constant(128) : i64
// LLVM-NEXT:   %arena = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// LLVM-NEXT:   %[[AT0:.*]] = llvm.mlir.constant(0) : i64
// LLVM-NEXT:   %h0 = llvm.getelementptr inbounds %arena[%[[AT0]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM-NEXT:   %[[X_SLOT:.*]] = llvm.getelementptr inbounds %args[0]
// LLVM-NEXT:   %x = llvm.load %[[X_SLOT]]
// LLVM-NEXT:   %[[W0_SLOT:.*]] = llvm.getelementptr inbounds %args[6]
// LLVM-NEXT:   %w0_packed = llvm.load %[[W0_SLOT]]
// LLVM-NEXT:   llvm.call @gemm_0(%x, %w0_packed, %h0)
// LLVM-NEXT:   %[[AT64:.*]] = llvm.mlir.constant(64) : i64
// LLVM-NEXT:   %h1 = llvm.getelementptr inbounds %arena[%[[AT64]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM-NEXT:   %[[W1_SLOT:.*]] = llvm.getelementptr inbounds %args[7]
// LLVM-NEXT:   %w1_packed = llvm.load %[[W1_SLOT]]
// LLVM-NEXT:   llvm.call @gemm_0(%h0, %w1_packed, %h1)
// LLVM-NEXT:   %[[AT0_AGAIN:.*]] = llvm.mlir.constant(0) : i64
// LLVM-NEXT:   %h2 = llvm.getelementptr inbounds %arena[%[[AT0_AGAIN]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM-NEXT:   %[[W2_SLOT:.*]] = llvm.getelementptr inbounds %args[8]
// LLVM-NEXT:   %w2_packed = llvm.load %[[W2_SLOT]]
// LLVM-NEXT:   llvm.call @gemm_0(%h1, %w2_packed, %h2)
// LLVM-NEXT:   %[[W3_SLOT:.*]] = llvm.getelementptr inbounds %args[9]
// LLVM-NEXT:   %w3_packed = llvm.load %[[W3_SLOT]]
// LLVM-NEXT:   %[[OUT_SLOT:.*]] = llvm.getelementptr inbounds %args[1]
// LLVM-NEXT:   %out0 = llvm.load %[[OUT_SLOT]]
// LLVM-NEXT:   llvm.call @gemm_0(%h2, %w3_packed, %out0)
// LLVM-NEXT:   llvm.call @free(%arena) : (!llvm.ptr) -> ()
// LLVM-NEXT:   llvm.return
