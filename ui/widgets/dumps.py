"""Activation-dump inputs: where the dump comes from, how it is read, what is looked at.

Four sources (``ChosenDump``): the shipped SmolLM2 example (the default: real activations
with no upload), an uploaded file, the live model (a prompt typed or picked), and a file of
any size in the folders the server's operator named (``NORMSCOPE_DUMP_DIRS``, offered only
where it lists a file; ``engine.dumps.local_files``).  The example's results are shared by
every session; so are a given prompt's and a folder file's (the server's data, named in the
link by its listing id).  A typed prompt is the user's text: it is kept in the link
(``du_prompt``, so a link reopens it), but its results stay in their session.

An uploaded file is user data.  Its bytes enter the page through ``uploaded_dump`` alone
(tests feed that function; AppTest cannot drive a file uploader), and its results are keyed
by this browser session (``ui.compute``'s ``private=True``): never in the URL, never in a
cache another session reads.  The settings of how it is read and shown are share-link
parameters (``ui/url/`` ``DUMPS``), except the stream override, which names an entry
of the file.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, replace

import streamlit as st

from engine.config import LIVE_PROMPTS, DumpSpec, LiveSpec
from engine.dumps.example import EXAMPLE_DUMP
from engine.dumps.layout import Layout
from engine.dumps.limits import ACCEPTED_SUFFIXES, UPLOAD_LIMIT_MB
from engine.dumps.live import LIVE_MAX_TOKENS
from engine.dumps.local_files import MAX_LISTED, LocalDump
from engine.dumps.report import DumpReport
from engine.dumps.sources import Upload
from engine.errors import EngineError
from ui.echoes import echoed
from ui.errors import error_text
from ui.formatting import bytes_text, format_reading
from ui.i18n import current_language, join, t
from ui.url.codec import Param
from ui.url.pages import DUMPS as P
from ui.widgets import bound


@dataclass(frozen=True)
class ChosenDump:
    """The dump the page reads, and how its results are kept (``ui/requests/dumps.py``)."""

    kind: str  # "upload" | "example" | "live" | "folder" (ui/url/ DUMP_SOURCES)
    id: str  # names its widgets' state: an upload's id, "example", "live", a folder file's id
    key: Hashable  # what its results are keyed by, with the settings (never the bytes)
    name: str  # the file's name: shown, and the stem of the downloads
    opened: object  # what ``engine.dumps.dump.open_dump`` reads: an Upload, a path, a DumpFile
    share: bool  # results shared between sessions: never an upload's or a typed prompt's
    fit_norms: bool = True  # DyT fits in the report (the live model's 61 norms: on request)


def upload_source(file_id: str, upload: Upload) -> ChosenDump:
    """An uploaded file as the dump the page reads: its results keyed by the upload's id (new
    for every upload, even of the same file), its name and size, never its bytes."""
    key = (file_id, upload.name, len(upload.data))
    return ChosenDump("upload", file_id, key, upload.name, upload, share=False)


def uploaded_dump() -> ChosenDump | None:
    """The file in the uploader, or None: the one place uploaded bytes enter the page."""
    suffixes = join(ACCEPTED_SUFFIXES, current_language())  # 、 between them in Chinese
    file = st.file_uploader(
        t("dumps.upload", suffixes=suffixes, limit=UPLOAD_LIMIT_MB),
        key="dumps_upload",
        max_upload_size=UPLOAD_LIMIT_MB,
        help=t("dumps.upload_help"),
    )
    if file is None:
        return None
    return upload_source(file.file_id, Upload(file.name, file.getvalue()))


def example_dump() -> ChosenDump:
    """The shipped SmolLM2 dump: no user data, so its results are shared by every session."""
    name = EXAMPLE_DUMP.name
    return ChosenDump("example", "example", ("example", name), name, str(EXAMPLE_DUMP), True)


def source_choice(folder: bool) -> str:
    """Where the activations come from: "example" (the default), "upload", "live", or, where
    the server lists dump files (``folder``), "folder"; a link's "folder" on a server that
    lists none opens the example, saying why."""
    param = P["du_source"]
    choices = tuple(c for c in param.choices if folder or c != "folder")
    if st.session_state.get(param.key) not in (*choices, None):
        st.warning(t("dumps.no_folder"), icon=":material/link_off:")
        st.session_state[param.key] = param.default
    if not folder:  # a linked file means nothing here: it leaves the address with its source
        st.session_state[P["du_file"].key] = P["du_file"].default
    return bound.segmented(param, t("dumps.source"), options=choices)


def linked_file() -> str:
    """The folder file the link names by its listing id ("": none)."""
    return st.session_state.get(P["du_file"].key, "")


def folder_source(dumps: tuple[LocalDump, ...], refused: EngineError | None) -> ChosenDump:
    """A file of the operator's folders (``du_file``: its listing id; "" or a stale link's
    id: the first one, and a stale id says so: ``refused``, the engine's refusal of
    ``linked_file()``, ``ui/requests/dumps.py``)."""
    key = P["du_file"].key
    ids = [dump.id for dump in dumps]
    if refused is not None:
        message = t("dumps.file_refused", param="`du_file`", why=error_text(refused))
        st.warning(message, icon=":material/link_off:")
    if linked_file() not in ids:
        st.session_state[key] = ids[0]
    sizes = {dump.id: bytes_text(dump.size) for dump in dumps}
    one_folder = all(i.startswith("0/") for i in ids)  # its number says nothing: not shown
    chosen = st.selectbox(
        # a listing cut at its cap says so: the folders may hold more
        t(
            "dumps.folder_file_first" if len(dumps) >= MAX_LISTED else "dumps.folder_file",
            count=len(dumps),
        ),
        ids,
        key=key,
        format_func=lambda i: f"{i[2:] if one_folder else i} · {sizes[i]}",
        help=t("dumps.folder_help"),
        persist_state=bound.KEEP,
        placeholder=t("app.choose_one"),
    )
    dump = dumps[ids.index(chosen)]
    st.caption(t("dumps.folder_note"))
    key = ("folder", dump.id, dump.size, dump.modified_ns)  # a rewritten file is read again
    name = os.path.basename(dump.path)
    return ChosenDump("folder", dump.id, key, name, dump, share=True)  # checked as opened


def uploaded_source() -> ChosenDump | None:
    uploaded = uploaded_dump()
    st.caption(t("dumps.privacy", limit=UPLOAD_LIMIT_MB))
    return uploaded


def _given_prompt() -> int | None:
    """The index of the prompt being asked among the given ones (None: a typed one)."""
    current = st.session_state.get(P["du_prompt"].key, P["du_prompt"].default)
    return LIVE_PROMPTS.index(current) if current in LIVE_PROMPTS else None


REPLACED = "_dumps_replaced_prompt"  # the text the last given prompt clicked took the place of


def _take_given_prompt() -> None:
    chosen = st.session_state.get("dumps_given_prompt")
    if echoed():  # a section's rerun or the loading bar's, with the pill of before: shown again
        st.session_state["dumps_given_prompt"] = _given_prompt()
    elif chosen is not None:
        st.session_state[REPLACED] = st.session_state.get(P["du_prompt"].key)
        st.session_state[P["du_prompt"].key] = LIVE_PROMPTS[chosen]


def _prompt_typed() -> None:
    """The text box's echo of the text a given prompt replaced is shown as that prompt again.
    Only that text: a typed one can come with a section's rerun too (the browser sends the
    text box's change with a click in a section when both fall in one task, as on a phone)."""
    given = st.session_state.get("dumps_given_prompt")
    typed = st.session_state.get(P["du_prompt"].key)
    if echoed() and given is not None and typed == st.session_state.get(REPLACED):
        st.session_state[P["du_prompt"].key] = LIVE_PROMPTS[given]


