"""Numbers and vectors written as LaTeX, and one written step (a caption and its maths)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ui.formatting import format_number, format_vector


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


def _power_of_ten(match: re.Match) -> str:
    return latex_scientific(match[1], int(match[2]))


def _latex(text: str) -> str:
    """format_number's text as LaTeX: 1e-05 -> 10^{-5}, 2.5e-06 -> 2.5\\times 10^{-6}, ∞."""
    text = _SCIENTIFIC.sub(_power_of_ten, text)
    return text.replace("∞", r"\infty").replace("−", "-").replace("NaN", r"\text{NaN}")


def latex_number(value: float) -> str:
    """A number as LaTeX: 1e-05 -> 10^{-5}, 2.5e-06 -> 2.5\\times10^{-6}, inf -> \\infty."""
    return _latex(format_number(value))


def latex_power(value: float) -> str:
    """A number as LaTeX ready for an exponent: 3^2, (-3)^2, (10^{6})^2, (2.5\\times 10^{5})^2."""
    text = latex_number(value)
    return f"({text})" if value < 0 or "^" in text else text


def latex_vector(values) -> str:
    """A vector as LaTeX, long ones elided in the middle as format_vector does."""
    text = _latex(format_vector(values).replace("…", r"\ldots"))
    return text.replace("[", r"\left[").replace("]", r"\right]")
