"""Numbers and vectors written as LaTeX, and one written step (a caption and its maths)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ui.formatting import format_number, format_vector, grouped


@dataclass(frozen=True)
class Step:
    caption: str
    latex: str


def chain(left: str, *sides: str) -> str:
    """``left = a = b = ...`` with every right-hand side on its own line (aligned at "=").

    A chain of equalities on one line ends with its result, the very part a narrow column (a
    phone) cuts off; one side per line keeps the result readable at any width.
    """
    first, *rest = sides
    lines = [rf"{left} &= {first}", *(rf"&= {side}" for side in rest)]
    return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"


_SCIENTIFIC = re.compile(r"(-?\d+(?:\.\d+)?)e([+-]\d+)")


def latex_scientific(mantissa: str, exponent: int) -> str:
    """A mantissa times a power of ten as LaTeX: ("2.5", 6) -> 2.5\\times 10^{6}; a mantissa
    of exactly ±1 is not written: ("1", 6) -> 10^{6}, ("-1", 6) -> -10^{6}."""
    power = rf"10^{{{exponent}}}"
    sign, digits = ("-", mantissa[1:]) if mantissa[:1] in "-−" else ("", mantissa)
    return sign + (power if float(digits) == 1 else rf"{digits}\times {power}")


def _latex(text: str) -> str:
    """format_number's text as LaTeX: 1e-05 -> 10^{-5}, −2.5e-06 -> -2.5\\times 10^{-6}, ∞;
    its true minus signs as "-", which KaTeX sets as a minus inside maths."""
    minus = text.replace("−", "-")
    text = _SCIENTIFIC.sub(lambda match: latex_scientific(match[1], int(match[2])), minus)
    return text.replace("∞", r"\infty").replace("NaN", r"\text{NaN}")


def _step_text(value: float) -> str:
    """``format_number``'s text, except for a number of 10⁵ or more that its four significant
    digits would round: as a number below 10⁵ keeps its four decimals, it keeps its digits, so
    a reader who works the steps out meets the values the norm used (300,001 is not 3×10⁵):
    written out below 10⁹ (150,003.25; 111,803.3984), with nine significant digits above
    (3.500015×10¹⁰).  One that four digits hold exactly keeps its power of ten (2.5×10⁶)."""
    text = format_number(value)
    if not math.isfinite(value) or abs(value) < 1e5 or float(text.replace("−", "-")) == value:
        return text
    if abs(value) >= 1e9:
        return format_number(value, 9, fixed_below=1e9)
    return format_number(value, fixed_below=1e9)


def latex_number(value: float) -> str:
    """A number as LaTeX: 1e-05 -> 10^{-5}, 2.5e-06 -> 2.5\\times10^{-6}, inf -> \\infty,
    11180.34 -> 11{,}180.34, 300001 -> 300{,}001."""
    return grouped(_latex(_step_text(value)), "{,}")  # as the sentences group: 1{,}234.5


def latex_power(value: float) -> str:
    """A number as LaTeX ready for an exponent: 3^2, (-3)^2, (10^{6})^2, (2.5\\times 10^{5})^2."""
    text = latex_number(value)
    return f"({text})" if value < 0 or "^" in text else text


def latex_vector(values) -> str:
    """A vector as LaTeX, long ones elided in the middle as format_vector does."""
    text = _latex(format_vector(values, number=_step_text).replace("…", r"\ldots"))
    return text.replace("[", r"\left[").replace("]", r"\right]")


# A column of worked steps is about 460 px wide at 800 px (the Vector Lab's right column), and a
# rendered digit of display maths about 9 px: a line of at most this many digit widths fits
# it with room for its left-hand side ("σ² =", "RMS = √").  Wider lines are broken; what is
# still wider than a column (a phone) scrolls sideways in its own box (ui/styles/base.css).
LINE_WIDTH = 36

_ZERO_WIDTH = re.compile(r"\\(?:left|right|begin\{\w+\}|end\{\w+\})|[{}^_&\s]")
_COMMAND = re.compile(r"\\(?:[a-zA-Z]+|.)")


def latex_width(text: str) -> int:
    """Roughly how wide LaTeX renders, in digits: a character or a command (``\\times``) counts
    one, braces, ``^``, ``_``, ``&`` and spaces nothing, a binary ``+`` or ``-`` two (its
    spacing).  Deliberately generous: exponents count as much as digits."""
    operators = text.count(" + ") + text.count(" - ")
    return len(_COMMAND.sub("x", _ZERO_WIDTH.sub("", text))) + operators


def _fitting_lines(pieces: list[str]) -> list[list[str]]:
    """``pieces`` in as few lines as fit ``LINE_WIDTH``, each line holding about as many."""
    for count in range(1, len(pieces) + 1):
        size = -(-len(pieces) // count)
        lines = [pieces[i : i + size] for i in range(0, len(pieces), size)]
        if all(latex_width(" ".join(line)) <= LINE_WIDTH for line in lines):
            return lines
    return [[piece] for piece in pieces]


def wrapped_sum(pieces: list[str]) -> str:
    """Terms of a sum (``["1", "- 2", "+ 3"]``: each after the first starts with its operator)
    on one line, or, when wider than ``LINE_WIDTH``, on lines of about equal length, each after the
    first starting with its operator (``{}+`` keeps a binary operator's spacing)."""
    lines = _fitting_lines(pieces)
    if len(lines) == 1:
        return " ".join(pieces)
    lines[0][0] = f"{{{lines[0][0]}}}"  # braced: a leading minus after "&" stays a sign
    return (
        r"\begin{aligned}&" + r" \\ &{}".join(" ".join(line) for line in lines) + r"\end{aligned}"
    )


def wrapped_vector(values, after: str = "") -> str:
    """A vector as LaTeX (as ``latex_vector``) followed by ``after`` (",\\quad d = 4"), its
    entries over lines of at most ``LINE_WIDTH`` when one line would be wider, every line starting
    under the first entry and ``after`` ending the last."""
    text = _latex(format_vector(values, number=_step_text).replace("…", r"\ldots"))
    # each entry braced: a line's leading minus after "&" is a sign, not a binary minus
    entries = [f"{{{entry}}}," for entry in text[1:-1].split(", ")]
    entries[-1] = entries[-1][:-1] + r"\big]" + after
    lines = _fitting_lines(entries)
    if len(lines) == 1:
        return latex_vector(values) + after
    rows = r" \\ &".join(" ".join(line) for line in lines)
    return rf"\begin{{aligned}}\big[&{rows}\end{{aligned}}"