def live_prompt() -> tuple[LiveSpec | None, tuple[str, ...]]:
    """The prompt typed (kept in the link as ``du_prompt``), or one of the given ones: its
    spec, or None and why it is refused."""
    st.session_state["dumps_given_prompt"] = _given_prompt()  # lit for a given prompt only
    st.pills(
        t("dumps.given_prompts"),
        list(range(len(LIVE_PROMPTS))),
        selection_mode="single",
        key="dumps_given_prompt",
        format_func=lambda index: LIVE_PROMPTS[index],
        on_change=_take_given_prompt,
    )
    limit = P["du_prompt"].max_chars  # LiveSpec's: the most a link carries
    text = bound.text_area(
        P["du_prompt"],
        t("dumps.prompt"),
        height=80,
        help=t("dumps.prompt_help", limit=LIVE_MAX_TOKENS),
        on_change=_prompt_typed,
    )
    if len(text) > limit:
        message = t("dumps.prompt_too_long", chars=f"{len(text):,}", limit=f"{limit:,}")
        return None, (message,)
    return bound.spec_from(LiveSpec, worded={"config.empty": "dumps.prompt_empty"}, prompt=text)


def live_source(capture) -> ChosenDump:
    """A live capture (``engine.dumps.live.LiveCapture``) as the dump the page reads."""
    shared = capture.spec.prompt in LIVE_PROMPTS
    key = ("live", capture.info.model, capture.spec)
    return ChosenDump("live", "live", key, capture.file.name, capture.file, shared, False)


