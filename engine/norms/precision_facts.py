"""Facts about floating-point formats and PyTorch's defaults that the precision story states.

Every number here is computed from ``torch.finfo``, from PyTorch's own ops, or read from the
real signatures (``inspect.signature``), so a sentence on a page can quote it and a test can
check it against torch.

Resolution.  A binary format with a p-bit significand (the stored mantissa bits plus the
implicit leading 1) has machine epsilon eps = 2^(1-p): the gap between 1 and the next number,
and the *relative spacing* of numbers everywhere in the normal range (within a factor of 2).
We state precision as ``significant_digits = log10(2^p) = p * log10(2)``: a p-bit significand
distinguishes as many values per factor of ten as log10(2^p) decimal digits do.  This is the
figure IEEE 754 tables quote (binary16 3.31, binary32 7.22, binary64 15.95); for bfloat16
(p = 8) it is 2.41.  It equals log10(2 / eps) = -log10(eps) + 0.30, so it is not
``-log10(eps)`` (3.01 for float16).

References:
- IEEE Std 754-2019, "IEEE Standard for Floating-Point Arithmetic", table 3.5
- Higham 2002, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 2.1
- Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training", arXiv:1905.12322
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from engine.config import DTYPES, HALF_DTYPES
from engine.norms.precision_paths import running_sum


@dataclass(frozen=True)
class Resolution:
    """How finely and how far a floating-point dtype represents numbers."""

    dtype: str
    significand_bits: int  # p, including the implicit leading bit
    eps: float  # 2^(1-p): spacing just above 1, the relative spacing of the format
    significant_digits: float  # log10(2^p), see the module docstring
    max: float  # largest finite number


def resolution(dtype: str) -> Resolution:
    """The resolution facts of ``dtype`` ("float16", "bfloat16", "float32", "float64")."""
    info = torch.finfo(DTYPES[dtype])
    significand_bits = 1 - round(math.log2(info.eps))
    return Resolution(
        dtype=dtype,
        significand_bits=significand_bits,
        eps=info.eps,
        significant_digits=significand_bits * math.log10(2.0),
        max=info.max,
    )


def spacing(value: float, dtype: str) -> float:
    """The gap from ``value`` (as stored in ``dtype``) to the next larger number of ``dtype``.

    2.0 at 2048 in float16: a running float16 sum at 2048 cannot take +1.
    """
    stored = torch.tensor(value, dtype=DTYPES[dtype])
    above = torch.nextafter(stored, torch.tensor(math.inf, dtype=stored.dtype))
    return float(above.double() - stored.double())


def square_overflow_threshold(dtype: str) -> float:
    """The smallest positive number of ``dtype`` whose square, stored in ``dtype``, is inf.

    256 for float16: 255.875^2 = 65472 is finite, 256^2 = 65536 rounds past 65504 to inf.
    """
    torch_dtype = DTYPES[dtype]
    candidate = torch.tensor(math.sqrt(torch.finfo(torch_dtype).max), dtype=torch_dtype)
    below = torch.nextafter(candidate, torch.tensor(0.0, dtype=torch_dtype))
    while torch.isinf(below * below):  # step down while the square still overflows
        candidate, below = below, torch.nextafter(below, torch.tensor(0.0, dtype=torch_dtype))
    while torch.isfinite(candidate * candidate):  # step up until it overflows
        candidate = torch.nextafter(candidate, torch.tensor(math.inf, dtype=torch_dtype))
    return float(candidate)


@dataclass(frozen=True)
class RunningSumLimit:
    """Where a running sum of one repeated term, kept in ``dtype``, stops growing."""

    dtype: str
    term: float
    value: float  # the running sum that adding ``term`` no longer changes (2048 for 1.0)
    spacing: float  # the gap above ``value``: at least 2 * term, so the term rounds away


def running_sum_limit(term: float = 1.0, dtype: str = "float16") -> RunningSumLimit:
    """Add ``term`` again and again in ``dtype`` until the sum stops changing (or is inf).

    Runs the naive path's own ``running_sum`` on 2^(p+1) copies of the term, enough for
    any term: the sum stops by n * term = 2^p * term (2048 * 1 in float16, 256 in bfloat16).
    """
    torch_dtype = DTYPES[dtype]
    count = 2 ** (resolution(dtype).significand_bits + 1)
    terms = torch.full((1, count), term, dtype=torch_dtype)  # [1, n]
    partial = running_sum(terms)[0].double()  # [n]
    previous = torch.cat([partial.new_zeros(1), partial[:-1]])  # [n]
    stalled = torch.nonzero(partial == previous)
    index = int(stalled[0]) if len(stalled) else count - 1
    value = float(partial[index])
    return RunningSumLimit(dtype, float(terms[0, 0]), value, spacing(value, dtype))


@dataclass(frozen=True)
class DtypeFacts:
    """What the Vector Lab's precision section states about a storage dtype."""

    resolution: Resolution
    square_threshold: float | None  # smallest |x| whose square is inf; None for float32/64
    running_limit: RunningSumLimit | None  # where a running sum of ones stops; None likewise


