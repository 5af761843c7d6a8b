"""Reading the metadata of a GGUF file (v2/v3) without touching its weights.

A GGUF file starts with a header (magic, version, tensor and key counts) followed by typed
key/value metadata, then tensor descriptions and the weights. :func:`read_gguf_tokenizer_metadata`
reads only the keys the tokenizer needs, skipping fixed-size arrays with ``seek`` and
stopping as soon as every wanted key was seen, so a 1.1 GB model costs a few megabytes of
reading. :func:`fingerprint` gives a content key for caches.

Example:
    >>> import struct, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "empty.gguf"
    >>> _ = p.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    >>> read_gguf_tokenizer_metadata(p)
    {}
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

from memory_chains.errors import ModelUnavailableError

__all__ = ["fingerprint", "read_gguf_tokenizer_metadata"]

_GGUF_MAGIC = b"GGUF"
# GGUF value types: id -> struct format (fixed-size scalars)
_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
_WANTED = (
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges",
    "tokenizer.chat_template",
)
_FINGERPRINT_BYTES = 16 << 20  # the metadata of a GGUF lives in its first megabytes


def _read(fh: BinaryIO, size: int) -> bytes:
    data = fh.read(size)
    if len(data) != size:
        raise ModelUnavailableError("truncated GGUF metadata")
    return data


def _read_string(fh: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", _read(fh, 8))
    return _read(fh, length).decode("utf-8", errors="replace")


def _read_value(fh: BinaryIO, vtype: int, keep: bool) -> Any:
    if vtype in _SCALARS:
        fmt = _SCALARS[vtype]
        (value,) = struct.unpack(fmt, _read(fh, struct.calcsize(fmt)))
        return value
    if vtype == _STRING:
        return _read_string(fh)
    if vtype == _ARRAY:
        item_type, count = struct.unpack("<IQ", _read(fh, 12))
        if item_type in _SCALARS:
            fmt = _SCALARS[item_type]
            size = struct.calcsize(fmt)
            if not keep:
                fh.seek(size * count, os.SEEK_CUR)
                return None
            raw = _read(fh, size * count)
            return list(struct.unpack(f"<{count}{fmt[1]}", raw))
        items = [_read_value(fh, item_type, keep) for _ in range(count)]
        return items if keep else None
    raise ModelUnavailableError(f"unknown GGUF value type {vtype}")


def read_gguf_tokenizer_metadata(path: Path) -> dict[str, Any]:
    """Read the tokenizer keys of a GGUF (v2/v3) file's metadata, seeking past the rest."""
    with path.open("rb") as fh:
        if _read(fh, 4) != _GGUF_MAGIC:
            raise ModelUnavailableError(f"{path} is not a GGUF file")
        (version,) = struct.unpack("<I", _read(fh, 4))
        if version < 2:
            raise ModelUnavailableError(f"{path}: GGUF version {version} is not supported")
        _tensor_count, kv_count = struct.unpack("<QQ", _read(fh, 16))
        found: dict[str, Any] = {}
        for _ in range(kv_count):
            key = _read_string(fh)
            (vtype,) = struct.unpack("<I", _read(fh, 4))
            value = _read_value(fh, vtype, keep=key in _WANTED)
            if key in _WANTED:
                found[key] = value
            if len(found) == len(_WANTED):
                break
    return found


def fingerprint(path: Path) -> str:
    """Content key of a GGUF file: its size and the sha256 of its first 16 MiB."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        digest.update(fh.read(_FINGERPRINT_BYTES))
    return f"{path.stat().st_size}-{digest.hexdigest()[:24]}"
