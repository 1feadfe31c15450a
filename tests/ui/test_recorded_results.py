"""ui.recorded_results: the RESULTS.md table parser."""

from __future__ import annotations

from ui.recorded_results import parse_results_markdown, read_results

RESULTS = """# Benchmark results

Some prose | with a pipe that is not a table.

## Kernels (benchmarks/bench_kernels.py)

### NVIDIA H200 · 2026-11-29

| op | pass | dtype | M | N | provider | µs | GB/s | % of peak |
|:---|---|---|--:|--:|---|--:|--:|--:|
| rmsnorm | forward | bf16 | 4096 | 4,096 | ours | 21.5 | 3,120.4 | 65 % |
| layernorm | backward | fp32 | 4096 | 4096 | torch.compile | — | | n/a |

### CPU

| op | pass | µs |
|---|---|---|

## Other

| a | b |
|---|---|
| `1.5x` | text |
"""


def test_parse_results_markdown_reads_every_table_row_with_its_section():
    rows = parse_results_markdown(RESULTS)
    assert len(rows) == 3  # the empty CPU table yields nothing
    first, second, other = rows
    assert first == {
        "op": "rmsnorm",
        "pass": "forward",
        "dtype": "bf16",
        "M": 4096.0,
        "N": 4096.0,
        "provider": "ours",
        "µs": 21.5,
        "GB/s": 3120.4,
        "% of peak": 65.0,
        "section": "Benchmark results / Kernels (benchmarks/bench_kernels.py) / NVIDIA H200 · 2026-11-29",
        "table": 0,
    }
    assert second["µs"] is None and second["GB/s"] is None and second["% of peak"] is None
    assert other == {"a": 1.5, "b": "text", "section": "Benchmark results / Other", "table": 2}


def test_read_results_of_a_missing_file_is_empty(tmp_path):
    assert read_results(tmp_path / "nope.md") == []
    path = tmp_path / "RESULTS.md"
    path.write_text(RESULTS, encoding="utf-8")
    assert len(read_results(path)) == 3


def test_the_repository_results_file_parses():
    # read_results() returns [] for a missing file, so an empty list must fail here: the
    # repository's RESULTS.md holds tables (CPU timings at least)
    rows = read_results()
    assert rows, "no table rows read from benchmarks/RESULTS.md"
    assert all(row["section"] for row in rows)  # every table sits under a heading
