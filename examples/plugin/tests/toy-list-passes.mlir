// RUN: mini-opt --load-plugin minimlc_toy --list-passes | filecheck %s
// RUN: not mini-opt --load-plugin no_such_plugin_module --list-passes 2>&1 | filecheck %s --check-prefix=BROKEN

// CHECK:      toy-fuse-matmul-relu {{ +}} Fuse graph.matmul followed by graph.relu into toy.matmul_relu. [from plugin minimlc_toy]
// CHECK:      toy-relu-to-clip {{ +}} Rewrite graph.relu as graph.clip with min 0. [from plugin minimlc_toy]
// CHECK-NEXT:   max: float | None = None
// CHECK-NEXT: toy-to-graph {{ +}} Lower toy.gelu and toy.matmul_relu into graph ops. [from plugin minimlc_toy]
// CHECK-NEXT:   expand_gelu: bool = False
// CHECK:      toy-lower-to-llvm {{ +}} toy and graph -> llvm dialect at O3 [from plugin minimlc_toy]
// CHECK-NEXT:   = toy-to-graph,lower-to-llvm

// BROKEN:     mini-opt: error: plugin 'no_such_plugin_module' (no_such_plugin_module) failed to import: ModuleNotFoundError: No module named 'no_such_plugin_module'
// BROKEN-NOT: Traceback
