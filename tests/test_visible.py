"""ctxlab.visible: what the app and the terminal show of untrusted text controls nothing."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.visible import INVISIBLE, visible

CONTROLS = "\x00\x07\x08\x0b\x0c\r\x1b\x7f\x85\x9b\u200b\u200e\u202a\u202e\u2066\u2069\ufeff\ud800"
TEXTS = st.one_of(
    st.text(),
    st.text(st.sampled_from([*CONTROLS, "a", "é", "\n", "\t", " ", "\\", "u", "[", "3"])),
)


def _acts_on_a_terminal_or_hides(char: str) -> bool:
    """C0 (but newline and tab), DEL, C1, format characters (zero-width, bidi) and surrogates."""
    if char in "\n\t":
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Cs") or char == "\u00ad"


@given(TEXTS)
def test_visible_output_holds_no_control_character(text: str) -> None:
    shown = visible(text)
    # Every escaped character is one of these; tags and the like (other Cf) are not, so the
    # check is on the characters a terminal acts on and the ones that reorder or hide text.
    assert not INVISIBLE.search(shown)
    for char in shown:
        assert not (
            _acts_on_a_terminal_or_hides(char)
            and (unicodedata.category(char) in ("Cc", "Cs") or 0x200B <= ord(char) <= 0x206F)
        ), repr(char)


@given(TEXTS)
def test_visible_leaves_printable_text_unchanged_and_is_reversible(text: str) -> None:
    shown = visible(text)
    if not INVISIBLE.search(text):
        assert shown == text
    if "\\u" not in text:
        restored = re.sub(r"\\u([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), shown)
        assert restored == text


def test_terminal_escape_sequences_and_bidi_overrides_are_spelled_out() -> None:
    assert visible("\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eexe.txt\n\tok") == (
        "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eexe.txt\n\tok"
    )
