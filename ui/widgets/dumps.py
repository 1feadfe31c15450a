"""Activation-dump inputs: where the dump comes from, how it is read, what is looked at.

An uploaded file is user data.  Its bytes enter the page through ``uploaded_dump`` alone
(tests feed that function; AppTest cannot drive a file uploader), and its results are keyed
by this browser session (``ui/jobs.py``: ``share=False``): never in the URL, never in a
cache another session reads.  The settings of how it is read and shown are share-link
parameters (``ui/share.py`` ``DUMPS``), except the stream override, which names an entry
of the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from engine.config import DumpSpec
from engine.dumps import ACCEPTED_SUFFIXES, UPLOAD_LIMIT_MB, DumpReport, Layout, Upload
from engine.errors import EngineError
from ui.errors import error_text
from ui.formatting import format_number, literal
from ui.i18n import t
from ui.share import DUMPS as P
from ui.share import Param
from ui.widgets import bound


@dataclass(frozen=True)
class UploadedDump:
    """One uploaded file: its bytes, and the id that keys its results in this session."""

    file_id: str  # new for every upload, even of the same file
    upload: Upload

    @property
    def key(self) -> tuple[str, str, int]:
        """What results computed from this file are keyed by (the bytes are not hashed)."""
        return (self.file_id, self.upload.name, len(self.upload.data))


def uploaded_dump() -> UploadedDump | None:
    """The file in the uploader, or None: the one place uploaded bytes enter the page."""
    suffixes = ", ".join(ACCEPTED_SUFFIXES)
    file = st.file_uploader(
        t("dumps.upload", suffixes=suffixes, limit=UPLOAD_LIMIT_MB),
        key="dumps_upload",
        max_upload_size=UPLOAD_LIMIT_MB,
        help=t("dumps.upload_help"),
    )
    if file is None:
        return None
    return UploadedDump(file.file_id, Upload(file.name, file.getvalue()))


def dump_source() -> UploadedDump | None:
    """The source chosen (an upload now; the built-in example and live model to come)."""
    source = bound.segmented(P["du_source"], t("dumps.source"))
    if source != "upload":
        st.info(t(f"dumps.coming_{source}"), icon=":material/construction:")
        return None
    uploaded = uploaded_dump()
    st.caption(t("dumps.privacy", limit=UPLOAD_LIMIT_MB))
    return uploaded


@dataclass(frozen=True)
class DumpSettings:
    spec: DumpSpec | None  # None when a value is refused (``errors`` says why)
    errors: tuple[str, ...]
    stream_slot: object  # where ``stream_override`` draws its choice, once streams are known


def _axes_name(axes: str) -> str:
    return t("dumps.axes_auto") if axes == "auto" else "[" + ", ".join(axes) + "]"


def _threshold(param: Param, text: str, column, step: float) -> float:
    return bound.number(
        param, text, column, step=step, format="%g", help=t(f"dumps.{param.key}_help")
    )


def dump_settings() -> DumpSettings:
    """How the dump is read and judged (inferred unless overridden): one DumpSpec."""
    with st.expander(t("dumps.overrides"), icon=":material/tune:"):
        st.caption(t("dumps.overrides_help"))
        stream_column, axes_column, order_column = st.columns(3)
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
            format_func=lambda v: f"{v:g}",
            help=t("dumps.eps_help"),
        )
    try:
        spec = DumpSpec(
            axes=axes,
            layer_order=order,
            massive_abs=float(massive_abs),
            massive_ratio=float(massive_ratio),
            outlier_ratio=float(outlier),
            norm_eps=float(eps),
        )
    except EngineError as error:  # the engine's own limits, translated
        return DumpSettings(None, (error_text(error),), stream_column)
    return DumpSettings(spec, (), stream_column)


def stream_override(uploaded: UploadedDump, layout: Layout, settings: DumpSettings) -> DumpSpec:
    """The spec with the stream chosen among the entries this file holds ("auto": inferred).

    Kept per file (the widget's key holds the upload's id): a new file starts inferred.
    """
    choices = ("auto", *layout.streams)
    with settings.stream_slot:
        stream = st.selectbox(
            t("dumps.stream"),
            choices,
            key=f"dumps_stream_{uploaded.file_id}",
            format_func=lambda s: (
                t("dumps.stream_auto", stream=layout.streams[0]) if s == "auto" else s
            ),
            help=t("dumps.stream_help"),
        )
    return replace(settings.spec, stream=stream)


def _within(param: Param, last: int, what: str) -> None:
    """A URL value past this dump's end is said, then shown as the last one."""
    value = st.session_state.get(param.key)
    if value is not None and value > last:
        st.warning(
            t("dumps.clamped", param=literal(param.key), value=value, what=what, last=last),
            icon=":material/link_off:",
        )
        st.session_state[param.key] = last


def batch_choice(rep: DumpReport, target=st) -> int:
    """Which sequence of the batch the token views show (no widget when B = 1)."""
    batch = rep.layout.batch
    if batch == 1:
        return 0
    _within(P["du_batch"], batch - 1, t("dumps.what_batch"))
    return int(bound.number(P["du_batch"], t("dumps.batch"), target, high=batch - 1))


def log_colors(target=st) -> bool:
    return bool(bound.toggle(P["du_log"], t("dumps.log_colors"), target))


def layer_choice(param: Param, rep: DumpReport, target=st) -> int:
    """A layer to look at in detail; the parameter's -1 means the middle one."""
    layers = len(rep.labels)
    _within(param, layers - 1, t("dumps.what_layer"))
    middle = layers // 2

    def name(layer: int) -> str:
        if layer == -1:
            return t("dumps.middle_layer", layer=middle)
        return f"{layer} · {rep.labels[layer]}"

    chosen = target.selectbox(
        t("dumps.layer"),
        list(range(-1, layers)),
        index=0,
        key=param.key,
        format_func=name,
    )
    return middle if chosen == -1 else int(chosen)


def token_choice(rep: DumpReport, target=st) -> int:
    tokens = rep.layout.tokens
    _within(P["du_token"], tokens - 1, t("dumps.what_token"))
    return int(bound.number(P["du_token"], t("dumps.token"), target, high=tokens - 1))


def pair_choice(rep: DumpReport, target=st) -> int:
    """The norm pair whose DyT fit is drawn (index into ``rep.dyt``)."""
    fits = rep.dyt
    _within(P["du_pair"], len(fits) - 1, t("dumps.what_pair"))

    def name(index: int) -> str:
        fit = fits[index]
        return f"{fit.label} · α = {format_number(fit.alpha, 3)}"

    return int(
        target.selectbox(
            t("dumps.pair"), list(range(len(fits))), index=0, key=P["du_pair"].key, format_func=name
        )
    )
