"""Layout inference: which entries are the residual stream, in which layer order, with which
axes, and which entries hold a norm's input and output.

The inference is returned as data (``Layout``) with the reason for each choice, so a page
can show it and a user can override it through ``DumpSpec`` (``stream``, ``axes``,
``layer_order``).  Rules, in order:
1. Entries with the same name in several files are shards of one array: their rows join.
   Files that each hold one bare array are named by their stem; numbered stems that read
   as shards (``part``, ``shard``, ``-of-``...) or hold 4-axis arrays are shards, others
   are one file per layer.
2. Names are split into a template and a layer number (``names.split_index``); every
   template of 2-4-axis float entries is a candidate stream, ranked by ``names.
   stream_priority`` (``hook_resid_pre`` before ``hidden_states`` before block outputs...).
3. Axes: per-layer entries are ``[T, d]`` or ``[B, T, d]``; one stacked entry is
   ``[L, B, T, d]``, ``[L, T, d]`` (a 3-axis stack is read as layers unless its name says
   batch; override with ``axes="BTd"``) or ``[T, d]``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from engine.config import DumpSpec
from engine.dumps import names
from engine.dumps.formats.entries import WHOLE_FILE, EntryInfo, FileScan, Skipped, entry_name
from engine.dumps.limits import (
    ACCEPTED_DTYPES,
    ACCEPTED_RANKS,
    AXES_BY_RANK,
    MAX_LAYERS,
    MAX_NORM_PAIRS,
    MAX_STREAMS,
)
from engine.dumps.refusals import refuse
from engine.errors import EngineError, Listing, Phrase


@dataclass(frozen=True)
class Piece:
    """Rows ``row_start : row_start + rows`` of one entry, in the entry's flattened rows."""

    entry: EntryInfo
    row_start: int
    rows: int


@dataclass(frozen=True)
class LayerSlot:
    """One point of the residual stream: its label and where its ``B*T`` rows are."""

    label: str
    pieces: tuple[Piece, ...]


@dataclass(frozen=True)
class NormPair:
    """Where a dump holds one norm's input and output, row for row."""

    label: str  # e.g. "model.layers.3.input_layernorm" or "blocks.3.ln1"
    layer: int | None  # the number in its name
    inputs: tuple[Piece, ...]
    outputs: tuple[Piece, ...]
    weight: EntryInfo | None  # [d], when the dump holds it (the output is then affine)
    bias: EntryInfo | None


@dataclass(frozen=True)
class Layout:
    """The inferred (or overridden) reading of a dump; every field is plain data."""

    stream: str  # the chosen template, e.g. "hidden_states.{i}"
    stream_reason: str  # "override" | "priority" | "only"
    streams: tuple[str, ...]  # every candidate template, best guess first
    axes: str  # axes of the stream's entries: "Td", "BTd", "LTd" or "LBTd"
    axes_reason: str  # "override" | "rank" | "per_layer" | "name_batch" | "stack_assumed"
    layer_order: str  # "names" | "file"
    layers: tuple[LayerSlot, ...]
    batch: int  # B, summed over shards
    tokens: int  # T
    d: int
    dtype: str  # the stream's dtype; a stream stored in several: each, in layer order
    #   ("float32, float16"), never only the first layer's
    norm_pairs: tuple[NormPair, ...]
    skipped: tuple[Skipped, ...]  # the entries not used, and why


def _named_entries(scans: tuple[FileScan, ...]) -> dict[str, list[EntryInfo]]:
    """name → its entries, one per shard file, in file order (rule 1)."""
    bare = all(len(s.entries) == 1 and s.entries[0].key == "" for s in scans)
    shard_name = None
    if bare and len(scans) > 1:
        template, _ = names.split_index(scans[0].entries[0].name)
        if names.is_shard_template(template) or len(scans[0].entries[0].shape) == 4:
            shard_name = template.replace("{i}", "*")  # one array, its shards numbered
    grouped: dict[str, list[EntryInfo]] = defaultdict(list)
    for scan in scans:
        for entry in scan.entries:
            grouped[shard_name or entry.name].append(entry)
    return grouped


