"""The Kernels page's words that depend on what was measured.

Pure: functions take the measured rows and the language and return strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ui.formatting import count
from ui.i18n import join, translate
from ui.labels import label


def busy_places(ratios: Iterable[Mapping], lang: str) -> str:
    """Where the machine was too busy to rank the norms: "d = 256 (every pass), d = 4,096
    (forward)" — a width with its passes where only some were (the table beside the warning
    shows the others' ratios), "every pass" beside such a width where all were, the width
    alone where no width is partly busy.  Empty where none was."""
    passes: dict[int, list[str]] = {}
    busy: dict[int, list[str]] = {}
    for row in ratios:
        width = int(row["width"])
        passes.setdefault(width, []).append(row["pass"])
        if row["verdict"] == "busy":
            busy.setdefault(width, []).append(row["pass"])
    partial = any(len(busy[w]) < len(passes[w]) for w in busy)
    places = []
    for width in sorted(busy):
        if len(busy[width]) < len(passes[width]):
            named = join((label("pass", p, lang) for p in busy[width]), lang)
            places.append(translate("kernels.busy_place", lang, width=count(width), passes=named))
        else:  # beside a width named with its passes, one alone read as that pass's too
            key = "kernels.busy_every_pass" if partial else "kernels.busy_width"
            places.append(translate(key, lang, width=count(width)))
    return join(places, lang)
