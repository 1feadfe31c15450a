"""What the dump loaders accept, in one place: the page states these numbers, the loaders
enforce them, and the tests read them from here.

Sizes are in decimal megabytes (``MB`` = 10⁶ bytes), the unit the browser's uploader uses
to check ``server.maxUploadSize`` on Linux and macOS (Windows browsers count 2²⁰), and the
unit every message states.

Why each limit exists:
- ``UPLOAD_LIMIT_MB``: an upload is held in memory for its browser session; 200 MB is
  Streamlit's default ``server.maxUploadSize``, the value ``.streamlit/config.toml`` sets
  (the page says so; larger dumps go through ``python -m engine.dumps report``).
- ``MAX_EXPANDED_UPLOAD_MB``: an ``.npz`` upload may be compressed; its members together
  may expand to this much, checked from the zip directory before any member is read (a
  1 MB zip of zeros can claim gigabytes).

The structure of a file is bounded before any tensor is read, from its header, zip directory
or pickle opcodes, by what the page can show: a report of thousands of layers, or a choice
among thousands of streams, helps no one, and each layer costs memory.  Each bound is named
in the refusal that enforces it.
- ``MAX_ENTRIES``: arrays in a dump (all its files; a ``.pt`` counts each reference to a
  tensor, so a list holding one tensor 2⁴⁰ times through shared references is refused by
  its count, never walked).  A 126-layer model with hooks on every norm has ~800.
- ``MAX_REFERENCES``: objects a walk of a ``.pt`` file's lists and dicts reaches (each
  container and each value, once per reference), counted before the walk: a list of lists
  of one tensor each reaches 2 objects per tensor.
- ``MAX_LAYERS``: points of the residual stream (the largest models have ~130 layers).
- ``MAX_STREAMS``: candidate streams offered in the stream override.
- ``MAX_NORM_PAIRS``: norms with their input and output in the dump (4 per block, 256 blocks).
- ``MAX_NAME_CHARS``: an entry's name (module paths are ~60 characters).
- ``MAX_SAFETENSORS_HEADER_BYTES``: a safetensors header (JSON), read whole before parsing;
  ``MAX_ENTRIES`` entries with the longest names and a capture's token metadata fit in it
  (the format itself allows 100 MB, which parsed takes gigabytes).
- ``MAX_ZIP_DIRECTORY_BYTES``: a ``.npz`` or ``.pt`` zip's central directory, which zipfile
  and torch parse whole on opening: ``MAX_ENTRIES`` records with the longest names fit.
- ``MAX_PICKLE_BYTES`` and ``MAX_PICKLE_OPCODES``: a ``.pt`` file's pickle (its structure;
  tensors' data are separate records).  torch.save writes ~32 opcodes per tensor; each
  opcode makes at most one object when unpickled, so this bounds the unpickler's memory
  (with its memo's slots numbered as torch.save numbers them: ``torch_records.walk_pickle``).
- ``MAX_PICKLE_PARTS``: the parts that pickle's objects unfold into, all together, a shared
  object counted again at each use (a dict's key is hashed through all of its parts):
  sixteen per opcode; torch.save's pickle of ``MAX_ENTRIES`` tensors in a dict has 0.39-0.48 M.
- ``MAX_PICKLE_KEYS``: keys that pickle puts into its dicts and sets, all together: each
  leads to an object the walk after loading counts, so ``MAX_REFERENCES`` (keys of one hash,
  the worst, then cost torch's loader ~3 s).
- ``MAX_FILES``: a directory or glob of shards.
- ``MEMORY_BUDGET_BYTES``: what one read may add to the process at its peak (the report's
  arrays, its tables and a window of data), predicted from the layout before any data is
  read (``engine.dumps.report.report_bytes``); a dump over it is refused.  A server holds
  one process for every visitor: one read must never take it down.
- ``WINDOW_BYTES``: how much of a file one unit of work maps at a time.  The mapping is
  dropped after each window, so the pages of a file larger than RAM never pile up in the
  process's resident set.
- ``CHUNK_VALUES``: values reduced at once; at float32 (4 MiB at most) the working buffers
  of a chunk stay in the CPU's cache while several statistics pass over them.
"""

from __future__ import annotations

MB = 10**6  # bytes in the megabyte every size is stated in
UPLOAD_LIMIT_MB = 200
MAX_EXPANDED_UPLOAD_MB = 1000
MAX_ENTRIES = 4096
MAX_REFERENCES = 4 * MAX_ENTRIES
MAX_LAYERS = 512
MAX_STREAMS = 256
MAX_NORM_PAIRS = 1024
MAX_NAME_CHARS = 512
MAX_SAFETENSORS_HEADER_BYTES = 8 * MB
MAX_ZIP_DIRECTORY_BYTES = 8 * MB
MAX_PICKLE_BYTES = 8 * MB
MAX_PICKLE_OPCODES = 64 * MAX_ENTRIES
MAX_PICKLE_PARTS = 16 * MAX_PICKLE_OPCODES
MAX_PICKLE_KEYS = MAX_REFERENCES
MAX_NPY_HEADER_BYTES = 10_000  # numpy's own default guard in np.load (read_array_header)
MAX_FILES = 4096
MEMORY_BUDGET_BYTES = 3 * 2**29  # 1.5 GiB
WINDOW_BYTES = 64 * 2**20
CHUNK_VALUES = 1 << 19

ACCEPTED_SUFFIXES = (".safetensors", ".npy", ".npz", ".pt", ".pth")
ACCEPTED_DTYPES = ("float16", "bfloat16", "float32", "float64")
ACCEPTED_RANKS = (2, 3, 4)  # [T, d], [B, T, d] or [L, T, d], [L, B, T, d]

# Axes of the residual-stream entries: the last is always d (channels), the one before T.
AXES_BY_RANK = {2: ("Td",), 3: ("LTd", "BTd"), 4: ("LBTd",)}
