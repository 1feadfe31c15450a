"""What the Activation dumps page's AppTest tests share: the page opened on a source, a dump's
tensors as the bytes of an upload (safetensors, .pt, .npy, .npz), and the page's text and
subheaders read back.  AppTest cannot drive ``st.file_uploader``; the page takes an upload's
bytes through ``ui.widgets.dumps.uploaded_dump`` alone, which the ``upload`` fixture
(tests/app/conftest.py) feeds."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import torch
from safetensors.torch import save
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

PAGE = "app_pages/dumps.py"


def open_dumps_page(app, source: str = "upload", section: str | None = None):
    """Open the page on ``source`` (these tests read uploads; the page opens on the example),
    at the report's ``section`` (``ui/url/`` DUMP_SECTIONS; None: the link's, else the first)."""
    if source != "example":
        app.query_params.setdefault("du_source", source)
    if section is not None:
        app.query_params["du_section"] = section
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def safetensors_bytes(tensors: dict[str, torch.Tensor]) -> bytes:
    return save({name: value.clone().contiguous() for name, value in tensors.items()})


def page_text(app) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    return "\n".join(parts)


def subheaders(app) -> list[str]:
    return [s.value for s in app.subheader]


def pt_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz_bytes(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def shown_cells(table) -> pd.DataFrame:
    """A table's cells as the page writes them (its Styler's text, ``ui.views.dumps_tables.engine_table``);
    ``table.value`` holds the numbers under them, which a column sorts by."""
    return convert_arrow_bytes_to_pandas_df(table.proto.arrow_data.styler.display_values)
