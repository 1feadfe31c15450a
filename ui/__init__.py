"""NormScope's user interface: Streamlit glue (widgets, cache, i18n) and pure figure builders."""
