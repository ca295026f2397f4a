"""What every repair planner receives: the home, the clock and one read-once file snapshot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.home import Home
from inspector.plan import Clock
from inspector.repair.save import SaveContext
from inspector.store.files import FileSnapshot
from inspector.store.sidecar import is_safe_session_id, parse_sidecar_bytes, sidecar_paths


@dataclass
class RepairContext:
    home: Home
    clock: Clock
    cwd: Path
    snapshot: FileSnapshot = field(default_factory=FileSnapshot)

    @property
    def session_dir(self) -> Path:
        return self.home.session_dir

    def sidecars_where(self, needle: bytes, predicate: Callable[[dict], bool]) -> list[str]:
        """Ids of the sidecars (safe id, parseable, ``session_id`` equal to the file name)
        whose bytes contain ``needle`` and whose parsed dict satisfies ``predicate``.

        The cheap byte test spares parsing every sidecar of a large home for ``--all``.
        """
        out = []
        for path in sidecar_paths(self.session_dir):
            sid = path.name[: -len(".json")]
            if not is_safe_session_id(sid):
                continue
            try:
                data = self.snapshot.data(path)
                if data is None or needle not in data:
                    continue
                raw = parse_sidecar_bytes(data)
            except (OSError, ValueError, RecursionError):
                continue
            if raw.get("session_id") == sid and predicate(raw):
                out.append(sid)
        return out

    def save_context(self) -> SaveContext:
        return SaveContext(
            session_dir=self.session_dir, snapshot=self.snapshot, now=self.clock.now, cwd=self.cwd
        )
