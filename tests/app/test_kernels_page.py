"""The Kernels page through AppTest: backend, a real timing run, the roofline arithmetic."""

import json


def _open(app):
    app.switch_page("app_pages/kernels.py").run()
    assert not app.exception
    return app


def test_backend_and_what_runs_where(app):
    _open(app)
    assert app.title[0].value == "Kernels"
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Engine"] == "PyTorch" and metrics["Device"] == "CPU"
    table = app.table[0].value
    assert "Triton `row_norm_forward` kernel" in table.iloc[0].tolist()


def test_measure_times_both_norms_and_shows_the_ratio(app):
    _open(app)
    app.selectbox(key="kn_rows").select(256).run()
    app.multiselect(key="kn_widths").set_value([256, 512]).run()
    app.button(key="kn_measure").click().run()
    assert not app.exception
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    names = [trace["name"] for trace in spec["data"]]
    assert names == [
        "LayerNorm · forward",
        "RMSNorm · forward",
        "LayerNorm · forward + backward",
        "RMSNorm · forward + backward",
    ]
    ratios = app.dataframe[0].value
    assert list(ratios.index) == [256, 512]
    assert all(float(v) > 0 for v in ratios.to_numpy().ravel())


def test_no_widths_asks_for_one(app):
    _open(app)
    app.multiselect(key="kn_widths").set_value([]).run()
    assert "Pick at least one width" in app.warning[0].value


def test_recorded_results_say_when_there_are_none(app):
    _open(app)
    assert any("No GPU figures are recorded yet" in info.value for info in app.info)


def test_roofline_numbers_for_the_default_shape(app):
    _open(app)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Bytes moved (read x, write y)"] == "67.1 MB"
    assert metrics["H200 ridge point"] == "14.0 FLOP/byte"
    text = " ".join(m.value for m in app.markdown)
    assert "8× below the H200's ridge" in text and "1.25× less" in text


def test_kernels_page_in_chinese(app):
    app.selectbox(key="language_select").select("zh").run()
    _open(app)
    assert app.title[0].value == "内核"
