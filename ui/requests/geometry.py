"""The Geometry page's heavy requests: the wide cloud's report and its flat view, each
waiting for a click when large."""

from __future__ import annotations

from engine.config import GeometrySpec
from engine.geometry import views as projections
from engine.geometry.cloud import cloud_work
from engine.geometry.high_dimension import HighDimensionReport, high_dimension_report
from engine.geometry.views import PlaneView
from ui.compute import run_heavy
from ui.i18n import t
from ui.url.pages import GEOMETRY

WIDE_DEFAULT = GeometrySpec(d=GEOMETRY["ge_wide_d"].default)  # the high section's default


def wide_report(spec: GeometrySpec) -> HighDimensionReport | None:
    """The histograms of ``spec``'s wide cloud, or None while they wait for a click."""
    found = run_heavy(
        high_dimension_report,
        [(spec,)],
        [t("geometry.high.running", d=f"{spec.d:,}")],
        button=t("geometry.high.run"),
        widget_key="ge_high_run",
        work=cloud_work,
        default=(WIDE_DEFAULT,),
    )
    return None if found is None else found[0]


def wide_view(spec: GeometrySpec, method: str, axes: tuple[int, int]) -> PlaneView | None:
    """``spec``'s wide cloud projected onto two directions, or None while it waits."""
    found = run_heavy(
        projections.plane_view,
        [(spec, method, axes)],
        [t("geometry.view_running", d=f"{spec.d:,}")],
        button=t("geometry.view_run"),
        widget_key="ge_view_run",
        work=cloud_work,
        default=(WIDE_DEFAULT, method, axes),
    )
    return None if found is None else found[0]
