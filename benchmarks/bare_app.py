"""The floor for ``bench_app.py``'s first render: a bare Streamlit app with what a first view needs.

A title, one ``st.latex`` holding the same number the Vector Lab's first step shows
(μ = 2.5) and one plotly bar chart whose first bar is 1.0, so ``bench_app.py`` waits for it
exactly as it waits for the Vector Lab.  Run by the benchmark, never by users.
"""

import plotly.graph_objects as go
import streamlit as st

st.title("Bare app")
st.latex(r"\mu = \frac{1}{4}\sum_i x_i = 2.5")
st.plotly_chart(go.Figure(go.Bar(x=[1, 2, 3, 4], y=[1.0, 2.0, 3.0, 4.0])), width="stretch")
