"""What an entry's name says: its layer number and its role.

Tools name activations in a few families, and the layer number is the first integer that
stands as a path component of its own:
- Hugging Face: ``hidden_states.{i}`` (``output_hidden_states``; index 0 = embeddings),
  module paths ``model.layers.{i}``, ``transformer.h.{i}``; hooks on a norm give
  ``model.layers.{i}.input_layernorm.input`` / ``.output``; nnsight saves the same module
  paths (``model.layers.{i}.output``, a tuple's first item ``.output.0``);
- TransformerLens: ``blocks.{i}.hook_resid_pre`` / ``hook_resid_mid`` / ``hook_resid_post``,
  a norm's output ``blocks.{i}.ln1.hook_normalized`` (input: the matching resid hook) and
  ``ln_final.hook_normalized``;
- a list or tuple in a ``.pt`` file: ``{i}``; files named ``layer_{i}.npy``.
"""

from __future__ import annotations

import re

MAX_INDEX_DIGITS = 6  # a longer number (a step, a hash, a 5,000-digit name) is no layer
# An integer that is a whole path component: "h.3", "layer_03", "hidden_states/3" — not
# "ln1" or "fc2", which name a module, nor a number of more than MAX_INDEX_DIGITS digits.
_DIGITS = rf"\d{{1,{MAX_INDEX_DIGITS}}}"
_INDEX = re.compile(rf"(?:^|(?<=[._/:\[\-]))({_DIGITS})(?=$|[._/:\]\-])")
_NORM_MODULE = re.compile(r"(norm|^ln(_?\d+|_?f|_?final)?$|^ln_)", re.IGNORECASE)
_IO_SUFFIX = re.compile(r"^(?P<module>.+)\.(?P<io>input|output|inputs|outputs)(\.0)?$")
_TL_NORMALIZED = re.compile(r"^(?P<module>.+)\.hook_normalized$")
_BLOCK_OUTPUT = re.compile(r"(^|\.)(layers|h|blocks|block|layer)\.\{i\}(\.output(\.0)?)?$")
_BLOCK_INPUT = re.compile(r"(^|\.)(layers|h|blocks|block|layer)\.\{i\}\.input(\.0)?$")
_SHARD_WORDS = re.compile(r"(shard|part|rank|batch|chunk|split|of)", re.IGNORECASE)
STACK_WORDS = re.compile(r"(hidden|resid|layers|stack|stream)", re.IGNORECASE)
BATCH_WORDS = re.compile(r"(batch)", re.IGNORECASE)


def split_index(name: str) -> tuple[str, int | None]:
    """(template, layer number): ``"blocks.3.ln1.hook_normalized"`` → ``("blocks.{i}.ln1.
    hook_normalized", 3)``; a name without a free-standing integer → ``(name, None)``."""
    match = _INDEX.search(name)
    if match is None:
        return name, None
    return name[: match.start()] + "{i}" + name[match.end() :], int(match.group(1))


_GLUED = re.compile(rf"^(?P<head>.*[A-Za-z])(?P<index>{_DIGITS})$")


def split_glued(name: str) -> tuple[str, int] | None:
    """``"h12"`` → ``("h{i}", 12)``: trailing digits glued to a word.  Read as a layer
    number only when several names share the word (``layout`` checks), since ``ln1`` or
    ``fc2`` alone name a module."""
    match = _GLUED.match(name)
    if match is None:
        return None
    return match.group("head") + "{i}", int(match.group("index"))


def fill(template: str, index: int | None) -> str:
    """The name a template gives to layer ``index``."""
    return template if index is None else template.replace("{i}", str(index), 1)


def is_shard_template(template: str) -> bool:
    """Whether numbered file names look like shards of one array, not one file per layer."""
    return bool(_SHARD_WORDS.search(template.replace("{i}", "")))


def norm_io(template: str) -> tuple[str, str] | None:
    """("module template", "input"|"output") for a hook on a norm module's input or output."""
    match = _IO_SUFFIX.match(template)
    if match is None:
        return None
    module = match.group("module")
    if not _NORM_MODULE.search(module.rsplit(".", 1)[-1]):
        return None
    return module, "input" if match.group("io").startswith("input") else "output"


def tl_normalized(template: str) -> str | None:
    """The module of a TransformerLens ``ln*.hook_normalized`` template, else None."""
    match = _TL_NORMALIZED.match(template)
    return match.group("module") if match else None


def norm_param(template: str) -> tuple[str, str] | None:
    """("module template", "weight"|"bias") for a norm's parameter."""
    module, _, param = template.rpartition(".")
    if param in ("weight", "bias") and _NORM_MODULE.search(module.rsplit(".", 1)[-1]):
        return module, param
    return None


def final_output(template: str) -> str | None:
    """For a stream of block inputs (TransformerLens ``hook_resid_pre``, a hook's
    ``layers.{i}.input``), the template whose last layer is the stream's last point."""
    if template.endswith("hook_resid_pre"):
        return template.replace("hook_resid_pre", "hook_resid_post")
    match = _BLOCK_INPUT.search(template)
    if match:
        return template[: match.start()] + match.group(0).replace(".input", ".output")
    return None


def is_auxiliary(template: str) -> bool:
    """Entries that are never a stream: TransformerLens' per-token scales and norm params."""
    return template.endswith(("hook_scale", ".weight", ".bias"))


def stream_priority(template: str) -> int:
    """Lower is a better guess for the residual stream."""
    if template.endswith("hook_resid_pre") or _BLOCK_INPUT.search(template):
        return 0
    if "hidden_states" in template:
        return 1
    if template.endswith("hook_resid_post"):
        return 2
    if _BLOCK_OUTPUT.search(template):
        return 3
    io = norm_io(template)
    if io is not None and io[1] == "input":
        return 5  # a Pre-LN norm's input is the residual stream; Post-LN's is not
    if io is not None or tl_normalized(template) is not None:
        return 7
    if "{i}" in template:
        return 4
    return 6
