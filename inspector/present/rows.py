"""The session list's rows as flat records: what crosses from a child process to the window.

A :class:`inspector.catalogue.SessionRow` is an object graph (the row, its sidecar summary with
the sidecar's metadata dict and pending marker, its state.db record, its findings). Pickled for
10,000 sessions (11,500 rows), that graph took the window's process 38-43 ms to unpickle,
holding the GIL the whole time; the same rows as tuples of builtins take one plain
``pickle.loads`` of 2.4-3.0 ms, are freed in 1 ms instead of 11 ms, and a full collection with
them alive takes 2 ms instead of 16 ms (``bench/wire.py``; see ``inspector.jobs.pool.flat``; a list
of more than ``pool.FLAT_CHUNK`` rows is sent as plain chunks, one ``pickle.loads`` each). So
the child sends :func:`flat_row` tuples (and :func:`flat_finding` tuples), and the window keeps
each as a :class:`ListRow`, built from the tuple without another walk.

No Qt here: the child (``inspector.jobs.offload``) and the window's model both use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.finding_words import problem_words
from inspector.findings import ERROR, WARNING, Finding, worst

# a finding on the wire: (kind, severity, message, session_id, action, path, origin)
FlatFinding = tuple[str, str, str, "str | None", "str | None", "str | None", str]

# a row on the wire, in this order (ListRow.__init__ reads it by position)
ROW_FIELDS = (
    "session_id",
    "title",
    "profile",
    "where",
    "sidecar_messages",
    "state_db_messages",
    "last_activity",
    "has_bak",
    "in_index",
    "state_db_profile",
    "sidecar_path",
    "stream_hints",
    "health",
    "needs_attention",
    "problem",
    "findings",
)
FlatRow = tuple


def flat_finding(f: Finding) -> FlatFinding:
    return (f.kind, f.severity, f.message, f.session_id, f.action, f.path, f.origin)


def finding_of(t: FlatFinding) -> Finding:
    return Finding(t[0], t[1], t[2], session_id=t[3], action=t[4], path=t[5], origin=t[6])


def stream_hints(sidecar: Any) -> tuple[str, ...]:
    """The run ids a sidecar names, in the order the session view prefers them: its running
    turn's stream, then the one its pending marker waits for."""
    if sidecar is None:
        return ()
    out = []
    active = sidecar.meta.get("active_stream_id") if isinstance(sidecar.meta, dict) else None
    if isinstance(active, str):
        out.append(active)
    marker = sidecar.pending_marker
    retry = marker.get("_journal_retry_stream_id") if isinstance(marker, dict) else None
    if isinstance(retry, str):
        out.append(retry)
    return tuple(out)


# what a row without findings says about its health (most rows): worst(), needs attention,
# problem_words(), the findings
_HEALTHY = ("ok", False, "", ())


def flat_row(row: Any) -> FlatRow:
    """A :class:`~inspector.catalogue.SessionRow` as a tuple of builtins (:data:`ROW_FIELDS`).

    The row's ``where``, ``sidecar_messages`` and ``state_db_messages`` and :func:`stream_hints`
    are worked out here as those say, each attribute read once: the child flattens every row of
    the home on the way to the list's first complete paint (57,500 at 50,000 sessions), where
    the four calls were 30 ms of its 105 ms (``tests/test_flat_rows.py`` holds both equal)."""
    findings = row.findings
    sidecar = row.sidecar
    db = row.state_db
    if sidecar is not None:
        where = "sidecar" if db is None else "both"
        meta = sidecar.meta
        messages = None
        if not sidecar.error:
            count = meta.get("message_count")
            if isinstance(count, int):
                messages = count
        location = sidecar.location
        active = meta.get("active_stream_id") if isinstance(meta, dict) else None
        hints = () if active is None and sidecar.pending_marker is None else stream_hints(sidecar)
    else:
        where = "state.db" if db is not None else ".bak only" if row.has_bak else "index only"
        messages = location = None
        hints = ()
    head = (
        row.session_id,
        row.title or "",
        row.profile,
        where,
        messages,
        None if db is None else db.get("messages"),
        row.last_activity,
        row.has_bak,
        row.in_index,
        row.state_db_profile,
        location,
        hints,
    )
    if not findings:  # the child flattens every row of the home: 57,500 at 50,000 sessions
        return head + _HEALTHY
    return head + (
        worst(findings),
        any(f.severity in (ERROR, WARNING) for f in findings),
        problem_words(findings),
        tuple(flat_finding(f) for f in findings),
    )


class ListRow:
    """One row of the session list in the window: the flat record's fields as attributes, the
    findings made :class:`Finding` objects only when asked for (a tooltip, the session shown).
    ``health``, ``needs_attention`` and ``problem`` come worked out from the child and are worked
    out again here when the findings are replaced (:attr:`findings` set by the session view)."""

    __slots__ = (*ROW_FIELDS[:-1], "_flat", "_findings")

    def __init__(self, flat: FlatRow):
        (
            self.session_id,
            self.title,
            self.profile,
            self.where,
            self.sidecar_messages,
            self.state_db_messages,
            self.last_activity,
            self.has_bak,
            self.in_index,
            self.state_db_profile,
            self.sidecar_path,
            self.stream_hints,
            self.health,
            self.needs_attention,
            self.problem,
            self._flat,
        ) = flat
        self._findings: list[Finding] | None = None

    @classmethod
    def of(cls, row: Any) -> ListRow:
        """A list row from whatever the list is handed: a ListRow, a flat tuple or a SessionRow."""
        if isinstance(row, ListRow):
            return row
        return cls(row if isinstance(row, tuple) else flat_row(row))

    @property
    def findings(self) -> list[Finding]:
        if self._findings is None:
            self._findings = [finding_of(t) for t in self._flat]
        return self._findings

    @findings.setter
    def findings(self, findings: list[Finding]) -> None:
        self._findings = list(findings)
        self._flat = tuple(flat_finding(f) for f in findings)
        self.health = worst(findings)
        self.needs_attention = any(f.severity in (ERROR, WARNING) for f in findings)
        self.problem = problem_words(findings)

    def flat(self) -> FlatRow:
        """The row as :func:`flat_row` made it (with the findings it has now)."""
        return (*(getattr(self, name) for name in ROW_FIELDS[:-1]), self._flat)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListRow) and self.flat() == other.flat()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<ListRow {self.session_id!r} {self.health}>"


@dataclass
class HomeListing:
    """What the window keeps of a home's complete catalogue besides its rows: how many sessions
    it lists and the home's own findings (an unreadable state.db, a folder problem...)."""

    count: int
    home_findings: list[Finding] = field(default_factory=list)
