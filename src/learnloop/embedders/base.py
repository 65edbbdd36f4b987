"""The embedder contract. One module per implementation; `resolve_embedder` picks one from a spec string."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Purpose", "Vectors"]

Vectors = npt.NDArray[np.float32]
Purpose = Literal["query", "document"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    `model_id` names the model and its settings exactly ("local:all-MiniLM-L6-v2"); stored vectors record
    it so that vectors from different models are never compared.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> Vectors:
        """Return an array of shape (len(texts), dimension), each row with unit length."""
        ...

    async def aclose(self) -> None: ...
