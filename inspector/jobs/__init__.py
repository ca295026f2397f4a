"""The window's child processes, without Qt: the pool of spawned children and how a job's result
comes back (:mod:`.pool`), the catalogue, quick rows and search as jobs (:mod:`.offload`), a
session's view data and big journals' indexes as jobs (:mod:`.session`).

The window reaches them through one Qt adapter, :mod:`inspector.gui.workers`. (Forking a copy of a
process without Qt, for the core's own second-core work, is :mod:`inspector.forked`: the core's
scan uses it, not the window.)
"""
