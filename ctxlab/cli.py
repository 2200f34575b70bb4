"""The ``ctxlab`` command: show a chat's rounds, trim it with a strategy, replay a strategy.

Every subcommand reads the registry only (strategy names, parameters, help), so a new strategy
module is usable here with no change. Bad input (an unreadable chat, an unknown strategy or
parameter, a failing summarizer, a missing file) prints one line ``ctxlab: error: ...`` on
stderr and exits with status 2; there is never a traceback for it. A command whose optional
packages are not installed (``ctxlab app`` in a core install) prints the one line naming the extra
that adds them (:mod:`ctxlab.extras`), also with status 2. CHAT ``-`` reads the chat from
standard input. An API key is read from
``OPENAI_API_KEY`` only and never printed. Whatever a command prints passes through
:func:`ctxlab.visible.visible`, so a chat file's terminal escape sequences, bidirectional
overrides and other control characters appear as ``\\uXXXX`` instead of acting on the terminal.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from ctxlab.errors import ChatFormatError, CtxlabError, MissingExtraError, ParameterError
from ctxlab.formats import (
    LoadedChat,
    format_help,
    format_names,
    list_conversations,
    load_chat_file,
    messages_to_openai,
)
from ctxlab.model import Message
from ctxlab.rounds import Round
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.tool_overhead import tool_overhead, with_tools
from ctxlab.visible import visible

if TYPE_CHECKING:
    from ctxlab.strategies import Strategy, TrimResult
    from ctxlab.summarizers import Summarizer

# The strategies (with the summarizers, redaction and plug-in discovery they bring) and the price
# table are imported by the commands that use them, so `ctxlab show` does not pay for them.

__all__ = ["main"]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2


class _UsageError(Exception):
    """argparse's complaint, re-raised so :func:`main` prints it as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see: {self.prog} --help)")


class _VersionAction(argparse.Action):
    """``--version``: ``ctxlab X.Y.Z`` from the installed distribution (:mod:`ctxlab._version`),
    looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.update(nargs=0, default=argparse.SUPPRESS)
        super().__init__(option_strings, argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        from ctxlab._version import __version__

        print(f"ctxlab {__version__}")
        parser.exit()


class _VisibleText(io.TextIOBase):
    """A text stream that writes everything through :func:`~ctxlab.visible.visible`: what the
    commands print from a file (names, ids, content, errors) can never drive the terminal.

    JSON stays valid and means the same: the characters escaped here only occur inside JSON
    strings, where ``\\uXXXX`` is the same character.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True


def _visible_stream(stream: TextIO) -> TextIO:
    return cast(TextIO, _VisibleText(stream))


# -- small formatting helpers ------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _roles_summary(messages: Sequence[Message]) -> str:
    """``"user, assistant×2, tool×3"``: role counts in order of first appearance."""
    counts: dict[str, int] = {}
    for m in messages:
        counts[m.role.value] = counts.get(m.role.value, 0) + 1
    return ", ".join(role if n == 1 else f"{role}×{n}" for role, n in counts.items())


def _span(r: Round) -> str:
    return f"{r.start}" if len(r) == 1 else f"{r.start}-{r.stop - 1}"


def _table(rows: Sequence[Sequence[str]], right: Sequence[bool], out: TextIO) -> None:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for row in rows:
        cells = [
            cell.rjust(w) if r else cell.ljust(w)
            for cell, w, r in zip(row, widths, right, strict=True)
        ]
        print("  ".join(cells).rstrip(), file=out)


# -- loading -----------------------------------------------------------------------------------


STDIN = "-"
"""The CHAT argument that reads the chat from standard input."""
STDIN_NAME = "<stdin>"
"""Standard input's name in errors: ``<stdin>: line 3: invalid JSON ...``."""


def _read_stdin() -> bytes:
    """All of standard input, as bytes (the loader detects JSON or JSONL as for a file)."""
    stream = sys.stdin
    if stream is None:
        raise CtxlabError("CHAT is - but this process has no standard input")
    binary = getattr(stream, "buffer", None)
    if binary is not None:
        return bytes(binary.read())
    return stream.read().encode("utf-8", "surrogateescape")


def _chat_source(args: argparse.Namespace) -> tuple[Path | bytes, str]:
    """The CHAT argument as the loader reads it, and its name for errors: ``-`` is standard
    input's bytes (read once per command, kept on ``args``), anything else a file, a folder
    (such as a Claude Code project) or a sample chat's name."""
    path: str = args.chat
    if path == STDIN:
        data: bytes | None = getattr(args, "stdin_bytes", None)
        if data is None:
            data = args.stdin_bytes = _read_stdin()
        return data, STDIN_NAME
    if not os.path.exists(path):
        from ctxlab.samples import GENERATED, list_samples, sample_path

        if path in GENERATED or path in {s.name for s in list_samples()}:
            path = str(sample_path(path))
        else:
            raise CtxlabError(f"no such file or sample chat: {path} (see: ctxlab samples)")
    return Path(path), path


