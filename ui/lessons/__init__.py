"""Guided lessons: what each lesson asks and shows (catalog), and which page state it opens
(targets).  Pure data and logic: no Streamlit import; the words are in
``locales/<lang>/lessons.toml``."""
