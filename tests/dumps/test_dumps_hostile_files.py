"""Uploads made to hang the server, take its memory, or break the page after a report, each
refused by name or read within bounds (found by a mutation fuzzer over every format).
Oracles: the refusal's key, the arrays written, and torch's own reshape of them."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch
from safetensors.torch import save

from engine.dumps.capture import FORMAT
from engine.dumps.dump import open_dump, read_tokens
from engine.dumps.formats import torch_file
from engine.dumps.formats.torch_records import walk_pickle
from engine.dumps.limits import MAX_ENTRIES, MAX_PICKLE_KEYS
from engine.dumps.report import report
from engine.dumps.sources import DumpFile, Upload
from engine.dumps.tables import json_text, report_summary, report_tables
from engine.errors import EngineError
from tests.app.dump_uploads import pt_bytes
from tests.dumps import dump_files as files
from ui.text.dumps import dump_tokens, layout_facts


def _refused(name: str, data: bytes) -> EngineError:
    with pytest.raises(EngineError) as refused:
        report(Upload(name, data))
    return refused.value


def _pt_around(pickle_bytes: bytes) -> bytes:
    """A torch.save-shaped zip around a hand-written ``data.pkl``."""
    held = io.BytesIO()
    with zipfile.ZipFile(held, "w") as archive:
        archive.writestr("a/data.pkl", pickle_bytes)
        archive.writestr("a/version", "3\n")
    return held.getvalue()


def _memoized(levels: int) -> bytes:  # protocol 4: (t, t) from two BINGETs, MEMOIZE'd
    steps = b"".join(b"h%ch%c\x86\x940" % (i - 1, i - 1) for i in range(1, levels + 1))
    return b"\x80\x04}N\x940" + steps + b"h%cNs." % levels


def _marked(levels: int) -> bytes:  # protocol 2: ( t ( POP t TUPLE is (t, t), a MARK popped
    steps = b"".join(b"(h%c(0h%ctq%c0" % (i - 1, i - 1, i) for i in range(1, levels + 1))
    return b"\x80\x02}Nq\x000" + steps + b"h%cNs." % levels


@pytest.mark.timeout(60, method="thread")  # unpickled, it never returns to Python's signals
@pytest.mark.parametrize(
    "pickled",
    [
        pytest.param(lambda n: b"\x80\x02}N" + b"2\x86" * n + b"Ns.", id="DUP"),
        pytest.param(_memoized, id="MEMOIZE"),
        pytest.param(_marked, id="POP-of-a-MARK"),
    ],
)
def test_a_pickle_whose_key_unfolds_without_end_is_refused_before_it_is_unpickled(pickled):
    """A tuple holding one tuple twice, 80 times over, as a dict's key: the unpickler hashed
    2⁸⁰ parts and never returned; built through a memo or around a popped MARK, the first
    walk of the pickle let it through."""
    (key,) = pickle.loads(pickled(3))  # 3 levels: a dict whose key is such a tuple
    assert key[0] is key[1] and key[0][0] is key[0][1]
    assert _refused("bomb.pt", _pt_around(pickled(80))).key == "dumps.pickle_unfolds"


def test_many_small_objects_each_holding_one_large_key_are_refused_together():
    """One key of 2¹⁹ parts (a tuple of itself, memoized) in many small dicts: each object
    stayed under the bound, and their hashing took 112 s."""
    key = b"".join(b"h%ch%c\x86\x940" % (i - 1, i - 1) for i in range(1, 20))
    dicts = b"}h\x13Ns0" * 60_000  # {key: None}, dropped, again
    pickled = b"\x80\x04N\x940" + key + dicts + b"N."
    assert _refused("many.pt", _pt_around(pickled)).key == "dumps.pickle_unfolds"


def test_legitimate_pickles_of_every_protocol_pass_the_walk():
    """torch.save's pickles of 4,096 tensors (MAX_ENTRIES) in each protocol: every storage
    counted, no bound reached (torch's own weights-only loader reads protocols 2 and 3)."""
    x = {f"model.layers.{i}.x": torch.randn(2, 3) for i in range(MAX_ENTRIES)}
    for protocol in (2, 3, 4, 5):
        held = io.BytesIO()
        torch.save(x, held, pickle_protocol=protocol)
        with zipfile.ZipFile(held) as archive:
            pickled = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
        assert walk_pickle(DumpFile("ok.pt"), pickled) == MAX_ENTRIES


def test_a_pickle_storing_at_a_far_memo_slot_is_refused_before_it_is_unpickled():
    """LONG_BINPUT 2²⁸ as the third opcode: the unpickler set aside 4.3 GB for the slots."""
    far = _pt_around(b"\x80\x02Nr" + (2**28).to_bytes(4, "little") + b".")
    error = _refused("memo.pt", far)
    assert error.key == "dumps.pickle_memo" and error.params["slot"] == 2**28


@pytest.mark.parametrize(
    "view",
    [
        lambda: torch.ones(1, 1, 8).expand(3, 5, 8),  # torch.expand: strides (0, 0, 1)
        lambda: torch.randn(16).as_strided((3, 5, 8), (1, 0, 1)),  # overlapping strides
    ],
)
def test_a_tensor_whose_elements_share_storage_is_left_out_with_its_shape_and_strides(view):
    """A 1.5 KB file made 4·10⁹ values for the report to read (10¹¹: 13 minutes); an
    as_strided one was copied whole at every window of rows (4.2 GB)."""
    x = files.stream(layers=3, tokens=5, d=8)
    dump = open_dump(Upload("views.pt", pt_bytes({"hidden_states": x, "shared": view()})))
    skipped = {s.key: s for s in dump.layout.skipped}
    assert skipped["shared"].why == "overlapping" and "strides [" in skipped["shared"].detail
    assert dump.layout.tokens == 5 and len(dump.layout.layers) == 3  # the stream is read


def test_views_whose_elements_are_apart_are_read_however_their_strides_nest():
    """Rows 8 apart, sequences 12 apart: no stride steps past all before it, yet no two
    elements meet (it was left out as overlapping)."""
    x = torch.randn(64)
    apart = x.as_strided((3, 2, 4), (8, 12, 1))
    dump = open_dump(Upload("apart.pt", pt_bytes({"hidden_states": apart})))
    assert not dump.layout.skipped
    assert torch.equal(read_tokens(dump, [0, 1, 2], [0, 1]), apart.reshape(3, 2, 4))


def test_a_transposed_stream_reads_the_rows_torch_reshapes_it_into():
    x = files.stream(layers=3, batch=2, tokens=5, d=8)  # [L, B, T, d]
    stored = x.transpose(1, 2).contiguous().transpose(1, 2)  # the same values, no view of rows
    assert not stored.is_contiguous()
    dump = open_dump(Upload("t.pt", pt_bytes({"hidden_states": stored})))
    got = read_tokens(dump, [0, 1, 2], list(range(10)))
    assert torch.equal(got, x.reshape(3, 10, 8))


def test_a_zip_whose_end_record_names_two_directories_is_judged_by_the_one_zipfile_reads():
    """Two zip64 end records: the one the locator names lists 1 member, the one zipfile reads
    (just before the locator) lists more than accepted; the first was believed, and zipfile
    then parsed 3.9 million members (2 GB)."""
    record = struct.Struct("<4sQ2H2L4Q")
    decoy = record.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, 46, 0)
    real = record.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, 5000, 3 * MAX_ENTRIES, 46, 0)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, 0, 1)  # names the decoy, at 0
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    data = decoy + real + locator + end
    for name in ("two.npz", "two.pt"):
        error = _refused(name, data)
        assert error.key == "dumps.too_many_entries" and error.params["count"] == 3 * MAX_ENTRIES