def _axes_name(axes: str) -> str:
    return t("dumps.axes_auto") if axes == "auto" else "[" + ", ".join(axes) + "]"


def _threshold(param: Param, text: str, column, step: float) -> float:
    return bound.number(param, text, column, step=step, help=t(f"dumps.{param.key}_help"))


def dump_settings() -> tuple[DumpSpec | None, tuple[str, ...], object]:
    """How the dump is read and judged (inferred unless overridden): one DumpSpec (None when
    a value is refused), the refusals, and where ``stream_override`` draws its choice once
    the streams are known."""
    # a box of its own while presenting; hidden with the other inputs (present=results)
    with (
        st.container(key="controls_du_settings"),
        st.expander(t("dumps.overrides"), icon=":material/tune:"),
    ):
        st.caption(t("dumps.overrides_help"))
        stream_column = st.container()  # its options are entry names: the full width
        axes_column, order_column = st.columns(2)
        axes = bound.selectbox(P["du_axes"], t("dumps.axes"), axes_column, format_func=_axes_name)
        order = bound.selectbox(P["du_order"], t("dumps.layer_order"), order_column)
        c1, c2, c3, c4 = st.columns(4)
        massive_abs = _threshold(P["du_massive_abs"], t("dumps.massive_abs"), c1, 10.0)
        massive_ratio = _threshold(P["du_massive_ratio"], t("dumps.massive_ratio"), c2, 100.0)
        outlier = _threshold(P["du_outlier"], t("dumps.outlier_ratio"), c3, 0.5)
        eps = bound.selectbox(
            P["du_eps"],
            t("dumps.eps"),
            c4,
            format_func=format_reading,
            help=t("dumps.eps_help"),
        )
    spec, errors = bound.spec_from(
        DumpSpec,
        axes=axes,
        layer_order=order,
        massive_abs=massive_abs,
        massive_ratio=massive_ratio,
        outlier_ratio=outlier,
        norm_eps=eps,
    )
    return spec, errors, stream_column


def stream_override(source: ChosenDump, layout: Layout, spec: DumpSpec, slot) -> DumpSpec:
    """The spec with the stream chosen among the entries this file holds ("auto": inferred).

    Kept per file (the widget's key holds the upload's id): a new file starts inferred.
    """
    choices = ("auto", *layout.streams)
    with slot:
        bound.named_in_page_language(f"dumps_stream_{source.id}")
        stream = st.selectbox(
            t("dumps.stream"),
            choices,
            key=f"dumps_stream_{source.id}",
            format_func=lambda s: (
                t("dumps.stream_auto", stream=layout.streams[0]) if s == "auto" else s
            ),
            help=t("dumps.stream_help"),
            placeholder=t("app.choose_one"),
        )
    return replace(spec, stream=stream)


def batch_choice(rep: DumpReport, target=st) -> int:
    """Which sequence of the batch the token views show (no widget when B = 1)."""
    batch = rep.layout.batch
    if batch == 1:
        return 0
    said = {"name": t("dumps.batch"), "what": t("dumps.what_batch")}  # a link's, or typed
    bound.clamp(P["du_batch"], batch - 1, "dumps.clamped", **said)
    return int(bound.number(P["du_batch"], t("dumps.batch"), target, high=batch - 1))


