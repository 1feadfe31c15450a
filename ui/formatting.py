"""How numbers are written on the pages (short when exact, 4 decimals otherwise), and the rules
for reading them back (what a Chinese keyboard types, numbers float64 reads as 0).

Two kinds of text: what people read (``format_number``, ``format_reading``, ``format_vector``,
``signed``, ``format_cosine``, ``scientific``, ``format_power``) writes a negative number with
the true minus sign "−" (U+2212), through ``true_minus``; what a machine or a person's next input
reads (``number_text``: text boxes and links) keeps the ASCII "-".  Every parser here reads
both (``as_ascii``), and LaTeX (``ui/text/latex.py``) writes its own "-", which KaTeX sets as
a minus."""

from __future__ import annotations

import math
import numbers
import re
import unicodedata

import numpy as np

MINUS = "\u2212"  # the true minus sign: "−0.5", never the hyphen-minus of "-0.5"
_SIGN = re.compile(r"(?<![eE])-")  # a hyphen-minus that is a number's sign, not an exponent's


def true_minus(text: str) -> str:
    """Python's number text as people read it: a negative number's sign as the true minus,
    "-1.5e-07" -> "−1.5e-07".  The exponent keeps e-notation's own "-", as the ε sliders,
    the locale texts ("1e-5") and every program write it.  The one place this is done."""
    return _SIGN.sub(MINUS, text)


def count(value: int) -> str:
    """A whole number with thousands separators: 1,714,176."""
    return f"{int(value):,}"


def runs(numbers) -> list[str]:
    """Whole numbers as runs, for a list in a sentence: (0, 1, 2, 3, 7, 9, 10) ->
    ["0–3", "7", "9–10"]."""
    found: list[list[int]] = []
    for number in sorted(set(numbers)):
        if found and number == found[-1][1] + 1:
            found[-1][1] = number
        else:
            found.append([number, number])
    return [f"{a}" if a == b else f"{a}–{b}" for a, b in found]


def format_number(value: float, decimals: int = 4, fixed_below: float = 1e5) -> str:
    """2.5 -> "2.5", -1.3416407 -> "−1.3416", 4.096e7 -> "4.096e+07", -1e-5 -> "−1e-05",
    inf -> "∞", for people to read (``number_text`` writes what is typed back).  From
    ``fixed_below`` on, ``decimals`` significant digits and a power of ten."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    # with more than two places, a value below 10^(2 - decimals) would keep fewer than three
    # significant digits (3.0238e-4 -> "0.0003"): ``decimals`` significant ones, "0.0003024"
    small = 10 ** (2 - decimals if decimals > 2 else -decimals)
    if value != 0 and (abs(value) >= fixed_below or abs(value) < small):
        return true_minus(f"{value:.{decimals}g}")
    rounded = round(value, decimals)
    if rounded == value and decimals > 0:  # with no point, the zeros are the number's
        text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:.{decimals}f}"
    return "0" if text in ("-0", "") else true_minus(text)


def format_reading(value: float, decimals: int = 4) -> str:
    """``format_number`` for a sentence that also writes a cosine's gap (``format_cosine``):
    a number it would write in e-notation gets its power of ten written out, 7.153e-07 ->
    "7.153×10⁻⁷", so one sentence never mixes "7.153e-07" with "1 − 8.2×10⁻¹⁰"; one of four
    digits or more is grouped, as a count beside it is ("2,048" beside "65,504")."""
    text = format_number(value, decimals)
    if "e" in text:  # at least four digits: 123456.7 to one place is 1.235×10⁵, never 10⁵
        return format_power(value, max(decimals, 4))
    return grouped(text)


def grouped(text: str, comma: str = ",") -> str:
    """A number's text with its whole part of four digits or more grouped, as written (so
    99,999.96 -> "100,000.0"): "2048" -> "2,048", "−11180.34" -> "−11,180.34"; ``comma``:
    what separates the groups ("{,}" in LaTeX, whose comma then takes no space after it).
    Anything else (a power of ten, "∞") is returned as it is."""
    sign, digits = (text[0], text[1:]) if text[:1] in ("−", "-") else ("", text)
    whole, point, fraction = digits.partition(".")
    if not whole.isdigit() or len(whole) < 4 or (fraction and not fraction.isdigit()):
        return text
    return sign + f"{int(whole):,}".replace(",", comma) + point + fraction


def significant(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, as a sentence writes a number
    (``format_reading``): 1842.03 -> "1,842", 22552.3 -> "22,550", 4.006e6 -> "4.006×10⁶",
    0.00097656 -> "0.0009766", 0.012345 -> "0.01235", never "1842" or "2.255×10⁴" beside a
    grouped "22,552"."""
    if not math.isfinite(value) or value == 0:
        return format_reading(value)
    rounded = float(f"{value:.{digits}g}")
    places = digits - 1 - math.floor(math.log10(abs(rounded)))  # 0.01235: five places
    # under 0.01 format_number keeps ``digits`` significant ones itself (7.63×10⁻⁵)
    return format_reading(rounded, max(4, places) if abs(rounded) >= 0.01 else 4)


