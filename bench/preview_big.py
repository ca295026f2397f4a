"""How long the repair preview takes to open on a huge change: a chat of N messages rebuilt.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/preview_big.py [--messages 20000] [--repeat 3]

The speed figure behind tests/gui/test_preview_messages.py's
``test_a_huge_change_is_summarised_by_message_not_listed_as_every_line``, which pins the rule by
structure (only the first ``SHOWN_CHANGES`` messages are laid out) and no longer by a wall clock.
Here: ``PreviewDialog(plan)`` for one sidecar going from no messages to N, from the call until
the dialog is built and once shown (a processed event loop turn), the median of ``--repeat``
runs, each in this process with a fresh dialog. Target: under 2 s for 20,000 messages (the unit
test's old limit was 10 s "for a loaded machine").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_S = 2.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    from inspector.gui.preview_dialog import PreviewDialog
    from inspector.plan import FileChange, Plan

    app = QApplication.instance() or QApplication([])
    after = json.dumps(
        {
            "messages": [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}\n" + "word " * 40}
                for i in range(args.messages)
            ]
        },
        indent=2,
    ).encode()
    plan = Plan(
        action="rebuild-from-state-db",
        session_id="abc123def456",
        changes=[FileChange(Path("/nowhere/abc123def456.json"), b'{"messages": []}', after)],
    )
    built, shown = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        dialog = PreviewDialog(plan)
        built.append(time.perf_counter() - t0)
        dialog.show()
        app.processEvents()
        shown.append(time.perf_counter() - t0)
        dialog.close()
        dialog.deleteLater()
        app.processEvents()
    median = statistics.median(shown)
    print(
        f"preview of {args.messages:,} messages added: built {statistics.median(built):.2f} s, "
        f"shown {median:.2f} s (median of {args.repeat}; target < {TARGET_S:g} s: "
        f"{'met' if median < TARGET_S else 'NOT met'})"
    )
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
