"""What English left in a Chinese page looks like: shared by the text and the page tests.

A Chinese page may name code (``nn.LayerNorm``, ``input_layernorm``, ``config.json``), models
(GPT-2, Llama 3 8B, SmolLM2-135M-Instruct), units (µs, GB/s), paper titles in quotes and
authors (Sun et al.); it may not hold an English *sentence*.  ``english_runs`` finds runs of
three or more plain English words (letters only, lower case after the first, so identifiers,
acronyms, CamelCase and hyphenated names never count) once code spans, LaTeX, quoted titles,
links and proper names are set aside.  ``halfwidth_punctuation`` finds a half-width comma,
semicolon, colon, question or exclamation mark touching a Chinese character.
"""

from __future__ import annotations

import re

HAN = "\u4e00-\u9fff"
# set aside before looking: code spans, LaTeX, Material icons, links, quoted titles, names
_ASIDE = (
    r"`[^`]*`",
    r"\$[^$]*\$",
    r":material/[a-z_]+:",
    r"https?://\S+",
    r"'[^'\n]*'",
    r"“[^”]*”",
    r"\"[^\"\n]*\"",
    r"\bet al\.",
    r"Hugging Face(?: Hub)?",
)
_WORD = r"[A-Za-z][a-z]+(?:'s)?"
_RUN = re.compile(rf"\b{_WORD}\b(?:[,;:]?\s+\b{_WORD}\b){{2,}}")
_HALFWIDTH = re.compile(rf"[{HAN}][,;:?!]|[,;:?!]\s*[{HAN}]")


def _set_aside(text: str, patterns=_ASIDE) -> str:
    """Each set-aside part becomes "CODE": no English word, no Chinese character."""
    for pattern in patterns:
        text = re.sub(pattern, "CODE", text)
    return text


def english_runs(text: str) -> list[str]:
    """Runs of three or more plain English words in ``text``."""
    return [match.group(0) for match in _RUN.finditer(_set_aside(text))]


def halfwidth_punctuation(text: str) -> list[str]:
    """Half-width , ; : ? ! next to a Chinese character (outside code and LaTeX)."""
    return _HALFWIDTH.findall(_set_aside(text, _ASIDE[:3]))


def problems(text: str) -> list[str]:
    """Both checks on one Chinese text: empty when it reads as Chinese throughout."""
    return english_runs(text) + halfwidth_punctuation(text)
