"""The Geometry page's high-dimension section: the wide cloud's histograms, then its flat
view (not a page of its own: ``app_pages/geometry.py``'s cloud section calls ``high``)."""

import streamlit as st

from engine.config import GeometrySpec
from ui.i18n import t
from ui.requests import geometry as requests
from ui.views import geometry as view
from ui.widgets import geometry as widgets


def high(spec: GeometrySpec) -> None:
    """Each request waits for a click when large; the view's method and axes are the
    reader's, picked between the two."""
    report = requests.wide_report(spec)
    if report is not None:
        view.high_dimension(report, spec.count)
    st.subheader(t("geometry.view_heading"))
    plane = requests.wide_view(spec, *widgets.view_inputs(spec.d))
    if plane is not None:
        view.plane_view(plane)
