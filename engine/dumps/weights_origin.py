"""Where a capture's weights came from, as fields a page words in its own language.

A capture (``engine.dumps.capture``) writes the origin as four metadata fields,
``weights_kind`` ("gguf": a GGUF file dequantized on load; "folder": a ``save_pretrained``
directory), ``weights_file``, ``weights_dtype`` and ``weights_converter`` (what
dequantized a GGUF file: "transformers"), never as a sentence: a sentence in the file
would be in one language on every page.  ``locales/*/dumps.toml`` (``weights_<kind>``)
word them.

Captures written before these fields (the shipped example among them) hold one English
sentence, ``weights``, in one of the two forms ``model_files`` used to write; those are
parsed back into the fields.  Any other ``weights`` text (a dump written by other code)
is kept as it is, as the file's own words (kind "text").

A page words the fields into a sentence of its own, so they are taken only when they hold
values a capture writes (a dtype of ``CAPTURE_DTYPES``, the converter ``GGUF_CONVERTER``):
anything else in them is kept as the file's own words too, which a page shows literally.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from engine.config import CAPTURE_DTYPES

GGUF_CONVERTER = "transformers"  # what dequantizes a GGUF file (``from_pretrained(gguf_file=)``)
_FIELDS = ("kind", "file", "dtype", "converter")
# the sentences model_files wrote into the "weights" metadata before the fields existed
_OLD_GGUF = re.compile(
    r"GGUF file (?P<file>.+), dequantized to (?P<dtype>\w+) by (?P<converter>\w+)"
)
_OLD_FOLDER = re.compile(r"(?P<file>.+) \((?P<dtype>float32|bfloat16|float16)\)")


@dataclass(frozen=True)
class WeightsOrigin:
    """A model's weights: their file and dtype, or (kind "text") a dump's own words."""

    kind: str  # "gguf", "folder" or "text"
    file: str = ""  # the GGUF file's or the directory's name (no parent path)
    dtype: str = ""  # the dtype the weights were loaded in
    converter: str = ""  # what dequantized a GGUF file ("" otherwise)
    text: str = ""  # kind "text": the metadata's sentence, as written

    def metadata(self) -> dict[str, str]:
        """The fields a capture writes (``from_metadata`` reads them back)."""
        if self.kind == "text":
            return {"weights": self.text}
        return {f"weights_{name}": getattr(self, name) for name in _FIELDS}


def gguf(file: str, dtype: str) -> WeightsOrigin:
    """A GGUF file's weights, dequantized to ``dtype`` by transformers."""
    return WeightsOrigin("gguf", file, dtype, GGUF_CONVERTER)


def folder(name: str, dtype: str) -> WeightsOrigin:
    """A ``save_pretrained`` directory's weights, loaded in ``dtype``."""
    return WeightsOrigin("folder", name, dtype)


def from_metadata(meta: Mapping[str, str]) -> WeightsOrigin | None:
    """The origin a dump's metadata states: its fields, an old capture's sentence parsed,
    other ``weights`` text as the file's own words; None when it states none."""
    kind = meta.get("weights_kind")
    if kind in ("gguf", "folder"):
        fields = {name: str(meta.get(f"weights_{name}", "")) for name in _FIELDS[1:]}
        if _known(kind, **fields):
            return WeightsOrigin(kind, **fields)
        written = {"kind": str(kind)} | fields
        return WeightsOrigin("text", text=", ".join(f"weights_{k}={v}" for k, v in written.items()))
    text = meta.get("weights")
    if text is None:
        return None
    text = str(text)
    for old_kind, sentence in (("gguf", _OLD_GGUF), ("folder", _OLD_FOLDER)):
        found = sentence.fullmatch(text)
        if found and _known(old_kind, **found.groupdict()):
            return WeightsOrigin(old_kind, **found.groupdict())
    return WeightsOrigin("text", text=text)


def _known(kind: str, file: str, dtype: str, converter: str = "") -> bool:
    """Whether the fields hold what a capture writes (the file's name is any text)."""
    return dtype in CAPTURE_DTYPES and converter == (GGUF_CONVERTER if kind == "gguf" else "")
