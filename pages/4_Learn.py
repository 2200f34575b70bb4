"""Learn: a guided walk-through of context trimming, every example live on the same engine."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from ctxlab.formats import FORMATS
from ctxlab.model import Message
from ctxlab.plural import plural
from ctxlab.replay import replay
from ctxlab.strategies import (
    Decision,
    Strategy,
    TrimResult,
    build_strategy,
    get_strategy_class,
    strategy_names,
)
from ctxlab.summarizers import OfflineSummarizer
from ctxlab.tokens import get_counter
from ctxlab.ui import figures, frameworks, notices, render
from ctxlab.ui.examples import FAKE_KEY, example_chat
from ctxlab.ui.shell import shared
from ctxlab.ui.text import visible
from ctxlab.ui.timeline import CACHE_EXPLANATION
from ctxlab.validate import validate

shared()  # the sidebar, so that the chat and settings chosen elsewhere stay chosen

chat = example_chat()
counter = get_counter("gpt-4o")
counted = counter.counted(chat)
position = {m.id: i for i, m in enumerate(chat)}


def table(result: TrimResult | None = None) -> pd.DataFrame:
    """The example chat, one row per message; with ``result``, what happened to each."""
    frame = render.build_message_frame(counted)
    if result is not None:
        frame.insert(1, "decision", [result.decisions[m.id].value for m in chat])
    return frame


def round_map(strategy: Strategy, result: TrimResult, title: str, key: str) -> None:
    """The round map of ``result``; hovering a block says why ``strategy`` decided so."""
    st.plotly_chart(
        figures.round_map_figure(
            counted,
            result.decisions,
            title=title,
            explain=lambda k: strategy.explain_round(counted, result, k),
        ),
        key=key,
        width="stretch",
    )


_CONTEXT_POSITION = re.compile(r"messages\[(\d+)\]")


def problems_in_table_terms(context: tuple[Message, ...]) -> list[str]:
    """The validator's problems, naming each message by its # in the table above (the
    validator names positions in the context sent, which differ once messages are dropped)."""

    def in_chat(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return f"message #{position.get(context[i].id, i)}" if i < len(context) else match[0]

    return [
        f"{p.code}: {visible(_CONTEXT_POSITION.sub(in_chat, p.text))}" for p in validate(context)
    ]


st.title("Learn: how chat context gets trimmed")
st.markdown(
    "Every model call resends the whole conversation. When it grows past what the model "
    "accepts (or what you want to pay), something must go. The examples below use one small "
    f"bakery-ops chat of {plural(len(chat), 'message')} and the same engine as the other "
    "pages; the sidebar's chat is not used here."
)

st.header("1 · Tokens: what a budget counts")
st.markdown(
    "Models read **tokens**, pieces of words about four characters long in English. A budget "
    "counts them the way the provider bills them: the text of every message, a few tokens of "
    "framing per message (its role and separators), and a few tokens that prime the reply. "
    "Code, JSON and numbers take more tokens per character than prose."
)
samples = [chat[1], chat[3], chat[8]]
st.dataframe(
    pd.DataFrame(
        {
            "#": [position[m.id] for m in samples],
            "text": [visible(m.preview(70)) for m in samples],
            "characters": [len(m.content) for m in samples],
            "characters / 4": [len(m.content) // 4 for m in samples],
            "tokens of the text": [counter.count_text(m.content) for m in samples],
            "tokens in a request": [counter.count_message(m) for m in samples],
        }
    ),
    hide_index=True,
    width="stretch",
)
st.caption(
    f"The whole chat as one request: {counted.total:,} tokens ({counter.label}), of which "
    f"{counted.reply_priming} prime the reply."
)

st.header("2 · What a round is")
st.markdown(
    "A **round** starts at a user message and holds everything that answers it: assistant "
    "replies, tool calls and tool results. Anything before the first user message (the system "
    "prompt) is round 0. Round-wise strategies keep or drop whole rounds. The # column is how "
    "every message below is named."
)
st.dataframe(table(), hide_index=True, width="stretch")

st.header("3 · Forget nothing, or rewrite the history")
st.markdown(
    "There are two ways to make a context smaller, and they behave very differently over a "
    "long session:\n\n"
    "* **Projection** — the full history is kept, and each call *computes* what to send from "
    "it. Nothing is forgotten: raise the budget and the old rounds come back. Window drop, "
    "sliding window, trim last and clear tool results work this way.\n"
    "* **Replacement** — the history itself is *rewritten*: older messages are folded into a "
    "summary, and from then on the summary is all that exists of them. The context stays small "
    "for ever, but what the summary left out is gone. Summarize (compaction) works this way."
)
budget = st.slider(
    "Window drop budget (tokens)", 20, counted.total + 20, counted.total // 2, key="learn-budget"
)
dropping = build_strategy("window-drop", {"budget": budget})
drop = dropping.apply(chat, counter)
st.info(dropping.explanation)
round_map(dropping, drop, "Projection: window drop at this budget (hover for why)", "learn-drop")
dropped = drop.decision_counts()[Decision.DROPPED]
if dropped:
    st.caption(
        f"Sends {drop.tokens_after:,} of {drop.tokens_before:,} tokens, "
        f"{plural(dropped, 'message')} dropped. The history still holds all "
        f"{plural(len(chat), 'message')}: move the slider right and the dropped rounds come back."
    )
else:
    st.caption(
        f"Sends all {drop.tokens_after:,} tokens: at this budget nothing is dropped. The history "
        f"holds all {plural(len(chat), 'message')}: move the slider left and the oldest rounds "
        "go first."
    )
keep_recent = st.slider("Summarize: messages kept verbatim", 1, len(chat) - 2, 4, key="learn-keep")
offline = OfflineSummarizer()
summarizing = build_strategy(
    "summarize", {"trigger_token_budget": 1, "keep_recent_messages": keep_recent}
)
summarized = summarizing.apply(chat, counter, offline)
left, right = st.columns(2)
with left:
    st.markdown(f"**The history before** ({plural(len(chat), 'message')})")
    st.dataframe(table()[["index", "role", "preview"]], hide_index=True, height=300)
with right:
    st.markdown(
        f"**The history after the replacement** ({plural(len(summarized.messages), 'message')})"
    )
    st.dataframe(
        pd.DataFrame(
            {
                "role": [m.role.value for m in summarized.messages],
                "what it is": [
                    "compaction marker"
                    if m.is_compaction
                    else "summary (written by the summarizer)"
                    if m.is_summary
                    else f"message #{position[m.id]}, verbatim"
                    for m in summarized.messages
                ],
                "preview": [visible(m.preview(60)) for m in summarized.messages],
            }
        ),
        hide_index=True,
        height=300,
    )
st.caption(
    "The folded messages are no longer in the history: a bigger budget later cannot bring them "
    "back, only the summary of them."
)

st.header("4 · Tool calls and results travel together")
st.markdown(
    "An API rejects a tool result whose call is not in the request. A message-count window "
    "can cut between them; whole rounds cannot."
)
window = st.slider("Sliding window (messages)", 1, len(chat) - 1, 6, key="learn-window")
windowing = build_strategy("sliding-window", {"window": window})
sliding = windowing.apply(chat, counter)
# the same number of tokens, spent on whole rounds
sent = sum(counter.counts(sliding.messages)) + counted.reply_priming
rounding = build_strategy("window-drop", {"budget": sent})
cols = st.columns(2)
for col, strategy in ((cols[0], windowing), (cols[1], rounding)):
    result = strategy.apply(chat, counter)
    with col:
        st.subheader(strategy.title)
        st.caption(strategy.summary)
        round_map(
            strategy,
            result,
            f"{strategy.title}: {result.tokens_after:,} tokens",
            f"learn-{strategy.name}",
        )
        found = problems_in_table_terms(result.messages)
        for text in found:
            notices.error(text)
        if not found:
            st.success("The API would accept this context.")

st.header("5 · The system prompt")
st.markdown(
    "The system prompt tells the model who it is and what the rules are. **Window drop** as "
    "specified treats it as an ordinary message: when the oldest round goes, the system prompt "
    "goes with it, and the model answers without its instructions. Its **Keep the system "
    "prompt** switch pins the prompt instead: it is always sent and counts against the budget, "
    "so a little less of the conversation fits. Sliding window and summarize always keep it."
)
tight = counter.count_messages(chat[-4:])
both = st.columns(2)
for col, keep in ((both[0], False), (both[1], True)):
    strategy = build_strategy("window-drop", {"budget": tight, "keep_system": keep})
    result = strategy.apply(chat, counter)
    with col:
        title = "Keep the system prompt: " + ("on" if keep else "off (as specified)")
        round_map(strategy, result, title, f"learn-system-{keep}")
        st.caption(
            f"System prompt: {result.decisions['sys'].value}; {result.tokens_after:,} tokens "
            f"sent of a {tight:,}-token budget."
        )

st.header("6 · Trim last (LangChain) and clear tool results (Anthropic)")
st.markdown(
    "Two policies from other libraries, for comparison. **Trim last** keeps the newest "
    "*messages* that fit, one at a time; it can start the context on a tool result unless told "
    "to start on a user message. **Clear tool results** keeps every message but, past a token "
    "trigger, replaces old tool outputs (usually the bulk of an agent's context) with a short "
    "placeholder, keeping the newest few."
)
cols = st.columns(2)
with cols[0]:
    max_tokens = st.slider(
        "Trim last: max tokens", 20, counted.total, counted.total // 2, key="learn-trim"
    )
    start_on_user = st.toggle("Start on a user message", value=False, key="learn-start-user")
    trim = build_strategy("trim-last", {"max_tokens": max_tokens, "start_on_user": start_on_user})
    trimmed = trim.apply(chat, counter)
    round_map(trim, trimmed, f"Trim last: {trimmed.tokens_after:,} tokens", "learn-trim-map")
    for text in problems_in_table_terms(trimmed.messages):
        notices.error(text)
with cols[1]:
    keep_results = st.slider("Clear tool results: keep the newest", 0, 3, 1, key="learn-clear")
    clear = build_strategy(
        "clear-tool-results", {"trigger_tokens": 1, "keep_tool_results": keep_results}
    )
    cleared = clear.apply(chat, counter)
    title = f"Clear tool results: {cleared.tokens_after:,} tokens"
    round_map(clear, cleared, title, "learn-clear-map")
    st.caption(
        f"{plural(cleared.decision_counts()[Decision.CLEARED], 'message')} cleared; every call "
        "still has its result, so the API accepts it."
    )

st.header("7 · Prompt caching: why dropping from the front can cost more")
st.markdown(CACHE_EXPLANATION)
caching = st.columns(2)
for col, name, params in (
    (caching[0], "window-drop", {"budget": counted.total // 2}),
    (caching[1], "clear-tool-results", {"trigger_tokens": 1, "keep_tool_results": 1}),
):
    rep = replay(chat, build_strategy(name, params), counter, model="gpt-4o")
    with col:
        st.plotly_chart(
            figures.cache_figure(
                [r.turn for r in rep.rows],
                [r.tokens_sent for r in rep.rows],
                [r.cacheable_prefix_tokens or 0 for r in rep.rows],
                rep.cache_break_turns(),
                height=320,
            ).update_layout(title=f"{get_strategy_class(name).title}: cacheable prefix per call"),
            key=f"learn-cache-{name}",
            width="stretch",
        )
        st.caption(
            f"{plural(len(rep.cache_break_turns()), 'cache break')} in "
            f"{plural(len(rep), 'call')}. On a chat this "
            "small nothing reaches OpenAI's 1,024-token minimum, so the Replay page on a real "
            "session shows the money."
        )

st.header("8 · What redaction protects")
st.markdown(
    "A summarizer is another model call, often to another provider. Before anything is sent, "
    "tool outputs (and credential-looking spans anywhere) are replaced by markers. The chat "
    "above holds a planted fake key in a tool output; here is the exact summarizer request."
)
st.info(summarizing.explanation)
request = summarized.summary_request
render.render_summary_request(request, counter)
if request is not None:
    leaked = FAKE_KEY in str(request.body())
    st.caption(f"The planted key is {'STILL IN' if leaked else 'not in'} the request.")

pair = frameworks.learn_pair(strategy_names())
if len(pair) == 2:
    st.header("9 · Two frameworks, one chat")
    st.markdown(
        "The frameworks people run each have their own policy, reproduced here with their own "
        "parameter names, counters, prompts and defaults. The same coding-agent session through "
        "two of them: what each keeps, what it writes in place of the rest (its role and "
        "position), and when it first fires as the session grows."
    )
    agent_chat = frameworks.learn_chat()
    agent_counter = get_counter("gpt-4o")
    for col, name in zip(st.columns(2), pair, strict=True):
        contrast = frameworks.learn_contrast(name, agent_chat, agent_counter)
        with col:
            st.subheader(contrast.title)
            notices.caption(contrast.evidence)
            notices.caption(contrast.settings)
            notices.info(contrast.trigger)
            if contrast.disagreement:
                notices.warning(contrast.disagreement)
            notices.caption(contrast.acted)
            st.dataframe(pd.DataFrame(contrast.rows), hide_index=True, height=300, width="stretch")
            notices.caption(contrast.written)
            notices.success(contrast.firing, icon=":material/flag:")
    st.caption(
        "Change either policy's settings on the Playground (sidebar: Framework policies); "
        "Replay marks every call where it acts."
    )

st.header(f"{10 if len(pair) == 2 else 9} · Your own chat")
st.markdown(
    "Open the Playground and pick **Upload** or **Paste** in the sidebar. ctxlab recognises "
    "these formats by their shape (no need to say which): "
    + ", ".join(f"`{name}`" for name in FORMATS)
    + ". A file it cannot read gets an error naming the line or the field; the chat you had "
    "stays loaded."
)
