"""Numbers and vectors written as LaTeX, and one written step (a caption and its maths)."""

from __future__ import annotations

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


def latex_number(value: float) -> str:
    """A number as LaTeX: 1e-05 -> 10^{-5}, 2.5e-06 -> 2.5\\times10^{-6}, inf -> \\infty."""
    text = format_number(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        power = rf"10^{{{int(exponent)}}}"
        return power if mantissa == "1" else rf"{mantissa}\times {power}"
    return text.replace("∞", r"\infty").replace("−", "-").replace("NaN", r"\text{NaN}")


def latex_vector(values) -> str:
    """A vector as LaTeX, long ones elided in the middle as format_vector does."""
    text = format_vector(values).replace("…", r"\ldots").replace("∞", r"\infty")
    text = text.replace("−", "-").replace("NaN", r"\text{NaN}")
    return text.replace("[", r"\left[").replace("]", r"\right]")
