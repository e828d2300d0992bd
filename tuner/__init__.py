"""The schedule tuner (`minimlc tune`): a model's kernels become tasks, each task's schedule space is searched by
measuring candidates in a worker process, and the best records go to an append-only tuning database that
`default-schedule{tuning-db=...}` applies. `tuner.py` drives it; `tasks`, `search`, `measure`, `verify`, `calibrate`,
`algorithms` and `cache_flush` are its steps."""
