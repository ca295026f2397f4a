"""hermes-webui's own ``read_run_events`` (``_read_jsonl``) on hostile journals, against the repairs'
streaming read whose plain pieces msgspec decodes (skipped without ``HERMES_WEBUI_SRC``).

Rule: for every journal, the events the repair walks (:meth:`StreamedEvents.outputs`: ``event``,
``type``, ``created_at``, ``seq``, ``payload``) are hermes' events, field for field (types included),
and the scan's count and terminal record are hermes'; a journal hermes cannot read (invalid UTF-8) is
unreadable for both. The journals mix hermes-shaped lines with the shapes where msgspec and the
stdlib could part: duplicate keys (the last wins in both), NaN, 1e400, lone and paired surrogate
escapes, big integers, a BOM, blank and non-object lines, U+2028 inside a string, bad bytes.

Run it with ``HERMES_WEBUI_SRC=/work/hermes-webui``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store.journal import JournalUnreadable, scan_journal_bytes
from tests.differential.harness import hermes_src

SRC = hermes_src()
pytestmark = pytest.mark.skipif(SRC is None, reason="HERMES_WEBUI_SRC does not name a hermes-webui checkout")

WALKED = ("event", "type", "created_at", "seq", "payload")

# hermes reads each journal and prints, per journal, repr() of the walked fields of every event
# (or "unreadable" when its read raises UnicodeDecodeError), and repr() of its terminal record
_PROBE = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
root = Path(sys.argv[2])
import api.run_journal as rj
WALKED = ("event", "type", "created_at", "seq", "payload")
out = {}
for path in sorted((root / "_run_journal" / "s1").glob("*.jsonl")):
    try:
        events = rj.read_run_events("s1", path.stem, session_dir=root)["events"]
    except UnicodeDecodeError:
        out[path.stem] = "unreadable"
        continue
    terminal = None
    stream_end = None
    for ev in events:
        if ev.get("terminal"):
            if ev.get("event") == "stream_end":
                stream_end = ev
            else:
                terminal = ev
    out[path.stem] = {
        "walked": [repr(tuple(ev.get(k) for k in WALKED)) for ev in events],
        "terminal": repr(terminal if terminal is not None else stream_end),
    }
print(json.dumps(out))
"""

HERMES_LINE = (
    '{{"version":1,"event_id":"r:{seq}","seq":{seq},"run_id":"r","session_id":"s1","event":"{name}",'
    '"type":"{name}","created_at":{at},"terminal":{terminal},"terminal_state":null,"payload":{payload}}}'
)
PAYLOADS = [
    '{"text":" word"}',
    '{"text":"caf\u00e9 \u2014 \u65e5\u672c"}',
    '{"text":"\\u00e9\\ud83d\\ude00"}',
    '{"name":"read","preview":"p","args":{"a":1,"b":[1,2],"a":3}}',
    '{"name":"read","duration":3.18,"is_error":false}',
    '{"text":"a","text":"b"}',
    '"not an object"',
    "null",
    '{"text":12345678901234567890123}',
    '{"text":1e-400}',
]
ODD = [
    b"",
    b"   ",
    b"[1,2]",
    b"42",
    b'{"a": NaN}',
    b'{"created_at": 1e400}',
    b'{"payload": {"text": "\\ud800"}}',
    b"\xef\xbb\xbf{}",
    b'{"event":"token","event":"tool","payload":{"name":"x"}}',
    b'{"terminal":true,"terminal":false,"event":"done"}',
    b'{"event":"done","terminal":true,"seq":9}',
    b'{"event":"stream_end","terminal":1,"seq":10}',
    b'{"payload":{"text":"a\xe2\x80\xa8b"}}',
    b"{not json",
]


def _journals(count: int) -> dict[str, bytes]:
    rng = random.Random(18)
    out = {}
    for n in range(count):
        lines = []
        for seq in range(1, rng.randint(2, 40)):
            if rng.random() < 0.25:
                lines.append(rng.choice(ODD))
                continue
            name = rng.choice(
                ["token", "reasoning", "tool", "tool_complete", "metering", "interim_assistant"]
            )
            at = rng.choice(["1794996406.053", "1794996406", "-0.0", "1.5e3", "null"])
            terminal = rng.choice(["false"] * 8 + ["true"])
            line = HERMES_LINE.format(
                seq=seq, name=name, at=at, terminal=terminal, payload=rng.choice(PAYLOADS)
            )
            lines.append(line.encode("utf-8"))
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
        if n % 11 == 5:  # a bad byte: inside an event's text (where msgspec could skip it), or anywhere
            at = data.find(b'" word"') + 3 if n % 2 and b'" word"' in data else rng.randrange(len(data) + 1)
            data = data[:at] + b"\xff" + data[at:]
        out[f"j{n:03d}"] = data
    return out


def _ours(data: bytes):
    try:
        scanned = scan_journal_bytes(data)
    except JournalUnreadable:
        return "unreadable"
    walked = [repr(tuple(getattr(e, k) for k in WALKED)) for e in scanned.events.outputs()]
    assert len(walked) == len(scanned.events)
    return {"walked": walked, "terminal": repr(scanned.events.authoritative_terminal)}


def test_the_walked_events_are_hermes_own_on_hostile_journals(tmp_path: Path) -> None:
    journals = _journals(120)
    folder = tmp_path / "sessions" / "_run_journal" / "s1"
    folder.mkdir(parents=True)
    for name, data in journals.items():
        (folder / f"{name}.jsonl").write_bytes(data)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HERMES_HOME": str(tmp_path / "hh"),
        "LANG": "C.UTF-8",
    }
    python = os.environ.get("HERMES_WEBUI_PYTHON") or sys.executable
    done = subprocess.run(
        [python, "-c", _PROBE, str(SRC), str(tmp_path / "sessions")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(theirs) == sorted(journals)
    unreadable = sum(1 for v in theirs.values() if v == "unreadable")
    assert 0 < unreadable < len(journals)  # both kinds are there
    for name, data in journals.items():
        assert _ours(data) == theirs[name], name
