"""The activation-dump page's words: what was inferred about a file, the growth fit, the
non-finite counts, the LayerNorm − RMSNorm chart's scale, how a table writes its numbers,
download names.

Pure: every function takes the language and returns strings.  Names that come from the
file (entry names, metadata, the file's name) are shown literally (``literal``: a code span,
never a link or markup), whatever they contain.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import PurePath

import numpy as np

from engine.config import CAPTURE_DTYPES
from engine.dumps.capture import CaptureInfo, capture_info
from engine.dumps.diagnostics import GrowthFit
from engine.dumps.names import split_index
from engine.dumps.report import DumpReport, NormComparison
from engine.dumps.token_names import TOKENS_KEY, dump_token_rows
from engine.dumps.weights_origin import WeightsOrigin
from ui.formatting import (
    bytes_text,
    column_format,
    count,
    format_cosine,
    format_number,
    format_power,
    format_reading,
    grouped,
    literal,
    true_minus,
    visible,
)
from ui.i18n import join, sentence_joiner, translate
from ui.labels import label

MAX_NAMED = 6  # names listed inline before "and N more"
MAX_PROMPT_SHOWN = 300  # characters of a capture's prompt shown in the facts table
_CELL_PIPE = "\\|"  # GFM reads an escaped pipe as text inside a table cell, code spans too


def and_more(total: int, shown: int, lang: str) -> str:
    """ " and N more" after the first ``shown`` of ``total`` names ("" when all are shown)."""
    return " " + translate("dumps.and_more", lang, count=total - shown) if total > shown else ""


def names_text(names, lang: str, limit: int = MAX_NAMED) -> str:
    """A few names as code spans, then how many more."""
    names = list(names)
    return join((literal(name) for name in names[:limit]), lang) + and_more(len(names), limit, lang)


def layout_facts(rep: DumpReport, lang: str) -> list[tuple[str, str]]:
    """(what, Markdown value) rows: the file, the stream chosen and why, its axes, shape,
    layer order, norm pairs and skipped entries."""
    lay = rep.layout
    files = names_text([PurePath(f).name for f in rep.files], lang)
    size = bytes_text(rep.nbytes)  # "7,808 B" already is the count; "49.2 kB" adds it
    if not size.endswith("\u00a0B"):
        size = translate("dumps.size_value", lang, size=size, bytes=count(rep.nbytes))
    others = [s for s in lay.streams if s != lay.stream]
    reason = translate(f"dumps.stream_reason.{lay.stream_reason}", lang)
    axes = "[" + ", ".join(lay.axes) + "]"  # "LBTd" as "[L, B, T, d]"
    axes_reason = translate(f"dumps.axes_reason.{lay.axes_reason}", lang)
    values = count(rep.values)
    shape = {"layers": len(rep.labels), "batch": lay.batch, "tokens": lay.tokens, "d": lay.d}
    ends = {"first": literal(rep.labels[0]), "last": literal(rep.labels[-1])}
    # one stacked entry ([L, …]) is ordered by its first axis, whatever its name says
    order = label("layer_order", "stacked" if "L" in lay.axes else lay.layer_order, lang)
    filed = "L" not in lay.axes and lay.layer_order == "file"
    pairs = [p.label for p in lay.norm_pairs]
    rows = [
        _fact("file", f"{files} · {size}", lang),
        _fact("stream", f"{_stream_text(lay.stream, ends, lang)} — {reason}", lang),
        _fact(
            "candidates",
            names_text(others, lang) if others else translate("dumps.none", lang),
            lang,
        ),
        _fact("axes", f"{axes} — {axes_reason}", lang),
        _fact(
            "shape",
            translate(
                "dumps.shape_value_one" if shape["layers"] == 1 else "dumps.shape_value",
                lang,
                dtype=lay.dtype,
                values=values,
                **shape,
            ),  # fmt: skip
            lang,
        ),
        _fact("order", _order_text(order, ends, rep.labels, lang, filed), lang),
        _fact(
            "pairs",
            names_text(pairs, lang, 3) if pairs else translate("dumps.no_pairs_short", lang),
            lang,
        ),
    ]
    if lay.skipped:
        rows.append(
            _fact("skipped", translate("dumps.skipped_value", lang, count=len(lay.skipped)), lang)
        )
    info = capture_info(rep.metadata)
    if info is not None:
        rows += capture_facts(info, lang)
    elif rep.metadata:
        written = [f"{literal(k)} = {literal(v, limit=80)}" for k, v in rep.metadata[:8]]
        rows.append(_fact("metadata", "; ".join(written), lang))
    return rows


def _stream_text(stream: str, ends: dict, lang: str) -> str:
    """The stream's name template; a file of bare tensors (a saved tuple, keys 0, 1, …)
    has the template ``{i}`` alone, which is said in words, not shown as a placeholder."""
    if stream == "{i}":
        return translate("dumps.stream_by_position", lang, **ends)
    return literal(stream)


def _order_text(order: str, ends: dict, labels, lang: str, filed: bool = False) -> str:
    """The order, its ends, and, ``filed`` in the file's order, the first layer whose number
    on the page is not the one in its name (its layer 3 may be ``model.layers.11.input``)."""
    if len(labels) == 1:  # no order to speak of, and "x first, x last" of the one name
        return translate("dumps.order_value_one", lang, first=ends["first"])
    text = translate("dumps.order_value", lang, order=order, **ends)
    numbered = ((i, split_index(name)[1]) for i, name in enumerate(labels) if filed)
    differs = next((i for i, number in numbered if number not in (None, i)), None)
    if differs is None:
        return text
    shown = translate("dumps.order_numbers", lang, layer=differs, name=literal(labels[differs]))
    return text + ("；" if lang == "zh" else "; ") + shown


def _fact(what: str, value: str, lang: str) -> tuple[str, str]:
    """A row of the facts table: ``dumps.fact_<what>`` and its Markdown value."""
    return translate(f"dumps.fact_{what}", lang), value


def capture_facts(info: CaptureInfo, lang: str) -> list[tuple[str, str]]:
    """(what, Markdown value) rows of a dump made by ``python -m engine.dumps capture``; its
    prompts are listed under the table (``prompt_list``)."""
    compute, storage = (dtype_text(dtype) for dtype in (info.compute_dtype, info.storage_dtype))
    precision = translate("dumps.precision_value", lang, compute=compute, storage=storage)
    model, arch = literal(info.model), literal(info.architecture)
    return [
        _fact("model", translate("dumps.model_value", lang, model=model, arch=arch), lang),
        _fact("weights", weights_text(info.weights, lang), lang),
        _fact("precision", precision, lang),
    ]


def prompt_list(rep: DumpReport, lang: str) -> str | None:
    """A capture's prompts as a titled, numbered Markdown list, one prompt a line (each
    literal); None for a dump that names none.  In one table cell, joined by " · ", four
    prompts ran together."""
    info = capture_info(rep.metadata)
    if info is None or not info.prompts:
        return None
    lines = [f"**{translate('dumps.fact_prompts', lang, count=len(info.prompts))}**", ""]
    shown = info.prompts[:MAX_NAMED]
    lines += [f"{i}. {literal(p, limit=MAX_PROMPT_SHOWN)}" for i, p in enumerate(shown, 1)]
    more = and_more(len(info.prompts), MAX_NAMED, lang).strip()
    return "\n".join(lines + (["", more] if more else []))


def dtype_text(dtype: str) -> str:
    """A dtype the metadata names: as a word when it is one a capture writes, else literally."""
    return dtype if dtype in CAPTURE_DTYPES else literal(dtype)


def weights_text(origin: WeightsOrigin, lang: str) -> str:
    """Where a capture's weights came from, worded from its fields (known values only:
    ``weights_origin.from_metadata``); text a dump wrote itself is shown literally, marked
    as the file's own words."""
    if origin.kind == "text":
        return translate("dumps.weights_text", lang, text=literal(origin.text))
    names = {"file": literal(origin.file), "dtype": origin.dtype, "converter": origin.converter}
    return translate(f"dumps.weights_{origin.kind}", lang, **names)