def _load_args(args: argparse.Namespace) -> LoadedChat:
    """The chat CHAT names, read as ``--format``, ``--conversation`` and ``--jsonl-mode`` say."""
    source, name = _chat_source(args)
    conversation: str | None = args.conversation
    which: int | str | None = conversation
    if conversation is not None and conversation.strip().isdigit():
        which = int(conversation)
    stdin = isinstance(source, bytes)
    try:
        return load_chat_file(
            source,
            fmt=args.format,
            conversation=which,
            jsonl_mode=args.jsonl_mode,
            name=name if stdin else None,
        )
    except ChatFormatError as exc:
        if stdin or os.path.basename(name) in str(exc):
            raise
        raise ChatFormatError(str(exc), where=name) from None


def _counter_for(args: argparse.Namespace, loaded: LoadedChat) -> TokenCounter:
    """The model's counter, with the file's tool definitions in every request."""
    return with_tools(get_counter(args.model), loaded.tools, loaded.messages)


def _print_loading(args: argparse.Namespace, loaded: LoadedChat, out: TextIO) -> None:
    """The conversations of a folder or multi-conversation file, the tools and warnings."""
    if args.conversation is None and (os.path.isdir(args.chat) or loaded.format == "claude-code"):
        source, name = _chat_source(args)
        convs = list_conversations(source, name=name)
        if len(convs) > 1 or os.path.isdir(args.chat):
            kind = "sessions" if os.path.isdir(args.chat) else "conversations"
            print(f"{kind} (pick one with --conversation ID; showing the first):", file=out)
            _table([["id", "title"], *([cid, title] for cid, title in convs)], [False, False], out)
    if loaded.tools:
        overhead = tool_overhead(get_counter(args.model), loaded.tools, loaded.messages)
        names = ", ".join(name for name, _ in overhead.per_tool)
        print(
            f"tools: {_plural(len(loaded.tools), 'definition')} ({names}), "
            f"{overhead.tokens:,} tokens in every request",
            file=out,
        )
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=out)


