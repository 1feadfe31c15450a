"""Activation dumps: safe loaders, layout inference, streaming statistics, diagnostics.

    from engine.dumps import report, report_tables, Upload
    rep = report("dump.safetensors")              # or a directory / glob of shards
    rep = report(Upload(name, data))              # an uploaded file's bytes, kept in memory
    rep.residual.rms          # [L, B, T] every token's RMS
    rep.massive.top3_ratio    # [L, 3] top-1/2/3 |a| over the layer's median (Sun et al.)
    tables = report_tables(rep)                   # the page's tables, as DataFrames

Modules, in the order data flows:
- ``sources``   files on disk or an upload's bytes; the upload size limit (``limits``)
- ``formats/``  .safetensors, .npy/.npz, .pt/.pth: headers checked and the structure bounded
                (``limits``) before anything is read, pickles never run, every failure an
                ``EngineError`` (``refusals``)
- ``layout``    which entries are the residual stream, its axes and layer order, norm pairs
- ``dump``      ``open_dump``: the three above, no data read; ``read_tokens``
- ``chunks``, ``partials``, ``reduce``, ``cluster``: one streaming pass of associative
                partials, in this process or on Dask; ``stats`` merges them into arrays
- ``diagnostics``, ``norm_views``: what those arrays say; ``report`` puts it together, after
                ``check_memory`` (a read's peak memory, predicted from the layout);
                ``DumpReport.judged`` applies new thresholds without reading again
- ``tables``    the report as DataFrames, JSON and CSV; ``cli`` the command line
- ``capture``   a real model's stream and norms on prompts, as a dump (``architectures``:
                which modules, from the model catalog; ``hooks``: hooks that return what
                they record; ``model_files``: offline loading, GGUF, SmolLM2;
                ``model_cache``: a GGUF file's model kept dequantized, mapped by every
                process); ``live`` and ``live_precision``: the dumps page's live model.
                Imported on their own (they load transformers); the shipped example is in
                ``examples/``.
"""

from engine.dumps.dump import open_dump
from engine.dumps.limits import UPLOAD_LIMIT_MB
from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.dumps.tables import report_json, report_tables

__all__ = ["UPLOAD_LIMIT_MB", "Upload", "open_dump", "report", "report_json", "report_tables"]
