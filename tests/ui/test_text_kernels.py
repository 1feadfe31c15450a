"""The Kernels page's busy warning names only what the table beside it does not rank."""

from __future__ import annotations

from ui.text import kernels


def busy_places(rows, lang: str) -> str:
    """As the page writes it, its no-break spaces read as spaces."""
    return kernels.busy_places(rows, lang).replace("\u00a0", " ")


def _row(width: int, pass_: str, verdict: str) -> dict:
    return {"width": width, "pass": pass_, "verdict": verdict, "ratio": 1.0}


def test_a_width_busy_in_one_pass_names_that_pass_and_one_busy_in_all_says_every_pass():
    """Beside widths named with a pass, a width alone read as that pass's too ("d = 256,
    d = 1,024, d = 4,096 (forward)": 256 and 1,024 were busy in both)."""
    rows = [
        _row(256, "forward", "ranked"),
        _row(256, "forward+backward", "busy"),
        _row(1024, "forward", "busy"),
        _row(1024, "forward+backward", "tie"),
        _row(4096, "forward", "busy"),
        _row(4096, "forward+backward", "busy"),
    ]
    assert busy_places(rows, "en") == (
        "d = 256 (forward + backward), d = 1,024 (forward), d = 4,096 (every pass)"
    )
    assert busy_places(rows, "zh") == (
        "d = 256（前向 + 反向）、d = 1,024（前向）、d = 4,096（每个计算阶段）"
    )


def test_a_width_measured_in_one_pass_only_is_named_alone_and_nothing_busy_is_empty():
    assert busy_places([_row(512, "forward", "busy")], "en") == "d = 512"
    assert busy_places([_row(512, "forward", "ranked")], "en") == ""
