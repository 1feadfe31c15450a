"""Kernels: what computes, LayerNorm vs RMSNorm timed here, and why norms are memory-bound."""

import time

import streamlit as st

from engine import describe_backend
from engine.backend import compute_device
from engine.perf.roofline import norm_traffic
from engine.perf.timing import time_norms
from ui.i18n import t
from ui.recorded_results import read_results
from ui.views import kernels as view
from ui.widgets.kernels import BYTES, roofline_inputs, timing_inputs

st.title(t("kernels.title"))
st.caption(t("kernels.intro"))

info = describe_backend()
view.backend(info)

st.subheader(t("kernels.timing_title"))
st.markdown(t("kernels.timing_intro"))
st.caption(t("kernels.timing_caveat", device=info.device))
config = timing_inputs()
if not config.widths or not config.passes:
    st.warning(t("kernels.need_widths"))
elif st.button(t("kernels.measure"), type="primary", icon=":material/timer:", key="kn_measure"):
    with st.spinner(t("kernels.measuring", n=len(config.widths) * len(config.passes))):
        rows = time_norms(
            config.rows, config.widths, config.dtype, config.passes, compute_device(), repeats=5
        )
    st.session_state["kn_timings"] = (config, rows, time.strftime("%H:%M:%S"))
measured = st.session_state.get("kn_timings")
if measured and measured[0] == config:
    view.timings(measured[1], measured[2])
else:
    st.info(t("kernels.not_measured"), icon=":material/timer:")

view.recorded(read_results())

st.subheader(t("kernels.memory_title"))
st.markdown(t("kernels.memory_intro"))
shape = roofline_inputs()
nbytes = BYTES[shape.dtype]
view.roofline(
    norm_traffic(shape.tokens, shape.d, nbytes, "layernorm"),
    norm_traffic(shape.tokens, shape.d, nbytes, "rmsnorm"),
)
