"""hermes' ``rebuild_index`` as the inspector implemented it before rows were factored out and the
rebuild became one pass: the oracle the faster code is compared with."""

from __future__ import annotations

from inspector.store.index import compact, sort_rows
from inspector.store.jsonfmt import dumps_pretty


def old_rebuild_index(sessions) -> bytes:
    best: dict = {}
    for sess in sessions:
        sid = sess.session_id
        if not sid:
            continue
        row = compact(sess)
        count = row["message_count"] if isinstance(row["message_count"], int) else 0
        if sid not in best or count > best[sid][0]:
            best[sid] = (count, row)
    return dumps_pretty(sort_rows([row for _, row in best.values()]))
