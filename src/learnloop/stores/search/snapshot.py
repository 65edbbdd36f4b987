"""A partition's arrays saved beside the database, so a reopened process loads them instead of its rows.

Loading a partition from its rows decodes every row (about 4.7 s at 100k learnings on the 2-core machine when
it tokenised every text); the snapshot holds what that produces — filter codes, ranking columns, the keyword
terms of each document — with the change-log seq it reflects, and the cache replays the log from there (see
`partition_cache`). It is only a cache: a file that is missing, unreadable, corrupt, from another model, older
than the pruned part of the log, newer than the reader's view or from before a user was forgotten is ignored
and the rows are read instead.

The vectors are not in it: the loader reads them from the learnings table, in the read snapshot in which it
replays the log (`PartitionSource.live_vectors`). A second copy of every embedding beside the database was
the largest part of the snapshot (768 of its ~850 bytes a learning at 384 dimensions); reading them back costs
a load about a millisecond per thousand rows. A partition whose saved HNSW index is a whole hnswlib file (from 50k
vectors; it holds them as float32) takes them from that file instead, which its first search loads anyway, and
reads from the table only the rows changed since the index was saved (`PartitionCache._vectors_from_saved_ann`).

Layout: an 8-byte header length, a JSON header (names of codes and terms, arrays' dtypes, shapes, offsets and
stored lengths, a CRC32 of the data), then the arrays, each 64-byte aligned. A partition of fewer than
`_DEFLATE_BELOW` rows stores each array deflated (zlib): its term ids, frequencies, dates and ids are mostly
slack (a 10k-row snapshot 1.49 MB whole, 0.15 MB deflated); a larger one stores them as they are, since
inflating 15 MB at 100k rows would add about 70 ms to the first query of a reopened process. Codes and term ids
are a process's own (`Codebook`, `TermCodebook`), so the file stores the strings behind them and a loader maps
them to its own.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .keywords import TermCodebook
from .row_codes import Codebook

__all__ = ["SNAPSHOT_FORMAT", "PartitionArrays", "read_snapshot", "write_snapshot"]

# 2: without the vectors (format 1 held them); 3: arrays deflated below `_DEFLATE_BELOW` rows. A file of another
# format is ignored and rewritten.
SNAPSHOT_FORMAT = 3
_DEFLATE_BELOW = 50_000
_ALIGN = 64
_LENGTH = 8
# Columns stored as they are (per live row, in slot order).
_PLAIN = ("ids", "status", "simhash", "hits", "updated_at", "said_at", "event_at", "event_until")
_CODED = ("category", "namespace", "type")


@dataclass
class PartitionArrays:
    """The live rows of a partition, compacted (row i is slot i), as a snapshot holds them."""

    watermark: int  # the change-log seq the rows reflect
    forget_epoch: int
    # _PLAIN and _CODED columns, and "vectors" (float32, or float16 as the table stores them: exact then) once the
    # loader has read them: a snapshot file does not hold them.
    columns: dict[str, npt.NDArray[Any]]
    tags: list[tuple[str, ...]]
    # The keyword terms of every row, flat: row i holds the next doc_sizes[i] term ids (the loading process's
    # own) and their frequencies.
    doc_terms: npt.NDArray[np.int32]
    doc_tf: npt.NDArray[np.int32]
    doc_sizes: npt.NDArray[np.int64]


def write_snapshot(
    path: Path, arrays: PartitionArrays, model: str, codebook: Codebook, vocabulary: TermCodebook
) -> None:
    """Write `arrays` to `path` atomically (a reader sees the old file or the new one, whole)."""
    n = len(arrays.columns["ids"])
    used, local = np.unique(arrays.doc_terms, return_inverse=True)
    names = vocabulary.strings()
    blobs: dict[str, npt.NDArray[Any]] = {name: arrays.columns[name] for name in (*_PLAIN, *_CODED)}
    blobs.update(
        doc_sizes=arrays.doc_sizes.astype(np.int64),
        doc_terms=local.astype(np.int32),
        doc_tf=arrays.doc_tf.astype(np.int32),
    )
    header: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "model": model,
        "watermark": arrays.watermark,
        "forget_epoch": arrays.forget_epoch,
        "count": n,
        "codes": codebook.strings(),
        "terms": [names[i] for i in used.tolist()],
        "tags": [[row, list(tags)] for row, tags in enumerate(arrays.tags) if tags],
        "arrays": {},
    }
    deflate = n < _DEFLATE_BELOW
    raw = {name: np.ascontiguousarray(array).data.cast("B") for name, array in blobs.items()}  # len() in bytes
    stored = {name: zlib.compress(data, 6) if deflate else data for name, data in raw.items()}
    offset, layout = 0, {}
    for name, array in blobs.items():
        offset = -(-offset // _ALIGN) * _ALIGN
        layout[name] = (array.dtype.str, list(array.shape), offset, len(stored[name]))
        offset += len(stored[name])
    header["arrays"] = layout
    header["deflated"] = deflate
    checksum = 0
    for data in stored.values():
        checksum = zlib.crc32(data, checksum)
    header["crc32"] = checksum
    encoded = json.dumps(header, separators=(",", ":")).encode()
    start = -(-(_LENGTH + len(encoded)) // _ALIGN) * _ALIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name of this process and thread: two processes saving the same partition never write one file.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as out:
        out.write(len(encoded).to_bytes(_LENGTH, "little"))
        out.write(encoded)
        for name, data in stored.items():
            out.seek(start + layout[name][2])
            out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def read_snapshot(path: Path, model: str, codebook: Codebook, vocabulary: TermCodebook) -> PartitionArrays | None:
    """The arrays saved at `path` (all but the vectors), with codes and term ids mapped to this process's; None
    when the file is missing or not a whole snapshot of this model's partition (the caller reads the rows
    instead)."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _parse(data, model, codebook, vocabulary)
    except (OSError, ValueError, KeyError, TypeError, IndexError, zlib.error):
        return None


