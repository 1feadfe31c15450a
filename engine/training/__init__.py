"""The training lab: a tiny GPT trained live on a toy task, Pre-LN vs Post-LN, warm-up or not.

- ``model.py`` the tiny GPT (Pre-LN or Post-LN), its norms through ``engine.normalize``
- ``loop.py``  tasks, the Adam loop streamed step by step, the outcome of a run
"""
