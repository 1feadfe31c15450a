"""Reduce a dump's units on a Dask cluster (optional: ``requirements-scale.txt``).

Each unit (a window of one shard's rows, see ``reduce.make_units``) is one task that opens
its file on the worker (the units of one ``.npz`` member are one task: ``_tasks``), so the
workers must see the same paths as this process (a shared filesystem, or ``address="local"``
for a ``distributed.LocalCluster`` on this machine).
The partials are merged on the cluster in a binary tree of ``partials.merge_all`` tasks;
since the merge is associative, the result equals a local run's to rounding.

Reference: Rocklin 2015, "Dask: Parallel Computation with Blocked algorithms and Task
Scheduling", Proc. SciPy.
"""

from __future__ import annotations

from contextlib import contextmanager

from engine.config import DumpSpec
from engine.dumps.formats import open_reader
from engine.dumps.layout import Layout
from engine.dumps.partials import LayerPartial, merge_all
from engine.dumps.reduce import Unit, make_units, reduce_unit
from engine.dumps.refusals import refuse
from engine.errors import EngineError
from engine.threads import Cancelled, Progress, StopCheck

CONNECT_TIMEOUT_S = 10  # a scheduler that does not answer within this is refused


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise refuse("dask_missing") from None
    return distributed


@contextmanager
def connect(address: str):
    """A ``distributed.Client`` for ``address``; "local" starts an in-process cluster."""
    distributed = _import_distributed()
    cluster = None
    try:
        if address == "local":
            cluster = distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=False,
                dashboard_address=None,  # no dashboard; its HTTP server (health) on any port:
                scheduler_kwargs={"dashboard_address": ":0"},  # two at once, no clash on 8787
            )
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
    except Exception as exc:  # OSError, TimeoutError from the scheduler connection
        raise refuse("dask_failed", address=address, detail=str(exc)[:200]) from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _tasks(units: tuple[Unit, ...]) -> list[tuple[Unit, ...]]:
    """The units as tasks: one unit each, except that the units of one ``.npz`` member make
    one task, in row order.  A member is a stream (compressed, or not mappable): a reader
    of its own per unit would decompress it from its start every time, quadratic in the
    member's size; one reader reads on from where the last unit ended (``NpzReader``)."""
    tasks, members = [], {}
    for unit in units:
        entry = unit.piece.entry
        if entry.file.suffix == ".npz":
            members.setdefault((entry.file, entry.key), []).append(unit)
        else:
            tasks.append((unit,))
    for group in members.values():
        tasks.append(tuple(sorted(group, key=lambda unit: unit.piece.row_start + unit.start)))
    return tasks


def _reduce_task(units: tuple[Unit, ...], spec: DumpSpec) -> dict[int, LayerPartial]:
    reader = open_reader(units[0].piece.entry.file)  # one for the task's units
    merged: dict[int, LayerPartial] = {}
    for unit in units:
        merged = merge_all(merged, {unit.layer: reduce_unit(unit, spec, reader)})
    return merged


def reduce_on_dask(
    layout: Layout,
    spec: DumpSpec,
    address: str,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> dict[int, LayerPartial]:
    """{layer: partial} over every row of the stream, reduced on the cluster at ``address``."""
    for slot in layout.layers:
        if any(piece.entry.file.data is not None for piece in slot.pieces):
            raise refuse("dask_uploads")
    distributed = _import_distributed()
    tasks = _tasks(make_units(layout))
    with connect(address) as client:
        try:
            futures = client.map(_reduce_task, tasks, spec=spec, pure=False)
            for done, _ in enumerate(distributed.as_completed(futures), start=1):
                if should_stop is not None and should_stop():
                    client.cancel(futures)
                    raise Cancelled()
                if progress is not None:
                    progress(done / len(futures))
            level = list(futures)
            while len(level) > 1:  # a binary tree of merges, on the cluster
                pairs = zip(level[0::2], level[1::2])
                merged = [client.submit(merge_all, a, b, pure=False) for a, b in pairs]
                level = merged + ([level[-1]] if len(level) % 2 else [])
            return level[0].result()
        except (EngineError, Cancelled):
            raise
        except Exception as exc:
            raise refuse("dask_failed", address=address, detail=str(exc)[:200]) from None
