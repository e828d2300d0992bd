// RUN: not mini-opt %s -p lower-to-lop 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not mini-opt %s -p graph-to-tee 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not mini-opt %s -p 'lower-to-loop{x=1}' 2>&1 | filecheck %s --check-prefix=NO-OPTIONS
// RUN: not mini-opt %s -p 'loop-split{kernel=k loop=i factr=4}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not mini-opt %s -p 'cse{bogus=1}' 2>&1 | filecheck %s --check-prefix=NONE
// RUN: not mini-opt %s -p cse --print-ir-after=cs 2>&1 | filecheck %s --check-prefix=PRINT

// Unknown names get the closest known one; a named pipeline takes no options; an unknown option lists the pass's.

func.func @main() {
  func.return
}

// PIPELINE:   mini-opt: error: unknown pass or pipeline 'lower-to-lop'; did you mean 'lower-to-loop'? (mini-opt --list-passes lists them)
// PASS:       mini-opt: error: unknown pass or pipeline 'graph-to-tee'; did you mean 'graph-to-te'?
// NO-OPTIONS: mini-opt: error: pipeline 'lower-to-loop' takes no options (its passes: graph-to-te,te-inline,te-to-loop)
// OPTION:     mini-opt: error: pass 'loop-split' has no option 'factr'; did you mean 'factor'? (its options: kernel, loop, factor)
// NONE:       mini-opt: error: pass 'cse' has no option 'bogus' (its options: none)
// PRINT:      mini-opt: error: --print-ir-before/after: unknown pass 'cs'; did you mean 'cse'?
