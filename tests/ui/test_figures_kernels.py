from ui.figures.kernels import recorded_bandwidth_figure, timing_figure
from ui.i18n import catalog
from ui.labels import label

ZH = catalog("zh")


def _row(kind, pass_, width, us, q1=None, q3=None):
    return {"kind": kind, "pass": pass_, "width": width, "median_us": us, "gbps": 1.0,
            "q1_us": us if q1 is None else q1, "q3_us": us if q3 is None else q3}  # fmt: skip


def test_timing_figure_has_one_sorted_line_per_kind_and_pass():
    timings = [
        _row("layernorm", "forward", 1024, 20.0),
        _row("layernorm", "forward", 256, 5.0),
        _row("rmsnorm", "forward", 256, 4.0),
        _row("rmsnorm", "forward", 1024, 15.0),
        _row("rmsnorm", "forward+backward", 256, 9.0),
    ]
    figure = timing_figure(timings, "zh")
    names = [trace.name for trace in figure.data]
    forward, both = (label("pass", p, "zh") for p in ("forward", "forward+backward"))
    assert names == [f"LayerNorm · {forward}", f"RMSNorm · {forward}", f"RMSNorm · {both}"]
    assert list(figure.data[0].x) == [256, 1024] and list(figure.data[0].y) == [5.0, 20.0]
    assert figure.data[2].line.dash == "dash"
    assert figure.layout.xaxis.type == "log"
    assert figure.layout.xaxis.title.text == ZH["kernels.axis_width"]
    # the vertical title fits the 380 px chart (with the bars' meaning it ran past its top,
    # 56 characters; the page says that under the chart)
    for lang in ("en", "zh"):
        assert len(timing_figure(timings, lang).layout.yaxis.title.text) <= 30


def test_each_timing_draws_its_spread_from_the_first_to_the_third_quartile():
    timings = [
        _row("layernorm", "forward", 256, 5.0, 4.0, 8.0),
        _row("layernorm", "forward", 1024, 20.0),
    ]
    (trace,) = timing_figure(timings, "zh").data
    assert list(trace.error_y.array) == [3.0, 0.0] and list(trace.error_y.arrayminus) == [1.0, 0.0]
    assert not trace.error_y.symmetric


def test_recorded_bandwidth_groups_by_provider():
    rows = [
        {
            "op": "rmsnorm",
            "pass": "fwd",
            "dtype": "bf16",
            "M": 4096.0,
            "N": 4096.0,
            "provider": "ours",
            "GB/s": 4100.0,
        },
        {
            "op": "rmsnorm",
            "pass": "fwd",
            "dtype": "bf16",
            "M": 4096.0,
            "N": 4096.0,
            "provider": "torch",
            "GB/s": 2000.0,
        },
    ]
    figure = recorded_bandwidth_figure(rows, "zh")
    assert figure.layout.yaxis.title.text == ZH["kernels.recorded_axis"]
    assert [trace.name for trace in figure.data] == ["ours", "torch"]
    assert list(figure.data[0].y) == [4100.0]
    assert figure.data[0].x[0] == "rmsnorm · fwd · bf16 · 4096×4096"
