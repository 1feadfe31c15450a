"""Triton kernels for NormScope: raw ops only, one op per file, kernel -> launcher -> torch op.

- ``row_norm_forward.py``  LayerNorm / RMSNorm forward (+ fused residual add), row stats
- ``row_norm_backward.py`` dx, d-residual, dW, dB (deterministic partials, no atomics)
- ``column_sum.py``        the fixed-order sum of those partials (dW, dB)
- ``row_norm_function.py`` the autograd.Function tying the two together
- ``channel_stats.py``     per-channel count / mean / M2 with a padding mask (BatchNorm)
- ``_launch.py``           launch counter, interpreter check, block-size heuristics

Every op is a ``torch.library`` custom op (``torch.ops.normscope.*``) with a fake
implementation, so it composes with ``torch.compile``.  The kernels run on CUDA tensors, or
on CPU tensors when ``TRITON_INTERPRET=1`` (the interpreter, used by ``tests/kernels``).

This package knows tensors and numbers only (no ``NormSpec``, no ``NormResult``):
``engine/norms/dispatch.py`` is its one importer and turns a spec into these calls.  Importing
the package imports no kernel: import the module that defines what you need.
"""