def _candidates(grouped: dict[str, list[EntryInfo]]) -> dict[str, dict]:
    """template → {index or None: [entries]} for every possible stream."""
    split = {name: names.split_index(name) for name in grouped}
    glued: dict[str, list[str]] = defaultdict(list)  # "h{i}" → ["h0", "h1", ...]
    for name, (_, index) in split.items():
        if index is None and (parts := names.split_glued(name)) is not None:
            glued[parts[0]].append(name)
    for members in glued.values():
        if len(members) > 1:
            for name in members:
                split[name] = names.split_glued(name)
    templates: dict[str, dict] = defaultdict(dict)
    for name, entries in grouped.items():
        template, index = split[name]
        if names.is_auxiliary(template) or len(entries[0].shape) not in ACCEPTED_RANKS:
            continue
        templates[template][index] = entries
    for template, members in list(templates.items()):
        (index, entries), *more = members.items()
        if index is not None and not more and len(entries[0].shape) > 3:
            # one numbered entry of 4 axes ("run_3.npy" holding [L, B, T, d]) is no layer of
            # a stream, which has 2 or 3: it is a stream of its own, named as it is
            del templates[template]
            templates[names.fill(template, index)][None] = entries
    return templates


def _mixed_shapes(entry: EntryInfo, other: EntryInfo) -> EngineError:
    return refuse(
        "mixed_shapes",
        entry=entry.label,
        shape=list(entry.shape),
        other=other.label,
        other_shape=list(other.shape),
    )


def _pieces(entries: list[EntryInfo]) -> tuple[Piece, ...]:
    return tuple(Piece(e, 0, e.rows) for e in entries)


def _check_same_rows(members: dict) -> tuple[int, ...]:
    """The shared trailing shape ([T, d], or [B, T, d]...) of a template's entries."""
    first = None
    for entries in members.values():
        for entry in entries:
            if 0 in entry.shape:
                raise refuse(
                    "empty_array",
                    file=entry.file.name,
                    entry=entry_name(entry.key),
                    shape=list(entry.shape),
                )
            if first is None:
                first = entry
            elif entry.shape[-2:] != first.shape[-2:] or len(entry.shape) != len(first.shape):
                raise _mixed_shapes(entry, first)
    return first.shape


def _choose_stream(templates: dict, spec: DumpSpec) -> tuple[str, str, tuple[str, ...]]:
    ranked = sorted(
        templates, key=lambda t: (names.stream_priority(t), -len(templates[t]), t)
    )  # best guess first
    if spec.stream != "auto":
        if spec.stream not in templates:
            raise refuse("unknown_stream", stream=spec.stream, accepted=", ".join(ranked))
        return spec.stream, "override", tuple(ranked)
    for template in ranked:
        try:
            _check_same_rows(templates[template])
        except EngineError:
            continue  # skip a broken candidate while a good one exists
        return template, "only" if len(ranked) == 1 else "priority", tuple(ranked)
    _check_same_rows(templates[ranked[0]])  # raises the best candidate's own refusal
    raise AssertionError("unreachable")


def _axes(template: str, shape: tuple[int, ...], per_layer: bool, spec: DumpSpec):
    rank = len(shape)
    allowed = ("Td", "BTd") if per_layer else AXES_BY_RANK[rank]
    allowed = tuple(a for a in allowed if len(a) == rank)
    entry = names.fill(template, 0) if per_layer else template
    if not allowed:  # a layer of more than 3 axes
        raise refuse("per_layer_axes", entry=entry, shape=list(shape))
    if spec.axes != "auto":
        if spec.axes not in allowed:
            accepted = ", ".join(allowed)
            raise refuse(
                "axes_mismatch", axes=spec.axes, entry=entry, shape=list(shape), accepted=accepted
            )
        return spec.axes, "override"
    if per_layer:
        return allowed[0], "per_layer"
    if rank == 3:
        if names.BATCH_WORDS.search(template) and not names.STACK_WORDS.search(template):
            return "BTd", "name_batch"
        return "LTd", "stack_assumed"
    return allowed[0], "rank"


def _check_layers(template: str, axes: str, count: int) -> None:
    if count > MAX_LAYERS:
        raise refuse("too_many_layers", stream=template, axes=axes, count=count, limit=MAX_LAYERS)


