"""The summary of ``rebuild-index`` (``rebuild_index.plan``) when an index exists: how many rows it
had (only its object rows with a ``session_id``), and which rows are added and dropped, by id.

Rules pinned here (expected values written out by hand):

* the rows before are the old index's object rows with a non-empty ``session_id``: a row without
  one, with an empty one, or that is not an object is not counted (and does not stop the plan);
* the rows added and dropped are each named in one line, sorted, separated by ", ".
"""

from __future__ import annotations

import json

from inspector.repair import rebuild_index
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json


def test_the_summary_counts_the_id_rows_and_names_the_rows_added_and_dropped(tmp_path):
    home, sessions, _ = home_dirs(tmp_path)
    for sid in ("a2", "a1", "a3"):
        write_json(sessions / f"{sid}.json", sidecar(sid, 1, workspace=str(home)))
    old_rows = [
        {"session_id": "a3"},
        {"session_id": "z2"},
        {"title": "no id"},
        {"session_id": ""},
        "junk",
        {"session_id": "z1"},
    ]
    (sessions / "_index.json").write_text(json.dumps(old_rows), encoding="utf-8")
    p = rebuild_index.plan(make_ctx(home), None)
    assert p.refusal is None
    assert p.summary[:3] == [
        "rewrite _index.json from the sidecars: 3 rows before, 3 after",
        "add rows for: a1, a2",
        "drop rows for: z1, z2",
    ]