def upper_bound(value: float, digits: int = 4) -> str:
    """``value`` rounded up to ``digits`` significant digits (``significant``): a bound that
    "stays below" never understates, 1.46603×10⁻⁵ -> "1.467×10⁻⁵" (not "1.466×10⁻⁵")."""
    if not math.isfinite(value) or value <= 0:
        return format_reading(value)
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return significant(math.ceil(value / step) * step, digits)


def times(value: float) -> str:
    """A factor: "×3.21" below ten, whole from ten ("×12", "×123,456", never "×1e+05"), its
    power of ten from 10⁵ (×1.235×10³⁰, not thirty digits of rounding)."""
    if not math.isfinite(value) or round(value, 3) < 10:
        return "×" + format_reading(value, 3)
    return "×" + (count(round(value)) if value < 1e5 else format_reading(value))


def signed(value: float, decimals: int = 2) -> str:
    """A slope with its sign and the true minus: 0.012 -> "+0.01", -0.47 -> "−0.47"; one that
    rounds to zero has no sign (it would claim a direction): -0.001 -> "0.00"."""
    if not math.isfinite(value):
        return format_number(value)
    text = f"{value:+.{decimals}f}"
    return text[1:] if float(text) == 0 else true_minus(text)


def format_cosine(value: float, gap: float | None = None) -> str:
    """A cosine to 4 decimals, except one that rounds to ±1 without being it: 0.99999994 is
    written "1 − 6×10⁻⁸", never "1.0000" (which, after "≥", would claim more than 1), and
    one a rounding above 1 is written "1 + 2.2×10⁻¹⁶", never "1 − -2.2e-16".  The gap's
    power of ten is written out: a table cell holds no ASCII "-", and a sentence never
    breaks inside it.  ``gap``: 1 − the cosine, where it is known to more digits than the
    cosine holds near 1 (``engine.geometry.measures.cosine_gap``): written in its place."""
    near_one = math.isfinite(value) and value > 0 and round(value, 4) == 1
    if gap is not None and near_one and math.isfinite(gap):
        return "1" if gap <= 0 else f"1 − {format_power(gap, 2)}"
    if math.isfinite(value) and abs(value) != 1 and round(abs(value), 4) == 1:
        sign = "−" if abs(value) < 1 else "+"
        gap = f"1 {sign} {format_power(abs(1 - abs(value)), 2)}"
        return gap if value > 0 else f"−({gap})"
    return format_reading(value)  # 5.243×10⁻⁶, never "5.243e-06" beside "1 − 8.2×10⁻¹⁰"


