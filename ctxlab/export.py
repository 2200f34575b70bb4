"""Export a tuned policy as ready-to-paste code: for ctxlab itself and the closest settings in
the libraries people use (LangChain, Semantic Kernel, AutoGen, the OpenAI Agents SDK).

Each target gets code plus notes where that library cannot express the same policy (no
tool-pair protection, counting messages instead of tokens, no redaction, ...). The ctxlab export
is exact: run as a script on the same chat it prints the decisions the app shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlab.errors import CtxlabError, UnknownNameError
from ctxlab.model import Role

if TYPE_CHECKING:  # the CLI reads TARGETS to build its parser: no strategy import for that
    from ctxlab.strategies.base import Strategy

__all__ = [
    "NATIVE",
    "TARGETS",
    "ExportedPolicy",
    "export_details",
    "export_policy",
    "is_framework_policy",
    "targets_for",
]

TARGETS: tuple[str, ...] = (
    "ctxlab",
    "native",
    "langchain",
    "semantic-kernel",
    "autogen",
    "openai-agents",
)
"""Every export target. ``native`` is a framework policy's own configuration (its
``config_code``): the framework runs the very policy reproduced, so it is exact; it exists for
framework policies only (:func:`targets_for`)."""

NATIVE = "native"


@dataclass(frozen=True, slots=True)
class ExportedPolicy:
    """Source text for one target and the caveats of the translation."""

    target: str
    code: str
    notes: tuple[str, ...] = ()
    exact: bool = False  # True only when the target reproduces ctxlab's decisions exactly

    def as_source(self) -> str:
        """The code with the notes as a leading comment block (what export_policy returns)."""
        if not self.notes:
            return self.code
        header = "\n".join(f"# NOTE: {note}" for note in self.notes)
        return f"{header}\n\n{self.code}"


def _literal(value: Any) -> str:
    if isinstance(value, tuple) and all(isinstance(v, Role) for v in value):
        return repr(",".join(v.value for v in value))
    return repr(value)


def _params(strategy: Strategy) -> dict[str, Any]:
    from ctxlab.strategies.registry import current_params

    return current_params(strategy)


def _ctxlab(strategy: Strategy, model: str) -> ExportedPolicy:
    params = _params(strategy)
    args = ",\n".join(f"        {name!r}: {_literal(v)}" for name, v in params.items())
    summarizer_import = summarizer_line = ""
    call = "STRATEGY.apply(messages, COUNTER)"
    if strategy.uses_summarizer:
        summarizer_import = "from ctxlab.summarizers import OfflineSummarizer\n"
        summarizer_line = (
            "# Offline and deterministic; for a real model use\n"
            "# OpenAISummarizer(model=..., base_url=...) with OPENAI_API_KEY set.\n"
            "SUMMARIZER = OfflineSummarizer()\n"
        )
        call = "STRATEGY.apply(messages, COUNTER, SUMMARIZER)"
    code = f'''"""Context policy exported from ctxlab: {strategy.title}.

Usage: python policy.py CHAT.json   (prints "<message id> <decision>" per message)
"""

import sys

from ctxlab import load_chat
from ctxlab.strategies import build_strategy
{summarizer_import}from ctxlab.tokens import get_counter

STRATEGY = build_strategy(
    {strategy.name!r},
    {{
{args}
    }},
)
COUNTER = get_counter({model!r})
{summarizer_line}

def trim(messages):
    """The ctxlab TrimResult for `messages`: .messages is the context to send."""
    return {call}


if __name__ == "__main__":
    result = trim(load_chat(sys.argv[1]))
    for message_id, decision in result.decisions.items():
        print(message_id, decision.value)
    print(f"tokens: {{result.tokens_before}} -> {{result.tokens_after}}", file=sys.stderr)
'''
    return ExportedPolicy("ctxlab", code, (), exact=True)


_TIKTOKEN_COUNTER = '''import tiktoken

_ENCODING = tiktoken.encoding_for_model({model!r})


def count_tokens(messages):
    """OpenAI's chat accounting: 3 per message + content tokens + 3 reply priming."""
    total = 3
    for m in messages:
        content = m.content if isinstance(m.content, str) else str(m.content)
        total += 3 + len(_ENCODING.encode(m.type)) + len(_ENCODING.encode(content))
    return total
