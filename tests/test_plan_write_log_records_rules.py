"""Rule: the write log's reader (``WriteLog.records``) reads the log as UTF-8 whatever the
system's locale says, and takes a line without a ``state`` (the log's form before writes were
logged as started and done) as a finished write. Expected values written out by hand."""

from __future__ import annotations

import io
import json
from pathlib import Path

from inspector.plan import WriteLog

LINE = {
    "write_id": "20261203T120000-abcd1234",
    "time": 1796300000.0,
    "action": "restore",
    "session_id": "sé",
    "files": [{"path": "/home/u/.hermes/webui/sessions/sé.json"}],
}


def _log(tmp_path: Path, *lines: dict | bytes) -> WriteLog:
    """A write log of ``lines``: each a record (written as JSON in UTF-8) or a line's raw bytes."""
    root = tmp_path / "state"
    root.mkdir()
    log = WriteLog(root)
    raw = [x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode("utf-8") for x in lines]
    log.log_path.write_bytes(b"".join(x + b"\n" for x in raw))
    return log


def test_a_line_without_a_state_is_a_finished_write(tmp_path: Path) -> None:
    log = _log(tmp_path, LINE)
    (record,) = log.records()
    assert record.write_id == "20261203T120000-abcd1234"
    assert record.session_id == "sé"
    assert record.complete is True


def test_a_started_line_alone_is_an_interrupted_write(tmp_path: Path) -> None:
    log = _log(tmp_path, {**LINE, "state": "started"})
    (record,) = log.records()
    assert record.complete is False


def test_the_log_is_read_as_utf8_whatever_the_locale_says(tmp_path: Path, monkeypatch) -> None:
    """On a system whose locale encoding is not UTF-8 (Windows' cp1252, here Latin-1: what
    ``io.text_encoding`` gives a read that leaves the encoding to the locale) the records are
    the same: ``sé`` as two characters, not ``sÃ©``."""
    log = _log(tmp_path, LINE)
    real = io.text_encoding
    monkeypatch.setattr(io, "text_encoding", lambda enc, *a: "latin-1" if enc is None else real(enc, *a))
    assert Path(log.log_path).read_text(encoding=None).count("Ã©") == 2  # the locale's reading
    (record,) = log.records()
    assert record.session_id == "sé"
    assert record.files == [{"path": "/home/u/.hermes/webui/sessions/sé.json"}]


def test_a_log_of_every_kind_of_line_lists_the_writes_in_order(tmp_path: Path) -> None:
    """A write logged started then done is listed once, finished; one logged aborted is not listed,
    even if a line of it comes again later; one only started is listed as interrupted; a line whose
    id is not text and a torn line are skipped, and the lines after them are still read."""

    def line(wid, state, **more):
        return {**LINE, "write_id": wid, "state": state, **more}

    log = _log(
        tmp_path,
        line("w1", "started", time=1.0, action="materialize"),
        line("w1", "done", time=2.0, action="materialize"),
        line(5, "done"),
        b'{"write_id": "w9", "ti',  # a torn line
        line("w2", "started"),
        line("w2", "aborted"),
        line("w3", "aborted"),
        line("w2", "started"),
        line("w4", "started", time=4.5, action="repair-interrupted", session_id="s4"),
    )
    got = [(r.write_id, r.time, r.action, r.session_id, r.complete) for r in log.records()]
    assert got == [
        ("w1", 2.0, "materialize", "sé", True),
        ("w4", 4.5, "repair-interrupted", "s4", False),
    ]
