"""Shared launch plumbing for the kernels in this package (no kernel lives here).

Interpreter or compiler.  Triton fixes the execution mode when ``@triton.jit`` decorates a
function, its own library (``tl.sum``, ``tl.cdiv``, ...) included, which is decorated when
``triton`` is first imported.  So ``TRITON_INTERPRET=1`` must be in the environment before
``import triton``; set later it has no effect, and a CPU launch would fail deep inside Triton.
``check_launchable`` turns that into one clear error.

Every launcher calls ``record_launch`` before it launches: ``launch_counts`` is how the tests
prove that a kernel ran rather than a silent torch fallback.

The helpers below turn tensors into the 2-D ``(rows, cols)`` views the kernels take and pick
block sizes and warp counts from the row width.
"""

from __future__ import annotations

import collections
import functools

import torch
import triton
import triton.language as tl

_LAUNCHES: collections.Counter[str] = collections.Counter()

# Stand-in for the multiprocessor count when the interpreter runs the kernels on the CPU: a
# few persistent programs, so the tests exercise the per-program partials and their merge.
INTERPRETER_PROGRAMS = 4


def interpreter_active() -> bool:
    """True when Triton was imported with ``TRITON_INTERPRET=1`` (kernels run on the CPU)."""
    return type(tl.sum).__name__ == "InterpretedFunction"


def record_launch(kernel) -> None:
    """Count one launch of ``kernel`` (a ``@triton.jit`` function)."""
    _LAUNCHES[kernel.fn.__name__] += 1  # JITFunction and InterpretedFunction both keep .fn


def launch_counts() -> dict[str, int]:
    """How many times each kernel (by function name) was launched in this process."""
    return dict(_LAUNCHES)


def check_launchable(*tensors: torch.Tensor | None) -> None:
    """CPU tensors need the interpreter (compiled kernels need CUDA tensors)."""
    on_cpu = any(t is not None and not t.is_cuda for t in tensors)
    if on_cpu and not interpreter_active():
        raise RuntimeError(
            "Triton kernels on CPU tensors need the interpreter: set TRITON_INTERPRET=1 in the "
            "environment before triton is first imported (setting it later has no effect)"
        )


def as_rows(t: torch.Tensor) -> torch.Tensor:
    """``[..., N]`` as a 2-D ``[M, N]`` tensor; a strided view (no copy) when possible.

    Leading axes that collapse into one stride give a view with arbitrary row and column
    strides (a slice of a wider tensor, a column stride of 2, an expanded ``dy``), which
    the kernels read directly; otherwise (e.g. a transposed ``[T, B, N]``) the data is
    copied once.
    """
    n = t.shape[-1]
    try:
        return t.view(-1, n)
    except RuntimeError:
        return t.reshape(-1, n)


@functools.cache
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def program_budget(device: torch.device) -> int:
    """How many persistent programs to launch: 2 per multiprocessor on a GPU."""
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return 2 * _multiprocessors(index)
    return INTERPRETER_PROGRAMS


def block_size(n_cols: int) -> int:
    """Smallest power of two >= n_cols (and >= 16, so tiles are never degenerate)."""
    return max(16, triton.next_power_of_2(max(1, n_cols)))


def rows_per_program(block_n: int, target_tile: int = 4096) -> int:
    """Rows packed into one program so a narrow-row tile still holds ~target_tile values."""
    return max(1, target_tile // block_n)


def warps_for(tile_elems: int) -> int:
    """Warps for a tile: about 16 values per thread, between 1 and 32 warps."""
    return int(min(32, max(1, triton.next_power_of_2(max(1, tile_elems // (32 * 16))))))