def facts_table(rows: list[tuple[str, str]], header: tuple[str, str]) -> str:
    """Rows as a two-column Markdown table (cells already escaped or literal)."""
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| {what} | {value.replace('|', _CELL_PIPE)} |" for what, value in rows]
    return "\n".join(lines)


def one_layer_note(rep: DumpReport, lang: str) -> str | None:
    """Where the stream read is one point (L = 1): how its shape was read (a 2-axis array is
    tokens × channels) and how to give several layers; None for several."""
    lay = rep.layout
    if len(rep.labels) != 1:
        return None
    per_layer = "B" if "B" in lay.axes else "T"  # [T, d] or [B, T, d] per point
    shape = translate(
        f"dumps.one_layer_shape_{per_layer}",
        lang,
        batch=count(lay.batch),
        tokens=count(lay.tokens),
        d=count(lay.d),
    )
    axes = "[" + ", ".join(lay.axes) + "]"
    return translate("dumps.one_layer", lang, entry=literal(rep.labels[0]), axes=axes, shape=shape)


def hidden_states_note(median_rms, lang: str) -> str:
    """What output_hidden_states' first and last entries are; "that is why the last point
    drops" only where the median token's RMS does drop there (``median_rms``: [points])."""
    note = translate("dumps.hidden_states_note", lang)
    if len(median_rms) >= 2 and median_rms[-1] < median_rms[-2]:
        note += sentence_joiner(lang) + translate("dumps.hidden_states_drop", lang)
    return note


