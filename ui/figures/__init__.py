"""Plotly figure builders, one module per page: engine results in, ``go.Figure`` out.

Pure functions: no Streamlit import; every label arrives already translated.
"""
