"""A file of another kind than its name says, or with a part no writer makes, is refused by
saying what it is and what is accepted, in English and Chinese: no C++ check's words, no
memory address, no Python repr."""

from __future__ import annotations

import ast
import io
import re
import struct
import zipfile

import numpy as np
import pytest

from engine.dumps.report import report
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from tests.dumps.test_dumps_bad_input import refusal
from tests.untranslated import english_runs
from ui.i18n import translate

_INTERNALS = re.compile(r"0x[0-9a-f]{6,}|<\w+[ .]|enforce fail|inline_container|ZipInfo")


def _refused_in_both(source, key: str) -> str:
    """The English message (no internals); the Chinese one holds no English sentence."""
    error = refusal(source, key)
    english = str(error)
    assert not _INTERNALS.search(english), english
    chinese = translate(f"errors.{error.key}", "zh", **error.params)
    assert not english_runs(chinese), chinese
    assert error.params["file"] in chinese and "可接受" in chinese
    return english


def _npz_bytes() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{f"hidden_states.{i}": np.ones((6, 8), np.float32) for i in range(3)})
    return buffer.getvalue()


def test_an_npz_named_pt_is_called_an_npz(tmp_path):
    path = tmp_path / "acts.pt"
    path.write_bytes(_npz_bytes())
    message = _refused_in_both(path, "npz_as_pt")
    assert message.startswith("acts.pt is an .npz file") and "Rename it to .npz" in message
    (tmp_path / "acts.npz").write_bytes(_npz_bytes())
    assert report(tmp_path / "acts.npz").layout.d == 8  # the same bytes named .npz are read


def test_a_zip_of_other_files_named_pt_is_not_a_torch_archive(tmp_path):
    path = tmp_path / "notes.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("folder/readme.txt", "hello")
    assert "holds no data.pkl" in _refused_in_both(path, "zip_not_torch")


def test_a_torch_file_named_npz_is_called_a_pytorch_file(tmp_path):
    path = files.write_pt(tmp_path / "acts.npz", files.hf_names(files.stream()))
    for source in (path, Upload("acts.npz", path.read_bytes())):
        message = _refused_in_both(source, "pt_as_npz")
        assert message.startswith("acts.npz is a PyTorch file") and "Rename it to .pt" in message


