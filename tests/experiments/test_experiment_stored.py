"""Precomputed experiments: every experiment at its defaults written by the command and read
back equal to a fresh run; a damaged or hostile folder is refused, never trusted; and the
answers to the page's questions follow the measurement."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.config import (
    EXPERIMENTS,
    FreezeSweepSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.errors import EngineError
from engine.experiments import __main__ as command
from engine.experiments import experiment
from engine.experiments.experiment import OPTIONS, perplexity_band, run_experiment
from engine.experiments.stored import FORMAT, INDEX, read_run, stored_run, write_run

TEXT = TextSpec(max_tokens=24)


def _same(a, b) -> None:
    """Two runs hold the same numbers (arrays compared exactly, NaN equal to NaN)."""
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif hasattr(a, "__dataclass_fields__"):
        for name in a.__dataclass_fields__:
            _same(getattr(a, name), getattr(b, name))
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_written_run_reads_back_with_every_number_equal(planted, tmp_path, name):
    live, _ = planted
    spec = {"massive": MassiveSpec(window=8), "half": HalfSpec()}.get(name)
    spec = spec or experiment.EXPERIMENT_SPECS[name]()
    run = run_experiment(live, TEXT, spec)
    write_run(run, tmp_path / "run.npz")
    _same(read_run(tmp_path / "run.npz"), run)


def test_the_sweep_reports_its_progress_and_stops_when_asked(planted):
    live, _ = planted
    seen = []
    run_experiment(live, TEXT, FreezeSweepSpec(), progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen) and len(seen) > 3
    from engine.threads import Cancelled

    with pytest.raises(Cancelled):
        run_experiment(live, TEXT, FreezeSweepSpec(), should_stop=lambda: True)


def test_the_command_writes_every_default_experiment_and_the_page_finds_them(
    planted, tmp_path, monkeypatch
):
    live, _ = planted
    monkeypatch.setattr("engine.dumps.live.load_live_model", lambda path=None: live)
    # the tiny model's 24-token context: the defaults' 512 tokens are cut to it
    monkeypatch.setattr(
        "engine.experiments.stored.default_specs",
        lambda: {"swap": SwapSpec(), "lens": LensSpec(), "sweep": FreezeSweepSpec()},
    )
    assert command.main(["precompute", "--out", str(tmp_path), "--text", "en"]) == 0
    index = json.loads((tmp_path / INDEX).read_text())
    assert index["model"] == live.name and index["created"]
    assert sorted(e["file"] for e in index["entries"]) == [
        "lens-en.npz",
        "swap-en.npz",
        "sweep-en.npz",
    ]
    found = stored_run(tmp_path, TextSpec(), SwapSpec())
    fresh = run_experiment(live, TextSpec(), SwapSpec())
    assert found.model == live.name
    _same(found.run.result.effect, fresh.result.effect)
    assert stored_run(tmp_path, TextSpec(), SwapSpec(final=False)) is None  # not precomputed
    assert stored_run(tmp_path, TextSpec(text="zh"), SwapSpec()) is None
    assert stored_run(tmp_path / "nowhere", TextSpec(), SwapSpec()) is None


def _folder_with(tmp_path, planted_live, file: str):
    run = run_experiment(planted_live, TEXT, SwapSpec())
    write_run(run, tmp_path / "swap.npz")
    entry = {"file": file, "text": json.loads(json.dumps(_plain(TEXT))), "spec": _plain(SwapSpec())}
    (tmp_path / INDEX).write_text(
        json.dumps({"format": FORMAT, "model": "m", "created": "now", "entries": [entry]})
    )


def _plain(spec):
    from engine.experiments.stored import _encode

    return _encode(spec, {})


@pytest.mark.parametrize("file", ["../swap.npz", "/etc/passwd", "sub/swap.npz", "link.npz"])
def test_an_index_naming_a_file_outside_its_folder_is_refused(planted, tmp_path, file):
    live, _ = planted
    inner = tmp_path / "store"
    inner.mkdir()
    _folder_with(inner, live, file)
    (inner / "link.npz").symlink_to(inner / "swap.npz")
    (tmp_path / "swap.npz").write_bytes((inner / "swap.npz").read_bytes())
    (inner / "link.npz").unlink()
    (inner / "link.npz").symlink_to(tmp_path / "swap.npz")  # a symlink leading out
    with pytest.raises(EngineError) as refused:
        stored_run(inner, TEXT, SwapSpec())
    assert refused.value.key == "experiments.bad_store"


def test_a_file_naming_a_class_outside_the_results_is_refused(planted, tmp_path):
    live, _ = planted
    _folder_with(tmp_path, live, "swap.npz")
    tree = {"$class": "Popen", "fields": {"args": "true"}}
    np.savez(tmp_path / "swap.npz", tree=np.array(json.dumps(tree)))
    with pytest.raises(EngineError, match="could not be read"):
        stored_run(tmp_path, TEXT, SwapSpec())


def test_a_pickled_array_is_not_unpickled(planted, tmp_path):
    live, _ = planted
    _folder_with(tmp_path, live, "swap.npz")
    np.savez(tmp_path / "swap.npz", tree=np.array([{"a": 1}], dtype=object))
    with pytest.raises(EngineError, match="could not be read"):
        stored_run(tmp_path, TEXT, SwapSpec())


@pytest.mark.parametrize(
    ("ratio", "band"),
    [(1.0, "same"), (1.049, "same"), (0.96, "same"), (1.2, "worse"), (10.0, "worse"),
     (10.1, "broken"), (math.inf, "broken"), (math.nan, "broken"), (0.5, "better"),
     (0.9517, "same"), (0.95, "same"), (0.949, "better")],
)  # fmt: skip
def test_the_perplexity_question_is_answered_by_the_measured_ratio(ratio, band):
    """Within 5 % either way is "same", as the options and the freeze sweep's tolerance say
    (×0.9517, a 4.83 % fall, was said to have "fallen by more than 5 %")."""
    assert perplexity_band(ratio) == band


def test_every_answer_is_one_of_the_experiments_options(planted):
    live, _ = planted
    for name, spec in {"lens": LensSpec(), "sweep": FreezeSweepSpec(), "swap": SwapSpec()}.items():
        run = run_experiment(live, TEXT, spec)
        assert run.answer in OPTIONS[name]
    lens = run_experiment(live, TEXT, LensSpec())
    early = lens.result.mean_entropy[:, 1 : max(2, lens.result.mean_entropy.shape[1] // 3)]
    assert lens.answer == lens.result.variants[int(np.argmax(early.mean(-1)))]


def test_a_folder_of_an_older_format_is_computed_again_not_shown(planted, tmp_path):
    """Format 1 held KLs summed in float32 (off in their fourth digit over a real
    vocabulary): such a folder is named and its runs computed again, never shown."""
    live, _ = planted
    _folder_with(tmp_path, live, "swap.npz")
    index = json.loads((tmp_path / INDEX).read_text())
    (tmp_path / INDEX).write_text(json.dumps({**index, "format": 1}))
    with pytest.raises(EngineError) as refused:
        stored_run(tmp_path, TEXT, SwapSpec())
    assert refused.value.key == "experiments.bad_store" and "format 1" in str(refused.value)
