"""Embedding vectors inside JSON documents: base64 of little-endian float32, and cosine.

Vectors live in the same store document as the fact they embed, so every backend holds
them and :func:`~memory_chains.stores.forget_user` erases them with the fact. base64 of
float32 takes 4/3 × 4 bytes per dimension (2 KB for e5-small's 384 dimensions), about a
quarter of a JSON list of floats.

Example:
    >>> v = decode_vector(encode_vector([0.6, 0.8]))
    >>> [round(float(x), 3) for x in v]
    [0.6, 0.8]
    >>> round(cosine([1.0, 0.0], [0.6, 0.8]), 3)
    0.6
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

import numpy as np

from memory_chains.errors import InvalidInputError, StoreError

__all__ = ["cosine", "decode_vector", "encode_vector"]

_DTYPE = np.dtype("<f4")


def encode_vector(vector: Sequence[float]) -> str:
    """base64 of ``vector`` as little-endian float32.

    Raises:
        InvalidInputError: empty, not one-dimensional, or not finite.

    Example:
        >>> encode_vector([1.0])
        'AACAPw=='
    """
    array = np.asarray(vector, dtype=_DTYPE)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise InvalidInputError("an embedding must be a non-empty list of finite floats")
    return base64.b64encode(array.tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    """The float32 vector :func:`encode_vector` wrote.

    Raises:
        StoreError: the stored text is not such a vector (tampered or foreign document).

    Example:
        >>> decode_vector("AACAPw==").tolist()
        [1.0]
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, AttributeError) as exc:
        raise StoreError(f"a stored fact vector is not valid base64: {exc}") from exc
    if not raw or len(raw) % 4:
        raise StoreError("a stored fact vector has a length that is not a float32 multiple")
    return np.frombuffer(raw, dtype=_DTYPE)


def cosine(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cosine similarity of two vectors (0.0 when either is zero or sizes differ).

    Example:
        >>> cosine([1.0, 0.0], [0.0, 1.0])
        0.0
    """
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        return 0.0
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0
