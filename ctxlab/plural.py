"""Counted nouns in English: ``1 round``, ``2 rounds``, ``1,234 cache breaks``.

Every sentence that states a count goes through :func:`plural`, so no screen says "1 rounds".
"""

from __future__ import annotations

__all__ = ["plural", "share"]


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural unless the count is exactly one.

    ``plural_form`` is for nouns that do not just take an "s" ("reply" -> "replies").

    >>> plural(1, "round"), plural(2, "round"), plural(0, "cache break"), plural(1_500, "call")
    ('1 round', '2 rounds', '0 cache breaks', '1,500 calls')
    >>> plural(3, "reply", "replies")
    '3 replies'
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {plural_form or noun + 's'}"


def share(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` a person reads: ``"49%"``, ``"under 1%"``.

    >>> share(750, 1_516), share(20, 10_008), share(0, 5)
    ('49%', 'under 1%', '0%')
    """
    if whole <= 0 or part <= 0:
        return "0%"
    ratio = part / whole
    return f"{ratio:.0%}" if ratio >= 0.005 else "under 1%"
