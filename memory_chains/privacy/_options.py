"""How memories take their ``pii`` option: :data:`PIIOption` and :func:`resolve_masker`."""

from __future__ import annotations

from collections.abc import Callable

from memory_chains.errors import InvalidInputError
from memory_chains.privacy._pii import PIIMasker

__all__ = ["PIIOption", "resolve_masker"]

PIIOption = PIIMasker | Callable[[str], str] | bool | None
"""``True`` (the default masker), ``False``/``None`` (no masking), or any ``str -> str``."""


def resolve_masker(pii: PIIOption) -> Callable[[str], str] | None:
    """The masking function a memory applies before storing text, or None.

    Raises:
        InvalidInputError: ``pii`` is none of the accepted values.

    Example:
        >>> resolve_masker(True)("IBAN FR76 3000 6000 0112 3456 7890 189")
        'IBAN [IBAN]'
        >>> resolve_masker(False) is None
        True
    """
    if pii is True:
        return PIIMasker()
    if pii is False or pii is None:
        return None
    if callable(pii):
        return pii
    raise InvalidInputError(f"pii must be True, False, a PIIMasker or a callable, got {pii!r:.60}")
