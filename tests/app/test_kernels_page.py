"""The Kernels page through AppTest: backend, a real timing run, the roofline arithmetic."""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from engine.perf.timing import NormTimings
from tests.app.conftest import APP
from tests.plain_text import plain


def _open(app):
    app.switch_page("app_pages/kernels.py").run()
    assert not app.exception
    return app


def test_backend_and_what_runs_where(app):
    _open(app)
    assert app.title[0].value == "Kernels"
    metrics = {m.label: plain(m.value) for m in app.metric}  # a no-break space: as typed
    assert metrics["Engine"] == "PyTorch" and metrics["Device"] == "CPU"
    table = app.table[0].value
    gpu = "Triton `row_norm_forward` kernel (float32 statistics; the reference formulas otherwise)"
    assert gpu in table.iloc[0].tolist()  # on a GPU too, other statistics take the formulas


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
    assert list(ratios.index) == ["256", "512"] and ratios.index.name == "width d"
    verdicts = {"too busy to tell", "no measurable difference"}  # this machine may be busy
    assert all(v in verdicts or float(v) > 0 for v in ratios.to_numpy().ravel())
    text = " ".join(c.value for c in app.caption)
    assert "from its first to its third quartile" in text and "under 20\u00a0%" in text
    # the paper's whole-model percentages are quoted, never turned into a ratio of the op
    assert "whole models" in text and "0.36" not in text and "corresponds to" not in text


def _busy_rows(*args, **kwargs):
    """What a loaded machine measured (the 12.25× seen on a shared CPU): no timing here."""

    def row(kind, pass_, median, q1, q3):
        return {"kind": kind, "pass": pass_, "rows": 256, "width": 1024, "dtype": "float32",
                "device": "CPU", "provider": "torch", "median_us": median, "q1_us": q1,
                "q3_us": q3, "min_us": q1, "gbps": 1.0, "measured_at": "12:00:00"}  # fmt: skip

    return NormTimings(
        (
            row("layernorm", "forward", 100.0, 99.0, 101.0),
            row("rmsnorm", "forward", 60.0, 59.0, 61.0),
            row("layernorm", "forward+backward", 80.0, 79.0, 81.0),  # faster than its forward
            row("rmsnorm", "forward+backward", 980.0, 300.0, 1200.0),  # 12.25x, a wide spread
        )
    )


def test_a_busy_machine_says_it_is_too_busy_to_tell_instead_of_a_ratio(app, monkeypatch):
    monkeypatch.setattr("engine.perf.timing.time_norms", _busy_rows)
    _open(app)
    app.button(key="kn_measure").click().run()
    assert not app.exception
    cells = app.dataframe[0].value.to_numpy().ravel().tolist()
    assert cells == ["too busy to tell", "too busy to tell"]  # not 0.6 and 12.25
    assert "too busy to rank the two norms at d = 1,024" in app.warning[0].value  # as the chart


def test_no_widths_asks_for_one(app):
    _open(app)
    app.multiselect(key="kn_widths").set_value([]).run()
    assert "Pick at least one width" in app.warning[0].value


def test_recorded_results_say_when_there_are_none(app):
    _open(app)
    infos = [info.value for info in app.info]
    assert any(v.startswith("No GPU benchmark is recorded in this installation.") for v in infos)
    assert not any("gpu_check" in v for v in infos)  # an operator's command is not for users


def test_recorded_gpu_figures_are_drawn_from_the_benchmarks_csv(app, monkeypatch, tmp_path):
    recorded = tmp_path / "bench_kernels.csv"
    recorded.write_text(
        "op,pass,dtype,M,N,provider,us,GB/s,% of peak,rel err vs torch,note\n"
        "rmsnorm,forward,bfloat16,4096,4096,ours,21.5,3120.4,65.0,1.2e-03,\n"
        "rmsnorm,forward,bfloat16,4096,4096,torch,40.1,1673.1,34.9,,\n"
    )
    monkeypatch.setattr("ui.views.kernels.RECORDED", recorded)
    _open(app)
    chart = json.loads(app.get("plotly_chart")[-1].proto.spec)
    assert [trace["name"] for trace in chart["data"]] == ["this project's kernel", "torch"]
    assert chart["data"][0]["x"] == ["rmsnorm · forward · bfloat16 · 4096×4096"]
    table = app.dataframe[-1].value
    assert table["GB/s"].tolist() == [3120.4, 1673.1]
    assert "implementation" in table.columns and "relative error vs torch" in table.columns
    # the file names no GPU: % of peak is said to be against the GPU that ran the benchmark
    assert any("does not say which GPU" in c.value for c in app.caption)


def test_recorded_results_in_chinese_name_their_gpu_and_speak_chinese(app, monkeypatch, tmp_path):
    recorded = tmp_path / "bench_kernels.csv"
    recorded.write_text(
        "op,pass,dtype,M,N,provider,us,GB/s,% of peak,rel err vs torch,note,device,measured_at\n"
        "rmsnorm,forward,bfloat16,4096,4096,ours,21.5,3120.4,65.0,1.2e-03,,NVIDIA H200,"
        "2026-12-01 10:00 UTC\n"
        "rmsnorm,backward,bfloat16,4096,4096,torch,,,,,budget,NVIDIA H200,2026-12-01 10:00 UTC\n"
    )
    monkeypatch.setattr("ui.views.kernels.RECORDED", recorded)
    _open(app)
    app.selectbox(key="language_select").select("zh").run()
    table = app.dataframe[-1].value
    assert {"实现", "阶段", "峰值百分比", "备注"} <= set(table.columns)
    assert (
        table["阶段"].tolist() == ["前向", "反向"]
        and "未计时（时间预算已用完）" in table["备注"].tolist()
    )
    assert any("NVIDIA H200" in c.value and "2026-12-01 10:00 UTC" in c.value for c in app.caption)


