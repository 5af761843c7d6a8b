"""Reading LoCoMo (``locomo10.json``) into small typed values, with clear errors.

:func:`load_locomo` returns one :class:`LocomoConversation` per sample: its sessions in
order (each with its date and turns) and its questions (category, evidence ``dia_id``s).
Evidence ids are normalised (``"D8:6; D9:17"`` → ``("D8:6", "D9:17")``, ``"D:11:26"`` →
``"D11:26"``), because the released file has a few such typos.

Example:
    >>> normalise_evidence(["D8:6; D9:17", "D:11:26", "D"])
    ('D8:6', 'D9:17', 'D11:26')
    >>> parse_session_date("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_chains.errors import InvalidInputError

__all__ = [
    "CATEGORY_NAMES",
    "LocomoConversation",
    "LocomoQuestion",
    "LocomoSession",
    "LocomoTurn",
    "load_locomo",
    "normalise_evidence",
    "parse_session_date",
]

#: LoCoMo's question categories as the issue names them (5, adversarial, is not scored).
CATEGORY_NAMES: dict[int, str] = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class LocomoTurn:
    """One utterance: its ``dia_id`` (``"D3:7"``), speaker and text (photo caption appended).

    Example:
        >>> LocomoTurn("D1:1", "Caroline", "Hey Mel!").dia_id
        'D1:1'
    """

    dia_id: str
    speaker: str
    text: str


@dataclass(frozen=True)
class LocomoSession:
    """One session: its number, its date as written and parsed, and its turns in order.

    Example:
        >>> LocomoSession(1, "1:56 pm on 8 May, 2023", None, ()).number
        1
    """

    number: int
    date_text: str
    when: datetime | None
    turns: tuple[LocomoTurn, ...]


@dataclass(frozen=True)
class LocomoQuestion:
    """A question with its category (1-5) and evidence turn ids.

    Example:
        >>> LocomoQuestion("When?", "May", 2, ("D1:3",)).category
        2
    """

    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class LocomoConversation:
    """One LoCoMo sample: the two speakers, the sessions in order and the questions.

    Example:
        >>> LocomoConversation("conv-0", ("A", "B"), (), ()).n_turns
        0
    """

    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[LocomoSession, ...]
    questions: tuple[LocomoQuestion, ...]

    @property
    def n_turns(self) -> int:
        """Number of turns over all sessions."""
        return sum(len(session.turns) for session in self.sessions)


def normalise_dia_id(value: str) -> str | None:
    """``"D:11:26"`` / ``"D11:026"`` → ``"D11:26"``; ``None`` when it is not a turn id.

    Example:
        >>> normalise_dia_id("D:11:26"), normalise_dia_id("x")
        ('D11:26', None)
    """
    match = _DIA_ID.fullmatch(value.strip())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def normalise_evidence(values: Iterable[Any]) -> tuple[str, ...]:
    """Distinct turn ids found in the evidence strings, in order; junk is dropped."""
    found: dict[str, None] = {}
    for value in values:
        for match in _DIA_ID.finditer(str(value)):
            found.setdefault(f"D{int(match[1])}:{int(match[2])}", None)
    return tuple(found)


def parse_session_date(text: str) -> datetime | None:
    """Parse LoCoMo's ``"1:56 pm on 8 May, 2023"``; ``None`` if it has another shape."""
    try:
        return datetime.strptime(" ".join(text.replace(",", "").split()), "%I:%M %p on %d %B %Y")
    except ValueError:
        return None


def _fail(path: Path, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"{path} is not a LoCoMo file ({what}); pass the locomo10.json of the LoCoMo "
        "release (a JSON list of samples with 'conversation' and 'qa')"
    )


def _turn(raw: Any, path: Path, where: str) -> LocomoTurn:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
        raise _fail(path, f"{where}: a turn without text")
    dia_id = normalise_dia_id(str(raw.get("dia_id", "")))
    if dia_id is None:
        raise _fail(path, f"{where}: turn id {raw.get('dia_id')!r} is not like 'D1:3'")
    text = raw["text"]
    caption = raw.get("blip_caption")
    if isinstance(caption, str) and caption:
        text = f"{text} [shares a photo: {caption}]"
    return LocomoTurn(dia_id, str(raw.get("speaker", "")), text)


def _conversation(raw: Any, position: int, path: Path) -> LocomoConversation:
    where = f"sample {position}"
    if not isinstance(raw, dict):
        raise _fail(path, f"{where} is not an object")
    conv, qa = raw.get("conversation"), raw.get("qa")
    if not isinstance(conv, dict) or not isinstance(qa, list):
        raise _fail(path, f"{where} has no 'conversation' object or 'qa' list")
    numbers = sorted(int(m[1]) for key in conv if (m := _SESSION_KEY.fullmatch(key)) and conv[key])
    sessions = []
    for number in numbers:
        turns = conv[f"session_{number}"]
        if not isinstance(turns, list):
            raise _fail(path, f"{where}: session_{number} is not a list")
        date_text = str(conv.get(f"session_{number}_date_time", ""))
        sessions.append(
            LocomoSession(
                number,
                date_text,
                parse_session_date(date_text),
                tuple(_turn(t, path, f"{where} session_{number}") for t in turns),
            )
        )
    questions = tuple(
        LocomoQuestion(
            str(q["question"]),
            str(q.get("answer", q.get("adversarial_answer", ""))),
            int(q.get("category", 0)),
            normalise_evidence(q.get("evidence") or ()),
        )
        for q in qa
        if isinstance(q, dict) and "question" in q
    )
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return LocomoConversation(
        str(raw.get("sample_id", f"conv-{position}")), speakers, tuple(sessions), questions
    )


def load_locomo(path: str | Path) -> list[LocomoConversation]:
    """Read ``locomo10.json``.

    Raises:
        InvalidInputError: the file is missing, not JSON, or not shaped like LoCoMo (the
            message says what is wrong and what file is expected).

    Example:
        >>> import json, tempfile
        >>> sample = {"sample_id": "s", "conversation": {"speaker_a": "A", "speaker_b": "B",
        ...     "session_1_date_time": "1:56 pm on 8 May, 2023",
        ...     "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I paint."}]},
        ...     "qa": [{"question": "What does A do?", "answer": "paint", "evidence": ["D1:1"],
        ...             "category": 4}]}
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     json.dump([sample], f)
        >>> conv = load_locomo(f.name)[0]
        >>> conv.sessions[0].turns[0].text, conv.questions[0].evidence
        ('I paint.', ('D1:1',))
    """
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(
            f"LoCoMo file {path} does not exist; pass --dataset PATH/TO/locomo10.json"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail(path, f"not JSON: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise _fail(path, "the top level is not a non-empty list")
    conversations = [_conversation(raw, i, path) for i, raw in enumerate(data)]
    if not any(c.sessions for c in conversations):
        raise _fail(path, "no session_N lists found")
    return conversations