'''

_NO_TOOL_PAIRS = (
    "message-level trimming: it can keep a tool result whose assistant tool call was dropped "
    "(an API 400 error); ctxlab's whole-round strategies never do."
)


def _window_drop(strategy: Strategy, target: str, model: str) -> ExportedPolicy:
    budget = _params(strategy)["budget"]
    if target == "langchain":
        code = (
            _TIKTOKEN_COUNTER.format(model=model)
            + f"""
from langchain_core.messages import trim_messages

trimmed = trim_messages(
    messages,
    max_tokens={budget},
    strategy="last",
    token_counter=count_tokens,
    start_on="human",  # start on a user message: whole rounds, as window-drop keeps
    include_system=False,  # window-drop treats system messages like any other
    allow_partial=False,
)
"""
        )
        notes = (
            "LangChain returns fewer messages (possibly none) when the newest round alone is "
            "over budget; window-drop always keeps the newest round.",
            "start_on='human' approximates whole rounds; a user message between a tool call "
            "and its result would still split them.",
        )
        return ExportedPolicy(target, code, notes)
    if target == "semantic-kernel":
        code = """from semantic_kernel.contents import ChatHistoryTruncationReducer

# Semantic Kernel reduces by message count, not tokens: pick the count that fits your budget
# (ctxlab's Tune page shows messages kept against the budget).
reducer = ChatHistoryTruncationReducer(target_count=TARGET_MESSAGES, threshold_count=2)
"""
        notes = (
            f"Semantic Kernel's reducers count messages, not tokens: a budget of {budget} tokens "
            "cannot be expressed; set TARGET_MESSAGES from ctxlab's Tune page.",
            "threshold_count lets it avoid orphaning tool results, close to whole rounds.",
        )
        return ExportedPolicy(target, code, notes)
    if target == "autogen":
        code = f"""from autogen_core.model_context import TokenLimitedChatCompletionContext
from autogen_ext.models.openai import OpenAIChatCompletionClient

model_client = OpenAIChatCompletionClient(model={model!r})
model_context = TokenLimitedChatCompletionContext(model_client, token_limit={budget})
"""
        return ExportedPolicy(
            target, code, ("AutoGen drops the oldest messages, not rounds: " + _NO_TOOL_PAIRS,)
        )
    return _openai_agents_session(
        "token budget",
        f"""        budget = {budget}
        counts = [count_item(i) for i in items]
        # whole user turns: the start of the newest suffix that fits
        starts = [k for k, i in enumerate(items) if i.get("role") == "user"] or [0]
        for start in starts:
            if sum(counts[start:]) + 3 <= budget:
                return items[start:]
        return items[starts[-1]:]""",
        model,
        (
            "The Agents SDK has no built-in token trimming; this custom Session keeps whole user "
            "turns under the budget (the cookbook's TrimmingSession pattern).",
        ),
    )


def _sliding_window(strategy: Strategy, target: str, model: str) -> ExportedPolicy:
    params = _params(strategy)
    window = params["window"]
    trigger = getattr(strategy, "trigger", window + 1)
    hysteresis = (
        f"the trigger at {trigger} messages (hysteresis) cannot be expressed; "
        "it trims at every call."
    )
    if target == "langchain":
        code = f"""from langchain_core.messages import trim_messages

trimmed = trim_messages(
    messages,
    max_tokens={window},
    token_counter=len,  # count messages, not tokens
    strategy="last",
    include_system=True,
    allow_partial=False,
)
"""
        return ExportedPolicy(
            target, code, (hysteresis, "include_system keeps only the first system message.")
        )
    if target == "semantic-kernel":
        code = f"""from semantic_kernel.contents import ChatHistoryTruncationReducer

reducer = ChatHistoryTruncationReducer(
    target_count={window},
    threshold_count={max(trigger - window - 1, 0)},  # reduce once count exceeds target + threshold
)
"""
        return ExportedPolicy(
            target,
            code,
            ("Semantic Kernel may keep a few more messages to avoid orphaning tool results.",),
        )
    if target == "autogen":
        code = f"""from autogen_core.model_context import BufferedChatCompletionContext

model_context = BufferedChatCompletionContext(buffer_size={window})
"""
        notes = (hysteresis, "AutoGen passes the system message separately, so it is always kept.")
        return ExportedPolicy(target, code, notes)
    return _openai_agents_session(
        "last N items",
        f"        return items[-{window}:] if len(items) >= {trigger} else items",
        model,
        (
            "Session items hold no system prompt (it is the agent's instructions), so it is always "
            "kept, as in ctxlab.",
        ),
    )


def _trim_last(strategy: Strategy, target: str, model: str) -> ExportedPolicy:
    p = _params(strategy)
    if target == "langchain":
        start = '"human"' if p.get("start_on_user") else "None"
        code = (
            _TIKTOKEN_COUNTER.format(model=model)
            + f"""
from langchain_core.messages import trim_messages

trimmed = trim_messages(
    messages,
    max_tokens={p["max_tokens"]},
    strategy="last",
    token_counter=count_tokens,
    start_on={start},
    include_system={p.get("include_system", False)!r},
    allow_partial=False,
)
"""
        )
        return ExportedPolicy(target, code, ("This is the behaviour trim-last reproduces.",))
    return _window_drop_like_message_level(p["max_tokens"], target, model)


def _window_drop_like_message_level(budget: int, target: str, model: str) -> ExportedPolicy:
    if target == "autogen":
        code = f"""from autogen_core.model_context import TokenLimitedChatCompletionContext
from autogen_ext.models.openai import OpenAIChatCompletionClient

model_context = TokenLimitedChatCompletionContext(
    OpenAIChatCompletionClient(model={model!r}), token_limit={budget}
)
"""
        return ExportedPolicy(target, code, (_NO_TOOL_PAIRS,))
    if target == "semantic-kernel":
        code = """from semantic_kernel.contents import ChatHistoryTruncationReducer

reducer = ChatHistoryTruncationReducer(target_count=TARGET_MESSAGES)
"""
        return ExportedPolicy(
            target,
            code,
            (f"Semantic Kernel counts messages, not tokens: {budget} tokens cannot be expressed.",),
        )
    return _openai_agents_session(
        "newest items under a token budget",
        f"""        kept, total = [], 3
        for item in reversed(items):
            total += count_item(item)
            if total > {budget}:
                break
            kept.append(item)
        return kept[::-1]""",
        model,
        (_NO_TOOL_PAIRS,),
    )


def _clear_tool_results(strategy: Strategy, target: str, model: str) -> ExportedPolicy:
    p = _params(strategy)
    if target == "langchain":
        code = f"""from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

agent = create_agent(
    model={model!r},
    tools=tools,
    middleware=[
        ContextEditingMiddleware(
            edits=[
                ClearToolUsesEdit(
                    trigger={p.get("trigger_tokens")!r},
                    keep={p.get("keep_tool_results")!r},
                    clear_at_least={p.get("clear_at_least", 0)!r},
                    placeholder={p.get("placeholder", "[cleared]")!r},
                )
            ]
        )
    ],
)
"""
        return ExportedPolicy(
            target,
            code,
            (
                "LangChain's ClearToolUsesEdit mirrors Anthropic's "
                "clear_tool_uses; check its token counter matches.",
            ),
        )
    notes = (
        f"{target} has no tool-result clearing; Anthropic's API does it server-side with "
        "context_management={'edits': [{'type': 'clear_tool_uses_20250919', ...}]}, or call "
        "ctxlab's strategy before each model call (see the ctxlab export).",
    )
    return ExportedPolicy(target, "# No built-in equivalent: see the note above.\n", notes)


def _summarize(strategy: Strategy, target: str, model: str) -> ExportedPolicy:
    p = _params(strategy)
    trigger = p.get("trigger_token_budget")
    keep = p.get("keep_recent_messages")
    prompt = p.get("summary_system_prompt", "")
    redaction_note = (
        "No redaction: tool results and arguments (often credentials) are sent to the "
        "summarizer model verbatim; ctxlab redacts them before anything leaves the process."
    )
    if target == "langchain":
        code = f"""from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware

agent = create_agent(
    model={model!r},
    tools=tools,
    middleware=[
        SummarizationMiddleware(
            model={model!r},
            trigger=("tokens", {trigger}),
            keep=("messages", {keep}),
            summary_prompt={prompt!r},
        )
    ],
)
"""
        return ExportedPolicy(
            target, code, (redaction_note, "Its summary_prompt is a template with {messages}.")
        )
    if target == "semantic-kernel":
        include = not p.get("redact_tool_content", True)
        code = f"""from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.contents import ChatHistorySummarizationReducer

reducer = ChatHistorySummarizationReducer(
    service=OpenAIChatCompletion(ai_model_id={model!r}),
    target_count={keep},
    threshold_count=TRIGGER_MESSAGES_ABOVE_TARGET,  # messages, not tokens
    summarization_instructions={prompt!r},
    include_function_content_in_summary={include!r},
)
"""
        return ExportedPolicy(
            target,
            code,
            (
                f"Semantic Kernel triggers on a message count, not on {trigger} tokens.",
                "Excluding function content is its only redaction; other roles are sent verbatim.",
            ),
        )
    if target == "autogen":
        notes = (
            "AutoGen has no summarizing model context; implement ChatCompletionContext and "
            "call ctxlab's summarize strategy in get_messages() (see the ctxlab export).",
        )
        return ExportedPolicy(target, "# No built-in equivalent: see the note above.\n", notes)
    return _openai_agents_session(
        "summarize older items",
        f"""        if sum(count_item(i) for i in items) + 3 <= {trigger}:
            return items
        old, recent = items[:-{keep}], items[-{keep}:]
        summary = summarize(old)  # your LLM call, with {prompt[:40]!r}...
        return [{{"role": "user", "content": "Summary of earlier conversation:"}},
                {{"role": "assistant", "content": summary}}] + recent""",
        model,
        (
            redaction_note,
            "The cookbook's SummarizingSession pattern; the cut can split a tool "
            "call from its result unless you move it to a user turn.",
        ),
    )


def _openai_agents_session(
    what: str, body: str, model: str, notes: tuple[str, ...]
) -> ExportedPolicy:
    code = f'''import tiktoken
