"""Privacy helpers: masking personal data before it is stored (:class:`PIIMasker`).

Example:
    >>> from memory_chains.privacy import PIIMasker
    >>> PIIMasker().mask("écrivez à jo@example.com")
    'écrivez à [EMAIL]'
"""

from __future__ import annotations

from memory_chains.privacy._options import PIIOption, resolve_masker
from memory_chains.privacy._pii import (
    DEFAULT_DETECTORS,
    DEFAULT_PHONE_REGIONS,
    PIIDetector,
    PIIMasker,
    PIIMatch,
    iban_is_valid,
    luhn_is_valid,
    phone_detector,
    regex_detector,
)

__all__ = [
    "DEFAULT_DETECTORS",
    "DEFAULT_PHONE_REGIONS",
    "PIIDetector",
    "PIIMasker",
    "PIIMatch",
    "PIIOption",
    "iban_is_valid",
    "luhn_is_valid",
    "phone_detector",
    "regex_detector",
    "resolve_masker",
]
