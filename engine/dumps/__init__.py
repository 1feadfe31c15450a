"""Activation dumps: safe loaders, layout inference, streaming statistics, diagnostics.

from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.dumps.tables import report_tables
rep = report("dump.safetensors")              # or a directory / glob of shards
rep = report(Upload(name, data))              # an uploaded file's bytes, kept in memory
rep.residual.rms          # [L, B, T] every token's RMS
rep.massive.top3_ratio    # [L, 3] top-1/2/3 |a| over the layer's median (Sun et al.)
tables = report_tables(rep)                   # the page's tables, as DataFrames
"""
