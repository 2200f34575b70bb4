"""The transcript: the one rendering of folded messages that a summarizer receives.

:func:`render_transcript` is the only place where messages become summarizer text, with
redaction (:mod:`ctxlab.redaction`) applied on the way. The app's preview, the CLI's
``--show-request`` and the request actually sent all hold its output, so what a user sees is
byte for byte what leaves the process.

Layout, one block per message separated by a blank line::

    User: what is the weather in Paris?

    Assistant called get_weather({"city": "Paris"})

    Tool result of get_weather [call_1]: [REDACTED]

When a previous summary is being updated, it comes first under :data:`PREVIOUS_SUMMARY_HEADING`
and the new messages follow under :data:`UPDATE_HEADING`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ctxlab.model import Message, Role
from ctxlab.redaction import REDACTED, RedactionPolicy, merge_counts, redact_patterns

__all__ = [
    "NEW_HEADING",
    "PREVIOUS_SUMMARY_HEADING",
    "UPDATE_HEADING",
    "Transcript",
    "render_transcript",
]

NEW_HEADING = "Conversation to summarize:"
PREVIOUS_SUMMARY_HEADING = (
    "Previous summary (update it with the conversation below: keep what still holds, "
    "revise what changed, add what is new):"
)
UPDATE_HEADING = "Conversation since the previous summary:"

_LABELS = {
    Role.SYSTEM: "System",
    Role.DEVELOPER: "Developer",
    Role.USER: "User",
    Role.ASSISTANT: "Assistant",
}


@dataclass(frozen=True, slots=True)
class Transcript:
    """The rendered text and what redaction masked to produce it.

    Attributes:
        text: exactly the user-message text the summarizer receives.
        redactions: masked spans per rule; role redaction counts as ``role:<role>`` per message
            body and ``tool-arguments`` per tool call; pattern rules by their names.
        messages: how many messages were rendered.
    """

    text: str
    redactions: Mapping[str, int] = field(default_factory=dict)
    messages: int = 0


class _Renderer:
    """Accumulates blocks and redaction counts for one :func:`render_transcript` call."""

    def __init__(self, policy: RedactionPolicy) -> None:
        self.policy = policy
        self.counts: dict[str, int] = {}

    def _count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def mask(self, text: str) -> str:
        """Pattern redaction, when the policy asks for it."""
        if not self.policy.patterns or not text:
            return text
        out = redact_patterns(text)
        self.counts = merge_counts(self.counts, out.counts)
        return out.text

    def body(self, message: Message) -> str:
        if message.role in self.policy.roles and message.content:
            self._count(f"role:{message.role.value}")
            return REDACTED
        return self.mask(message.content)

    def arguments(self, message: Message, arguments: str) -> str:
        redact = self.policy.redacts_tool_arguments or message.role in self.policy.roles
        if redact and arguments:
            self._count("tool-arguments")
            return REDACTED
        return self.mask(arguments)

    def block(
        self, message: Message, call_names: Mapping[str, str], next_is_summary: bool
    ) -> str | None:
        """The text of one message, or None when it carries nothing to summarize."""
        role = message.role
        name = self.mask(message.name) if message.name else None
        if message.is_compaction:
            # The marker of an older compaction: its summary travels in the summary message
            # that follows it; only a marker without one contributes its stored text.
            meta = message.compaction_meta
            if next_is_summary or meta is None or not meta.summary_text:
                return None
            return f"Previous summary: {self.mask(meta.summary_text)}"
        if message.is_summary:
            return f"Previous summary: {self.body(message)}"
        if role.is_tool_result:
            call_id = message.tool_call_id
            tool = name or (call_names.get(call_id) if call_id else None)
            label = "Tool result" if role is Role.TOOL else "Function result"
            if tool:
                label += f" of {self.mask(tool)}"
            if call_id:
                label += f" [{self.mask(call_id)}]"
            return f"{label}: {self.body(message)}"
        label = _LABELS.get(role, role.value.capitalize())
        if name:
            label += f" ({name})"
        lines: list[str] = []
        if message.content or not message.tool_calls:
            lines.append(f"{label}: {self.body(message)}")
        for call in message.tool_calls:
            args = self.arguments(message, call.arguments)
            lines.append(f"{label} called {self.mask(call.name)}({args})")
        return "\n".join(lines)


def render_transcript(
    messages: Sequence[Message],
    policy: RedactionPolicy,
    *,
    previous_summary: str | None = None,
) -> Transcript:
    """Render ``messages`` into the exact text a summarizer receives, redaction applied.

    Nothing masked by ``policy`` appears in the result: redacted roles' bodies (and, with the
    tool role, tool-call arguments) are replaced by :data:`~ctxlab.redaction.REDACTED`, and with
    ``policy.patterns`` every rendered string — content, arguments, names, ids and the previous
    summary — passes through :func:`~ctxlab.redaction.redact_patterns`.

    Args:
        messages: the messages being folded, oldest first.
        policy: what to mask.
        previous_summary: the summary of an earlier compaction, to be updated. It is generated
            from already-redacted text, so role redaction does not apply to it; patterns do.

    Returns:
        The transcript text and the redaction counts.
    """
    renderer = _Renderer(policy)
    call_names = {
        call.id: call.name for m in messages for call in m.tool_calls if call.id is not None
    }
    flags = [m.is_summary for m in messages[1:]] + [False]
    blocks = [
        block
        for message, next_is_summary in zip(messages, flags, strict=True)
        if (block := renderer.block(message, call_names, next_is_summary)) is not None
    ]
    conversation = "\n\n".join(blocks)
    if previous_summary is not None:
        summary = renderer.mask(previous_summary.strip())
        text = f"{PREVIOUS_SUMMARY_HEADING}\n{summary}\n\n{UPDATE_HEADING}\n\n{conversation}"
    else:
        text = f"{NEW_HEADING}\n\n{conversation}"
    return Transcript(text, renderer.counts, len(messages))
