"""The command line: the same core as the window, for servers without a screen.

Exit codes: 0 success (findings are not failures), 1 a repair was refused or could not be
written, 2 bad usage or a home that cannot be read.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from typing import TYPE_CHECKING

from inspector.home import Home, HomeError, check_readable, locate_home
from inspector.repair import ACTION_MODULES, HOME_WIDE, action_module
from inspector.textsafe import safe_text

if TYPE_CHECKING:  # the repair machinery is imported by the commands that write (audit stays light)
    from inspector.plan import Plan, WriteLog


class UsageError(Exception):
    """Bad input from the user: exit 2 with the message."""


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (see :func:`inspector.version`)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from inspector import version

        sys.stdout.write(f"hermes-inspector {version()}\n")  # on stdout, as argparse's own action
        parser.exit()


def _add_home_args(p: argparse.ArgumentParser, top: bool = False) -> None:
    # On subcommands the defaults are suppressed so `hermes-inspector --home H audit` keeps H.
    default = None if top else argparse.SUPPRESS
    p.add_argument("--home", default=default, help="Hermes home (default: $HERMES_HOME, else ~/.hermes)")
    p.add_argument("--state-dir", default=default,
                   help="WebUI state dir (default: $HERMES_WEBUI_STATE_DIR, webui.ctl.env, <home>/webui)")
    p.add_argument("--state-db", default=default, help="state.db for hermes' audit (default: <home>/state.db)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hermes-inspector",
        description="Inspect and safely repair Hermes WebUI sessions. Without a command, opens the window.",
    )
    parser.add_argument("--version", action=_VersionAction)
    _add_home_args(parser, top=True)
    parser.add_argument("--demo", action="store_true", help="build a demo home in a temporary folder and open it")
    parser.add_argument("--screenshot", metavar="FILE.png", help="render the window, save a picture and exit")
    parser.add_argument("--select", metavar="SESSION_ID", help="select this session (with the window)")
    sub = parser.add_subparsers(dest="command")

    p = sub.add_parser("audit", help="hermes' recovery audit plus the inspector's findings")
    _add_home_args(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("list", help="every session of the home with where it lives and its health")
    _add_home_args(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--attention", action="store_true", help="only sessions that need attention")

    p = sub.add_parser("show", help="where a session lives, its metadata, messages and findings")
    _add_home_args(p)
    p.add_argument("session_id")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("journal", help="a session's run journals: runs, summaries, events, dropped lines")
    _add_home_args(p)
    p.add_argument("session_id")
    p.add_argument("--run", dest="run_id")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("repair", help="preview (default) or --write one of hermes' repairs")
    _add_home_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("session_id", nargs="?")
    target.add_argument("--all", action="store_true", help="every session the action applies to")
    p.add_argument("--action", required=True, choices=sorted(ACTION_MODULES))
    p.add_argument("--write", action="store_true", help="apply the previewed plan (default: preview only)")
    p.add_argument("--now", type=float, help="the clock, Unix seconds (default: now)")
    p.add_argument("--server-started-at", type=float,
                   help="WebUI process start, Unix seconds (default: the running WebUI's, else now)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("history", help="the write log: every write the inspector made")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("undo", help="restore the files of a logged write if nothing changed since")
    p.add_argument("write_id")
    p.add_argument("--json", action="store_true")
    for p in (parser, *sub.choices.values()):  # `hermes-inspector --debug audit` and `... audit --debug`
        p.add_argument("--debug", action="store_true", default=False if p is parser else argparse.SUPPRESS,
                       help="log everything (DEBUG) to stderr as well as to the log file")
    return parser


def _home(args: argparse.Namespace) -> Home:
    home = locate_home(args.home, args.state_dir, getattr(args, "state_db", None))
    check_readable(home)
    return home


def _print(text: str) -> None:
    sys.stdout.write(safe_text(text) + ("" if text.endswith("\n") else "\n"))


def _print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, indent=2, default=str) + "\n")


# ---------------------------------------------------------------- commands


def cmd_audit(args: argparse.Namespace) -> int:
    from inspector.report import full_audit

    report = full_audit(_home(args), now=time.time())
    if args.json:
        _print_json(report)
        return 0
    from inspector.report import format_audit

    _print(format_audit(report))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from inspector.report import format_list, load_catalogue

    cat = load_catalogue(_home(args), now=time.time())
    rows = [r for r in cat.sorted_rows() if r.needs_attention or not args.attention]
    if args.json:
        _print_json({"sessions": [r.to_json() for r in rows], "home_findings": [f.to_json() for f in cat.home_findings]})
    else:
        _print(format_list(rows, cat.home_findings))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from inspector.report import detail_to_json, format_detail
    from inspector.session_detail import load_detail

    detail = load_detail(_home(args), args.session_id)
    if detail.sidecar_raw is None and not detail.state_db and detail.bak_path is None and not detail.runs \
            and detail.index_row is None and not detail.sidecar_error:
        raise UsageError(f"no session {args.session_id!r} in this home (no sidecar, .bak, index row or state.db row)")
    if args.json:
        _print_json(detail_to_json(detail))
    else:
        _print(format_detail(detail))
    return 0


def cmd_journal(args: argparse.Namespace) -> int:
    from inspector.report import format_journal, journal_to_json
    from inspector.session_detail import load_detail

    detail = load_detail(_home(args), args.session_id)
    runs = detail.runs
    if args.run_id is not None:
        runs = [r for r in runs if r.run_id == args.run_id]
        if not runs:
            raise UsageError(f"session {args.session_id!r} has no run {args.run_id!r}")
    if args.json:
        _print_json(journal_to_json(detail, runs))
    else:
        _print(format_journal(detail, runs))
    return 0


def _plan_json(plans: list[Plan], written: list[dict]) -> dict:
    return {"plans": [p.to_json() for p in plans], "written": written}


def _apply(plan: Plan, log: WriteLog) -> dict:
    from inspector.log import get_logger
    from inspector.plan import ApplyError, apply_plan

    logger = get_logger(__name__)
    try:
        rec = apply_plan(plan, log)
    except (ApplyError, OSError) as exc:
        logger.warning("%s of %s not written", plan.action, plan.session_id or "the home", exc_info=True)
        return {"session_id": plan.session_id, "error": str(exc)}
    logger.info("%s of %s written as %s", plan.action, plan.session_id or "the home", rec.write_id)
    return {**rec.to_json(), "backup_dir": str(log.backup_dir(rec.write_id))}


def _plan_and_write(args: argparse.Namespace, home: Home, clock) -> tuple[list[Plan], list[dict]]:
    """Plan (and with --write apply) the action.

    For ``--all`` on a per-session action each session is planned from a fresh read just
    before it is written: every save also rewrites ``_index.json``, so a plan made before the
    previous session's write would (rightly) be refused as stale.
    """
    from inspector.actions import make_context, plan_action
    from inspector.plan import WriteLog

    session_id = None if args.all else args.session_id
    ctx = make_context(home, clock)
    log = WriteLog.default()
    if not args.write:
        return plan_action(ctx, args.action, session_id), []
    if session_id is None and args.action not in HOME_WIDE:
        plans, written = [], []
        for sid in action_module(args.action).eligible(ctx):
            plan = plan_action(make_context(home, clock), args.action, sid)[0]
            plans.append(plan)
            if not plan.refusal and plan.changes:
                written.append(_apply(plan, log))
        return plans, written
    plans = plan_action(ctx, args.action, session_id)
    return plans, [_apply(p, log) for p in plans if not p.refusal and p.changes]


def cmd_repair(args: argparse.Namespace) -> int:
    from inspector.actions import default_clock
    from inspector.plan import render_diff

    home = _home(args)
    clock = default_clock(home, args.now, args.server_started_at)
    plans, written = _plan_and_write(args, home, clock)
    code = 1 if any(p.refusal for p in plans) or any("error" in w for w in written) else 0
    if args.json:
        _print_json(_plan_json(plans, written))
        return code
    if not plans:
        _print(f"Nothing to do: no session needs {args.action}.")
        return code
    for p in plans:
        # With --write the diff shown is exactly what was written (it is re-planned from disk).
        _print(render_diff(p))
        if p.is_noop:
            _print("Nothing to write.")
    for w in written:
        if "error" in w:
            _print(f"NOT WRITTEN ({w['session_id']}): {w['error']}")
        else:
            files = ", ".join(f"{f['kind']} {f['path']}" for f in w["files"])
            _print(f"Written {w['write_id']}: {files}\nBackups: {w['backup_dir']}\n"
                   f"Undo with: hermes-inspector undo {w['write_id']}")
    if not args.write and any(p.changes and not p.refusal for p in plans):
        _print("Preview only: nothing was written. Add --write to apply exactly this.")
    return code


def cmd_history(args: argparse.Namespace) -> int:
    from inspector.plan import WriteLog

    log = WriteLog.default()
    records = log.records()
    if args.json:
        _print_json({"log": str(log.log_path), "writes": [r.to_json() for r in records]})
        return 0
    if not records:
        _print(f"No writes logged in {log.log_path}.")
        return 0
    for r in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.time))
        _print(f"{r.write_id}  {when}  {r.action:<20} {r.session_id or '-'}  ({len(r.files)} file(s))")
        for f in r.files:
            _print(f"    {f['kind']:<7} {f['path']}")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from inspector.plan import ApplyError, WriteLog, undo_write

    log = WriteLog.default()
    try:
        rec = undo_write(args.write_id, log)
    except ApplyError as exc:
        if args.json:
            _print_json({"undone": False, "error": str(exc)})
        else:
            _print(f"Undo refused: {exc}")
        return 1
    if args.json:
        _print_json({"undone": True, "write": rec.to_json()})
    else:
        _print(f"Restored {len(rec.files)} file(s) of {args.write_id} (logged as {rec.write_id}).")
    return 0


COMMANDS = {
    "audit": cmd_audit,
    "list": cmd_list,
    "show": cmd_show,
    "journal": cmd_journal,
    "repair": cmd_repair,
    "history": cmd_history,
    "undo": cmd_undo,
}


def _run_gui(args: argparse.Namespace) -> int:
    from inspector.gui.offload import prestart  # no Qt: the window's child processes start importing
    prestart()  # the core while Qt loads and the window is built
    try:
        from inspector.gui.app import run_app
    except ImportError as exc:  # PySide6 missing or no usable Qt platform
        raise UsageError(f"the window needs PySide6 ({exc}); the command line works without it") from exc
    return run_app(args)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command is None:
            return _run_gui(args)
        return COMMANDS[args.command](args)
    except (UsageError, HomeError) as exc:
        sys.stderr.write(f"hermes-inspector: {safe_text(str(exc))}\n")
        return 2
    except BrokenPipeError:
        return 0
    except Exception:
        # Unexpected: its traceback goes to the log file too (Python still prints it on stderr).
        from inspector import log

        if not log.is_set_up():
            log.setup()
        log.get_logger(__name__).exception("hermes-inspector %s failed", args.command or "(window)")
        raise


WINDOW_STDERR_LEVEL = 30  # logging.WARNING: the window's warnings (Qt's among them) still show on stderr


def _setup_logging(args: argparse.Namespace) -> None:
    """Logging for this run: with ``--debug`` everything, on stderr too; a command that writes
    (or the window) logs to the file. A read-only command without ``--debug`` sets up nothing
    (not even ``import logging``): it stays as fast as before; an unexpected error still sets it up."""
    debug = bool(getattr(args, "debug", False))
    if debug or args.command not in READ_ONLY_COMMANDS:
        from inspector import log

        log.setup(debug=debug, stderr_level=None if args.command else WINDOW_STDERR_LEVEL)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args)
    return _dispatch(args)


# Commands that only read and print: once their output is flushed, nothing is left to do.
READ_ONLY_COMMANDS = frozenset({"audit", "list", "show", "journal", "history"})


def run() -> None:
    """The ``hermes-inspector`` program (and ``python -m inspector``): :func:`main` on
    ``sys.argv``. A read-only command's process ends as soon as its output is out, without a
    garbage collection over the catalogue it built and without freeing its hundred thousand
    objects one by one (together about 40 ms of a 10,000-session audit). The window and the
    commands that write exit the normal way, with every ``finally`` and ``atexit`` handler."""
    args = build_parser().parse_args()
    _setup_logging(args)
    if args.command not in READ_ONLY_COMMANDS:
        raise SystemExit(_dispatch(args))
    gc.disable()  # a short run: its few cycles are freed by the exit
    code = _dispatch(args)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (`| head`): as main() treats it
        pass
    except OSError:
        code = code or 1
    os._exit(code)


if __name__ == "__main__":
    run()
