"""Pure text and LaTeX builders: results in, strings out; no Streamlit import."""