def growth_text(fits: tuple[GrowthFit, ...], lang: str) -> str:
    """The fitted RMS_l ≈ c·g^l: the median token's first (the fit the chart draws), then
    the one over all tokens."""
    parts = []
    for fit in sorted(fits, key=lambda fit: fit.basis != "median_token"):
        if not math.isfinite(fit.rate):
            parts.append(translate(f"dumps.growth_none.{fit.basis}", lang))
            continue
        shrinks = "_shrinks" if fit.basis == "median_token" and fit.rate < 1 else ""
        parts.append(
            translate(
                f"dumps.growth.{fit.basis}{shrinks}",
                lang,
                rate=format_reading(fit.rate, 3),  # 9.66×10²⁹ as the page writes it, never 9.66e+29
                intercept=format_reading(fit.intercept, 3),
                r2=format_number(fit.r2, 2),
            )
        )
    return sentence_joiner(lang).join(parts)


def chosen_token_names(comparison: NormComparison, lang: str) -> list[str]:
    """The tokens the report chose to compare, each named with why it was chosen."""
    return [
        translate(
            "dumps.token_name",
            lang,
            reason=label("chosen_as", reason, lang),
            batch=int(b),
            token=int(token),
        )
        for reason, b, token in zip(comparison.reasons, comparison.batch, comparison.token)
    ]


def difference_scale(comparison: NormComparison, lang: str) -> str | None:
    """The LayerNorm(x) − RMSNorm(x) chart's scale: its largest difference, and that as a
    share of the RMS of RMSNorm(x) at the same layer and token (without weight,
    x / sqrt(mean(x²) + ε), Zhang & Sennrich 2019, has an RMS just under 1); None where no
    difference is finite or its output's RMS is not."""
    difference = np.where(np.isfinite(comparison.difference_rms), comparison.difference_rms, -1)
    if not difference.size:
        return None
    layer, which = np.unravel_index(int(np.argmax(difference)), difference.shape)  # [L, k]
    largest, size = difference[layer, which], float(comparison.output_rms[layer, which])
    if largest < 0 or not (math.isfinite(size) and size > 0):
        return None
    return translate(
        "dumps.difference_scale",
        lang,
        difference=format_reading(float(largest), 4),
        token=chosen_token_names(comparison, lang)[which],
        layer=int(layer),
        percent=format_reading(100 * float(largest) / size, 2),
        size=format_cosine(size),  # 1 − 4.3×10⁻⁹
    )


