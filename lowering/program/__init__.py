"""Loop-level passes over the whole program: kernel fusion, constant hoisting, memory planning, parallel outlining."""
