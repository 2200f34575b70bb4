"""cline-truncation and roo-code-condense: Cline's and Roo Code's rules on the oracle chats,
expected values computed from the rules as their source states them."""

from __future__ import annotations

import pytest
from oracle_support import oracle_chats

from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.cline_truncation import (
    CONTEXT_TRUNCATION_NOTICE,
    ClineTruncation,
    max_allowed_size,
)
from ctxlab.strategies.frameworks.roo_code_condense import (
    FINAL_REQUEST,
    SUMMARY_PROMPT,
    RooCodeCondense,
)
from ctxlab.summarizers import SummaryRequest, SummaryResponse
from ctxlab.tokens import TokenCounter

CHATS = oracle_chats()


def test_cline_max_allowed_size_table() -> None:
    assert max_allowed_size(64_000) == 37_000
    assert max_allowed_size(128_000) == 98_000
    assert max_allowed_size(200_000) == 160_000
    assert max_allowed_size(400_000) == 360_000  # max(360,000, 320,000)
    assert max_allowed_size(1_000_000) == 960_000


def test_cline_below_the_trigger_keeps_everything(counter: TokenCounter) -> None:
    chat = CHATS["coding_agent_session"]
    result = ClineTruncation().apply(chat, counter)
    assert result.messages == tuple(chat)
    assert not ClineTruncation().trigger_report(chat, counter).fires


def _plain_chat(n: int) -> list[Message]:
    return [
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"m{i}", f"m{i}") for i in range(n)
    ]


@pytest.mark.parametrize(("used", "removed"), [(170_000, 4), (330_000, 6)])
def test_cline_removes_half_or_three_quarters(
    used: int, removed: int, counter: TokenCounter
) -> None:
    # 10 messages: 8 after the first pair. half: floor(8 / 4) * 2 = 4; three quarters (when
    # used / 2 > 160,000): floor(8 * 3 / 4 / 2) * 2 = 6; both end on an assistant (index 5, 7)
    chat = _plain_chat(10)
    result = ClineTruncation(previous_request_tokens=used).apply(chat, counter)
    dropped = [m.id for m in chat if result.decisions[m.id] is Decision.DROPPED]
    assert dropped == [f"m{i}" for i in range(2, 2 + removed)]
    assert result.messages[1].content == CONTEXT_TRUNCATION_NOTICE
    assert result.decisions["m1"] is Decision.CLEARED
    assert result.messages[0].id == "m0"


def test_cline_range_ends_on_an_assistant_message(counter: TokenCounter) -> None:
    # 12 messages where index 5 is a user message: half = floor(10 / 4) * 2 = 4 -> range
    # [2, 5]; index 5 is not an assistant, so the range ends at 4
    chat = _plain_chat(12)
    chat[5] = Message(Role.USER, "m5", "m5")
    result = ClineTruncation(previous_request_tokens=170_000).apply(chat, counter)
    dropped = [m.id for m in chat if result.decisions[m.id] is Decision.DROPPED]
    assert dropped == ["m2", "m3", "m4"]


@pytest.mark.parametrize("name", sorted(CHATS))
def test_cline_on_every_oracle_chat_keeps_the_first_pair(name: str, counter: TokenCounter) -> None:
    chat = CHATS[name]
    result = ClineTruncation(previous_request_tokens=170_000).apply(chat, counter)
    pinned = 1 if chat[0].role.is_instruction else 0
    head = chat[pinned : pinned + 2]
    assert all(result.decisions[m.id] is not Decision.DROPPED for m in head)
    assert all(m.id in result.decisions for m in chat)


class _Fixed:
    name = "fixed"
    model = "fixed"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        return SummaryResponse("FIXED SUMMARY", 0, 0, "fixed")


@pytest.mark.parametrize("name", sorted(CHATS))
def test_roo_condenses_everything_into_one_user_message(name: str, counter: TokenCounter) -> None:
    chat = CHATS[name]
    total = counter.count_messages(chat)
    # a window whose 5% is below this chat: condense fires at autoCondenseContextPercent=5
    strategy = RooCodeCondense(auto_condense_context_percent=5, model="gpt-4")
    fires = 100 * total / 8192 >= 5
    summarizer = _Fixed()
    result = strategy.apply(chat, counter, summarizer)
    pinned = 1 if chat[0].role.is_instruction else 0
    if not fires or len(chat) - pinned <= 1:
        return
    assert result.messages[-1].content == "FIXED SUMMARY"
    assert result.messages[-1].role is Role.USER
    assert len(result.messages) == pinned + 1
    (request,) = summarizer.requests
    assert request.messages[0] == {"role": "system", "content": SUMMARY_PROMPT}
    assert request.messages[-1] == {"role": "user", "content": FINAL_REQUEST}
    assert len(request.messages) >= 3


def test_roo_sliding_window_when_condense_is_off(counter: TokenCounter) -> None:
    # 11 visible messages: floor((11 - 1) * 0.5) = 5 -> 4 (even) hidden after the first
    chat = [
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, " ".join(["word"] * 900), f"m{i}")
        for i in range(11)
    ]
    strategy = RooCodeCondense(auto_condense_context=False, model="gpt-4", max_tokens=1000)
    assert counter.count_messages(chat) > strategy.allowed_tokens
    result = strategy.apply(chat, counter)
    dropped = [m.id for m in chat if result.decisions[m.id] is Decision.DROPPED]
    assert dropped == ["m1", "m2", "m3", "m4"]
    ids = [m.id for m in result.messages]
    assert ids[:2] == ["m0", "roo-truncation-marker"] and ids[2] == "m5"
    assert result.messages[1].content == (
        "[Sliding window truncation: 4 messages hidden to reduce context]"
    )
    assert result.messages[1].role is Role.USER


def test_roo_trigger_and_allowed_tokens(counter: TokenCounter) -> None:
    strategy = RooCodeCondense()  # claude-sonnet-4-5: window 200,000
    assert strategy.allowed_tokens == int(200_000 * 0.9 - 8192)
    chat = CHATS["coding_agent_session"]
    report = strategy.trigger_report(chat, counter)
    assert not report.fires and report.threshold == strategy.allowed_tokens + 1
    assert '"autoCondenseContextPercent": 100' in strategy.config_code()
