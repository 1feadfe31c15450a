"""Every refusal of the dumps package: one table of keys and English messages.

``refuse(name, **params)`` builds the ``EngineError`` with key ``"dumps.<name>"``; pages
translate it from ``locales/<lang>/errors.toml`` (table ``[dumps]``), whose English text
is this table's (tests/dumps/test_refusals.py keeps the two equal).  Each message names the
file, the entry where there is one, and what is accepted.
"""

from __future__ import annotations

from engine.errors import EngineError

MESSAGES = {
    "not_found": "{file}: no such file or directory.",
    "no_files": (
        "{source} matched no dump file. Accepted: a file, a directory or a glob of "
        "{accepted} files."
    ),
    "too_many_files": "{source} matched {count} files; at most {limit} shards are accepted.",
    "unsupported_suffix": (
        "{file}: the extension “{suffix}” is not a dump format. Accepted: {accepted}."
    ),
    "upload_too_large": (
        "{file} is {size_mb} MB; uploads are limited to {limit_mb} MB. For larger dumps run "
        "python -m engine.dumps report on the file."
    ),
    "expands_too_far": (
        "{file}: its members expand to {size_mb} MB when decompressed; at most {limit_mb} MB "
        "together are accepted from an upload."
    ),
    "corrupt": (
        "{file}, entry “{entry}”: the file is damaged or not a {format} file ({detail}). "
        "Accepted: {accepted}."
    ),
    "truncated": (
        "{file}, entry “{entry}”: its header claims {claimed} bytes of data but the file "
        "holds {available}. The file is truncated or its header is wrong."
    ),
    "header_too_large": (
        "{file}: the safetensors header claims {size} bytes; at most {limit} are accepted, "
        "enough for {entries} entries with long names."
    ),
    "directory_too_large": (
        "{file}: its zip directory lists {count} members in {size} bytes; at most {limit} "
        "bytes are accepted, enough for {entries} arrays."
    ),
    "pickle_too_large": (
        "{file}: its pickle (the structure around the tensors) is {size} bytes; at most "
        "{limit} are accepted, far more than {entries} tensors need."
    ),
    "pickle_too_complex": (
        "{file}: its pickle takes more than {limit} steps to unpickle; {entries} tensors in "
        "lists and dicts take far fewer. Accepted: a tensor, a list or tuple of tensors, or "
        "a dict of them."
    ),
    "too_many_entries": (
        "{file} holds {count} arrays (every reference to a tensor counted); at most {limit} "
        "are accepted. Save only the arrays to look at: the residual stream and the norms' "
        "inputs and outputs."
    ),
    "too_many_references": (
        "{file}: walking its lists and dicts reaches more than {limit} objects (a list shared "
        "by reference counts each time it is reached); at most {limit} are accepted, for "
        "{entries} arrays."
    ),
    "name_too_long": (
        "{file}: an entry's name is {length} characters long (“{name}…”); at most {limit} "
        "are accepted."
    ),
    "too_many_layers": (
        "Stream “{stream}” read with axes {axes} has {count} layers; at most {limit} are "
        "accepted. Choose other axes or another stream, or dump fewer layers."
    ),
    "too_many_streams": (
        "{file}: its entries make {count} candidate streams; at most {limit} are accepted. "
        "Save only the arrays to look at: the residual stream and the norms' inputs and "
        "outputs."
    ),
    "too_many_norm_pairs": (
        "{file}: it holds the input and output of {count} norms; at most {limit} are accepted."
    ),
    "too_much_memory": (
        "{file}: reading it would take about {need} GiB of memory at its peak ({layers} "
        "layers × {rows} tokens, d = {d}); one read may take at most {limit} GiB. Choose a "
        "stream or axes with fewer tokens, or dump fewer tokens."
    ),
    "unsafe_pickle": (
        "{file}: refused without running it: the file would run code when loaded ({detail}). "
        "Accepted: .pt/.pth files that torch.load(weights_only=True) reads — a tensor, a "
        "list or tuple of tensors, or a dict of them."
    ),
    "object_array": (
        "{file}, entry “{entry}”: an array of Python objects needs pickle, which is never "
        "allowed. Accepted: float16, float32 or float64 arrays."
    ),
    "unsupported_dtype": (
        "{file}, entry “{entry}”: dtype {dtype} is not accepted. Accepted: {accepted}."
    ),
    "pt_content": (
        "{file}, entry “{entry}”: holds a {kind}. Accepted: a tensor, a list or tuple of "
        "tensors, or a dict of them."
    ),
    "empty": "{file}: holds no arrays. Accepted: at least one float array of shape [.., T, d].",
    "no_usable_entries": (
        "{file}: none of its {count} entries is a float array of 2 to 4 axes ({examples}). "
        "Accepted: {accepted} arrays shaped [T, d], [B, T, d], [L, T, d] or [L, B, T, d]."
    ),
    "empty_array": (
        "{file}, entry “{entry}”: shape {shape} has an empty axis. Accepted: every axis >= 1."
    ),
    "mixed_shapes": (
        "Entry “{entry}” has shape {shape} but “{other}” has {other_shape}: the layers of one "
        "stream must share T and d. Pick another stream, or dump the layers with equal shapes."
    ),
    "unknown_stream": "Stream “{stream}” is not in this dump. Accepted: {accepted}.",
    "axes_mismatch": (
        "Axes “{axes}” do not fit entry “{entry}” of shape {shape}. Accepted for this shape: "
        "{accepted}."
    ),
    "bad_spec": "{name} = {value} is not accepted. Accepted: {accepted}.",
    "layer_out_of_range": "Layer {layer} is not in this dump. Accepted: 0 to {last}.",
    "row_out_of_range": (
        "Token (batch {batch}, position {token}) is not in this dump. Accepted: batch 0 to "
        "{last_batch}, position 0 to {last_token}."
    ),
    "dask_missing": (
        "--dask needs the optional packages dask and distributed. Install them with: "
        "pip install -r requirements-scale.txt"
    ),
    "dask_failed": "The Dask cluster at {address} could not run the reduction ({detail}).",
    "dask_uploads": "An uploaded dump is reduced in this process; --dask takes files on disk.",
}


def refuse(name: str, /, **params: object) -> EngineError:
    """The ``EngineError`` for refusal ``name`` with ``params`` filled into its message."""
    return EngineError(f"dumps.{name}", params, MESSAGES[name].format(**params))