def format_vector(values, head: int = 6, tail: int = 2, number=None) -> str:
    """[1, 2, 3, 4] as "[1, 2, 3, 4]"; long vectors elided in the middle.  Each entry as
    ``number`` writes it: ``format_reading`` unless given (LaTeX passes ``format_number``,
    whose e-notation it sets as a power of ten itself)."""
    items = [(number or format_reading)(v) for v in values]
    if len(items) > head + tail + 1:
        items = items[:head] + ["…"] + items[-tail:]
    return "[" + ", ".join(items) + "]"


def number_text(value: float | None) -> str:
    """A number as a person types it into a box or a link, read back as the same number:
    1000.0 -> "1000", 1e-05 -> "1e-5", 1e+39 -> "1e39", 0.1 -> "0.1", -2.5 -> "-2.5" (ASCII:
    what float() and every other program read), 2**60 -> "1152921504606846976", None -> ""."""
    if value is None:
        return ""
    if isinstance(value, numbers.Integral):
        return str(int(value))
    text = repr(float(value))  # the shortest text float() reads back exactly
    text = text.removesuffix(".0")
    return text.replace("e-0", "e-").replace("e+", "e")


def lost_to_zero(text: str, value: float) -> bool:
    """Whether ``text`` names a nonzero number that ``float(text)`` (``value``) read as 0: closer
    to 0 than float64's smallest positive number (``math.ulp(0.0)``, about 4.9e-324), as
    ``1e-400``.  The mirror of ``1e400``, which reads as infinity."""
    if value != 0:
        return False
    significand = text.strip().lower().partition("e")[0]  # float() read it: digits and "."
    return any(char.isdecimal() and int(char) != 0 for char in significand)


FLOAT64_TINY = f"{math.ulp(0.0):.2g}"  # "4.9e-324", for the messages that refuse such text

