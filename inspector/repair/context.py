"""What every repair planner receives: the home, the clock and one read-once file snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inspector.home import Home
from inspector.plan import Clock
from inspector.repair.save import SaveContext
from inspector.store.files import FileSnapshot


@dataclass
class RepairContext:
    home: Home
    clock: Clock
    cwd: Path
    snapshot: FileSnapshot = field(default_factory=FileSnapshot)

    @property
    def session_dir(self) -> Path:
        return self.home.session_dir

    def save_context(self) -> SaveContext:
        return SaveContext(session_dir=self.session_dir, snapshot=self.snapshot, now=self.clock.now, cwd=self.cwd)
