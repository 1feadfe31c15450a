"""Class mode's storage and rules: a room's predictions, recorded and counted live.

An instructor starts a class (a short join code, and a private key for the instructor's
link); learners join with the code and vote on each lesson's question under an anonymous
token per browser; the instructor sees the counts, closes voting, runs a second round,
reveals the answer and moves the room to a lesson.  Classes expire with all their data.

A package of its own, beside ``engine/`` and below ``ui/``: it is not computation (it keeps
state, in a database, and reads the clock), so it stays out of the pure engine; and it knows
nothing of Streamlit, so its rules are tested without a page and serve any number of app
processes.  It imports from the project only ``engine.errors`` (its refusals are
``EngineError``s, translated like every other) and knows the lessons only as the answer ids
its caller passes in.

- ``rules.py``: codes and secrets, the limits, the results each side is given.
- ``db.py``: connections (SQLite file, or PostgreSQL from a URL), the pool, migrations.
- ``deadlines.py``: a PostgreSQL transaction's client-side deadline, for a server that hangs.
- ``store.py``: the one data-access module: the schema and every query (``ClassStore``).
- ``checks.py``: what every action of the store checks first (the key, the token, the lesson).
- ``local_postgres.py``: a throwaway PostgreSQL server for tests, benchmarks and trials.
"""