def _layer_slots(template: str, members: dict, axes: str, spec: DumpSpec) -> list[LayerSlot]:
    _check_layers(template, axes, len(members))
    if "L" not in axes:
        order = list(members)  # insertion order = file order
        if spec.layer_order == "names":
            order.sort(key=lambda i: -1 if i is None else i)
        return [LayerSlot(names.fill(template, index), _pieces(members[index])) for index in order]
    entries = members[None] if None in members else next(iter(members.values()))
    layers = entries[0].shape[0]
    _check_layers(template, axes, layers)
    for entry in entries:
        if entry.shape[0] != layers:
            raise _mixed_shapes(entry, entries[0])
    return [
        LayerSlot(
            label=f"{template}[{layer}]",
            pieces=tuple(Piece(e, layer * (e.rows // layers), e.rows // layers) for e in entries),
        )
        for layer in range(layers)
    ]


def _check_equal_rows(slots: list[LayerSlot]) -> int:
    """Every layer must hold the same B*T rows (shards may split them differently)."""
    rows = [sum(p.rows for p in slot.pieces) for slot in slots]
    for slot, count in zip(slots, rows):
        if count != rows[0]:
            raise refuse(
                "mixed_rows", entry=slot.label, rows=count, other=slots[0].label, other_rows=rows[0]
            )
    return rows[0]


def _usable_pairs(pairs: tuple[NormPair, ...], rows: int, files: str) -> tuple[list, list]:
    """The pairs read row for row with the stream (``rows`` = B·T, d >= 1), and (entry, why)
    for the others: their rows could not be matched to the stream's tokens."""
    usable, skipped = [], []
    for pair in pairs:
        first = pair.outputs[0].entry
        held = sum(piece.rows for piece in pair.outputs)
        if held == rows and first.d >= 1:
            usable.append(pair)
        else:
            detail = f"{list(first.shape)}, {rows:,}"
            pieces = pair.inputs + pair.outputs
            skipped.extend(Skipped(piece.entry.key, "unmatched_rows", detail) for piece in pieces)
    if len(usable) > MAX_NORM_PAIRS:
        raise refuse("too_many_norm_pairs", file=files, count=len(usable), limit=MAX_NORM_PAIRS)
    return usable, skipped


def _param(grouped: dict, template: str | None, index: int | None, d: int) -> EntryInfo | None:
    entries = grouped.get(names.fill(template, index)) if template else None
    if entries and entries[0].shape == (d,):
        return entries[0]
    return None


def find_norm_pairs(grouped: dict[str, list[EntryInfo]]) -> tuple[NormPair, ...]:
    """Norms whose input and output are both in the dump, with their weight and bias.

    Hooks on a module (``<norm>.input`` / ``<norm>.output``) pair directly; TransformerLens
    stores only the output (``ln1.hook_normalized``, without the affine), whose input is
    ``hook_resid_pre`` (ln1), ``hook_resid_mid`` (ln2) or the last ``hook_resid_post``
    (``ln_final``).
    """
    split = {name: names.split_index(name) for name in grouped}
    indices: dict[str, list] = defaultdict(list)
    for template, index in split.values():
        indices[template].append(index)
    ios: dict[str, dict[str, str]] = defaultdict(dict)
    params: dict[str, dict[str, str]] = defaultdict(dict)
    for template in indices:
        if (io := names.norm_io(template)) is not None:
            ios[io[0]][io[1]] = template
        elif (tl := names.tl_normalized(template)) is not None:
            ios[tl]["output"] = template
            ios[tl]["input"] = _tl_input(tl, indices)
        elif (param := names.norm_param(template)) is not None:
            params[param[0]][param[1]] = template
    pairs = []
    for module, io in sorted(ios.items()):
        if not io.get("input") or "output" not in io:
            continue
        for index in sorted(indices[io["output"]], key=lambda i: -1 if i is None else i):
            inputs = grouped.get(names.fill(io["input"], index))
            outputs = grouped[names.fill(io["output"], index)]
            if not inputs or [e.shape for e in inputs] != [e.shape for e in outputs]:
                continue
            d = outputs[0].d
            pairs.append(
                NormPair(
                    label=names.fill(module, index),
                    layer=index,
                    inputs=_pieces(inputs),
                    outputs=_pieces(outputs),
                    weight=_param(grouped, params[module].get("weight"), index, d),
                    bias=_param(grouped, params[module].get("bias"), index, d),
                )
            )
    return tuple(pairs)


def _tl_input(module: str, indices: dict[str, list]) -> str | None:
    """The TransformerLens hook that holds the input of ``module`` (a template)."""
    head, _, norm = module.rpartition(".")
    if norm == "ln1":
        return f"{head}.hook_resid_pre"
    if norm == "ln2":
        return f"{head}.hook_resid_mid"
    if norm == "ln_final":
        post = [t for t in indices if t.endswith("hook_resid_post") and "{i}" in t]
        if post:
            last = max(i for i in indices[post[0]] if i is not None)
            return names.fill(post[0], last)
    return None


def _final_point(template: str, grouped: dict) -> LayerSlot | None:
    """A stream of block inputs stops before the last block: add that block's output
    (TransformerLens ``hook_resid_post``, a hook's ``layers.{L-1}.output``)."""
    post = names.final_output(template)
    if post is None:
        return None
    numbered = [names.split_index(n) for n in grouped]
    last = max((i for t, i in numbered if t == post and i is not None), default=None)
    if last is None:
        return None
    return LayerSlot(names.fill(post, last), _pieces(grouped[names.fill(post, last)]))


def _skipped_example(item: Skipped) -> Phrase:
    """A skipped entry and why, in our words (a page writes them in the reader's language)."""
    why = Phrase(item.message_key, {"detail": item.detail})
    if getattr(item.key, "key", None) == WHOLE_FILE.key:  # a keyless file: not "((file): …)"
        return Phrase("dumps.skipped_whole", {"why": why})
    return Phrase("dumps.skipped_example", {"entry": item.key, "why": why})


def infer_layout(scans: tuple[FileScan, ...], spec: DumpSpec) -> Layout:
    """Read a dump's entries as a residual stream (see the module docstring for the rules)."""
    skipped = tuple(item for scan in scans for item in scan.skipped)
    files = ", ".join(s.file.name for s in scans)
    grouped = _named_entries(scans)
    templates = _candidates(grouped)
    if not templates:
        examples = [f"{e.label} {list(e.shape)}" for es in grouped.values() for e in es][:3]
        examples += [_skipped_example(item) for item in skipped][: 3 - len(examples)]
        if not examples:
            raise refuse("empty", file=files)
        entries = sum(len(es) for es in grouped.values()) + len(skipped)
        raise refuse(
            "no_usable_entries_one" if entries == 1 else "no_usable_entries",
            file=files,
            count=entries,
            examples=Listing(examples, "dumps.list_separator"),
            accepted=Listing(ACCEPTED_DTYPES),
        )
    if len(templates) > MAX_STREAMS:
        raise refuse("too_many_streams", file=files, count=len(templates), limit=MAX_STREAMS)
    stream, stream_reason, ranked = _choose_stream(templates, spec)
    members = templates[stream]
    shape = _check_same_rows(members)
    per_layer = "{i}" in stream
    axes, axes_reason = _axes(stream, shape, per_layer, spec)
    slots = _layer_slots(stream, members, axes, spec)
    final = _final_point(stream, grouped)
    if final is not None and final.pieces[0].entry.shape[-2:] == shape[-2:]:
        slots.append(final)
    tokens, d = shape[-2], shape[-1]
    rows = _check_equal_rows(slots)
    dtype = ", ".join(dict.fromkeys(p.entry.dtype for slot in slots for p in slot.pieces))
    pairs, unpaired = _usable_pairs(find_norm_pairs(grouped), rows, files)
    return Layout(
        stream=stream,
        stream_reason=stream_reason,
        streams=ranked,
        axes=axes,
        axes_reason=axes_reason,
        layer_order=spec.layer_order,
        layers=tuple(slots),
        batch=rows // tokens,
        tokens=tokens,
        d=d,
        dtype=dtype,
        norm_pairs=tuple(pairs),
        skipped=skipped + tuple(unpaired),
    )