from agents import SQLiteSession

_ENCODING = tiktoken.encoding_for_model({model!r})


def count_item(item):
    return 3 + len(_ENCODING.encode(str(item.get("content") or "")))


class PolicySession(SQLiteSession):
    """A Session whose history is trimmed before every run ({what})."""

    async def get_items(self, limit=None):
        items = await super().get_items(limit)
        return self.trim(items)

    def trim(self, items):
{body}
'''
    return ExportedPolicy("openai-agents", code, notes)


_Exporter = Callable[["Strategy", str, str], ExportedPolicy]
_EXPORTERS: dict[str, _Exporter] = {
    "window-drop": _window_drop,
    "sliding-window": _sliding_window,
    "trim-last": _trim_last,
    "clear-tool-results": _clear_tool_results,
    "summarize": _summarize,
}


def is_framework_policy(strategy: Strategy | type[Strategy]) -> bool:
    """``strategy`` reproduces a framework's policy (it has a ``framework_policy``)."""
    return getattr(strategy, "framework_policy", None) is not None


def targets_for(strategy: Strategy | type[Strategy]) -> tuple[str, ...]:
    """The targets ``strategy`` exports to: every target for a framework policy (its own
    configuration first), every target but ``native`` for a ctxlab strategy."""
    if is_framework_policy(strategy):
        return (NATIVE, *(t for t in TARGETS if t != NATIVE))
    return tuple(t for t in TARGETS if t != NATIVE)


def _native(strategy: Strategy) -> ExportedPolicy:
    """The framework's own configuration of a framework policy (exact: the framework runs it)."""
    if not is_framework_policy(strategy):
        others = "/".join(t for t in TARGETS if t != NATIVE)
        raise CtxlabError(
            f"native export is for framework policies; {strategy.name!r} is a ctxlab strategy: "
            f"use --target {others}"
        )
    config_code = getattr(strategy, "config_code", None)
    if not callable(config_code):  # pragma: no cover - every FrameworkStrategy has one
        raise CtxlabError(f"{strategy.name!r} has no configuration code")
    code = str(config_code())
    return ExportedPolicy(NATIVE, code if code.endswith("\n") else code + "\n", (), exact=True)


def export_details(
    strategy: Strategy, target: str = "ctxlab", *, model: str = "gpt-4o"
) -> ExportedPolicy:
    """The export of ``strategy`` for ``target`` with its caveats.

    Raises:
        UnknownNameError: ``target`` is not one of :data:`TARGETS`.
        CtxlabError: ``native`` asked of a ctxlab strategy (it has no framework of its own).
    """
    if target not in TARGETS:
        raise UnknownNameError(f"unknown export target {target!r}; available: {', '.join(TARGETS)}")
    if target == "ctxlab":
        return _ctxlab(strategy, model)
    if target == NATIVE:
        return _native(strategy)
    if is_framework_policy(strategy):
        policy = getattr(strategy, "framework_policy", None)
        framework = getattr(policy, "framework", "its framework")
        note = (
            f"{strategy.name!r} reproduces {framework}'s own policy: export it with --target "
            f"native for {framework}'s configuration, or --target ctxlab to run ctxlab's "
            f"reproduction; no {target} translation of it is attempted."
        )
        return ExportedPolicy(target, "# See the note above.\n", (note,))
    exporter = _EXPORTERS.get(strategy.name)
    if exporter is None:
        note = (
            f"No known {target} equivalent of ctxlab's {strategy.name!r} strategy; call "
            "ctxlab from your agent (see the ctxlab export)."
        )
        return ExportedPolicy(target, "# No known equivalent: see the note above.\n", (note,))
    return exporter(strategy, target, model)


def export_policy(strategy: Strategy, target: str = "ctxlab", *, model: str = "gpt-4o") -> str:
    """Ready-to-paste source for ``strategy`` in ``target``, caveats as leading comments.

    Args:
        strategy: a configured strategy (any registered one).
        target: one of :data:`TARGETS`.
        model: the model whose tokenizer the exported code counts with.
    """
    return export_details(strategy, target, model=model).as_source()
