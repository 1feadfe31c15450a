"""Speed and memory: timing LayerNorm vs RMSNorm here, and the roofline arithmetic.

- ``timing.py``   ``time_norms``: both norms timed side by side on this machine
- ``roofline.py`` bytes moved vs FLOPs: why a norm is memory-bound
"""
