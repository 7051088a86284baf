"""The GPU measurement harness (`python -m cake_router measure`): ROUTING-POLICY.md sections 2-4.

- `grids`: named T grids and the work plan (units ordered by value, sharding).
- `impls`: this package's programs and the peers, prepared on fixed buffers per workload.
- `protocol`: the timing protocol (CUDA graphs, L2 flush outside the span, CUPTI spans,
  sessions x rounds x replays in a balanced rotating order, A/A copies).
- `accuracy`: the accuracy protocol (three input families, FP64 oracle, eager FP32 reference).
- `session`: one measuring process (a session); `campaign`: sessions, GPUs, resume, merge.
"""
