"""Kernels: what computes, LayerNorm vs RMSNorm timed here, and why norms are memory-bound."""

import streamlit as st

from engine.backend import compute_device, describe_backend
from engine.perf.roofline import norm_traffic
from engine.perf.timing import time_norms
from ui import presenting
from ui.compute import compute, run_heavy
from ui.i18n import t
from ui.landing import landmark
from ui.sections import section
from ui.views import kernels as view
from ui.widgets.kernels import roofline_inputs, timing_inputs


@section  # a timing setting (or the Measure click) reruns this section alone
def timing() -> None:
    with presenting.controls("kn_timing", title="kernels.controls.timing"):
        config = timing_inputs()
    if not config.widths or not config.passes:
        st.warning(t("kernels.need_widths"))
        return
    timed = run_heavy(
        time_norms,
        [(config.rows, config.widths, config.dtype, config.passes, compute(compute_device))],
        [t("kernels.measuring", n=len(config.widths) * len(config.passes))],
        button=t("kernels.measure"),
        widget_key="kn_measure",
        always_ask=True,
        again=t("kernels.measure_again"),
    )
    if timed:
        view.timings(timed[0])


@section  # a shape reruns the roofline alone
def roofline() -> None:
    with presenting.controls("kn_roofline", title="kernels.controls.roofline"):
        shape = roofline_inputs()
    view.roofline(
        compute(norm_traffic, shape.tokens, shape.d, shape.bytes_per_element, "layernorm"),
        compute(norm_traffic, shape.tokens, shape.d, shape.bytes_per_element, "rmsnorm"),
    )


st.title(t("kernels.title"))
st.caption(t("kernels.intro"))
info = compute(describe_backend)
view.backend(info)
st.subheader(t("kernels.timing_title"))
view.timing_intro()
st.caption(t("kernels.timing_caveat", device=info.device))
timing()
view.recorded()
landmark("memory")
st.subheader(t("kernels.memory_title"))
view.memory_intro()
roofline()
