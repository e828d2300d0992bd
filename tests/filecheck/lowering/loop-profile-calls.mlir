// RUN: mini-opt %s -p loop-profile-calls | filecheck %s
// RUN: mini-opt %s -p lower-to-llvm -t llvm | filecheck %s --check-prefix=OFF
// RUN: mini-opt %s -p 'loop-profile-calls{clock=thread-cpu}' | filecheck %s --check-prefix=CPU
// RUN: not mini-opt %s -p 'loop-profile-calls{clock=cpu}' 2>&1 | filecheck %s --check-prefix=BAD

// Every kernel call of the entry gets a clock reading before and after it, into slots 2i and 2i+1 of one byte
// buffer (16 bytes per timespec) precomputed by an empty kernel; the entry lists each call's kernel, float
// operations (here a max per element: 64), the bytes of the buffers it passes (two of 64 f32: 512), schedule and
// tuning key. Without the pass, no clock is read.
func.func @main(%x: memref<64xf32>, %out: memref<64xf32>) attributes {minimlc.entry} {
  %t = loop.alloc "global" : memref<64xf32>
  func.call @relu_0(%x, %t) : (memref<64xf32>, memref<64xf32>) -> ()
  func.call @relu_0(%t, %out) : (memref<64xf32>, memref<64xf32>) -> ()
  func.return
}
func.func private @relu_0(%in: memref<64xf32>, %out: memref<64xf32>) attributes {minimlc.schedule = "elementwise width=16 parallel=true", minimlc.task = "3f9c0a"} {
  loop.for "i" %i = 0 to 64 step 1 serial {
    %v = memref.load %in[%i] : memref<64xf32>
    %c = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %v, %c : f32
    memref.store %r, %out[%i] : memref<64xf32>
  }
  func.return
}

// CHECK:      func.func @main(%x: memref<64xf32>, %out: memref<64xf32>) attributes {minimlc.entry, minimlc.profile = [{kernel = "relu_0", flops = 64 : i64, bf16_flops = 0 : i64, bytes = 512 : i64, schedule = "elementwise width=16 parallel=true", tasks = "3f9c0a"}, {kernel = "relu_0", flops = 64 : i64, bf16_flops = 0 : i64, bytes = 512 : i64, schedule = "elementwise width=16 parallel=true", tasks = "3f9c0a"}]} {
// CHECK-NEXT:   %[[BUF:.*]] = loop.precompute @minimlc_profile_buffer() : () -> memref<64xi8>
// CHECK-NEXT:   %[[CLOCK:.*]] = arith.constant 1 : i32
// CHECK-NEXT:   %t = loop.alloc "global" : memref<64xf32>
// CHECK-NEXT:   %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[TS0:.*]] = memref.view %[[BUF]][%[[AT0]]][] : memref<64xi8> to memref<2xi64>
// CHECK-NEXT:   %{{.*}} = func.call @clock_gettime(%[[CLOCK]], %[[TS0]]) : (i32, memref<2xi64>) -> i32
// CHECK-NEXT:   func.call @relu_0(%x, %t)
// CHECK-NEXT:   %[[AT16:.*]] = arith.constant 16 : index
// CHECK-NEXT:   %[[TS1:.*]] = memref.view %[[BUF]][%[[AT16]]][] : memref<64xi8> to memref<2xi64>
// CHECK-NEXT:   %{{.*}} = func.call @clock_gettime(%[[CLOCK]], %[[TS1]]) : (i32, memref<2xi64>) -> i32
// CHECK-NEXT:   %[[AT32:.*]] = arith.constant 32 : index
// CHECK-NEXT:   %[[TS2:.*]] = memref.view %[[BUF]][%[[AT32]]][] : memref<64xi8> to memref<2xi64>
// CHECK-NEXT:   %{{.*}} = func.call @clock_gettime(%[[CLOCK]], %[[TS2]]) : (i32, memref<2xi64>) -> i32
// CHECK-NEXT:   func.call @relu_0(%t, %out)
// CHECK-NEXT:   %[[AT48:.*]] = arith.constant 48 : index
// CHECK-NEXT:   %[[TS3:.*]] = memref.view %[[BUF]][%[[AT48]]][] : memref<64xi8> to memref<2xi64>
// CHECK-NEXT:   %{{.*}} = func.call @clock_gettime(%[[CLOCK]], %[[TS3]]) : (i32, memref<2xi64>) -> i32
// CHECK-NEXT:   func.return
// CHECK:      func.func private @minimlc_profile_buffer(%{{.*}}: memref<64xi8>) {
// CHECK-NEXT:   func.return
// CHECK:      func.func private @clock_gettime(i32, memref<2xi64>) -> i32

// With clock=thread-cpu the readings are the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID = 3).
// CPU:      loop.precompute @minimlc_profile_buffer
// CPU-NEXT: arith.constant 3 : i32

// BAD: loop-profile-calls: clock must be one of monotonic, thread-cpu, got 'cpu'

// OFF-NOT: clock_gettime
// OFF: define void @main_packed
// OFF-NOT: clock_gettime