def one_token_row(rep: DumpReport):
    """A row for picking one token: (its first column, half the row: a layer's or a norm's
    name, the sequence chosen in the middle one when the batch has more than one, its last
    column)."""
    columns = st.columns([2, 1, 1] if rep.layout.batch > 1 else [1, 1])
    return columns[0], batch_choice(rep, columns[1]), columns[-1]


def log_colors(target=st) -> bool:
    return bool(bound.toggle(P["du_log"], t("dumps.log_colors"), target))


def layer_choice(param: Param, rep: DumpReport, target=st) -> int:
    """A layer to look at in detail; the parameter's -1 means the middle one."""
    layers = len(rep.labels)
    said = {"name": t("dumps.layer"), "what": t("dumps.what_layer")}
    bound.clamp(param, layers - 1, "dumps.clamped", **said)
    middle = layers // 2
    auto = t("dumps.middle_layer", layer=middle)

    def name(layer: int) -> str:
        return auto if layer == -1 else f"{layer} · {rep.labels[layer]}"

    chosen = bound.selectbox(
        param, t("dumps.layer"), target, options=list(range(-1, layers)), format_func=name
    )
    return middle if chosen == -1 else int(chosen)


def token_choice(rep: DumpReport, target=st) -> int:
    tokens = rep.layout.tokens
    said = {"name": t("dumps.token"), "what": t("dumps.what_token")}
    bound.clamp(P["du_token"], tokens - 1, "dumps.clamped", **said)
    return int(bound.number(P["du_token"], t("dumps.token"), target, high=tokens - 1))


def pair_choice(rep: DumpReport, auto: int, target=st) -> int:
    """The norm pair looked at (index into ``rep.layout.norm_pairs``); the parameter's -1
    means ``auto``, the norm that reads the dump's largest entry."""
    pairs = rep.layout.norm_pairs
    said = {"name": t("dumps.pair"), "what": t("dumps.what_pair")}
    auto_name = t("dumps.auto_pair", norm=pairs[auto].label)

    def name(index: int) -> str:
        return auto_name if index == -1 else pairs[index].label

    bound.clamp(P["du_pair"], len(pairs) - 1, "dumps.clamped", option=name, **said)

    chosen = bound.selectbox(
        P["du_pair"],
        t("dumps.pair"),
        target,
        options=list(range(-1, len(pairs))),
        format_func=name,
        help=t("dumps.pair_help"),
    )
    return auto if chosen == -1 else int(chosen)


def io_token_choice(rep: DumpReport, target=st) -> int:
    """The token whose input and output are shown (its text is in the sentence below).

    A number, not a list of the tokens' texts: a select box keeps the text of the option
    chosen, which no longer names an option once a new prompt brings new tokens."""
    last = rep.layout.tokens - 1
    said = {"name": t("dumps.io_token"), "what": t("dumps.what_token")}
    bound.clamp(P["du_io_token"], last, "dumps.clamped", **said)
    return int(bound.number(P["du_io_token"], t("dumps.io_token"), target, high=last))


# A link written before the report had sections names none: it opens the first section whose
# own settings it carries (a token, a channel's layer, a norm), as it showed them then.
_SECTION_OF_SETTING = {
    "du_token_layer": "centering",
    "du_token": "centering",
    "du_channel_layer": "channels",
    "du_pair": "norms",
    "du_io_token": "norms",
}


def section() -> str:
    """The report's section (``ui/url/`` DUMP_SECTIONS); navigation, kept while presenting."""
    param = P["du_section"]
    # the link named none (ui.url.address_bar.seed): an older link's accepted settings choose
    # it; a refused section is said to show the default, and a refused setting chooses nothing
    if param.key not in st.session_state and param.key not in st.query_params:
        carried = [
            _SECTION_OF_SETTING[k]
            for k in st.query_params
            if k in _SECTION_OF_SETTING and k in st.session_state
        ]
        if carried:
            st.session_state[param.key] = min(carried, key=param.choices.index)
    return bound.section(param, t("dumps.section"), "dumps.section_")