def _parse_params(items: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--param expects key=value, got {item!r}")
        out[key.strip()] = value
    return out


def _summarizer_for(
    args: argparse.Namespace, strategy: Strategy, counter: TokenCounter
) -> Summarizer | None:
    wants_remote = args.base_url is not None or args.summarizer_model is not None
    if not strategy.uses_summarizer:
        if wants_remote:
            print(
                f"ctxlab: note: strategy {strategy.name!r} calls no summarizer; "
                "--base-url/--summarizer-model are ignored",
                file=sys.stderr,
            )
        return None
    from ctxlab import summarizers

    if not wants_remote:
        return summarizers.OfflineSummarizer(counter=counter)
    if args.summarizer_model is None:
        raise ParameterError("--base-url needs --summarizer-model (the model the server serves)")
    return summarizers.OpenAISummarizer(args.summarizer_model, base_url=args.base_url)


def _strategy_from(args: argparse.Namespace, loaded: LoadedChat | None = None) -> Strategy:
    """The ``--strategy`` with its ``--param``s; a framework policy is given the usage the
    loaded chat recorded (Claude Code counts from the last API response)."""
    from ctxlab.strategies import build_strategy
    from ctxlab.strategies.frameworks import FrameworkStrategy

    strategy = build_strategy(args.strategy, _parse_params(args.param))
    if loaded is not None and loaded.usage and isinstance(strategy, FrameworkStrategy):
        return strategy.with_recorded_usage(loaded.usage)
    return strategy


def _problems(
    messages: Sequence[Message], counter: TokenCounter, out: TextIO, budget: int | None = None
) -> int:
    """Print the validator's problems; returns how many there were."""
    from ctxlab.validate import validate

    problems = validate(messages, budget=budget, counter=counter)
    if not problems:
        print("validator: no problems", file=out)
        return 0
    print(f"validator: {_plural(len(problems), 'problem')}", file=out)
    for p in problems:
        where = f" {p.message_id}" if getattr(p, "message_id", None) else ""
        print(f"  {p.severity} {p.code}{where}: {p.text}", file=out)
    return len(problems)


# -- show --------------------------------------------------------------------------------------


def _cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    """Show a chat; a file shown before with the same options prints what it printed then
    (:mod:`ctxlab.show_cache`), without parsing or counting it again."""
    from ctxlab.show_cache import show_entry

    namespace = getattr(get_counter(args.model), "count_namespace", None)
    # The path as given too: what is printed may name it (a warning about the file).
    options = (args.chat, args.model, args.format, str(args.conversation), args.jsonl_mode)
    entry = show_entry(args.chat, options, namespace, provider_count=args.provider_count)
    if entry is not None and entry.text is not None:
        out.write(entry.text)
        return EXIT_OK
    if entry is None:
        return _show(args, out)
    printed = io.StringIO()
    status = _show(args, printed)
    out.write(printed.getvalue())
    if status == EXIT_OK:
        entry.save(printed.getvalue())
    return status


def _show(args: argparse.Namespace, out: TextIO) -> int:
    loaded = _load_args(args)
    _print_loading(args, loaded, out)
    counter = _counter_for(args, loaded)
    chat = counter.counted(loaded.messages)
    rows = [["round", "messages", "roles", "tokens"]]
    for r in chat.rounds():
        label = f"{r.index}{' (preamble)' if r.is_preamble else ''}"
        tokens = chat.prefix[r.stop] - chat.prefix[r.start]
        rows.append([label, _span(r), _roles_summary(r.slice(chat.messages)), f"{tokens:,}"])
    if len(rows) > 1:
        _table(rows, [False, False, False, True], out)
    print(
        f"total: {_plural(len(chat), 'message')} in {_plural(len(chat.starts), 'round')}, "
        f"{chat.total:,} tokens ({counter.label}; reply priming included)",
        file=out,
    )
    if loaded.usage:
        from ctxlab.provider_usage import compare_usage

        print(
            f"provider usage: {compare_usage(chat.messages, loaded.usage, counter).summary()}",
            file=out,
        )
    status = _print_provider_count(args, loaded, chat.total, out) if args.provider_count else 0
    _problems(chat.messages, counter, out)
    return status


def _print_provider_count(
    args: argparse.Namespace, loaded: LoadedChat, ctxlab_tokens: int, out: TextIO
) -> int:
    """``--provider-count``: the chat (tools included, credential-looking text masked) sent to
    the model's provider's counting endpoint, its count beside ctxlab's. A failure is one
    ``ctxlab: error:`` line (ctxlab's count above stands) and exit status 2."""
    from ctxlab.catalog import CATALOG
    from ctxlab.errors import ProviderCountError
    from ctxlab.provider_count import comparison, count_request, count_with_provider, key_from_env
    from ctxlab.redaction import RedactionPolicy

    info = CATALOG.get(args.model)
    try:
        request = count_request(
            args.model, loaded.messages, loaded.tools, RedactionPolicy(frozenset(), True)
        )
        count = count_with_provider(request, key_from_env(request.provider))
    except ProviderCountError as exc:
        print(f"ctxlab: error: provider count: {visible(_one_line(exc))}", file=sys.stderr)
        return EXIT_USAGE
    masked = sum(request.redactions.values())
    spans = _plural(masked, "credential-looking span")
    note = f" {spans} masked before sending." if masked else ""
    exact = info is not None and info.is_exact
    print(f"provider count: {comparison(count, ctxlab_tokens, exact=exact)}{note}", file=out)
    return EXIT_OK


# -- trim --------------------------------------------------------------------------------------


def _round_decision(messages: Sequence[Message], result: TrimResult) -> str:
    counts: dict[str, int] = {}
    for m in messages:
        decision = result.decisions.get(m.id)
        key = decision.value if decision is not None else "?"
        counts[key] = counts.get(key, 0) + 1
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{k} {n}" for k, n in counts.items())


def _print_rounds(
    chat_messages: Sequence[Message],
    rounds: Sequence[Round],
    prefix: Sequence[int],
    result: TrimResult,
    out: TextIO,
    each: bool,
) -> None:
    """One line per run of consecutive rounds with the same decisions (per round with ``each``)."""
    rows = [["rounds", "messages", "decision", "tokens"]]
    run: list[Round] = []
    run_key = ""

    def flush() -> None:
        if not run:
            return
        first, last = run[0], run[-1]
        label = f"{first.index}" if len(run) == 1 else f"{first.index}-{last.index}"
        span = (
            f"{first.start}" if last.stop - first.start == 1 else f"{first.start}-{last.stop - 1}"
        )
        tokens = prefix[last.stop] - prefix[first.start]
        rows.append([label, span, run_key, f"{tokens:,}"])

    for r in rounds:
        key = _round_decision(r.slice(chat_messages), result)
        if run and (each or key != run_key):
            flush()
            run = []
        run_key = key
        run.append(r)
    flush()
    if len(rows) > 1:
        _table(rows, [False, False, False, True], out)


def _cmd_trim(args: argparse.Namespace, out: TextIO) -> int:
    loaded = _load_args(args)
    messages = loaded.messages
    counter = _counter_for(args, loaded)
    strategy = _strategy_from(args, loaded)
    summarizer = _summarizer_for(args, strategy, counter)
    chat = counter.counted(messages)
    result = strategy.apply(chat.messages, counter, summarizer)
    if args.show_request:
        request_out = _visible_stream(sys.stderr) if args.json else out
        if result.summary_request is None:
            print("summarizer request: none (the strategy did not summarize)", file=request_out)
        else:
            model = summarizer.model if summarizer is not None else None
            body = result.summary_request.body(model or None)
            print(json.dumps(body, indent=2, ensure_ascii=False), file=request_out)
    if args.json:
        payload = messages_to_openai(result.messages)
        print(json.dumps(payload, indent=2, ensure_ascii=False), file=out)
        return EXIT_OK
    print(f"strategy: {strategy.name} {_params_text(strategy)}", file=out)
    _print_rounds(chat.messages, chat.rounds(), chat.prefix, result, out, args.rounds)
    for m in result.inserted:
        flags = " (compaction)" if m.is_compaction else " (summary)" if m.is_summary else ""
        print(
            f"inserted: {m.role.value}{flags} {m.id}, {counter.count_message(m):,} tokens",
            file=out,
        )
    from ctxlab.strategies import Decision

    counts = result.decision_counts()
    spread = ", ".join(f"{d.value} {counts[d]:,}" for d in Decision if counts[d])
    saved = result.tokens_saved / result.tokens_before * 100 if result.tokens_before else 0.0
    print(f"messages: {len(chat):,} -> {len(result.messages):,} ({spread})", file=out)
    print(
        f"tokens: {result.tokens_before:,} -> {result.tokens_after:,} "
        f"(saved {result.tokens_saved:,}, {saved:.1f}%; {counter.label})",
        file=out,
    )
    for warning in result.warnings:
        print(f"warning: {warning}", file=out)
    _problems(result.messages, counter, out)
    return EXIT_OK


def _params_text(strategy: Strategy) -> str:
    from ctxlab.strategies import format_value, parameters

    values = [
        f"{info.name}={format_value(_get(strategy, info.path))}"
        for info in parameters(type(strategy))
        if not info.spec.multiline
    ]
    return "(" + ", ".join(values) + ")" if values else ""


def _get(obj: Any, path: Sequence[str]) -> Any:
    for part in path:
        obj = getattr(obj, part)
    return obj


# -- replay ------------------------------------------------------------------------------------

_REPLAY_HEAD = 10  # rows shown at each end of a long replay


def _cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.pricing import format_usd
    from ctxlab.replay import replay

    loaded = _load_args(args)
    messages = loaded.messages
    counter = _counter_for(args, loaded)
    strategy = _strategy_from(args, loaded)
    summarizer = _summarizer_for(args, strategy, counter)
    price_model = args.price_model or args.model
    result = replay(messages, strategy, counter, summarizer=summarizer, model=price_model)
    print(f"replay: {strategy.name} {_params_text(strategy)}, priced as {price_model}", file=out)
    header = ["turn", "msg", "untrimmed", "sent", "sent msgs", "summ", "cost", "cumulative"]
    rows = [header]
    shown = list(result.rows)
    skipped = 0
    if not args.all and len(shown) > 2 * _REPLAY_HEAD + 1:
        skipped = len(shown) - 2 * _REPLAY_HEAD
        shown = shown[:_REPLAY_HEAD] + shown[-_REPLAY_HEAD:]
    for k, row in enumerate(shown):
        if skipped and k == _REPLAY_HEAD:
            rows.append(["…", f"({skipped:,} calls)", "", "", "", "", "", ""])
        rows.append(
            [
                str(row.turn),
                str(row.message_index),
                f"{row.tokens_untrimmed:,}",
                f"{row.tokens_sent:,}",
                f"{row.messages_sent:,}",
                str(row.summarizer_calls) if row.summarizer_calls else "",
                format_usd(row.call_cost),
                format_usd(row.cumulative_cost),
            ]
        )
    if len(rows) > 1:
        _table(rows, [True, True, True, True, True, True, True, True], out)
    print(
        f"calls: {len(result):,}; input tokens {result.tokens_untrimmed:,} untrimmed -> "
        f"{result.tokens_sent:,} sent (saved {result.saved_fraction * 100:.1f}%)",
        file=out,
    )
    if result.summarizer_calls:
        print(
            f"summarizer: {_plural(result.summarizer_calls, 'call')}, "
            f"{result.summary_input_tokens:,} input / {result.summary_output_tokens:,} output "
            "tokens",
            file=out,
        )
    print(
        f"cost: {format_usd(result.total_cost)} with {strategy.name}, "
        f"{format_usd(result.total_cost_untrimmed)} untrimmed",
        file=out,
    )
    for warning in result.warnings:
        print(f"warning: {warning}", file=out)
    if args.csv:
        result.to_csv(args.csv)
        print(f"wrote {_plural(len(result), 'row')} to {args.csv}", file=out)
    return EXIT_OK


# -- strategies --------------------------------------------------------------------------------


EVIDENCE_LABELS = {"oracle": "oracle-tested", "code": "ported from code", "docs": "documented only"}
"""How ``ctxlab strategies`` names a framework policy's evidence (FrameworkPolicy.evidence)."""


def _cmd_strategies(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.strategies import get_strategy_class, strategy_names

    names = strategy_names()
    own = [n for n in names if get_strategy_class(n).framework_policy is None]
    policies = [n for n in names if get_strategy_class(n).framework_policy is not None]
    if policies:
        print("ctxlab strategies", file=out)
        print("", file=out)
    for name in own:
        _print_strategy(name, out)
    if policies:
        print("", file=out)
        print("framework policies (the frameworks' own policies, reproduced)", file=out)
        print("", file=out)
        rows = [["name", "framework", "component", "version", "evidence"]]
        for name in policies:
            policy = get_strategy_class(name).framework_policy
            assert policy is not None
            evidence = EVIDENCE_LABELS.get(policy.evidence, policy.evidence)
            rows.append([name, policy.framework, policy.component, policy.version, evidence])
        _table(rows, [False] * 5, out)
        print("", file=out)
        for name in policies:
            _print_strategy(name, out)
    return EXIT_OK


def _print_strategy(name: str, out: TextIO) -> None:
    from ctxlab.strategies import format_value, get_strategy_class, parameters

    cls = get_strategy_class(name)
    print(f"{name}: {cls.title}", file=out)
    print(f"  {cls.summary}", file=out)
    policy = cls.framework_policy
    if policy is not None:
        evidence = EVIDENCE_LABELS.get(policy.evidence, policy.evidence)
        print(f"  {policy.framework} {policy.component}, {policy.version}: {evidence}", file=out)
        print(f"  source: {policy.source}", file=out)
        for detail in policy.unpublished:
            print(f"  {policy.unpublished_label.lower()}: {detail}", file=out)
        for issue in policy.known_issues:
            print(f"  known issue, reproduced: {issue}", file=out)
    for info in parameters(cls):
        spec = info.spec
        bounds = []
        if spec.min is not None:
            bounds.append(f">= {spec.min:g}")
        if spec.max is not None:
            bounds.append(f"<= {spec.max:g}")
        if spec.choices:
            bounds.append("one of " + ", ".join(spec.choices))
        extra = f", {' and '.join(bounds)}" if bounds else ""
        unit = f" {spec.unit}" if spec.unit else ""
        default = info.default
        shown = (
            f"{len(default):,} characters"
            if isinstance(default, str) and (spec.multiline or len(default) > 40)
            else format_value(default)
        )
        print(f"  --param {info.name}=<{info.kind}>  default {shown}{extra}{unit}", file=out)
        print(f"      {spec.help}", file=out)


# -- export --------------------------------------------------------------------------------------


def _cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.export import export_details

    strategy = _strategy_from(args)
    exported = export_details(strategy, args.target, model=args.model)
    source = exported.as_source()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(source)
        exact = " (exact)" if exported.exact else ""
        print(
            f"wrote the {args.target} export of {strategy.name}{exact} to {args.output}", file=out
        )
    else:
        out.write(source if source.endswith("\n") else source + "\n")
    return EXIT_OK


# -- samples and the app -------------------------------------------------------------------------


def _cmd_samples(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.samples import list_samples

    for sample in list_samples():
        made = " (generated on first use)" if sample.generated else ""
        print(f"{sample.name}: {sample.title}{made}", file=out)
    return EXIT_OK


def _cmd_models(args: argparse.Namespace, out: TextIO) -> int:
    """The model catalog: limits, prices (USD per million tokens), tokenizer, exact or not."""
    from ctxlab.catalog import CATALOG, PROVIDERS

    if args.provider is not None and args.provider not in PROVIDERS:
        raise _UsageError(f"unknown provider {args.provider!r}: one of {', '.join(PROVIDERS)}")
    models = [m for m in CATALOG if args.provider in (None, m.provider)]
    if args.json:
        items = [
            {
                "name": m.name,
                "provider": m.provider,
                "context_window": m.context_window,
                "max_output": m.max_output,
                "input_per_mtok": m.input_per_mtok,
                "cached_input_per_mtok": m.cached_input_per_mtok,
                "cache_write_per_mtok": m.cache_write_per_mtok,
                "cache_write_1h_per_mtok": m.cache_write_1h_per_mtok,
                "cache_storage_per_mtok_hour": m.cache_storage_per_mtok_hour,
                "output_per_mtok": m.output_per_mtok,
                "tokenizer": m.tokenizer,
                "exact": m.is_exact,
                "source": m.source,
                "price_note": m.price_note,
            }
            for m in models
        ]
        print(json.dumps({"as_of": CATALOG.as_of, "models": items}, indent=2), file=out)
        return EXIT_OK

    def usd(value: float | None) -> str:
        # Cents as people write prices ($0.30, $1.20); sub-cent prices keep their digits.
        if value is None:
            return "-"
        return f"${value:,.2f}" if round(value, 2) == value else f"${value:g}"

    rows = [
        [
            "model",
            "provider",
            "window",
            "max output",
            "input",
            "cached",
            "cache write",
            "output",
            "tokenizer",
            "count",
        ]
    ]
    for m in models:
        rows.append(
            [
                m.name,
                m.provider,
                f"{m.context_window:,}",
                f"{m.max_output:,}",
                usd(m.input_per_mtok),
                usd(m.cached_input_per_mtok),
                usd(m.cache_write_per_mtok),
                usd(m.output_per_mtok),
                m.tokenizer,
                "exact" if m.is_exact else "approximate",
            ]
        )
    _table(rows, [False, False, True, True, True, True, True, True, False, False], out)
    print(
        f"{_plural(len(models), 'model')}; prices in USD per million tokens, standard tier, "
        f"catalog as of {CATALOG.as_of} (ctxlab/data/models.toml)",
        file=out,
    )
    return EXIT_OK


def _cmd_app(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.extras import require_extra
    from ctxlab.launch import run_app

    require_extra("app", "ctxlab app")

    return run_app(args.streamlit_args)


# -- fleet: eval and report --------------------------------------------------------------------


def _duration(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class _ProgressBar:
    """``[#####.....] 120/500 sources · 8.1/s · ETA 0:47`` on stderr, redrawn at most 5x/s."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.tty = err.isatty()
        self.last = 0.0
        self.shown = False
        self.final_shown = False

    def __call__(self, p: Any) -> None:
        import time

        now = time.monotonic()
        final = p.done >= p.total
        if (final and self.final_shown) or (
            not final and now - self.last < (0.2 if self.tty else 10.0)
        ):
            return
        self.last = now
        self.final_shown = final
        width = 24
        filled = int(width * p.done / p.total) if p.total else width
        eta = "-" if p.eta is None else _duration(p.eta)
        text = (
            f"[{'#' * filled}{'.' * (width - filled)}] {p.done:,}/{p.total:,} sources"
            f" · {p.conversations:,} conversations · {p.rate:,.1f}/s · ETA {eta}"
        )
        if p.failed:
            text += f" · {p.failed:,} failed"
        if self.tty:
            print(f"\r{text}", end="", file=self.err, flush=True)
        else:
            print(text, file=self.err, flush=True)
        self.shown = True

    def close(self) -> None:
        if self.shown and self.tty:
            print(file=self.err)


def _report_rows(items: Sequence[dict[str, Any]]) -> list[list[str]]:
    from ctxlab.pricing import format_usd

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    rows = [
        [
            "configuration",
            "convs",
            "calls",
            "input tokens",
            "untrimmed",
            "over budget",
            "invalid",
            "p95/call",
            "cost",
            "with cache",
            "retention",
            "errors",
        ]
    ]
    for r in items:
        rows.append(
            [
                str(r["label"]),
                f"{r['conversations']:,}",
                f"{r['calls']:,}",
                f"{r['input_tokens']:,}",
                f"{r['input_tokens_untrimmed']:,}",
                pct(100 * r["share_over_budget"]),
                f"{r['invalid_calls']:,}",
                "-" if r["p95_tokens"] is None else f"{r['p95_tokens']:,}",
                format_usd(r["cost"]),
                format_usd(r["cost_with_cache"]),
                pct(r["retention"]),
                f"{r['errors']:,}",
            ]
        )
    return rows


def _cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.extras import require_extra

    if args.ray or args.ray_address:
        require_extra("ray", "ctxlab eval --ray")  # the ray extra brings the fleet extra
    else:
        require_extra("fleet", "ctxlab eval")
    from ctxlab.corpus import parse_grid, run_corpus
    from ctxlab.corpus.report import configuration_report, reading_results

    if not args.grid:
        raise ParameterError('give at least one --grid "STRATEGY:param=v1,v2"')
    grid = [
        config
        for spec in args.grid
        for config in parse_grid(
            spec, model=args.model, budget=args.budget, retention=not args.no_retention
        )
    ]
    bar = _ProgressBar(sys.stderr)
    try:
        summary = run_corpus(
            args.corpus,
            grid,
            args.db,
            workers=args.workers,
            backend="ray" if args.ray or args.ray_address else "pool",
            ray_address=args.ray_address,
            column=args.column,
            progress=bar,
        )
    finally:
        bar.close()
    rate = summary.evaluated / summary.seconds if summary.seconds > 0 else 0.0
    print(
        f"eval: {summary.evaluated:,} sources evaluated ({summary.conversations:,} conversations),"
        f" {summary.skipped:,} already in {args.db}, {summary.failed:,} failed;"
        f" {_plural(summary.configurations, 'configuration')},"
        f" {summary.backend} x{summary.workers}, {_duration(summary.seconds)} ({rate:,.1f}/s)",
        file=out,
    )
    if summary.interrupted:
        print("eval: interrupted; everything finished so far is committed", file=out)
    if args.parquet:
        from ctxlab.corpus.store import Store

        with Store(args.db) as store:
            paths = store.export_parquet(args.parquet)
        print(f"eval: wrote {len(paths)} Parquet files to {args.parquet}", file=out)
    with reading_results(args.db) as con:
        keys = {c.key for c in grid}
        items = [r for r in configuration_report(con) if r["config_key"] in keys]
    _table(_report_rows(items), [False, *([True] * 11)], out)
    if summary.failed:
        print(f"see the errors: ctxlab report {args.db} --errors", file=out)
    return 130 if summary.interrupted else EXIT_OK


def _cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from ctxlab.extras import require_extra

    require_extra("fleet", "ctxlab report")
    from ctxlab.corpus.report import REPORT_COLUMNS, configuration_report, reading_results

    with reading_results(args.db) as con:
        items = configuration_report(con)
        errors = (
            con.execute(
                "SELECT e.source, coalesce(e.conversation, ''), c.label, e.stage, e.reason "
                "FROM errors e LEFT JOIN configurations c USING (config_key) "
                "ORDER BY e.source, e.conversation, c.label LIMIT 1000"
            ).fetchall()
            if args.errors
            else []
        )
    if args.json:
        print(json.dumps(items, indent=2), file=out)
    elif args.csv:
        from ctxlab.csvtext import csv_text

        csv_text(
            REPORT_COLUMNS,
            (
                [
                    json.dumps(r[c], sort_keys=True)
                    if c == "params"
                    else ("" if r[c] is None else r[c])
                    for c in REPORT_COLUMNS
                ]
                for r in items
            ),
            out,
        )
    elif items:
        _table(_report_rows(items), [False, *([True] * 11)], out)
    else:
        print(f"{args.db}: no configurations yet", file=out)
    for source, conversation, label, stage, reason in errors:
        where = f"{source}#{conversation}" if conversation else source
        print(f"error: {where} [{label}] {stage}: {reason}", file=out)
    return EXIT_OK


def _add_fleet_commands(sub: Any) -> None:
    ev = sub.add_parser("eval", help="evaluate strategy configurations over a corpus of chats")
    ev.add_argument(
        "corpus",
        metavar="CORPUS",
        help="folder or glob of chat files, or a JSONL/Parquet table (one conversation per row)",
    )
    ev.add_argument(
        "--grid",
        action="append",
        metavar="SPEC",
        help='configurations, e.g. "window-drop:budget=8000,16000" (params separated by ;); '
        "repeat for several strategies",
    )
    ev.add_argument("--db", required=True, help="DuckDB results file (created when missing)")
    ev.add_argument("--workers", type=int, default=None, help="worker processes (default: cores)")
    ev.add_argument(
        "--model", default="gpt-4o", help="model that counts and prices the calls (gpt-4o)"
    )
    ev.add_argument(
        "--budget",
        type=int,
        default=None,
        help="token limit a call is over budget against (default: each strategy's own)",
    )
    ev.add_argument(
        "--column", default="messages", help="conversation column of a table corpus (messages)"
    )
    ev.add_argument(
        "--no-retention", action="store_true", help="skip fact retention at the last call"
    )
    ev.add_argument("--ray", action="store_true", help="run on Ray (local unless --ray-address)")
    ev.add_argument("--ray-address", default=None, help="join this Ray cluster (implies --ray)")
    ev.add_argument("--parquet", default=None, metavar="DIR", help="also export tables to DIR")
    ev.set_defaults(run=_cmd_eval)

    rp = sub.add_parser("report", help="the per-configuration table of a results file")
    rp.add_argument(
        "db", metavar="DB", help="results of ctxlab eval: the DuckDB file, or its --parquet folder"
    )
    fmt = rp.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="CSV on stdout")
    fmt.add_argument(
        "--json", action="store_true", help="a JSON list, one object per configuration"
    )
    rp.add_argument("--errors", action="store_true", help="also list the error rows")
    rp.set_defaults(run=_cmd_report)


# -- parser ------------------------------------------------------------------------------------


def _add_chat_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "chat",
        metavar="CHAT",
        help="chat file (any format below), a Claude Code project folder, a sample name "
        "(ctxlab samples), or - to read the chat from standard input",
    )
    p.add_argument(
        "--model", default="gpt-4o", help="model or tokenizer to count with (default gpt-4o)"
    )
    p.add_argument(
        "--format",
        default="auto",
        choices=("auto", *format_names()),
        metavar="F",
        help=f"input format: auto (default) or one of {', '.join(format_names())}",
    )
    p.add_argument(
        "--conversation",
        default=None,
        metavar="N",
        help=(
            "which conversation of a multi-conversation file or folder: 0-based index, id or "
            "title (Claude Code: main, agent-<id>; a project folder: <session>[/<agent>])"
        ),
    )
    p.add_argument(
        "--jsonl-mode",
        default="auto",
        choices=("auto", "messages", "conversations"),
        help="JSONL files: one message per line, or one conversation per line (default: auto)",
    )


def _add_strategy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", required=True, help="strategy name (see: ctxlab strategies)")
    p.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a strategy parameter by name; repeat for several",
    )
    p.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible server for summarizing strategies (key from OPENAI_API_KEY)",
    )
    p.add_argument(
        "--summarizer-model",
        default=None,
        help="model of the real summarizer (default: the offline extractive summarizer)",
    )


def build_parser() -> argparse.ArgumentParser:
    formats = "\n".join(f"  {name:<16} {title}" for name, title in format_help())
    parser = _Parser(
        prog="ctxlab",
        description="See and tune how LLM chat context is trimmed.",
        epilog=(
            "chat formats (detected automatically, or named with --format):\n"
            f"{formats}\n\n"
            "A Claude Code project folder lists its sessions; pick one with --conversation."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="print the installed ctxlab's version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    show = sub.add_parser("show", help="rounds, roles and tokens of a chat")
    _add_chat_args(show)
    show.add_argument(
        "--provider-count",
        action="store_true",
        help="also count the chat with the model's provider (Claude and Gemini models): SENDS "
        "the chat, credential-looking text masked, to Anthropic or Google (key from "
        "ANTHROPIC_API_KEY, or GEMINI_API_KEY / GOOGLE_API_KEY)",
    )
    show.set_defaults(run=_cmd_show)

    trim = sub.add_parser("trim", help="apply a strategy and show what it keeps")
    _add_chat_args(trim)
    _add_strategy_args(trim)
    trim.add_argument(
        "--json",
        action="store_true",
        help="print only the trimmed context as OpenAI JSON (exactly what would be sent)",
    )
    trim.add_argument(
        "--show-request",
        action="store_true",
        help="print the exact summarizer request body (to stderr with --json)",
    )
    trim.add_argument(
        "--rounds", action="store_true", help="one line per round instead of per run of rounds"
    )
    trim.set_defaults(run=_cmd_trim)

    rep = sub.add_parser("replay", help="apply a strategy before every assistant turn")
    _add_chat_args(rep)
    _add_strategy_args(rep)
    rep.add_argument("--csv", default=None, metavar="OUT", help="write one row per call to OUT")
    rep.add_argument(
        "--price-model", default=None, help="model whose price costs the calls (default --model)"
    )
    rep.add_argument("--all", action="store_true", help="print every call, not a summary")
    rep.set_defaults(run=_cmd_replay)

    strategies = sub.add_parser("strategies", help="list strategies and their parameters")
    strategies.set_defaults(run=_cmd_strategies)

    from ctxlab.export import TARGETS

    export = sub.add_parser(
        "export",
        help="a configured strategy as ready-to-paste code (ctxlab, or a framework's own)",
        description="Print a configured strategy as code: --target ctxlab runs ctxlab's "
        "strategy (exact); --target native gives a framework policy's own configuration "
        "(exact); the other targets translate to the closest settings of that library, "
        "with notes on what differs.",
    )
    export.add_argument("--strategy", required=True, help="strategy name (see: ctxlab strategies)")
    export.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a strategy parameter by name; repeat for several",
    )
    export.add_argument(
        "--target",
        default="ctxlab",
        choices=TARGETS,
        help=f"one of {', '.join(TARGETS)} (default ctxlab; native: framework policies only)",
    )
    export.add_argument(
        "--model", default="gpt-4o", help="model whose tokenizer the code counts with"
    )
    export.add_argument("--output", "-o", default=None, metavar="OUT", help="write to OUT")
    export.set_defaults(run=_cmd_export)

    samples = sub.add_parser("samples", help="list the sample chats (usable as CHAT by name)")
    samples.set_defaults(run=_cmd_samples)

    models = sub.add_parser(
        "models", help="list the model catalog: windows, prices, tokenizer, exact or approximate"
    )
    models.add_argument("--provider", default=None, help="only this provider's models")
    models.add_argument("--json", action="store_true", help="the catalog as a JSON object")
    models.set_defaults(run=_cmd_models)

    app = sub.add_parser(
        "app",
        help="start the Streamlit playground on http://127.0.0.1:8501",
        description="Start the playground; further arguments go to `streamlit run` "
        "(e.g. --server.port=8600).",
    )
    app.set_defaults(run=_cmd_app)
    _add_fleet_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ctxlab`` command; returns the exit status (0 ok, 2 bad input)."""
    parser = build_parser()
    out = _visible_stream(sys.stdout)
    try:
        args, rest = parser.parse_known_args(argv)
        if rest and args.run is not _cmd_app:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        args.streamlit_args = rest
        status: int = args.run(args, out)
        return status
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except MissingExtraError as exc:  # the sentence names the command and the extra itself
        print(visible(_one_line(exc)), file=sys.stderr)
        return EXIT_USAGE
    except (_UsageError, CtxlabError, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, BrokenPipeError):
            return EXIT_OK
        print(f"ctxlab: error: {visible(_one_line(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ctxlab: interrupted", file=sys.stderr)
        return 130


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    return " ".join(text.split())


if __name__ == "__main__":
    raise SystemExit(main())
