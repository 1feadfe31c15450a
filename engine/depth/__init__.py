"""A residual stack at initialisation: where the norm sits, and what depth does to it.

- ``placements.py`` ONE table: what each placement does, its theory, the catalog families
                    whose module names label its wiring diagram
- ``simulator.py``  forward and backward through L layers (``simulate_depth``)
- ``coincidence.py`` which runs lie on top of each other at every layer (``coinciding``)
- ``sweep.py``      the last layer's gradient against depth (``sweep_last_layer_grad``)
- ``theory.py``     closed-form predictions (Xiong et al. Lemma 2 / Theorem 1, DeepNorm)
- ``limits.py``     what the simulator refuses, before any work is done: its peak memory
                    and the work a spec counts (multiply-adds), from the spec alone

The package re-exports nothing (``engine.config`` reads ``placements`` while the simulator
needs ``engine.config``): import the module that defines a name.
"""
