"""What the window shows, worked out without Qt: the session list's columns and sort keys
(:mod:`.columns`), a session's view data and the plans its buttons stand for
(:mod:`.session_data`), journal events linked to transcript rows (:mod:`.links`).

These modules run in the window's child processes (:mod:`inspector.jobs`) and in the tests; they
never import Qt, :mod:`inspector.gui` or :mod:`inspector.jobs`.
"""
