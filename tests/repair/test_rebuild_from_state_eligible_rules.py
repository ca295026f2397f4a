"""``rebuild-from-state-db``'s ``--all`` list (``rebuild_from_state.eligible``): which sidecars it names.

Rules pinned here (an inspector step; the demo home's torn "Release notes for v0.52" chat is the one
sidecar the step rebuilds):

* a name starting with ``_`` is never a session, even when its id is otherwise safe (hermes lists
  ``*.json`` not starting with ``_``: ``_index.json`` and its like are hermes' own files) and even
  when state.db holds a WebUI chat of that id and the file cannot be loaded;
* every other unloadable sidecar whose chat state.db still has is listed.
"""

from __future__ import annotations

import sqlite3

from inspector.actions import default_clock, make_context
from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.repair import rebuild_from_state

NOW = 1_796_140_000.0


def _copy_chat(db_path, sid: str, new_id: str) -> None:
    """state.db gets a second WebUI chat ``new_id`` with ``sid``'s messages (no title: unique)."""
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    with conn:
        row = dict(conn.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone())
        row.update(id=new_id, title=None)
        conn.execute(
            f"INSERT INTO sessions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
        for msg in conn.execute("SELECT * FROM messages WHERE session_id = ?", (sid,)).fetchall():
            m = dict(msg)
            del m["id"]
            m["session_id"] = new_id
            conn.execute(
                f"INSERT INTO messages ({', '.join(m)}) VALUES ({', '.join('?' * len(m))})", tuple(m.values())
            )
    conn.close()


def test_an_underscore_name_is_never_listed_even_with_its_chat_in_state_db(tmp_path) -> None:
    """Rule: ``_<id>.json`` is not a session; the torn chat beside it still is listed."""
    demo = build_demo_home(tmp_path / "demo", now=NOW)
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    torn = (demo.session_dir / f"{sid}.json").read_bytes()
    _copy_chat(home.state_db(), sid, "_torn")
    (demo.session_dir / "_torn.json").write_bytes(torn.replace(sid.encode(), b"_torn"))
    (demo.session_dir / "torn2.json").write_bytes(torn.replace(sid.encode(), b"torn2"))
    _copy_chat(home.state_db(), sid, "torn2")
    ctx = make_context(home, default_clock(home, NOW, NOW))
    assert rebuild_from_state.eligible(ctx) == sorted([sid, "torn2"])
    # The guard is the list's own: the plan for the underscore name alone would rebuild it.
    assert rebuild_from_state.plan(ctx, "_torn").changes != []