@pytest.mark.parametrize("content", ["", 'op,pass\n"unclosed,forward\n'])
def test_a_damaged_recorded_file_is_said_not_a_crash(app, monkeypatch, tmp_path, content):
    recorded = tmp_path / "bench_kernels.csv"
    recorded.write_text(content)
    monkeypatch.setattr("ui.views.kernels.RECORDED", recorded)
    _open(app)
    assert not app.exception
    assert any("could not be read" in w.value for w in app.warning)


def test_roofline_numbers_for_the_default_shape(app):
    _open(app)
    metrics = {m.label: plain(m.value) for m in app.metric}  # a no-break space: as typed
    assert metrics["Bytes moved (read x, write y)"] == "67.1 MB"
    assert metrics["H200 ridge point"] == "14.0 FLOP/B"
    # one metric per norm, each with its unit: "1.75 / 1" read like a ratio 1.75 : 1
    assert metrics["Arithmetic intensity, LayerNorm"] == "1.75 FLOP/B"
    assert metrics["Arithmetic intensity, RMSNorm"] == "1 FLOP/B"
    text = plain(" ".join(m.value for m in app.markdown))
    assert "LayerNorm's 1.75 FLOP/B is 8× below the H200's ridge" in text
    assert "RMSNorm's 1 is further below" in text  # the paragraph names both metrics
    # fusion saves one read of h: 5 passes of [T, d] become 4 (bfloat16, 4096 x 4096)
    assert "5 passes over [B, T, d], 167.8 MB" in text and "4 passes, 134.2 MB" in text
    assert "exactly one read of h — 33.6 MB, 20 % of the traffic" in text
    assert "at most 1.25× faster" in text and "every fast Transformer" not in text


def test_kernels_page_in_chinese(app):
    app.selectbox(key="language_select").select("zh").run()
    _open(app)
    assert app.title[0].value == "内核"
    metrics = {m.label: plain(m.value) for m in app.metric}  # a no-break space: as typed
    assert metrics["RMSNorm 的算术强度"] == "1 FLOP/B"
    text = " ".join(m.value for m in app.markdown)
    # "低 N 倍" / "少 N 倍" read both ways in Chinese: ratios are written as fractions
    assert not re.search(r"[少低]\s*[\d.]+\s*倍", text)
    assert "流量减少到原来的 4/5（即 1/1.25）" in text


def test_claims_are_stated_with_where_they_hold(app):
    _open(app)
    text = " ".join(m.value for m in app.markdown)
    assert (
        "7–64\u00a0% less running time" in text
        and "0.67× the time of LayerNorm on LLaMA-7B" in text
    )
    assert "On the CPU each width is timed with both norms interleaved" in text
    assert "on a CUDA GPU each norm is timed by its own" in text
    table = app.table[0].value
    assert "for float32 input and statistics" in " ".join(table.iloc[0].tolist())


def test_a_one_token_roofline_writes_its_times_in_a_unit_that_fits():
    """One token of d = 1 moves a few bytes, picoseconds at the H200's 4.8 TB/s: written in
    "ps", never "2e-06 µs"."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "kn_tokens": "1", "kn_d": "1"})
    _open(app)
    (verdict,) = [m.value for m in app.markdown if "Moving the bytes takes" in m.value]
    assert " ps;" in verdict and "e-0" not in verdict and "µs" not in verdict


def test_the_largest_roofline_writes_terabytes_and_a_tiny_share_with_its_power_of_ten():
    """2²⁴ tokens of d = 2¹⁸ in bfloat16 move 2·2⁴² B ≈ 17.6 TB (by hand), never
    "17592.2 GB"; γ and β are a share of about 6×10⁻⁶ % of it, never "5.96e-06 %"."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "kn_tokens": str(2**24), "kn_d": str(2**18)})
    _open(app)
    metrics = {m.label: plain(m.value) for m in app.metric}  # a no-break space: as typed
    assert metrics["Bytes moved (read x, write y)"] == "17.6 TB"
    text = " ".join(m.value for m in app.markdown)
    assert "e-0" not in text and "×10⁻⁶\u00a0%" in text


def test_a_row_past_the_kernels_registers_and_parameters_half_the_traffic_are_said():
    """One token of d = 2¹⁸ in bfloat16: x and y are 2·2¹⁸·2 B = 1.05 MB, LayerNorm's γ and β
    as much again, 2.1 MB in all, 437 ns at 4.8 TB/s (by hand: 2,097,152 / 4.8×10¹² s), where
    "Moving the bytes takes 218 ns" counted the activations only; past 65,536 values a row is
    read twice by this project's kernel."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "kn_tokens": "1", "kn_d": str(2**18)})
    _open(app)
    text = " ".join(m.value for m in app.markdown).replace("\xa0", " ")
    assert "with LayerNorm's parameters it moves 2.1 MB, 437 ns" in text
    captions = " ".join(c.value for c in app.caption)
    assert "wider than 65,536 values" in captions and "3 passes instead of 2" in captions
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params.update({"lang": "en", "kn_tokens": "4096", "kn_d": "4096"})
    _open(app)
    assert "with LayerNorm's parameters" not in " ".join(m.value for m in app.markdown)
    assert "wider than 65,536" not in " ".join(c.value for c in app.caption)
