"""What the dump loaders accept, in one place: the page states these numbers, the loaders
enforce them, and the tests read them from here.

Why each limit exists:
- ``UPLOAD_LIMIT_MB``: an upload is held in memory for its browser session; 200 MB is
  Streamlit's default ``server.maxUploadSize`` and the value ``.streamlit/config.toml``
  should set (the page says so; larger dumps go through ``python -m engine.dumps report``).
- ``MAX_EXPANDED_UPLOAD_MB``: an ``.npz`` upload may be compressed; a member that expands
  past this is refused before it is read (a 1 MB zip of zeros can claim gigabytes).
- ``MAX_SAFETENSORS_HEADER_BYTES``: the safetensors format's own ceiling on the JSON header.
- ``MAX_FILES``: a directory or glob of shards.
- ``WINDOW_BYTES``: how much of a file one unit of work maps at a time.  The mapping is
  dropped after each window, so the pages of a file larger than RAM never pile up in the
  process's resident set.
- ``CHUNK_VALUES``: values reduced at once; at float32 (4 MiB at most) the working buffers
  of a chunk stay in the CPU's cache while several statistics pass over them.
"""

from __future__ import annotations

UPLOAD_LIMIT_MB = 200
MAX_EXPANDED_UPLOAD_MB = 1024
MAX_SAFETENSORS_HEADER_BYTES = 100_000_000
MAX_NPY_HEADER_BYTES = 10_000  # numpy's own default guard in np.load (read_array_header)
MAX_FILES = 4096
WINDOW_BYTES = 64 * 2**20
CHUNK_VALUES = 1 << 19

ACCEPTED_SUFFIXES = (".safetensors", ".npy", ".npz", ".pt", ".pth")
ACCEPTED_DTYPES = ("float16", "bfloat16", "float32", "float64")
ACCEPTED_RANKS = (2, 3, 4)  # [T, d], [B, T, d] or [L, T, d], [L, B, T, d]

# Axes of the residual-stream entries: the last is always d (channels), the one before T.
AXES_BY_RANK = {2: ("Td",), 3: ("LTd", "BTd"), 4: ("LBTd",)}
AXES_CHOICES = ("auto", "Td", "BTd", "LTd", "LBTd")
