"""Triton kernels for NormScope: raw ops only, one op per file, kernel -> launcher -> torch op.

Every op is a ``torch.library`` custom op (``torch.ops.normscope.*``) with a fake
implementation, so it composes with ``torch.compile``.  The kernels run on CUDA tensors, or
on CPU tensors when ``TRITON_INTERPRET=1`` (the interpreter, used by ``tests/kernels``).

This package knows tensors and numbers only (no ``NormSpec``, no ``NormResult``):
``engine/norms/dispatch.py`` is its one importer and turns a spec into these calls.  Importing
the package imports no kernel: import the module that defines what you need.
"""
