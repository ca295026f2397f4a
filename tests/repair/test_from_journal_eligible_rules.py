"""``recover-from-journal``'s ``--all`` list (``from_journal.eligible``): which sessions it names.

Rules pinned here (an inspector step, spec run-journal-and-promotion §4.3-4.4; golden 08 is a
session whose pending marker hermes gave up on after 24 hours while its journal holds 66
characters of text):

* a session whose run journal holds output the transcript lacks is listed, by its folder's name;
* folders the step cannot use are passed over and the ones after them still looked at: a folder
  whose name is not a safe session id (hermes' ``A-Z a-z 0-9 _ -``; a dot is a valid journal id
  but not a session id), a session whose only journal ended (a terminal ``done`` record), a
  folder with an open journal but no sidecar (the loader refuses it), and a sidecar whose values
  make the journal comparison raise (``"tool_calls": 1`` with a tool event: that session's plan
  reports it);
* a journal that cannot be read (over the reader's 128 MiB limit) is passed over and the session's
  next journal still read: an open run behind it still lists the session;
* a journal whose output events carry no ``created_at`` is still read (its rows are stamped with
  the context's clock, as the step's plan stamps them) and the session listed;
* the list answers on the context's clock: before hermes gives up (the marker still waits), the
  run belongs to ``recover-journal`` and the session is not listed.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from inspector.repair import from_journal
from tests.conftest import GOLDEN, copy_tree
from tests.recovery_helpers import make_ctx

S08 = "518fa3e90ec7"
RUN08 = "eef688569a1f22202b7552e7c6e54f42"
NOW = 1_779_427_000.0  # golden 08's clock: more than 24 hours after the marker was armed
ARMED = 1_779_340_070.0  # golden 08's `_journal_retry_first_seen_ts` (the marker's arming)
READ_LIMIT = 128 << 20  # inspector.store.files.MAX_FILE_BYTES, written out


def _home(tmp_path: Path, state: str = "after") -> Path:
    """Golden 08's ``state`` files plus the run journal of its ``before`` tree."""
    home = copy_tree(GOLDEN / "08-giveup-after-24h" / state, tmp_path / "home")
    journals = GOLDEN / "08-giveup-after-24h" / "before" / "webui" / "sessions" / "_run_journal"
    if not (home / "webui" / "sessions" / "_run_journal").exists():
        copy_tree(journals, home / "webui" / "sessions" / "_run_journal")
    return home


def _journal_dir(home: Path) -> Path:
    return home / "webui" / "sessions" / "_run_journal"


def _add_folders_sorted_first(home: Path) -> None:
    """Two folders named before S08: an unsafe id holding a copy of the open journal, and a safe id
    (with its sidecar) whose only journal ended with a terminal record."""
    open_journal = _journal_dir(home) / S08 / f"{RUN08}.jsonl"
    unsafe = _journal_dir(home) / "0.unsafe"
    unsafe.mkdir()
    shutil.copyfile(open_journal, unsafe / f"{RUN08}.jsonl")
    ended = _journal_dir(home) / "000000000000"
    ended.mkdir()
    lines = open_journal.read_bytes().replace(S08.encode(), b"000000000000")
    done = (
        b'{"version":1,"event_id":"' + RUN08.encode() + b':9","seq":9,"run_id":"' + RUN08.encode() + b'",'
        b'"session_id":"000000000000","event":"done","type":"done","created_at":1779340005.0,'
        b'"terminal":true,"terminal_state":"completed","payload":{}}\n'
    )
    (ended / f"{RUN08}.jsonl").write_bytes(lines + done)
    sidecar = (home / "webui" / "sessions" / f"{S08}.json").read_bytes()
    (home / "webui" / "sessions" / "000000000000.json").write_bytes(
        sidecar.replace(S08.encode(), b"000000000000")
    )


