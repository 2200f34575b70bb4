"""What a framework policy reproduces, from where, and how sure it is; when it acts on a chat.

Kept apart from :mod:`ctxlab.strategies.frameworks` (the strategies themselves) because the
base :class:`~ctxlab.strategies.Strategy` names :class:`FrameworkPolicy` in its class
attributes and must not import a strategy package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "EVIDENCE_WORDS",
    "Evidence",
    "FrameworkPolicy",
    "Persistence",
    "TriggerReport",
    "disagreement",
]

Evidence = Literal["oracle", "code", "docs"]
"""How a reproduction is known to be right: ``oracle`` = the tests run the framework's own code
on the same chats and compare; ``code`` = ported from the framework's source, not run;
``docs`` = read from the vendor's documentation (a closed service or binary)."""

EVIDENCE_WORDS: dict[str, str] = {
    "oracle": "checked against the framework's own code",
    "code": "ported from the framework's source (not run in the tests)",
    "docs": "documented behaviour only (closed implementation)",
}

Persistence = Literal["view", "state", "server"]
"""``view``: only the request is edited, the stored history stays full; ``state``: the stored
history is rewritten; ``server``: the provider edits the prompt on its side."""


@dataclass(frozen=True, slots=True)
class FrameworkPolicy:
    """What a framework strategy reproduces, from where, and how sure it is.

    Attributes:
        framework: the framework's name as its users say it ("LangChain", "Claude Code").
        component: the class, function or feature reproduced ("SummarizationMiddleware").
        version: the version read, with its package or release ("langchain 1.5.2").
        source: where the behaviour was read (files of the package, a commit, a docs URL).
        evidence: see :data:`Evidence`.
        counter: how the framework counts what its trigger compares, in words.
        persists: see :data:`Persistence`.
        unpublished: for a closed service ("docs"), details the vendor does not publish,
            which the reproduction had to choose; for an open framework, behaviour ctxlab does
            not follow exactly. The UI lists them under :attr:`unpublished_label`.
        known_issues: the framework's known bugs the reproduction keeps, as its users meet
            them ("microsoft/autogen#7955: can return a tool call without its result").
    """

    framework: str
    component: str
    version: str
    source: str
    evidence: Evidence
    counter: str
    persists: Persistence
    unpublished: tuple[str, ...] = ()
    known_issues: tuple[str, ...] = ()

    @property
    def unpublished_label(self) -> str:
        """How the UI introduces each of :attr:`unpublished`."""
        if self.evidence == "docs":
            return "Not published by the vendor"
        return "Not reproduced exactly"

    @property
    def evidence_text(self) -> str:
        """``"LangChain SummarizationMiddleware (langchain 1.5.2), checked against ..."``."""
        return (
            f"{self.framework} {self.component} ({self.version}), {EVIDENCE_WORDS[self.evidence]}"
        )


@dataclass(frozen=True, slots=True)
class TriggerReport:
    """When a framework policy acts on a chat, in the framework's own terms.

    Attributes:
        fires: the policy acts on this chat now, with these settings.
        threshold: where it fires, in ``unit``; None when it never fires with these settings
            (LangChain's ``trigger=None``).
        unit: what ``threshold`` and ``estimate`` measure: "tokens", "messages", "items",
            "invocations".
        estimate: the framework's own measure of the chat (its token estimate, or a count).
        exact: ctxlab's exact token count of the request the model would see; None when the
            unit is not tokens.
        text: one sentence for the page, e.g. "Fires at 167,000 tokens on claude-sonnet-4-5
            (window 200,000 − 20,000 output − 13,000); this chat is at 41,000."
        framework: the framework's name, for :attr:`disagreement`.
    """

    fires: bool
    threshold: int | None
    unit: str
    estimate: int
    exact: int | None
    text: str
    framework: str = ""

    @property
    def disagreement(self) -> str:
        """Where the framework's estimate and the exact count part ("" when they agree or the
        unit is not tokens)."""
        if self.unit != "tokens" or self.exact is None:
            return ""
        return disagreement(self.framework or "The framework", self.estimate, self.exact)


def disagreement(framework: str, estimate: int, exact: int) -> str:
    """Where an estimate and the exact count part, in words; "" when the two agree.

    A trigger compared with the estimate fires when the estimate reaches it: when the estimate
    is low, the real context has grown past the threshold by the difference ("late").

    For an estimate of 96,000 and an exact count of 118,000: "... a token trigger fires 22,000
    tokens late (the estimate is 18.6% low)."
    """
    if estimate == exact:
        return ""
    gap = exact - estimate
    when = "late" if gap > 0 else "early"
    share = abs(gap) / exact if exact else 0.0
    side = "low" if gap > 0 else "high"
    return (
        f"{framework} thinks {estimate:,} tokens, the model sees {exact:,}: a token trigger "
        f"fires {abs(gap):,} tokens {when} (the estimate is {share:.1%} {side})."
    )