def dtype_facts(dtype: str) -> DtypeFacts:
    """Resolution of ``dtype``; for the half dtypes also where a square and a running sum
    break (a float32 running sum takes 2^25 terms to stall: not a fact a page needs)."""
    if dtype not in HALF_DTYPES:
        return DtypeFacts(resolution(dtype), None, None)
    return DtypeFacts(
        resolution(dtype), square_overflow_threshold(dtype), running_sum_limit(1.0, dtype)
    )


# --- default epsilons, read from the real signatures ---------------------------------------


@dataclass(frozen=True)
class DefaultEps:
    """The epsilon an API uses when the caller passes none."""

    api: str  # e.g. "torch.nn.RMSNorm"
    kind: str  # norm kind id (engine.config.NORM_KINDS)
    effective: float  # the value used for inputs of the table's dtype
    rule: str  # "literal", "opmath_eps" (see OPMATH) or "config_default"


# eps=None in nn.RMSNorm / F.rms_norm means torch.finfo(opmath).eps, the machine epsilon of
# the type the op computes in (torch 2.13 docstring of nn.RMSNorm; tests check the outputs):
# float32 for float16, bfloat16 and float32 inputs, so 1.19e-7 -- not float16's 9.8e-4.
OPMATH = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "float64": "float64"}


_TORCH_APIS = (
    ("torch.nn.LayerNorm", "layernorm", torch.nn.LayerNorm.__init__),
    ("torch.nn.functional.layer_norm", "layernorm", F.layer_norm),
    ("torch.nn.RMSNorm", "rmsnorm", torch.nn.RMSNorm.__init__),
    ("torch.nn.functional.rms_norm", "rmsnorm", F.rms_norm),
    ("torch.nn.BatchNorm1d", "batchnorm", torch.nn.BatchNorm1d.__init__),
    ("torch.nn.functional.batch_norm", "batchnorm", F.batch_norm),
    ("torch.nn.GroupNorm", "groupnorm", torch.nn.GroupNorm.__init__),
    ("torch.nn.functional.group_norm", "groupnorm", F.group_norm),
    ("torch.nn.InstanceNorm1d", "instancenorm", torch.nn.InstanceNorm1d.__init__),
    ("torch.nn.functional.instance_norm", "instancenorm", F.instance_norm),
)


def _source_default(relative_path: str, owner: str, name: str) -> float:
    """The literal default of ``name`` in class ``owner`` of a transformers source file.

    Read with ``ast`` rather than by importing: importing the Llama modules takes seconds
    (the whole of transformers' modelling stack), and the Vector Lab quotes these values on
    its first screen.  tests/norms/test_precision_facts.py checks them against the imported
    classes.
    """
    spec = importlib.util.find_spec("transformers")
    source = Path(spec.submodule_search_locations[0], relative_path).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name == owner):
            continue
        for item in ast.walk(node):
            if isinstance(item, ast.AnnAssign) and getattr(item.target, "id", None) == name:
                return float(ast.literal_eval(item.value))  # a dataclass-style field
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                arguments = item.args.args[len(item.args.args) - len(item.args.defaults) :]
                for argument, default in zip(arguments, item.args.defaults):
                    if argument.arg == name:
                        return float(ast.literal_eval(default))
    raise LookupError(f"no default for {owner}.{name} in transformers/{relative_path}")


def default_eps_table(dtype: str = "float32") -> tuple[DefaultEps, ...]:
    """PyTorch's default eps per API for inputs of ``dtype`` (see OPMATH for ``eps=None``),
    then Hugging Face's defaults for Llama: the module's and the config's ``rms_norm_eps``.

    A checkpoint's ``config.json`` sets its own value (Llama 2 and SmolLM2 use 1e-5), which
    is what the model runs with; these are only the values used when nothing is set.
    Read from the installed transformers' source (see ``_source_default``).
    """
    rows = []
    for api, kind, function in _TORCH_APIS:
        declared = inspect.signature(function).parameters["eps"].default
        if declared is None:
            effective = torch.finfo(DTYPES[OPMATH[dtype]]).eps
            rows.append(DefaultEps(api, kind, effective, "opmath_eps"))
        else:
            rows.append(DefaultEps(api, kind, float(declared), "literal"))
    module = _source_default("models/llama/modeling_llama.py", "LlamaRMSNorm", "eps")
    config = _source_default("models/llama/configuration_llama.py", "LlamaConfig", "rms_norm_eps")
    return (
        *rows,
        DefaultEps("transformers LlamaRMSNorm", "rmsnorm", module, "literal"),
        DefaultEps("transformers LlamaConfig.rms_norm_eps", "rmsnorm", config, "config_default"),
    )