def test_a_given_up_session_is_listed_by_its_folder_name(tmp_path: Path) -> None:
    """Rule: a session whose journal holds output its transcript lacks is listed."""
    home = _home(tmp_path)
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def test_unusable_folders_before_it_are_passed_over_and_the_rest_still_read(tmp_path: Path) -> None:
    """Rule: an unsafe folder name and a session whose only run ended are skipped, not the end."""
    home = _home(tmp_path)
    _add_folders_sorted_first(home)
    assert sorted(p.name for p in _journal_dir(home).iterdir())[:2] == ["0.unsafe", "000000000000"]
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def _open_copy(home: Path, sid: str, extra: bytes = b"") -> None:
    """A folder ``sid`` holding a copy of S08's open journal (its ids rewritten), ``extra`` appended."""
    folder = _journal_dir(home) / sid
    folder.mkdir()
    lines = (_journal_dir(home) / S08 / f"{RUN08}.jsonl").read_bytes().replace(S08.encode(), sid.encode())
    (folder / f"{RUN08}.jsonl").write_bytes(lines + extra)


def test_an_open_journal_without_a_sidecar_before_it_is_passed_over(tmp_path: Path) -> None:
    """Rule: a folder whose sidecar the loader refuses (there is none) is skipped, not the end."""
    home = _home(tmp_path)
    _open_copy(home, "000000000000")
    assert not (home / "webui" / "sessions" / "000000000000.json").exists()
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def test_a_sidecar_whose_values_make_the_comparison_raise_before_it_is_passed_over(tmp_path: Path) -> None:
    """Rule: `"tool_calls": 1` and a tool event: the comparison raises; that session is skipped and
    the ones after it still read."""
    home = _home(tmp_path)
    odd = "000000000000"
    tool = (
        b'{"version":1,"event_id":"' + RUN08.encode() + b':3","seq":3,"run_id":"' + RUN08.encode() + b'",'
        b'"session_id":"000000000000","event":"tool","type":"tool","created_at":1779340006.0,'
        b'"terminal":false,"terminal_state":null,"payload":{"name":"terminal","preview":"ls","args":{}}}\n'
    )
    _open_copy(home, odd, tool)
    sessions = home / "webui" / "sessions"
    sidecar = (sessions / f"{S08}.json").read_text(encoding="utf-8").replace(S08, odd)
    (sessions / f"{odd}.json").write_text(
        sidecar.replace('"tool_calls": []', '"tool_calls": 1'), encoding="utf-8"
    )
    assert '"tool_calls": 1' in (sessions / f"{odd}.json").read_text(encoding="utf-8")
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def test_an_unreadable_journal_does_not_hide_the_open_one_after_it(tmp_path: Path) -> None:
    """Rule: a journal over the read limit is passed over; the session's next journal is read."""
    home = _home(tmp_path)
    big = _journal_dir(home) / S08 / ("0" * 32 + ".jsonl")  # sorts before RUN08
    with big.open("wb") as fh:
        fh.truncate(READ_LIMIT + 1)  # sparse: no data written
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def test_only_an_unreadable_journal_lists_nothing(tmp_path: Path) -> None:
    """Rule: a session with no journal that can be read has nothing to bring back."""
    home = _home(tmp_path)
    folder = _journal_dir(home) / S08
    (folder / f"{RUN08}.jsonl").unlink()
    with (folder / ("0" * 32 + ".jsonl")).open("wb") as fh:
        fh.truncate(READ_LIMIT + 1)
    assert from_journal.eligible(make_ctx(home, NOW)) == []


def test_before_hermes_gives_up_the_session_is_not_listed(tmp_path: Path) -> None:
    """Rule: while the marker still waits the run is recover-journal's (the context's clock)."""
    home = _home(tmp_path, "before")
    assert from_journal.eligible(make_ctx(home, ARMED + 600.0)) == []
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]


def test_output_events_without_a_time_still_list_the_session(tmp_path: Path) -> None:
    """Rule: events with no created_at are read on the context's clock, not passed over."""
    home = _home(tmp_path)
    journal = _journal_dir(home) / S08 / f"{RUN08}.jsonl"
    timeless = re.sub(rb'"created_at":[0-9.]+,', b"", journal.read_bytes())
    assert b"created_at" not in timeless and timeless.count(b"\n") == 2
    journal.write_bytes(timeless)
    assert from_journal.eligible(make_ctx(home, NOW)) == [S08]
