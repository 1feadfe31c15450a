"""Page sections: pure text builders (``*_steps.py``) and the Streamlit code that shows them."""
