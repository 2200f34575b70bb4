"""The context policies of the frameworks people run, by name: ``<framework>-<policy>``.

Each module here reproduces one framework's policy (LangChain's ``SummarizationMiddleware``,
Codex's compaction, ...) as a ctxlab strategy: the framework's own parameter names and
defaults (a default that makes the policy do nothing stays the default), its own token
counter for every decision it takes (``chars / 4``, bytes / 4, tiktoken over content only),
its placeholders, and its summary prompt, role and position. ``TrimResult.tokens_before`` and
``tokens_after`` stay ctxlab's exact counts, so charts show what the model sees, and
:meth:`FrameworkStrategy.trigger_report` says where the framework's own estimate is wrong.

:class:`FrameworkPolicy` tells the user what was reproduced and how sure it is: run against
the framework's own code in the tests (``oracle``), ported from its source without running it
(``code``), or read from the vendor's documentation (``docs``), with the details the vendor
does not publish listed rather than guessed silently.

How a chat maps onto a framework (so that every comparison compares the same thing): the chat
is the framework's stored history with the user's messages as they arrived; a leading system
prompt goes to the framework's own system slot where it has one and is then not trimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.strategies.base import Strategy
from ctxlab.strategies.provenance import (
    EVIDENCE_WORDS,
    Evidence,
    FrameworkPolicy,
    Persistence,
    TriggerReport,
    disagreement,
)

if TYPE_CHECKING:
    from ctxlab.formats import CallUsage
    from ctxlab.model import Message
    from ctxlab.tokens import TokenCounter

__all__ = [
    "EVIDENCE_WORDS",
    "Evidence",
    "FrameworkPolicy",
    "FrameworkStrategy",
    "Persistence",
    "TriggerReport",
    "disagreement",
    "fresh_id",
]


def fresh_id(messages: Sequence[Message], base: str) -> str:
    """``base`` made unique among the ids of ``messages`` (``base``, then ``base-1``, ...): the id
    of a message a policy inserts (a summary, a marker) never names a message of the chat."""
    taken = {m.id for m in messages}
    candidate, k = base, 0
    while candidate in taken:
        k += 1
        candidate = f"{base}-{k}"
    return candidate


class FrameworkStrategy(Strategy):
    """A framework's policy as a strategy (see the module docstring).

    Subclasses are frozen dataclasses like every strategy; they set :attr:`framework_policy`,
    keep the framework's parameter names and defaults, decide with the framework's own counter
    and report :meth:`trigger_report`. ``suggested`` returns the framework's defaults (what
    its users run), not values scaled to the chat: when those do nothing,
    :meth:`trigger_report` says so.
    """

    framework_policy: ClassVar[FrameworkPolicy]
    order: ClassVar[int] = 200

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        """The framework's own token count of ``messages`` as its trigger sees them, or None
        when the policy counts no tokens (a message-count window)."""
        return None

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        """When this configuration acts on ``messages`` (the whole chat), in the framework's
        terms, with ctxlab's exact count beside the framework's estimate.

        Not named ``trigger``: that is a parameter of many frameworks, and a dataclass field of
        that name would hide the method."""
        raise NotImplementedError

    def with_recorded_usage(self, usage: Sequence[CallUsage]) -> Self:
        """This policy given the provider usage the chat recorded
        (:attr:`ctxlab.formats.LoadedChat.usage`), for a framework whose count starts from the
        last API response (Claude Code); the default ignores it. The app and the CLI call it on
        every framework policy they build for a loaded chat."""
        return self

    def config_code(self) -> str:
        """The framework's own configuration for these settings, ready to paste (Python for a
        Python framework, ``config.toml`` for Codex, a request body for an API feature)."""
        raise NotImplementedError


def __getattr__(name: str) -> type[FrameworkStrategy]:
    """Every framework policy class by its name (``from ctxlab.strategies.frameworks import
    LangChainSummarization``), its module imported on first use."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found = vars(module).get(name)
        if isinstance(found, type) and issubclass(found, FrameworkStrategy):
            return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
