"""Axes page sections (Streamlit): the shared cells of a clicked cell, and BatchNorm's failures."""

from __future__ import annotations

import contextlib

import streamlit as st

from engine.axes.batch_of_one import BatchOfOne
from engine.axes.causal_leak import CausalLeak
from engine.axes.padding import PaddingPollution
from engine.axes.sharing import AxesStatistics, CellSelection
from engine.axes.small_batch import SmallBatchNoise
from engine.axes.train_eval import TrainEvalGap
from engine.errors import EngineError
from ui.errors import error_text
from ui.figures import axes_batchnorm as charts
from ui.figures.axes import cells_figure, drawn_grid
from ui.figures.axes_box import box_figure
from ui.formatting import format_reading
from ui.i18n import current_language, t
from ui.text import axes as text
from ui.views.charts import built, show_chart


def summary_note(stats: AxesStatistics) -> None:
    """Above the display limit the heatmap draws blocks of cells: say so, with the block."""
    if stats.drawn_cell_by_cell:
        return
    grid = drawn_grid(*stats.x.shape)
    note = text.summarised_note(stats.x.size, grid.block, grid.last_block, current_language())
    st.info(note, icon=":material/grid_view:")


def cells(stats: AxesStatistics, selection: CellSelection, on_click) -> None:
    """The heatmap (input | normalized) with the shared cells lit; beside it the box and the
    legend of the norm's statistics.  ``on_click()`` takes the clicked cell (a callback)."""
    lang = current_language()
    # stacked under 48rem of content width (ui/styles/base.css): an 800 px window beside
    # its sidebar left the heatmap ~290 px, its colour bars a few px and the box's labels
    # on top of each other
    left, right = st.container(key="ax_cells_layout").columns([3, 2], gap="medium")
    with left:
        show_chart(
            built(cells_figure, stats, selection, lang),
            "ax_heatmap",
            on_select=on_click,
            selection_mode="points",
            config={"displayModeBar": False},
        )
        st.caption(text.heatmap_note(stats, lang))
    with right:
        show_chart(
            built(box_figure, stats.real, selection, stats.spec.kind, lang),
            "ax_box",
            config={"displayModeBar": False, "staticPlot": True},
            table=False,  # a diagram of the cube: its CSV would be drawing coordinates
        )
        for line in text.legend(stats, lang):
            st.markdown(line)
    layouts = text.groupnorm_layouts(stats, lang)
    if layouts:
        st.info(layouts, icon=":material/view_column:")
    leak = text.leak_note(stats.spec.kind, stats.x.shape[1], lang)
    if leak:
        st.caption(leak)
    nan = text.nan_note(stats, lang)
    if nan:
        st.warning(nan, icon=":material/warning:")


def selection_statistics(stats: AxesStatistics, selection: CellSelection) -> None:
    """The clicked cell's statistic: what it pools, its numbers, the cell's own arithmetic."""
    st.subheader(t("axes.stats.title"))
    b, position, c = selection.cell
    is_pad = not bool(stats.real[b, position])
    where = t("axes.stats.cell", b=b, t=position, c=c)
    st.markdown(where + (" · " + t("axes.stats.pad") if is_pad else ""))
    kind = stats.spec.kind
    if kind == "dyt":
        st.caption(t("axes.stats.dyt"))
    columns = st.columns(4)
    mean_label = t("axes.stats.mean_rms") if kind == "rmsnorm" else "μ"
    var_label = t("axes.stats.mean_square") if kind == "rmsnorm" else "σ²"
    values = (
        (t("axes.stats.count"), f"{selection.count:,}"),
        (mean_label, "—" if kind == "rmsnorm" else format_reading(selection.mean)),
        (var_label, format_reading(selection.var)),
        ("1/√(σ²+ε)" if kind != "rmsnorm" else "1/√(ms+ε)", format_reading(selection.rstd)),
    )
    if kind == "dyt":  # it pools nothing, not the cell itself
        values = ((t("axes.stats.count"), "—"), ("x", format_reading(selection.x)))
    for column, (label, value) in zip(columns, values):
        column.metric(label, value)
    st.latex(text.cell_arithmetic(stats, selection))
    engine = "Triton" if stats.backend == "triton" else "PyTorch"
    st.caption(t("axes.stats.computed", engine=engine, dtype=stats.spec.dtype))
    if stats.module_refusal is not None:
        module, message, in_eval_too = stats.module_refusal
        key = "axes.stats.module_refuses" + ("_always" if in_eval_too else "")
        st.caption(t(key, module=module, message=message))


# --- BatchNorm's five failures -----------------------------------------------------------


def failures_intro(source: str) -> None:
    st.markdown(t("axes.failures_intro"))
    if source == "example":  # the experiments draw their own tensors
        st.info(t("axes.example_experiments"), icon=":material/info:")


def example_note(stats: AxesStatistics) -> None:
    """Which of the dump's channels the columns are, when the tensor is the example slice."""
    note = text.example_channels(stats, current_language())
    if note is not None:
        st.caption(note)


@contextlib.contextmanager
def experiment(number: int):
    """One experiment's bordered block, headed; a refusal inside shows its message."""
    with st.container(border=True):
        st.subheader(f"{number}. {t(f'axes.experiment_{number}')}")
        try:
            yield
        except EngineError as error:
            st.error(error_text(error), icon=":material/error:")


def _show_pair(pair: charts.Pair, key: str) -> None:
    """An experiment's two panels in two columns: side by side, stacked on a phone."""
    left, right = st.columns(2, gap="medium")
    show_chart(pair[0], key, left)
    show_chart(pair[1], f"{key}_2", right)


def _lesson(sentence: str) -> None:
    st.success(sentence, icon=":material/lightbulb:")


def padding(result: PaddingPollution) -> None:
    lengths = ", ".join(str(n) for n in result.lengths)
    st.caption(t("axes.padding.setup", lengths=lengths, pad=format_reading(result.pad_value)))
    _show_pair(built(charts.padding_figure, result, current_language()), "ax_padding")
    _lesson(text.padding_lesson(result, current_language()))


def small_batch(result: SmallBatchNoise) -> None:
    _show_pair(built(charts.small_batch_figure, result, current_language()), "ax_small")
    _lesson(text.small_batch_lesson(result, current_language()))


def train_eval(result: TrainEvalGap) -> None:
    _show_pair(built(charts.train_eval_figure, result, current_language()), "ax_train_eval")
    _lesson(text.train_eval_lesson(result, current_language()))


def batch_of_one(result: BatchOfOne) -> None:
    lang = current_language()
    st.markdown(t("axes.one.claim_intro"))
    st.markdown(f"> {t('axes.one.claim')}")
    st.caption(t("axes.one.claim_translation"))
    st.markdown(t("axes.one.what_happens"))
    st.markdown("\n".join(f"- {fact}" for fact in text.batch_of_one_facts(result, lang)))
    show_chart(built(charts.batch_of_one_figure, result, lang), "ax_one")
    _lesson(text.batch_of_one_lesson(result, lang))


def causal(result: CausalLeak) -> None:
    _show_pair(built(charts.causal_figure, result, current_language()), "ax_causal")
    _lesson(text.causal_lesson(result, current_language()))
