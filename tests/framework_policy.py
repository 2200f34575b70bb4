"""A small but real framework policy for the UI, CLI and export tests (not shipped).

``test-framework-window`` behaves like the framework policies other modules reproduce, through
the same :class:`~ctxlab.strategies.frameworks.FrameworkStrategy` API: a made-up framework
("TestFramework") whose ``WindowMemory`` counts ``chars / 4 + 3`` per message (its own
estimate, which differs from ctxlab's exact count), fires once that estimate reaches a token
``trigger`` (``"none"`` by default: it never fires, as LangChain's ``trigger=None``), and then
keeps the newest ``keep`` messages behind a placeholder it inserts. With ``compact=true`` it
rewrites its stored history (``replace=True``), as a compaction does.

Tests register it at run time (:func:`registered`) and remove it after; the browser test's
server finds it through an entry point (:func:`plugin_path`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies import Decision, TrimResult, param, register, registry
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

NAME = "test-framework-window"
TITLE = "TestFramework · WindowMemory"
PLACEHOLDER = "[{n} earlier messages removed by WindowMemory]"
_TRIGGER = re.compile(r"^\s*tokens\s*=\s*(\d+)\s*$")

POLICY = FrameworkPolicy(
    framework="TestFramework",
    component="WindowMemory",
    version="testframework 0.1.0",
    source="tests/framework_policy.py",
    evidence="code",
    counter="characters / 4 + 3 per message",
    persists="view",
    unpublished=("the placeholder's exact wording",),
    known_issues=("testframework#7: the window can start on a tool result without its call",),
)


@dataclass(frozen=True, slots=True)
class TestFrameworkWindow(FrameworkStrategy):
    """TestFramework's WindowMemory: the newest ``keep`` messages once ``trigger`` is reached."""

    __test__ = False  # not a pytest test class

    name: ClassVar[str] = NAME
    title: ClassVar[str] = TITLE
    summary: ClassVar[str] = (
        "Keep the newest messages once TestFramework's estimate hits a trigger."
    )
    explanation: ClassVar[str] = "A framework policy written for ctxlab's tests."
    framework_policy: ClassVar[FrameworkPolicy] = POLICY

    trigger: str = param(
        "none",
        label="trigger",
        help='When it fires, in TestFramework\'s spelling: "tokens=N" or "none".',
    )
    keep: int = param(
        4, label="keep", help="Messages kept once it fires.", min=1, step=1, unit="messages"
    )
    compact: bool = param(
        False, label="compact", help="Rewrite the stored history (a compaction), not a view."
    )

    def __post_init__(self) -> None:
        if self.threshold is None and self.trigger.strip().lower() != "none":
            raise ParameterError(
                f'trigger: cannot read {self.trigger!r}; write "tokens=N" or "none"'
            )

    @property
    def threshold(self) -> int | None:
        match = _TRIGGER.match(self.trigger)
        return int(match.group(1)) if match else None

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int:
        return sum(len(m.content) // 4 + 3 for m in messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        """When the policy fires on ``messages``, in TestFramework's terms (its parameter
        ``trigger`` is a field, as LangChain's is: the report has its own name)."""
        estimate = self.estimate(messages, counter)
        exact = counter.count_messages(messages)
        threshold = self.threshold
        framework = self.framework_policy.framework
        if threshold is None:
            text = (
                f"Never fires: trigger is None ({framework}'s default); set trigger=tokens=N. "
                f"This chat is at {estimate:,} tokens by its estimate."
            )
            return TriggerReport(False, None, "tokens", estimate, exact, text, framework)
        fires = estimate >= threshold
        text = (
            f"Fires at {threshold:,} tokens ({framework}'s estimate); this chat is at "
            f"{estimate:,}, so it {'fires' if fires else 'does not fire yet'}."
        )
        return TriggerReport(fires, threshold, "tokens", estimate, exact, text, framework)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        threshold = self.threshold
        fires = threshold is not None and self.estimate(messages, counter) >= threshold
        cut = max(len(messages) - self.keep, 0) if fires else 0
        if cut == 0:
            decisions = {m.id: Decision.KEPT for m in messages}
            return TrimResult(tuple(messages), decisions, before, before, strategy=self.name)
        marker = Message(Role.USER, PLACEHOLDER.format(n=cut), f"twf-removed-{cut}")
        sent = (marker, *messages[cut:])
        decisions = {m.id: Decision.DROPPED for m in messages[:cut]}
        decisions.update({m.id: Decision.KEPT for m in messages[cut:]})
        return TrimResult(
            sent,
            decisions,
            before,
            counter.count_messages(sent),
            inserted=(marker,),
            replace=self.compact,
            strategy=self.name,
        )

    def config_code(self) -> str:
        trigger = "None" if self.threshold is None else f'("tokens", {self.threshold})'
        return (
            "from testframework import WindowMemory\n\n"
            f"memory = WindowMemory(trigger={trigger}, keep={self.keep}, "
            f"compact={self.compact!r})\n"
        )


OTHER_NAME = "test-framework-compact"
OTHER_POLICY = FrameworkPolicy(
    framework="OtherFramework",
    component="Compactor",
    version="otherframework 2.0",
    source="tests/framework_policy.py",
    evidence="docs",
    counter="characters / 4 + 3 per message",
    persists="state",
)


@dataclass(frozen=True, slots=True)
class TestFrameworkCompact(TestFrameworkWindow):
    """A second framework for side-by-side views: it rewrites its history by default, and its
    default trigger fires on the sample chats."""

    __test__ = False

    name: ClassVar[str] = OTHER_NAME
    title: ClassVar[str] = "OtherFramework · Compactor"
    summary: ClassVar[str] = "Rewrite the history to its newest messages past a token trigger."
    framework_policy: ClassVar[FrameworkPolicy] = OTHER_POLICY

    trigger: str = param(
        "tokens=8000",
        label="trigger",
        help='When it fires, in OtherFramework\'s spelling: "tokens=N" or "none".',
    )
    keep: int = param(
        10, label="keep", help="Messages kept once it fires.", min=1, step=1, unit="messages"
    )
    compact: bool = param(
        True, label="compact", help="Rewrite the stored history (a compaction), not a view."
    )


TEST_POLICIES = (TestFrameworkWindow, TestFrameworkCompact)


def register_test_policy() -> None:
    for cls in TEST_POLICIES:
        register(cls)


def unregister_test_policy() -> None:
    for cls in TEST_POLICIES:
        registry._REGISTRY.pop(cls.name, None)


@contextlib.contextmanager
def registered() -> Iterator[type[TestFrameworkWindow]]:
    """The test policy in the registry for the duration of the block."""
    register_test_policy()
    try:
        yield TestFrameworkWindow
    finally:
        unregister_test_policy()


def plugin_path(folder: Path) -> Path:
    """Write into ``folder`` the metadata of a distribution that declares the test policy as a
    ``ctxlab.strategies`` entry point (``folder`` and tests/ on PYTHONPATH make a server load
    it as any plug-in); returns ``folder``."""
    info = folder / "ctxlab_test_framework-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ctxlab-test-framework\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[ctxlab.strategies]\n{NAME} = framework_policy:TestFrameworkWindow\n"
        f"{OTHER_NAME} = framework_policy:TestFrameworkCompact\n",
        encoding="utf-8",
    )
    return folder
