"""Which backend computes: Triton kernels on a CUDA GPU, or the PyTorch path on the CPU."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import platform
from dataclasses import dataclass

import torch

BACKENDS = ("auto", "torch", "triton")


@dataclass(frozen=True)
class BackendInfo:
    """What computes in this process, for display."""

    name: str  # "triton" or "torch"
    device: str  # "NVIDIA H200", "CPU", ...
    triton_version: str | None
    torch_version: str = torch.__version__.split("+")[0]
    python_version: str = platform.python_version()
    interpreter: bool = False  # Triton's interpreter on (TRITON_INTERPRET=1): kernels on a CPU

    @property
    def engine(self) -> str:
        """The software that computes: "Triton" or "PyTorch"."""
        return "Triton" if self.name == "triton" else "PyTorch"

    @property
    def label(self) -> str:
        return f"{self.engine} · {self.device}"


@functools.cache
def triton_installed() -> bool:
    return importlib.util.find_spec("triton") is not None


def triton_interpreter_enabled() -> bool:
    """True when TRITON_INTERPRET=1: Triton kernels run on the CPU, interpreted."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def resolve_backend(x: torch.Tensor, backend: str = "auto") -> str:
    """The backend that will run for ``x``: "triton" or "torch".

    "auto" picks Triton when ``x`` lives on a CUDA device and Triton is installed; else the
    torch path.  "triton" on a CPU tensor needs ``TRITON_INTERPRET=1``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    if backend == "torch":
        return "torch"
    if backend == "auto":
        return "triton" if x.is_cuda and triton_installed() else "torch"
    if not triton_installed():
        raise RuntimeError("backend='triton' requested but Triton is not installed")
    if not x.is_cuda and not triton_interpreter_enabled():
        raise RuntimeError(
            "backend='triton' on a CPU tensor needs TRITON_INTERPRET=1 (the Triton interpreter)"
        )
    return "triton"


def compute_device() -> str:
    """Where the app's normalizations run: "cuda" when a CUDA GPU is present, else "cpu"."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def _triton_version() -> str | None:
    """Triton's version, read from its package metadata.

    Importing triton to read ``triton.__version__`` would be paid by the first page view (the
    sidebar shows the backend); the metadata says the same for free (benchmarks/RESULTS.md,
    "App latency").
    """
    if not triton_installed():
        return None
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:  # importable but not installed by pip
        import triton

        return triton.__version__


@functools.cache
def describe_backend() -> BackendInfo:
    """The backend ``backend="auto"`` uses for tensors on this machine's default device."""
    version, interpreter = _triton_version(), triton_interpreter_enabled()
    if torch.cuda.is_available() and triton_installed():
        device = torch.cuda.get_device_name(0)
        return BackendInfo("triton", device, version, interpreter=interpreter)
    return BackendInfo("torch", "CPU", version, interpreter=interpreter)
