"""How a learning's embedding is stored: float16 behind a one-byte tag, half the bytes of float32.

The embedding was most of a learning's row (1.5 KB of 2 KB at 384 dimensions). Unit vectors lose nothing that
ranking sees in float16: a cosine moves by about 1e-4. A blob without the tag (a multiple of four bytes) is
float32 — rows written before, or by a backend that keeps float32 — and is read as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["HALF_TAG", "embedding_blob", "embedding_halves", "embedding_vector", "embedding_vectors"]

_HALF = b"\x02"  # one byte: a tagged blob's length is never a multiple of four
HALF_TAG = _HALF[0]
_HALF_MAX = 65504.0  # the largest finite float16

Vectors = npt.NDArray[np.float32]


def embedding_blob(vector: npt.ArrayLike) -> bytes:
    """The stored form of `vector`: float16 when every component fits, else plain float32."""
    values = np.ascontiguousarray(vector, dtype=np.float32)
    if values.size and float(np.abs(values).max()) >= _HALF_MAX:
        return values.tobytes()
    return _HALF + values.astype(np.float16).tobytes()


def embedding_vector(blob: bytes) -> Vectors:
    if len(blob) % 4 == 1 and blob[:1] == _HALF:
        return np.frombuffer(blob, dtype=np.float16, offset=1).astype(np.float32)
    return np.frombuffer(blob, dtype=np.float32)


def embedding_vectors(blobs: Sequence[bytes], dimension: int) -> Vectors:
    """The embeddings of many rows as one (rows, dimension) float32 matrix."""
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
    in software), when every one is stored as float16; else None."""
    width = 2 * dimension + 1
    if not all(len(blob) == width for blob in blobs):
        return None
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float16)
    # The blobs joined whole and their tag bytes dropped by one copy in numpy: slicing each blob first cost a
    # bytes object per row (a third of reading 10k vectors back).
    rows = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return np.ascontiguousarray(rows[:, 1:]).view(np.float16)
