"""Page sections: the Streamlit code that shows what the engine computed."""
