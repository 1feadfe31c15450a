"""Plotly figure builders, one module per page: engine results and a language in,
``go.Figure`` out.  Pure functions: no Streamlit import; words from ``locales/``.
"""

from ui.figures import key_paths  # noqa: F401  (plotly parses each key path once)