@pytest.mark.parametrize(
    "content",
    [b"these are just some notes, not tensors\n", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'"],
    ids=["text", "npy"],
)
def test_a_file_whose_first_bytes_claim_a_header_past_its_end_is_not_safetensors(tmp_path, content):
    """Before the header's bound: text read as a length is astronomically long."""
    path = tmp_path / "acts.safetensors"
    path.write_bytes(content)
    message = _refused_in_both(path, "not_safetensors")
    assert "is not a safetensors file" in message and "long names" not in message
    assert f"the whole file is {len(content)} bytes" in message


def _npy_of_header(text: bytes) -> bytes:
    header = text.ljust(117) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 192


@pytest.mark.parametrize(
    "values",
    [b"'<f4', 'fortran_order': __import__('os').getpid()", b"'<f4', 'fortran_order': False or 1"],
    ids=["call", "operator"],
)
def test_an_npy_header_holding_an_expression_is_named_without_a_memory_address(tmp_path, values):
    data = _npy_of_header(b"{'descr': " + values + b", 'shape': (6, 8), }")
    (tmp_path / "eval.npy").write_bytes(data)
    for source in (tmp_path / "eval.npy", Upload("eval.npy", data)):
        assert "holds an expression" in _refused_in_both(source, "npy_header_code")


@pytest.mark.parametrize(
    "values",
    [
        b"'malformed node or string', 'fortran_order': False",  # numpy's words for a call
        b"'<f4', 'fortran_order': 'malformed node or string'",
        b"'<f4', 'fortran_order': False, 'shape': (-2, 4), 'x': 1",  # a sign, an extra key
    ],
    ids=["descr", "fortran_order", "signed"],
)
def test_an_npy_header_of_plain_values_numpy_refuses_is_damaged_not_code(tmp_path, values):
    data = _npy_of_header(b"{'descr': " + values + b", 'shape': (2, 4), }")
    (tmp_path / "words.npy").write_bytes(data)
    for source in (tmp_path / "words.npy", Upload("words.npy", data)):
        assert "holds an expression" not in str(refusal(source, "corrupt_file"))


DEEP_HEADERS = {  # beyond CPython's parser (numpy's too): MemoryError, RecursionError, ...
    "unary_deep": (b"-" * 9900 + b"1", "npy_header_nested"),
    "signs_in_lists": (b"[" * 99 + b"-" * 9700 + b"1" + b"]" * 99, "npy_header_nested"),
    "lists_deep": (b"[" * 4900 + b"]" * 4900, "npy_header_nested"),
    "attr_chain": (b"a" + b".a" * 4900, "npy_header_code"),
    "binop_chain": (b"1" + b"+1" * 4900, "npy_header_code"),
    "call_deep": (b"f(" * 3000 + b")" * 3000, "npy_header_code"),
    "f_string_deep": (b"[" * 300 + b"f'{x}'" + b"]" * 300, "npy_header_code"),
    "minus_after_a_list": (b"[" * 300 + b"-1]-1" + b"]" * 299, "npy_header_code"),
    "signs_in_a_dict": (b"{1: " * 300 + b"-(+2)" + b"}" * 300, "npy_header_nested"),
}


@pytest.mark.parametrize("header, key", DEEP_HEADERS.values(), ids=DEEP_HEADERS)
def test_an_npy_header_nested_past_pythons_parser_is_code_or_nested_in_our_words(
    tmp_path, header, key
):
    """Names and operators are code however deep; signs and brackets alone are damaged,
    said in our words, never the parser's ("MemoryError", "maximum recursion depth")."""
    with pytest.raises((MemoryError, RecursionError, SyntaxError)):
        ast.parse(header.decode(), mode="eval")
    data = _npy_of_header(header)
    with pytest.raises((ValueError, MemoryError, RecursionError)):  # numpy's reader too
        np.lib.format.read_array_header_1_0(io.BytesIO(data[8:]), len(data))
    (tmp_path / "deep.npy").write_bytes(data)
    with zipfile.ZipFile(tmp_path / "deep.npz", "w") as archive:
        archive.writestr("h.npy", data)
    for source in (tmp_path / "deep.npy", Upload("deep.npy", data), tmp_path / "deep.npz"):
        message = _refused_in_both(source, key)
        assert "Error" not in message and "recursion" not in message


@pytest.mark.parametrize(
    "extra, detail",
    [
        (b"'shape': (2,), 'x': 1+2j", "Header does not contain the correct keys"),
        (b"'shape': set()", "shape is not valid: set()"),
    ],
    ids=["complex_extra_key", "empty_set_shape"],
)
def test_plain_values_python_reads_in_a_refused_npy_header_are_damage_not_code(
    tmp_path, extra, detail
):
    """``ast.literal_eval`` reads ``1+2j`` and ``set()`` as values: numpy refused them
    for a key or the shape, in its words."""
    header = b"{'descr': '<f4', 'fortran_order': False, " + extra + b"}"
    ast.literal_eval(header.decode())
    (tmp_path / "plain.npy").write_bytes(_npy_of_header(header))
    assert detail in str(refusal(tmp_path / "plain.npy", "corrupt_file"))  # numpy's English


def _encrypted(data: bytes, index: int) -> tuple[bytes, str]:
    """The zip with member ``index`` flagged as encrypted (bit 0, in its local and central
    headers), as a tool that encrypts would; zipfile itself writes no encryption."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.infolist()[index]
        local, name = info.header_offset, info.filename.encode()
    for at in (local + 6, _central_flag(data, name)):
        data[at] |= 0x01
    return bytes(data), info.filename


def test_an_encrypted_npz_member_is_named_as_encrypted(tmp_path):
    data, member = _encrypted(_npz_bytes(), 1)
    (tmp_path / "locked.npz").write_bytes(data)
    message = _refused_in_both(tmp_path / "locked.npz", "encrypted_member")
    assert f"member “{member}”: the member is encrypted" in message


@pytest.mark.parametrize("member", ["acts/data.pkl", "acts/data/0", "acts/version"])
def test_an_encrypted_pt_record_is_named_as_encrypted(tmp_path, member):
    data = files.write_pt(tmp_path / "acts.pt", {"h": files.stream()[0]}).read_bytes()
    names = [info.filename for info in zipfile.ZipFile(io.BytesIO(data)).infolist()]
    data, _ = _encrypted(data, names.index(member))  # torch.save names the folder "acts"
    (tmp_path / "locked.pt").write_bytes(data)
    for source in (tmp_path / "locked.pt", Upload("locked.pt", data)):
        message = _refused_in_both(source, "encrypted_member")
        assert f"member “{member}”: the member is encrypted" in message


def test_a_zip_with_a_pickle_but_no_version_record_is_not_a_torch_archive(tmp_path):
    saved = files.write_pt(tmp_path / "acts.pt", {"h": files.stream()[0]}).read_bytes()
    path = tmp_path / "mixed.pt"
    with zipfile.ZipFile(io.BytesIO(saved)) as source, zipfile.ZipFile(path, "w") as archive:
        for info in source.infolist():
            if not info.filename.endswith("version"):
                archive.writestr(info, source.read(info))
    message = _refused_in_both(path, "torch_no_version")
    assert "with a pickle, “acts/data.pkl”, but without the version record" in message


def _central_flag(data: bytearray, name: bytes) -> int:
    """The offset of the flag field of ``name``'s central directory record."""
    at = bytes(data).find(b"PK\x01\x02")
    while at >= 0:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46 : at + 46 + length]) == name:
            return at + 8
        at = bytes(data).find(b"PK\x01\x02", at + 4)
    raise AssertionError(name)