def _npz_with_tokens(padding: int) -> bytes:
    tokens, stream = io.BytesIO(), io.BytesIO()
    np.save(tokens, np.array(["a", "b", "c", "d", "e"]))
    np.save(stream, files.stream(layers=3, batch=1, tokens=5, d=8)[:, 0].numpy())
    held = io.BytesIO()
    with zipfile.ZipFile(held, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("hidden.npy", stream.getvalue())
        archive.writestr("tokens.npy", tokens.getvalue() + bytes(padding))
    return held.getvalue()


def test_a_tokens_member_holding_more_than_its_header_says_is_not_read_whole():
    """Its 4 strings' header, then 990 MB of zeros in 1 MB deflated: read whole (2 GB)."""
    assert dump_tokens(report(Upload("named.npz", _npz_with_tokens(0)))) == (tuple("abcde"),)
    padded = report(Upload("padded.npz", _npz_with_tokens(5_000_000)))
    assert dump_tokens(padded) is None and padded.layout.tokens == 5


def _capture(**changed: str) -> bytes:
    x = files.stream(layers=3, batch=1, tokens=4, d=8)
    meta = {
        "format": FORMAT,
        "model": "m",
        "architecture": "a",
        "compute_dtype": "float32",
        "weights": "w",
        "prompts": '["p"]',
        "tokens": '[["a", "b", "c", "d"]]',
        "lengths": "[4]",
        **changed,
    }
    tensors = {f"model.layers.{i}.input": x[i] for i in range(3)}
    return save({k: v.contiguous() for k, v in tensors.items()}, metadata=meta)


NAMED = (tuple("abcd"),)  # the tokens entry beside a capture's damaged metadata


@pytest.mark.parametrize(
    "name, data, tokens",
    [
        ("deep.safetensors", lambda: safetensors_bytes_with({"tokens": "[" * 100_000}), None),
        ("prompts.safetensors", lambda: _capture(prompts="[" * 100_000), NAMED),
        ("tokens.safetensors", lambda: _capture(tokens="[" * 100_000), None),
        ("lengths.safetensors", lambda: _capture(lengths="[1e400]"), NAMED),
        ("codes.npz", lambda: _npz_with_bad_codes(), None),
        ("surrogates.npz", lambda: _npz_with_bad_codes(b"\x00\xd8\x00\x00"), None),
        ("prompt.safetensors", lambda: _capture(prompts='["\\ud800"]'), NAMED),
        ("token.safetensors", lambda: _capture(tokens='[["\\ud800", "b", "c", "d"]]'), None),
    ],
)
def test_damaged_token_metadata_is_not_read_and_the_page_stays_whole(name, data, tokens):
    """JSON nested past the parser's depth, a length of 1e400, and numpy strings holding no
    character (0x7F800000): the report was made, then the page's text raised (RecursionError,
    OverflowError, SystemError).  A capture's damaged record is no capture; the tokens entry
    beside it still names the tokens."""
    rep = report(Upload(name, data()))
    assert dump_tokens(rep) == tokens
    assert json_text(report_summary(rep), report_tables(rep)).encode("utf-8")  # the download
    for lang in ("en", "zh"):
        assert layout_facts(rep, lang)


def safetensors_bytes_with(meta: dict) -> bytes:
    x = files.stream(layers=3, batch=1, tokens=4, d=8)
    return save({f"hidden_states.{i}": x[i].contiguous() for i in range(3)}, metadata=meta)


def _npz_with_bad_codes(code: bytes = b"\x00\x00\x80\x7f") -> bytes:
    """A tokens member of 4 strings of dtype <U2 whose characters are ``code`` (0x7F800000:
    no character; 0xD800: a lone surrogate)."""
    tokens, stream = io.BytesIO(), io.BytesIO()
    np.save(tokens, np.zeros(4, "<U2"))
    np.save(stream, files.stream(layers=3, batch=1, tokens=4, d=8)[:, 0].numpy())
    held = io.BytesIO()
    with zipfile.ZipFile(held, "w") as archive:
        archive.writestr("hidden.npy", stream.getvalue())
        archive.writestr("tokens.npy", tokens.getvalue()[:-32] + code * 8)
    return held.getvalue()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch's own, on the oracle
@pytest.mark.parametrize("protocol", [4, 5])
def test_a_pt_of_pickle_protocol_4_or_5_is_refused_as_unread_not_as_code(protocol):
    """torch's weights-only loader cannot read a FRAME: the refusal said the file "would run
    code"; it names the protocol and the protocols read (torch's own load, the oracle)."""
    held = io.BytesIO()
    torch.save({"hidden_states.0": torch.randn(2, 4)}, held, pickle_protocol=protocol)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 149"):
        torch.load(io.BytesIO(held.getvalue()), weights_only=True)
    assert _refused("p.pt", held.getvalue()).key == "dumps.pickle_frames_unread"


def test_a_cache_of_many_norms_is_loaded_a_few_times_not_four_times_a_norm(monkeypatch):
    """A TransformerLens-style cache (8 hooks a block, both norms' outputs): every DyT fit
    loaded the whole .pt again, four times a pair (258 loads at 64 blocks; over 100 s at
    256).  The fits share one reader per file."""
    loads, load = [], torch_file._load
    monkeypatch.setattr(torch_file, "_load", lambda file: loads.append(file) or load(file))
    hooks = ["hook_resid_pre", "ln1.hook_normalized", "hook_attn_out", "hook_resid_mid"]
    hooks += ["ln2.hook_normalized", "hook_mlp_out", "hook_resid_post", "attn.hook_z"]
    cache = {f"blocks.{b}.{h}": torch.randn(2, 4) for b in range(32) for h in hooks}
    fitted = report(Upload("cache.pt", pt_bytes(cache)))
    assert len(fitted.dyt) == 64 and len(loads) <= 4


def test_a_dict_of_more_keys_than_any_accepted_file_has_is_refused_before_loading():
    """Int keys 2⁶¹ − 1 apart share one hash: each insertion compared with all before it,
    one counted part each; 120,000 of them (1.4 MB) kept torch's loader busy for minutes."""
    step = 2**61 - 1
    keys = [1 + i * step for i in range(MAX_PICKLE_KEYS + 1)]
    assert len({hash(k) for k in keys[:100]}) == 1
    body = b"".join(b"\x8a\x0c" + k.to_bytes(12, "little") + b"N" for k in keys)  # LONG1 k
    error = _refused("keys.pt", _pt_around(b"\x80\x02}(" + body + b"u."))
    assert error.key == "dumps.pickle_too_many_keys" and error.params["limit"] == MAX_PICKLE_KEYS
