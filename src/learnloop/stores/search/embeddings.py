"""How a learning's embedding is stored: int8 with a per-vector scale behind a one-byte tag.

The embedding was most of a learning's row (1.5 KB of 2 KB at 384 dimensions as float32; 769 of 1,172 bytes as
float16). Scalar-quantised to int8, each component rounded to the nearest of 255 steps of the vector's own
largest magnitude, it takes 389 bytes, and a unit vector's cosine with another moves by about 1e-3 — below
what ranking sees (recall@10 of retrieval and of the HNSW index measured the same, see README, Performance).

Layouts, told apart by tag and length so that older rows read as they are:
- int8: tag 0x03, the scale (float32), the components; `dimension + 5` bytes.
- float16: tag 0x02, the components; `2 · dimension + 1` bytes (rows written before int8).
- float32: the components, no tag; `4 · dimension` bytes (rows written before float16, or beyond float16).
Every reader decodes a stored vector to the same float32 values (`int8 · scale` in float32, one multiply per
component), so a partition loaded from the rows, from a snapshot or replayed from the log holds the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "HALF_TAG",
    "QUANTISED_TAG",
    "embedding_blob",
    "embedding_halves",
    "embedding_vector",
    "embedding_vectors",
    "is_quantised",
    "quantised_rows",
]

_HALF = b"\x02"  # one byte: a tagged blob's length is never a multiple of four
HALF_TAG = _HALF[0]
_QUANTISED = b"\x03"
QUANTISED_TAG = _QUANTISED[0]
_SCALE_BYTES = 4
_STEPS = 127.0  # int8 components in [-127, 127]: symmetric, so a negated vector is stored negated
_HALF_MAX = 65504.0  # the largest finite float16

Vectors = npt.NDArray[np.float32]


def embedding_blob(vector: npt.ArrayLike) -> bytes:
    """The stored form of `vector`: int8 with its scale, or plain float32 when a component is not finite or the
    length would read as float32 (see `is_quantised`)."""
    values = np.ascontiguousarray(vector, dtype=np.float32)
    largest = float(np.abs(values).max()) if values.size else 0.0
    if not np.isfinite(largest) or (values.size + 1 + _SCALE_BYTES) % 4 == 0:
        return values.tobytes()
    scale = np.float32(largest / _STEPS)
    steps = np.rint(values / scale) if scale > 0 else np.zeros(values.size)
    codes = np.clip(steps, -_STEPS, _STEPS).astype(np.int8)
    return _QUANTISED + scale.tobytes() + codes.tobytes()


def is_quantised(blob: bytes) -> bool:
    """Whether `blob` is an int8 embedding (a float32 one is a multiple of four bytes long)."""
    return len(blob) % 4 != 0 and blob[:1] == _QUANTISED


def embedding_vector(blob: bytes) -> Vectors:
    if is_quantised(blob):
        scale = np.frombuffer(blob, dtype=np.float32, count=1, offset=1)
        codes = np.frombuffer(blob, dtype=np.int8, offset=1 + _SCALE_BYTES)
        return codes.astype(np.float32) * scale
    if len(blob) % 4 == 1 and blob[:1] == _HALF:
        return np.frombuffer(blob, dtype=np.float16, offset=1).astype(np.float32)
    return np.frombuffer(blob, dtype=np.float32)


def quantised_rows(joined: bytes, rows: int, dimension: int) -> Vectors | None:
    """`rows` int8 embeddings stored end to end in `joined`, decoded as `embedding_vector` decodes each; None
    unless every one is an int8 embedding of `dimension` components."""
    width = dimension + 1 + _SCALE_BYTES
    if width % 4 == 0 or len(joined) != rows * width:
        return None
    if rows == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    table = np.frombuffer(joined, dtype=np.uint8).reshape(rows, width)
    if not bool((table[:, 0] == QUANTISED_TAG).all()):
        return None
    scales = np.ascontiguousarray(table[:, 1 : 1 + _SCALE_BYTES]).view(np.float32)  # (rows, 1)
    decoded: Vectors = table[:, 1 + _SCALE_BYTES :].view(np.int8).astype(np.float32)
    decoded *= scales
    return decoded


def embedding_vectors(blobs: Sequence[bytes], dimension: int) -> Vectors:
    """The embeddings of many rows as one (rows, dimension) float32 matrix."""
    if blobs and len(blobs[0]) == dimension + 1 + _SCALE_BYTES:
        found = quantised_rows(b"".join(blobs), len(blobs), dimension)
        if found is not None:
            return found
    if blobs and all(len(blob) == 2 * dimension + 1 for blob in blobs):
        joined = b"".join(blob[1:] for blob in blobs)
        return np.frombuffer(joined, dtype=np.float16).reshape(len(blobs), dimension).astype(np.float32)
    if blobs and all(len(blob) == 4 * dimension for blob in blobs):
        return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimension)
    matrix = np.zeros((len(blobs), dimension), dtype=np.float32)
    for row, blob in enumerate(blobs):
        matrix[row] = embedding_vector(blob)
    return matrix


def embedding_halves(blobs: Sequence[bytes], dimension: int) -> npt.NDArray[np.float16] | None:
    """The embeddings of many rows as one (rows, dimension) float16 matrix, not converted (numpy converts float16
    in software), when every one is stored as float16 (rows written before int8); else None."""
    width = 2 * dimension + 1
    if not all(len(blob) == width for blob in blobs):
        return None
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float16)
    # The blobs joined whole and their tag bytes dropped by one copy in numpy: slicing each blob first cost a
    # bytes object per row (a third of reading 10k vectors back).
    rows = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return np.ascontiguousarray(rows[:, 1:]).view(np.float16)