def _significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, grouped, its power of ten written out:
    1082.81 -> "1,082.81", -1.5e-07 -> "−1.5×10⁻⁷"."""
    text = f"{value:.{digits}g}"
    return format_power(value, digits) if "e" in text else grouped(true_minus(text))


def cell_writer(values: np.ndarray, digits: int, place: bool = False) -> Callable[[float], str]:
    """How a table writes each number of a column, as the sentences around it do: grouped
    thousands (4,911.65), the true minus (−0.31), a power of ten written out (1.2×10⁻⁷),
    "—" where there is none (the final norm's layer).  A place (``place``: a layer, a
    channel) is written as typed (channel 1415), a column of integers as counts, grouped
    (16,384); other columns as ``column_format`` chooses (one count of places for a column
    whose values span at most three decades, else ``digits`` significant digits each)."""
    counts = np.asarray(values).dtype.kind in "iu"
    spec = column_format(np.asarray(values, dtype=float), digits)[1:]  # "%,.2f": ",.2f"

    def write(value: float) -> str:
        value = float(value)
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return format_number(value)
        if place:
            return true_minus(str(int(value)))
        if counts:
            return true_minus(count(int(value)))
        if spec.endswith("f"):
            return true_minus(format(value, spec))
        return _significant(value, digits)

    return write


def nonfinite_summary(nonfinite: np.ndarray, values: int, lang: str) -> tuple[bool, str]:
    """(any found, the sentence): NaN, +inf and −inf counted over the whole stream."""
    nan, pos, neg = (int(n) for n in nonfinite.sum(axis=0))
    if nan + pos + neg == 0:
        return False, translate("dumps.nonfinite_none", lang, values=count(values))
    layers = int((nonfinite.sum(axis=1) > 0).sum())
    one = "_one" if layers == 1 else ""  # "on 1 layer"
    return True, translate(
        f"dumps.nonfinite_found{one}",
        lang,
        nan=count(nan),
        posinf=count(pos),
        neginf=count(neg),
        values=count(values),
        layers=layers,
    )


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def download_name(file_name: str, table: str, suffix: str) -> str:
    """``smollm2_layers.csv`` from the uploaded file's name: only safe characters kept."""
    stem = _UNSAFE.sub("_", PurePath(file_name).stem).strip("._") or "dump"
    return f"{stem[:60]}_{table}.{suffix}"


# U+FFFD: a byte-level token holding part of a multi-byte character (a Chinese character is
# 3 bytes in UTF-8, often split over tokens), which decodes to no character on its own
_SHOWN_WHITESPACE = str.maketrans({" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "⏎", "\ufffd": "⟨byte⟩"})
MAX_TOKEN_CHARS = 16  # a token's text in a label, before it is cut


def token_text(text: str) -> str:
    """A token's text as a label: spaces, line breaks and partial characters made visible,
    zero-width and bidi characters written as escapes (a chart shows no blank label and
    reorders none), long tokens cut.
    Plain text: put it in ``literal`` for Markdown, ``plot_text`` for a chart."""
    pieces = [visible(char.translate(_SHOWN_WHITESPACE)) for char in text]  # "\\u200d", "⟨byte⟩"
    if sum(map(len, pieces)) <= MAX_TOKEN_CHARS:
        return "".join(pieces) or "∅"
    shown = ""
    for piece in pieces:  # cut between characters, never inside one's escape
        if len(shown) + len(piece) > MAX_TOKEN_CHARS - 1:
            break
        shown += piece
    return shown + "…"


def dump_tokens(rep: DumpReport) -> tuple[tuple[str, ...], ...] | None:
    """[B][T] each token's text, where the dump carries it in the stream's shape (a capture's
    metadata, or a file's ``tokens`` entry: ``engine.dumps.token_names``)."""
    found = dump_token_rows(dict(rep.metadata), rep.layout.batch, rep.layout.tokens)
    return None if found is None else found[0]


def tokens_note(rep: DumpReport, lang: str) -> str | None:
    """Where the tokens' texts came from, for a file that is not a capture (None: from a
    capture, or none)."""
    metadata = dict(rep.metadata)
    found = dump_token_rows(metadata, rep.layout.batch, rep.layout.tokens)
    if found is not None:
        return translate("dumps.tokens_from_file", lang) if found[1] == "file" else None
    if TOKENS_KEY in metadata and capture_info(metadata) is None:
        return translate(
            "dumps.tokens_unused", lang, batch=rep.layout.batch, tokens=rep.layout.tokens
        )
    return None


def dump_norm(rep: DumpReport) -> tuple[str, float | None]:
    """(kind, ε) of the dump's norms as its metadata says ("" and None when it does not)."""
    metadata = dict(rep.metadata)
    eps = metadata.get("norm_eps", "")
    try:
        return metadata.get("norm_kind", ""), float(eps) if eps else None
    except ValueError:
        return metadata.get("norm_kind", ""), None


def storage_dtype(rep: DumpReport) -> str:
    """The dtype the dump stores its activations in: the capture's word for it when that is
    a dtype a capture writes, else the stream's own dtype as read."""
    info = capture_info(rep.metadata)
    if info is not None and info.storage_dtype in CAPTURE_DTYPES:
        return info.storage_dtype
    return str(rep.layout.dtype)