# NFKC maps full-width forms to ASCII; these it leaves alone (NFKC makes the non-breaking
# hyphen of a page's "1e\u20115", ui/i18n.py, the hyphen U+2010).
# Full-width forms (U+FF01-FF5E: "１", "．", "－") by their ASCII twins, not NFKC: NFKC also
# reads "①②" as 12 and "10²" as 102, numbers nobody typed
_TO_ASCII = str.maketrans(
    {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
    | {MINUS: "-", "\u2010": "-", "\u2011": "-", "\u3001": ","}
    | dict.fromkeys(("\u3000", "\u00a0", "\u202f"), " ")  # wide and no-break spaces
)


# The ideographic full stop is what a Chinese keyboard types for "." ("4。5"); between two
# digits it can only be a decimal point (a list's separator is a comma, a semicolon or a
# space), elsewhere ("4。", a sentence's end) it is left for the parser to refuse.
_DECIMAL_STOP = re.compile(r"(?<=[0-9])\u3002(?=[0-9])")


def as_ascii(text: str) -> str:
    """Full-width digits and punctuation, the ideographic comma, U+2212 and the non-breaking
    hyphen as ASCII: a number typed on a Chinese or Japanese keyboard (``－１．５``, ``−1``,
    ``4。5``: an ideographic full stop between digits) reads as ``-1.5``, ``-1``, ``4.5``, and
    one copied from a page (``1e\u20115``) as ``1e-5``."""
    return _DECIMAL_STOP.sub(".", text.translate(_TO_ASCII))


def read_float(text: str) -> float:
    """``float(text)`` without Python's digit separators: ``float("1_0")`` is 10, but nobody
    who typed or linked "1_0" meant ten, so it is refused (ValueError) as other text that is
    no number is."""
    if "_" in text:
        raise ValueError(text)
    return float(text)


_SUPERSCRIPTS = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")


def superscript(value: int | str) -> str:
    """An exponent as superscript digits: -6 -> "⁻⁶" (for "10⁻⁶" or "2⁻²⁴")."""
    return str(value).translate(_SUPERSCRIPTS)


def scientific(mantissa: str, exponent: int) -> str:
    """A mantissa times a power of ten as text: ("2.5", 6) -> "2.5×10⁶"; a mantissa of
    exactly ±1 is not written: ("1", 6) -> "10⁶", ("-1", 6) -> "−10⁶" (never "1×10⁶")."""
    power = "10" + superscript(exponent)
    sign, digits = (MINUS, mantissa[1:]) if mantissa[:1] in "-−" else ("", mantissa)
    return sign + (power if float(digits) == 1 else f"{digits}×{power}")


def format_power(value: float, digits: int = 2) -> str:
    """A number to ``digits`` significant digits, its power of ten written out when it has
    one: 3.4028e38 -> "3.4×10³⁸", 1e6 -> "10⁶", -25 -> "−25", inf -> "∞"."""
    if not math.isfinite(value):
        return format_number(value)
    mantissa, _, exponent = f"{value:.{digits}g}".partition("e")
    return scientific(mantissa, int(exponent)) if exponent else true_minus(mantissa)


def finite_or_none(values) -> list:
    """Numbers for a chart, NaN and ±inf as None (plotly leaves a gap, never a point at 0);
    nested rows (a heatmap's z) stay nested."""
    array = np.asarray(values, dtype=float)
    if array.ndim > 1:
        return [finite_or_none(row) for row in array]
    return [float(v) if math.isfinite(v) else None for v in array.reshape(-1)]


def positive_or_none(values) -> list[float | None]:
    """For log axes: non-positive and non-finite values are gaps, never drawn as 0 (nor,
    as a 0 was, plunging off the axis's bottom)."""
    return [v if v is not None and v > 0 else None for v in finite_or_none(values)]


SHOWN_CHARS = 400  # the most characters of one outside text a page repeats


def _visible(char: str) -> str:
    """A control, format (zero-width, bidi) or line-separator character as its escape."""
    if char == " " or unicodedata.category(char) not in {"Cc", "Cf", "Zl", "Zp", "Zs", "Cs"}:
        return char
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


def visible(text: str) -> str:
    """Text with its invisible and line-reordering characters written as escapes (as
    ``literal`` writes them), for places that are not Markdown: a chart's labels."""
    return "".join(_visible(char) for char in str(text))


MATERIAL_KEPT = ":\u2060material/"


_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~&=^])")
_JOINER = "\u2060"  # a word joiner: invisible, and no link, icon or arrow reads across it
# Read by Streamlit after escapes are undone: bare URLs ("www."; "://" has a ':') and e-mails
# ("@"), and "->", "--", ">=", "~=" ... made arrows and dashes ("-" "<" ">" "~" "=" paired)
_AFTER_ESCAPES = re.compile(r"(?i)(www(?=\.)|@|[-<>~=](?=[-<>~=]))")


