"""Token counting: the GGUF tokenizer on a tiny hand-written GGUF, and the approximation."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from memory_chains.errors import InvalidInputError, ModelUnavailableError
from memory_chains.providers import (
    ChatLlamaCpp,
    GGUFTokenizer,
    _tokens,
    approximate_token_count,
    get_token_counter,
)
from memory_chains.testing import ScriptedChatModel

# ------------------------------------------------------------------ a tiny GGUF writer


def _string(value: str) -> bytes:
    raw = value.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, value: Any) -> bytes:
    out = _string(key)
    if isinstance(value, str):
        return out + struct.pack("<I", 8) + _string(value)
    if isinstance(value, bool):
        return out + struct.pack("<I?", 7, value)
    if isinstance(value, int):
        return out + struct.pack("<Iq", 11, value)
    if isinstance(value, list) and value and isinstance(value[0], str):
        return out + struct.pack("<IIQ", 9, 8, len(value)) + b"".join(map(_string, value))
    if isinstance(value, list):
        return out + struct.pack("<IIQ", 9, 5, len(value)) + struct.pack(f"<{len(value)}i", *value)
    raise TypeError(value)


def write_gguf(path: Path, metadata: dict[str, Any], version: int = 3) -> Path:
    """A GGUF header with ``metadata`` and no tensors, followed by junk "weights"."""
    body = b"".join(_kv(k, v) for k, v in metadata.items())
    header = b"GGUF" + struct.pack("<IQQ", version, 0, len(metadata))
    path.write_bytes(header + body + b"\x00" * 4096)
    return path


BYTE = _tokens._byte_to_unicode()
SPACE = BYTE[ord(" ")]  # "Ġ"
NEWLINE = BYTE[ord("\n")]  # "Ċ"
# every single byte, then merged tokens; ids follow list order
BASE = [BYTE[b] for b in range(256)]
MERGED = ["ab", SPACE + "a", SPACE + "ab", "lo", "hel", "hello"]
SPECIALS = ["<|im_start|>", "<|im_end|>"]
TOKENS = BASE + MERGED + SPECIALS
TYPES = [1] * (len(BASE) + len(MERGED)) + [3, 3]
MERGES = ["a b", f"{SPACE} a", f"{SPACE} ab", "l o", "h e", "he l", "hel lo"]
TEMPLATE = "... You are Qwen, created by Alibaba Cloud. You are a helpful assistant. ..."


def toy_metadata(**overrides: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "general.architecture": "qwen2",
        "general.alignment": 32,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "qwen2",
        "tokenizer.ggml.tokens": TOKENS,
        "tokenizer.ggml.token_type": TYPES,
        "tokenizer.ggml.merges": MERGES,
        "tokenizer.ggml.add_bos_token": False,
        "tokenizer.chat_template": TEMPLATE,
    }
    meta.update(overrides)
    return meta


def tid(token: str) -> int:
    return TOKENS.index(token)


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "toy.gguf", toy_metadata())


# ------------------------------------------------------------------ GGUF tokenizer


def test_reads_metadata_only(gguf: Path) -> None:
    meta = _tokens.read_gguf_tokenizer_metadata(gguf)
    assert meta["tokenizer.ggml.pre"] == "qwen2"
    assert meta["tokenizer.ggml.tokens"] == TOKENS
    assert meta["tokenizer.ggml.token_type"] == TYPES
    assert "general.architecture" not in meta


def test_bpe_merges_in_rank_order(gguf: Path) -> None:
    tok = GGUFTokenizer.from_gguf(gguf)
    assert tok.encode("ab ab") == [tid("ab"), tid(SPACE + "ab")]
    assert tok.encode("hello") == [tid("hello")]
    assert tok.encode("aab") == [tid("a"), tid("ab")]
    # é is two UTF-8 bytes, each its own byte token
    assert tok.encode("é") == [tid(BYTE[0xC3]), tid(BYTE[0xA9])]
    assert tok.count("ab ab") == 2


def test_pretokenizer_splits_digits_and_contractions(gguf: Path) -> None:
    tok = GGUFTokenizer.from_gguf(gguf)
    pieces = tok._pre.findall("I'd pay 123€\n\nnow")
    assert pieces == ["I", "'d", " pay", " ", "1", "2", "3", "€\n\n", "now"]


def test_special_tokens_only_when_asked(gguf: Path) -> None:
    tok = GGUFTokenizer.from_gguf(gguf)
    assert tok.encode("<|im_start|>ab", special=True) == [tid("<|im_start|>"), tid("ab")]
    assert len(tok.encode("<|im_start|>ab")) > 2  # plain text otherwise


def test_count_chat_follows_chatml_with_default_system(gguf: Path) -> None:
    tok = GGUFTokenizer.from_gguf(gguf)
    rendered = tok.render_chat([{"role": "user", "content": "ab"}])
    assert rendered == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
        "assistant.<|im_end|>\n<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n"
    )
    with_system = [{"role": "system", "content": "S"}, {"role": "user", "content": "ab"}]
    assert tok.render_chat(with_system).startswith("<|im_start|>system\nS<|im_end|>")
    assert tok.count_chat(with_system) == len(
        tok.encode(tok.render_chat(with_system), special=True)
    )
    tools = [{"role": "tool", "content": "1"}, {"role": "tool", "content": "2"}]
    assert "<|im_start|>user\n<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n" in (
        tok.render_chat(tools)
    )


def test_json_cache_is_written_and_used(
    gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = GGUFTokenizer.from_gguf(gguf, cache_dir=cache)
    assert len(list(cache.glob("gguf-tokenizer-*.json"))) == 1

    def forbidden(path: Path) -> dict[str, Any]:
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(_tokens, "read_gguf_tokenizer_metadata", forbidden)
    second = GGUFTokenizer.from_gguf(gguf, cache_dir=cache)
    assert second.encode("hello ab") == first.encode("hello ab")


def test_cache_key_follows_content(gguf: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    GGUFTokenizer.from_gguf(gguf, cache_dir=cache)
    other = write_gguf(tmp_path / "other.gguf", toy_metadata(**{"tokenizer.ggml.merges": []}))
    tok = GGUFTokenizer.from_gguf(other, cache_dir=cache)
    assert len(list(cache.glob("*.json"))) == 2
    assert tok.encode("ab") == [tid("a"), tid("b")]  # no merges: not served from the cache


def test_rejects_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        GGUFTokenizer.from_gguf(tmp_path / "missing.gguf")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"NOPE" + b"\x00" * 64)
    with pytest.raises(ModelUnavailableError, match="not a GGUF"):
        GGUFTokenizer.from_gguf(bogus)
    spm = write_gguf(tmp_path / "spm.gguf", toy_metadata(**{"tokenizer.ggml.model": "llama"}))
    with pytest.raises(ModelUnavailableError, match="approximate_token_count"):
        GGUFTokenizer.from_gguf(spm)
    pre = write_gguf(tmp_path / "pre.gguf", toy_metadata(**{"tokenizer.ggml.pre": "falcon"}))
    with pytest.raises(ModelUnavailableError, match="falcon"):
        GGUFTokenizer.from_gguf(pre)
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(write_gguf(tmp_path / "t.gguf", toy_metadata()).read_bytes()[:200])
    with pytest.raises(ModelUnavailableError, match="truncated"):
        GGUFTokenizer.from_gguf(truncated)


def test_encode_rejects_non_strings(gguf: Path) -> None:
    with pytest.raises(InvalidInputError):
        GGUFTokenizer.from_gguf(gguf).encode(b"bytes")  # type: ignore[arg-type]


def test_for_file_shares_instances(gguf: Path) -> None:
    assert GGUFTokenizer.for_file(gguf) is GGUFTokenizer.for_file(str(gguf))


# ------------------------------------------------------------------ counters


def test_token_counter_for_llamacpp_uses_the_gguf(gguf: Path, tmp_path: Path) -> None:
    model = ChatLlamaCpp(model_path=gguf, tokenizer_cache_dir=tmp_path / "c")
    counter = get_token_counter(model)
    assert counter("ab ab") == 2
    assert model.get_num_tokens("ab ab") == 2
    assert model.get_token_ids("hello") == [tid("hello")]
    from langchain_core.messages import HumanMessage

    tok = GGUFTokenizer.for_file(gguf)
    expected = tok.count_chat([{"role": "user", "content": "ab"}])
    assert model.get_num_tokens_from_messages([HumanMessage("ab")]) == expected


def test_token_counter_for_other_models_is_the_approximation() -> None:
    assert get_token_counter(ScriptedChatModel()) is approximate_token_count
    assert get_token_counter() is approximate_token_count


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 2),  # 1 word × 1.3, rounded up
        ("one two three four", 6),  # 4 words × 1.3 = 5.2
        ("x" * 100, 25),  # one long "word": chars / 4 wins
        ("  \n ", 1),  # whitespace only still counts something
    ],
)
def test_approximation_formula(text: str, expected: int) -> None:
    assert approximate_token_count(text) == expected


def test_approximation_rejects_non_strings() -> None:
    with pytest.raises(InvalidInputError):
        approximate_token_count(None)  # type: ignore[arg-type]


def test_metadata_reading_skips_the_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_gguf(tmp_path / "big.gguf", toy_metadata())
    with path.open("ab") as fh:
        fh.write(b"\x01" * (8 << 20))  # 8 MiB of "weights"
    real_open = Path.open
    consumed: list[int] = []

    class Counting:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def read(self, size: int = -1) -> bytes:
            data = self.handle.read(size)
            consumed.append(len(data))
            return bytes(data)

        def seek(self, offset: int, whence: int = 0) -> int:
            return int(self.handle.seek(offset, whence))

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(self, *args, **kwargs)
        return Counting(handle) if self == path else handle

    monkeypatch.setattr(Path, "open", counting_open)
    meta = _tokens.read_gguf_tokenizer_metadata(path)
    assert meta["tokenizer.ggml.pre"] == "qwen2"
    assert sum(consumed) < 64 * 1024  # the metadata only, not the 8 MiB behind it
