"""Pure text and LaTeX builders: results and a language in, strings out; no Streamlit import."""
