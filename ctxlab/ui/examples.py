"""The small built-in chat the Learn page teaches with; pure data, no Streamlit.

It has a system prompt, plain rounds, a round with two tool calls and their results, and a tool
output holding a planted, fake credential (:data:`FAKE_KEY`) so redaction can be shown.
"""

from __future__ import annotations

from ctxlab.model import Message, Role, ToolCall

__all__ = ["FAKE_KEY", "example_chat"]

FAKE_KEY = "sk-proj-FAKEFAKEFAKE0123456789abcdefABCDEF"
"""Not a real key: planted in a tool output to show that it never reaches a summarizer."""


def example_chat() -> tuple[Message, ...]:
    """Fourteen messages in five rounds (round 0 is the system prompt)."""
    m = Message
    return (
        m(Role.SYSTEM, "You are a helpful assistant for a small bakery's ops team.", "sys"),
        m(Role.USER, "What did we sell most of last week?", "u1"),
        m(Role.ASSISTANT, "", "a1", tool_calls=(ToolCall("c1", "sales_report", '{"week": 47}'),)),
        m(Role.TOOL, '{"croissant": 412, "baguette": 388, "eclair": 97}', "t1", tool_call_id="c1"),
        m(Role.ASSISTANT, "Croissants: 412 sold, just ahead of baguettes (388).", "a2"),
        m(Role.USER, "Check the oven service status and the supplier portal login.", "u2"),
        m(
            Role.ASSISTANT,
            "",
            "a3",
            tool_calls=(
                ToolCall("c2", "oven_status", '{"oven": 2}'),
                ToolCall("c3", "read_config", '{"file": "supplier.env"}'),
            ),
        ),
        m(
            Role.TOOL,
            "Oven 2: service due in 3 days; last fault E14 (thermostat).",
            "t2",
            tool_call_id="c2",
        ),
        m(
            Role.TOOL,
            f"SUPPLIER_USER=bakery\nSUPPLIER_API_KEY={FAKE_KEY}\n",
            "t3",
            tool_call_id="c3",
        ),
        m(
            Role.ASSISTANT,
            "Oven 2 needs service in 3 days. The supplier login is configured.",
            "a4",
        ),
        m(Role.USER, "Draft a note to staff about the oven.", "u3"),
        m(
            Role.ASSISTANT,
            "Team: oven 2 is due for service on Thursday; please use oven 1 "
            "for croissants until then.",
            "a5",
        ),
        m(Role.USER, "Thanks! Also order 20 kg more butter.", "u4"),
        m(Role.ASSISTANT, "Noted: 20 kg of butter added to Friday's order.", "a6"),
    )