def _parse(data: mmap.mmap, model: str, codebook: Codebook, vocabulary: TermCodebook) -> PartitionArrays | None:
    length = int.from_bytes(data[:_LENGTH], "little")
    header = json.loads(data[_LENGTH : _LENGTH + length])
    if header["format"] != SNAPSHOT_FORMAT or header["model"] != model:
        return None
    start = -(-(_LENGTH + length) // _ALIGN) * _ALIGN
    n = int(header["count"])
    raw: dict[str, npt.NDArray[Any]] = {}
    checksum = 0
    for name, (dtype, shape, offset, length) in header["arrays"].items():
        count = int(np.prod(shape)) if shape else 1
        if start + offset + length > len(data):
            return None  # truncated
        if header["deflated"]:
            stored = data[start + offset : start + offset + length]
            checksum = zlib.crc32(stored, checksum)
            # Into a bytearray: the partition writes to its columns in place (hit counts).
            inflated = bytearray(zlib.decompress(stored))
            raw[name] = np.frombuffer(inflated, dtype=dtype, count=count).reshape(shape)
        else:
            array = np.frombuffer(data, dtype=dtype, count=count, offset=start + offset).reshape(shape)
            checksum = zlib.crc32(array.data, checksum)
            raw[name] = array.copy()  # off the map, which closes on return
    if checksum != header["crc32"] or any(len(raw[name]) != n for name in (*_PLAIN, *_CODED)):
        return None
    columns = {name: raw[name] for name in _PLAIN}
    own_codes = np.array([codebook.code(name) for name in header["codes"]] + [-1], dtype=np.int32)
    for name in _CODED:
        columns[name] = own_codes[raw[name]]  # -1 (no value) picks the appended -1
    own_terms = np.asarray(vocabulary.ids(header["terms"]), dtype=np.int32)
    doc_terms = own_terms[raw["doc_terms"]] if len(own_terms) else raw["doc_terms"]
    if len(raw["doc_sizes"]) != n or not int(raw["doc_sizes"].sum()) == len(doc_terms) == len(raw["doc_tf"]):
        return None
    tags: list[tuple[str, ...]] = [()] * n
    for row, row_tags in header["tags"]:
        tags[row] = tuple(row_tags)
    return PartitionArrays(
        watermark=int(header["watermark"]),
        forget_epoch=int(header["forget_epoch"]),
        columns=columns,
        tags=tags,
        doc_terms=doc_terms,
        doc_tf=raw["doc_tf"],
        doc_sizes=raw["doc_sizes"],
    )
