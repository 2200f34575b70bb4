"""Gemini contents/parts: a recorded request and response (see PROVENANCE.md), and pairing."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import detect_format, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "gemini"


def test_a_request_pairs_calls_and_responses_by_id_and_keeps_function_declarations() -> None:
    path = HERE / "tool_output_request.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    call = raw["contents"][1]["parts"][0]["functionCall"]
    answer = raw["contents"][2]["parts"][0]["functionResponse"]
    user, model, tool = loaded.messages
    assert user.content == raw["contents"][0]["parts"][0]["text"]
    assert [(tc.id, tc.name, json.loads(tc.arguments)) for tc in model.tool_calls] == [
        (call["id"], call["name"], call["args"])
    ]
    assert tool.role is Role.TOOL and tool.tool_call_id == answer["id"]
    assert json.loads(tool.content) == answer["response"]
    declared = raw["tools"][0]["functionDeclarations"]
    assert [t.name for t in loaded.tools] == [d["name"] for d in declared]
    assert validate(loaded.messages, provider="gemini") == ()
    assert detect_format(path) == "gemini"


def test_a_response_is_the_first_candidate_with_usage_metadata() -> None:
    path = HERE / "tool_output_response.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    (reply,) = loaded.messages
    parts = raw["candidates"][0]["content"]["parts"]
    assert [tc.name for tc in reply.tool_calls] == [p["functionCall"]["name"] for p in parts]
    meta = raw["usageMetadata"]
    (usage,) = loaded.usage
    assert (usage.input_tokens, usage.output_tokens) == (
        meta["promptTokenCount"],
        meta["candidatesTokenCount"] + meta.get("thoughtsTokenCount", 0),
    )


def test_calls_without_ids_pair_by_name_then_order_and_system_instruction_leads() -> None:
    request = {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather and time in Oslo?"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
                    {"functionCall": {"name": "clock", "args": {"city": "Oslo"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "clock", "response": {"time": "09:00"}}},
                    {"functionResponse": {"name": "weather", "response": {"sky": "grey"}}},
                ],
            },
            {
                "role": "model",
                "parts": [{"thought": True, "text": "Both known."}, {"text": "Grey, 09:00."}],
            },
        ],
    }
    system, user, model, clock, weather, reply = load_chat(request)
    assert system.role is Role.SYSTEM and system.content == "Be brief."
    ids = {tc.name: tc.id for tc in model.tool_calls}
    assert clock.tool_call_id == ids["clock"] and weather.tool_call_id == ids["weather"]
    assert len(set(ids.values())) == 2
    assert reply.content == "Grey, 09:00." and dict(reply.extra)["thinking"] == ["Both known."]
    assert validate((user, model, clock, weather, reply), provider="gemini") == ()