def markdown_escaped(text) -> str:
    """Text shown as it is where Streamlit reads Markdown (``st.table``'s cells, headers and
    index): every ASCII character Markdown, its math or its links act on backslash-escaped;
    what Streamlit reads after escapes are undone (icons and emoji ``:name:``, bare URLs,
    e-mails, "->" and "--") split by an invisible word joiner; leading spaces kept as
    no-break spaces (four made a code block); invisible or reordering characters written as
    escapes (``visible``); a missing value empty, as the data grid draws it.  Unlike
    ``literal`` no code span: the text keeps the page's font (a name copied from it carries
    the invisible joiners along)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    text = visible(str(text)).replace(":", ":" + _JOINER)
    text = _AFTER_ESCAPES.sub(lambda m: m[0] + _JOINER, text)
    spaces = len(text) - len(text.lstrip(" "))
    return "\u00a0" * spaces + _MARKUP.sub(r"\\\1", text[spaces:])


def literal(text: str, limit: int = SHOWN_CHARS) -> str:
    """User text as a Markdown code span: shown exactly as typed, never as a link or markup.

    Whatever a person typed or a URL carried reaches pages inside messages rendered as
    Markdown; a code span turns off every inline construct (links, emphasis, HTML), and a
    fence longer than any run of backticks in the text keeps it closed.  Characters that
    cannot be seen or that reorder a line (zero-width spaces, bidi overrides, tabs, line
    breaks) are written as escapes such as ``\\u200b``, so the culprit in "`1\\u200b` is
    not a number" is visible; an empty text, or one with spaces at an end, is written in
    quotes (``""``, ``"nopage "``); past ``limit`` characters the text is cut and "…" says
    so (a cut that ends in a space is no end of the text: not quoted for it).
    """
    text = str(text)
    cut = len(text) > limit
    # empty, or spaces at an end of the text (not of the part shown): quoted, to be seen
    quoted = not text or visible(text[:1]).isspace() or (not cut and visible(text[-1:]).isspace())
    text = visible(text[:limit])
    if quoted:
        text = f'"{text}"'
    if cut:
        text += "…"
    # Streamlit's Markdown turns ":material/" into ":material_" everywhere, code spans too (to
    # draw its icons): an invisible word joiner after the colon keeps what was typed on screen
    text = text.replace(":material/", MATERIAL_KEPT)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plot_text(text: str) -> str:
    """Outside text (an entry's name, a token) for a plotly title, label or hover text:
    plotly reads a few HTML tags there (``<b>``, ``<a href>`` makes a link), so ``&``, ``<``
    and ``>`` are written as entities and show as typed."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))  # powers of 1000


def bytes_text(n: int) -> str:
    """Bytes as people read them: 3,072 B, 49.2 kB, 9.49 MB, 17.6 TB, 1,200 TB (past a
    thousand terabytes the count grows, never "1.2e+03 TB")."""
    if n < 10_000:
        return f"{n:,}\u00a0B"
    for unit, size in _BYTE_UNITS:  # the number and its unit on one line: a no-break space
        if n >= 0.9995 * size:  # the unit of the rounded value: 999,999 B is "1 MB"
            value = n / size
            return f"{value:,.0f}\u00a0{unit}" if value >= 999.5 else f"{value:.3g}\u00a0{unit}"
    raise AssertionError("unreachable: n >= 10,000")


def bytes_texts(values: list[int]) -> list[str]:
    """Byte counts that one sentence adds or subtracts, in the unit ``bytes_text`` gives the
    largest and to one decimal each: 167.8 MB, 134.2 MB and 33.6 MB, whose difference reads
    right (168 MB, 134 MB and 33.6 MB did not)."""
    unit = bytes_text(max(values)).rpartition("\u00a0")[2]
    if unit == "B":
        return [f"{n:,}\u00a0B" for n in values]
    size = dict(_BYTE_UNITS)[unit]
    return [f"{n / size:,.1f}\u00a0{unit}" for n in values]


def format_eps(value: float) -> str:
    """An epsilon as people write it: 1e-05 -> "1e-5", 1.1920929e-07 -> "1.19e-7"."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.3g}").replace("e+", "e")


def column_format(values: np.ndarray, digits: int) -> str:
    """A column's printf format (Streamlit's sprintf, where "," groups thousands): one number
    of decimals for the whole column, giving its largest value ``digits`` significant digits
    (179.182 over 6.918, not 6.9183 and 6.67252), grouped as every count on the pages is
    (12,545.9), where its values span at most three decades, none where all are whole; else
    ``digits`` significant digits each, in e-notation where they need it."""
    magnitudes = np.abs(values[np.isfinite(values) & (values != 0)])
    if magnitudes.size == 0:
        return f"%.{digits}g"
    top, bottom = np.floor(np.log10([magnitudes.max(), magnitudes.min()]))
    if top - bottom > 3 or not -3 <= top < digits:
        return f"%.{digits}g"
    if (magnitudes % 1 == 0).all():  # whole numbers stored as floats: 26,464, not 26464.0
        return "%,.0f"
    return f"%,.{int(min(max(digits - 1 - top, 0), digits))}f"  # "," groups: 12,545.9
