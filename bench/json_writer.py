"""hermes' JSON formats on one large sidecar: the stdlib vs :mod:`inspector.store.jsonfmt`'s fast paths.

``python bench/json_writer.py [--messages 5000] [--repeat 7]`` generates one sidecar (the
generator's heavy chat: tool calls, reasoning, non-ASCII), checks that the fast writer gives the
stdlib's bytes, and prints the best of ``--repeat`` runs of each writer and parser on this
interpreter. On CPython 3.14+ ``dumps_pretty_fast`` *is* ``dumps_pretty`` (the stdlib's C encoder
writes ``indent`` there: ``jsonfmt.STDLIB_INDENT_IN_C``), so the two writer figures coincide.
A few seconds, one process: no cache, no home folder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.generate import Text, _make_corpus, make_conversation  # noqa: E402
from inspector.store import jsonfmt  # noqa: E402


def big_sidecar(messages: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    sentences, lines = _make_corpus(rng)
    conv = make_conversation(
        Text(rng, sentences, lines), messages, 1.7e9, 1.7e9 + 86400 * 30, True, "anthropic/claude-sonnet-4.6"
    )
    return {
        "session_id": "0123456789ab",
        "title": "a long chat",
        "workspace": "/home/u/project",
        "model": "anthropic/claude-sonnet-4.6",
        "created_at": 1.7e9,
        "updated_at": 1.7e9 + 86400 * 30,
        "messages": conv.messages,
        "tool_calls": conv.tool_calls,
    }


def best_ms(fn, arg, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    sidecar = big_sidecar(args.messages)
    data = jsonfmt.dumps_pretty(sidecar)
    if jsonfmt.dumps_pretty_fast(sidecar) != data:
        print("FAIL: dumps_pretty_fast differs from json.dumps(indent=2)", file=sys.stderr)
        return 1
    print(
        f"Python {sys.version.split()[0]}, stdlib indent in C: {jsonfmt.STDLIB_INDENT_IN_C}; "
        f"sidecar {len(data) / 1e6:.1f} MB, {len(sidecar['messages'])} messages (best of {args.repeat})"
    )
    rows = [
        ("write json.dumps(indent=2)", jsonfmt.dumps_pretty, sidecar),
        ("write dumps_pretty_fast", jsonfmt.dumps_pretty_fast, sidecar),
        (
            "write json.dumps compact (C)",
            lambda o: json.dumps(o, ensure_ascii=False).encode("utf-8"),
            sidecar,
        ),
        ("parse loads_bytes (stdlib)", jsonfmt.loads_bytes, data),
        ("parse loads_bytes_fast", jsonfmt.loads_bytes_fast, data),
    ]
    for label, fn, arg in rows:
        print(f"  {label:<30} {best_ms(fn, arg, args.repeat):8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
