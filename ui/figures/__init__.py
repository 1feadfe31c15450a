"""Plotly figure builders, one module per page: engine results and a language in,
``go.Figure`` out.  Pure functions: no Streamlit import; words from ``locales/``.
"""
