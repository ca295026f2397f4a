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

from inspector import statedir
from inspector.home import Home, HomeError, check_readable, locate_home, looks_like_bundle
from inspector.repair import action_module, home_wide, registry
from inspector.textsafe import safe_text

if TYPE_CHECKING:  # the repair machinery is imported by the commands that write (audit stays light)
    from inspector.plan import Plan, WriteLog


class UsageError(Exception):
    """Bad input from the user: exit 2 with the message."""


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (see :func:`inspector.version`)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(
            option_strings, dest=dest, default=default, nargs=0, help=help or "show the version and exit"
        )

    def __call__(self, parser, namespace, values, option_string=None):
        from inspector import version

        sys.stdout.write(f"hermes-inspector {version()}\n")  # on stdout, as argparse's own action
        parser.exit()


def _add_home_args(p: argparse.ArgumentParser, top: bool = False) -> None:
    # On subcommands the defaults are suppressed so `hermes-inspector --home H audit` keeps H.
    default = None if top else argparse.SUPPRESS
    p.add_argument(
        "--home",
        default=default,
        help="Hermes home (default: $HERMES_HOME, else ~/.hermes), or a support bundle FILE.tar.gz "
        "(opened read-only)",
    )
    p.add_argument(
        "--state-dir",
        default=default,
        help="WebUI state dir (default: $HERMES_WEBUI_STATE_DIR, webui.ctl.env, <home>/webui)",
    )
    p.add_argument(
        "--state-db", default=default, help="state.db for hermes' audit (default: <home>/state.db)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hermes-inspector",
        description="Inspect and safely repair Hermes WebUI sessions. Without a command, opens the window.",
    )
    parser.add_argument("--version", action=_VersionAction)
    _add_home_args(parser, top=True)
    parser.add_argument(
        "--demo", action="store_true", help="build a demo home in a temporary folder and open it"
    )
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

    p = sub.add_parser(
        "search",
        help="find text where chats live: sidecars, .bak files, state.db, run journals, "
        "run ids (each hit: session id, where, snippet)",
    )
    _add_home_args(p)
    p.add_argument("text")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("repair", help="preview (default) or --write one of hermes' repairs")
    _add_home_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("session_id", nargs="?")
    target.add_argument("--all", action="store_true", help="every session the action applies to")
    p.add_argument(
        "--action",
        required=True,
        choices=registry.Choices(),
        metavar="ACTION",
        help=registry.StepsHelp("one of %(choices)s"),
    )
    p.add_argument("--write", action="store_true", help="apply the previewed plan (default: preview only)")
    p.add_argument(
        "--follow-links",
        action="store_true",
        help="read and write through symbolic links that leave the home (the preview names "
        "their real targets; without this such a repair is refused)",
    )
    p.add_argument("--now", type=float, help="the clock, Unix seconds (default: now)")
    p.add_argument(
        "--server-started-at",
        type=float,
        help="WebUI process start, Unix seconds (default: the running WebUI's, else now)",
    )
    p.add_argument(
        "--kit-out",
        metavar="KIT.json",
        help="in a support bundle: save the previewed plan as a repair kit for the user",
    )
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("bundle", help="save a support bundle of some sessions (read-only on the home)")
    _add_home_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("session_ids", nargs="*", default=[], metavar="SESSION_ID")
    target.add_argument("--attention", action="store_true", help="every session that needs attention")
    target.add_argument("--all", action="store_true", help="every session of the home")
    p.add_argument("-o", "--output", required=True, metavar="FILE.tar.gz")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("apply-kit", help="preview (default) or --write a repair kit made by support")
    _add_home_args(p)
    p.add_argument("kit", metavar="KIT.json")
    p.add_argument("--write", action="store_true", help="apply the previewed kit (default: preview only)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "crosscheck",
        help="run the repair in your own hermes-webui on a private copy and "
        "compare its files with the inspector's plan",
    )
    _add_home_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("session_id", nargs="?")
    target.add_argument("--all", action="store_true", help="every session the action applies to")
    p.add_argument(
        "--action",
        required=True,
        choices=registry.Choices(extra=("audit",), hermes_only=True),
        metavar="ACTION",
        help="a hermes-webui repair (%(choices)s), or audit (hermes' recovery audit report, with --all)",
    )
    p.add_argument(
        "--hermes-webui",
        metavar="PATH",
        help="the hermes-webui checkout (default: the running server's, from <home>/webui.pid)",
    )
    p.add_argument(
        "--hermes-python",
        metavar="PY",
        help="the interpreter that imports it (default: the running server's, the checkout's "
        ".venv, else this one)",
    )
    p.add_argument("--now", type=float, help="the clock, Unix seconds (default: now)")
    p.add_argument(
        "--server-started-at",
        type=float,
        help="WebUI process start, Unix seconds (default: the running WebUI's, else now)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds hermes may take (default: 60)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("history", help="the write log: every write the inspector made")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("undo", help="restore the files of a logged write if nothing changed since")
    p.add_argument("write_id")
    p.add_argument("--json", action="store_true")
    for p in (parser, *sub.choices.values()):  # `hermes-inspector --debug audit` and `... audit --debug`
        p.add_argument(
            "--debug",
            action="store_true",
            default=False if p is parser else argparse.SUPPRESS,
            help="log everything (DEBUG) to stderr as well as to the log file",
        )
    return parser


_OPENED_BUNDLES: dict[str, Home] = {}
_CLOSERS: list = []


def close_bundles() -> None:
    """Remove every bundle this process unpacked (also run at exit)."""
    while _CLOSERS:
        _CLOSERS.pop()()
    _OPENED_BUNDLES.clear()


def _bundle_home(path: str) -> Home:
    """The home inside a support bundle, unpacked once per process and removed at exit."""
    import atexit

    from inspector.bundle import BundleError, open_bundle

    if path not in _OPENED_BUNDLES:
        try:
            opened = open_bundle(path)
        except BundleError as exc:
            raise UsageError(str(exc)) from exc
        if not _CLOSERS:
            atexit.register(close_bundles)
        _CLOSERS.append(opened.close)
        _OPENED_BUNDLES[path] = opened.home
    return _OPENED_BUNDLES[path]


def _home(args: argparse.Namespace) -> Home:
    if looks_like_bundle(args.home):
        if args.state_dir or getattr(args, "state_db", None):
            raise UsageError("--state-dir and --state-db do not apply to a support bundle (it has its own)")
        return _bundle_home(args.home)
    home = locate_home(args.home, args.state_dir, getattr(args, "state_db", None))
    check_readable(home)
    statedir.keep_out_of(home.base, home.state_dir)  # the log file is never made inside the home
    return home


def _print(text: str) -> None:
    sys.stdout.write(safe_text(text) + ("" if text.endswith("\n") else "\n"))


def _print_json(obj: object) -> None:
    # two writes, not the text + "\n": a materialize's 13 MB output is not copied once more for it
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, indent=2, default=str))
    sys.stdout.write("\n")


JSON_OUT_CHUNK = 1 << 16  # characters of the encoder's pieces joined into one write of repair --json


def _print_json_streamed(obj: object) -> None:
    """:func:`_print_json`'s text, written as the encoder makes it (``json.dumps`` is the join of
    these very pieces), the pieces joined into writes of about :data:`JSON_OUT_CHUNK` characters:
    a materialize's 13 MB output is neither joined into one fresh string nor encoded into one
    fresh 13 MB buffer (about 9,000 page faults), and its 75,000 pieces are not 75,000 writes
    (with ``PYTHONUNBUFFERED`` set, as in the benchmark's environment, each write of the text
    stream is a system call: 0.17 s of CPU against 0.06 s in 200 writes)."""
    write = sys.stdout.write
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder(ensure_ascii=True, indent=2, default=str).iterencode(obj):
        pieces.append(piece)
        size += len(piece)
        if size >= JSON_OUT_CHUNK:
            write("".join(pieces))
            pieces.clear()
            size = 0
    pieces.append("\n")
    write("".join(pieces))


# ---------------------------------------------------------------- commands


def cmd_audit(args: argparse.Namespace) -> int:
    from inspector.load import full_audit

    report = full_audit(_home(args), now=time.time(), save_in_background=True)
    if args.json:
        _print_json(report)
        return 0
    from inspector.report import format_audit

    _print(format_audit(report))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from inspector.load import load_catalogue
    from inspector.report import format_list

    cat = load_catalogue(_home(args), now=time.time(), save_in_background=True)
    rows = [r for r in cat.sorted_rows() if r.needs_attention or not args.attention]
    if args.json:
        _print_json(
            {
                "sessions": [r.to_json() for r in rows],
                "home_findings": [f.to_json() for f in cat.home_findings],
            }
        )
    else:
        _print(format_list(rows, cat.home_findings))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from inspector.report import detail_to_json, format_detail
    from inspector.session_detail import load_detail

    detail = load_detail(_home(args), args.session_id)
    if (
        detail.sidecar_raw is None
        and not detail.state_db
        and detail.bak_path is None
        and not detail.runs
        and detail.index_row is None
        and not detail.sidecar_error
    ):
        raise UsageError(
            f"no session {args.session_id!r} in this home (no sidecar, .bak, index row or state.db row)"
        )
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


def _apply(plan: Plan, log: WriteLog, home: Home, follow_links: bool) -> dict:
    from inspector.linkcheck import recheck_before_write
    from inspector.log import get_logger
    from inspector.plan import ApplyError, apply_plan

    logger = get_logger(__name__)
    refused = recheck_before_write(plan, home, follow_links)  # a link swapped in since the plan was made
    if refused is not None:
        logger.warning("%s of %s not written: %s", plan.action, plan.session_id or "the home", refused)
        return {
            "session_id": plan.session_id,
            "error": refused,
            "outcome": "nothing",
            "written_files": [],
            "write_id": None,
        }
    try:
        rec = apply_plan(plan, log)
    except ApplyError as exc:
        logger.warning(
            "%s of %s not written (%s)",
            plan.action,
            plan.session_id or "the home",
            exc.outcome,
            exc_info=True,
        )
        return {
            "session_id": plan.session_id,
            "error": str(exc),
            "outcome": exc.outcome,
            "written_files": [str(p) for p in exc.written],
            "write_id": exc.write_id,
        }
    except OSError as exc:
        logger.warning("%s of %s not written", plan.action, plan.session_id or "the home", exc_info=True)
        return {
            "session_id": plan.session_id,
            "error": str(exc),
            "outcome": "nothing",
            "written_files": [],
            "write_id": None,
        }
    logger.info("%s of %s written as %s", plan.action, plan.session_id or "the home", rec.write_id)
    return {**rec.to_json(), "backup_dir": str(log.backup_dir(rec.write_id))}


# What a failed write left on disk, as the first words of its line (ApplyError.outcome).
OUTCOME_HEADS = {
    "nothing": "NOT WRITTEN",
    "partial": "PARTLY WRITTEN",
    "all": "WRITTEN, BUT THE WRITE LOG IS INCOMPLETE",
}
UNDO_OUTCOME_HEADS = {
    "nothing": "Undo refused",
    "partial": "UNDO PARTLY DONE",
    "all": "UNDONE, BUT THE WRITE LOG IS INCOMPLETE",
}


def _print_written(written: list[dict], *, name_session: bool) -> None:
    """One paragraph per applied plan: what was written, its backups and undo, or what a failed write
    left on disk (its OUTCOME_HEADS words; ``name_session`` puts the session id after them)."""
    for w in written:
        if "error" in w:
            who = f" ({w['session_id']})" if name_session else ""
            _print(f"{OUTCOME_HEADS.get(w.get('outcome'), 'NOT WRITTEN')}{who}: {w['error']}")
        else:
            files = ", ".join(f"{f['kind']} {f['path']}" for f in w["files"])
            _print(
                f"Written {w['write_id']}: {files}\nBackups: {w['backup_dir']}\n"
                f"Undo with: hermes-inspector undo {w['write_id']}"
            )


def _plan_and_write(args: argparse.Namespace, home: Home, clock) -> tuple[list[Plan], list[dict]]:
    """Plan (and with --write apply) the action.

    For ``--all`` on a per-session action each session is planned from a fresh read just
    before it is written: every save also rewrites ``_index.json``, so a plan made before the
    previous session's write would (rightly) be refused as stale.
    """
    from inspector.actions import make_context, plan_action
    from inspector.plan import WriteLog, early_staging

    session_id = None if args.all else args.session_id
    follow = args.follow_links
    ctx = make_context(home, clock)
    log = WriteLog.default(home=home)
    if not args.write:
        return plan_action(ctx, args.action, session_id, follow_links=follow), []
    if session_id is None and not home_wide(args.action):
        plans, written = [], []
        for sid in action_module(args.action).eligible(ctx):
            plan = plan_action(make_context(home, clock), args.action, sid, follow_links=follow)[0]
            plans.append(plan)
            if not plan.refusal and plan.changes:
                written.append(_apply(plan, log, home, follow))
        return plans, written
    # Planned and written in one go: a plan may stage its new files while it is still being made
    # (a materialize's thousand sidecars while the index is rebuilt); what no write takes is removed.
    with early_staging(log):
        plans = plan_action(ctx, args.action, session_id, follow_links=follow)
        return plans, [_apply(p, log, home, follow) for p in plans if not p.refusal and p.changes]


def cmd_search(args: argparse.Namespace) -> int:
    from inspector.search import format_result, search_home

    if not args.text.strip():
        raise UsageError("nothing to search for: give the text to find")
    result = search_home(_home(args), args.text)
    if args.json:
        _print_json(result.to_json())
    else:
        _print(format_result(result))
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    from inspector.actions import default_clock
    from inspector.plan import render_diff

    home = _home(args)
    if home.bundle is not None and args.write:
        raise UsageError(
            "a support bundle is read-only: make a repair kit with --kit-out and send it to the user"
        )
    if args.kit_out and home.bundle is None:
        raise UsageError("--kit-out works in a support bundle (--home FILE.tar.gz); on this home use --write")
    clock = default_clock(home, args.now, args.server_started_at)
    plans, written = _plan_and_write(args, home, clock)
    if args.kit_out:
        return _save_kit(args, home, clock, plans)
    code = 1 if any(p.refusal for p in plans) or any("error" in w for w in written) else 0
    if args.json:
        _print_json_streamed(_plan_json(plans, written))
        return code
    if not plans:
        _print(f"Nothing to do: no session needs {args.action}.")
        return code
    for p in plans:
        # With --write the diff shown is exactly what was written (it is re-planned from disk).
        _print(render_diff(p))
        if p.is_noop:
            _print("Nothing to write.")
    _print_written(written, name_session=True)
    if not args.write and any(p.changes and not p.refusal for p in plans):
        _print("Preview only: nothing was written. Add --write to apply exactly this.")
    return code


def cmd_crosscheck(args: argparse.Namespace) -> int:
    """Exit 0 identical, 1 different, 2 could not run (not found, import error, timeout, raised)."""
    from inspector.actions import default_clock
    from inspector.crosscheck import NOT_FOUND, CrosscheckError, crosscheck_plans, find_hermes, overall_exit

    home = _home(args)
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.action == "audit" and not args.all:
        raise UsageError("the audit covers the whole home: use --all")
    try:
        install = find_hermes(home, args.hermes_webui, args.hermes_python)
    except CrosscheckError as exc:
        if exc.status == NOT_FOUND and args.hermes_webui is None:
            exc = CrosscheckError(NOT_FOUND, f"{exc}; give --hermes-webui PATH")
        if args.json:
            _print_json({"status": exc.status, "message": str(exc), "results": []})
        else:
            _print(f"Could not check with your hermes-webui ({exc.status}): {exc}")
        return 2
    clock = default_clock(home, args.now, args.server_started_at)
    results = crosscheck_plans(
        home, args.action, None if args.all else args.session_id, clock, install, timeout=args.timeout
    )
    code = overall_exit(results)
    if args.json:
        _print_json(
            {
                "status": {0: "identical", 1: "different"}.get(code, "could_not_run"),
                "results": [r.to_json() for r in results],
            }
        )
        return code
    if not results:
        _print(f"Nothing to check: no session needs {args.action}.")
    for r in results:
        _print(r.render())
    return code


def _save_kit(args: argparse.Namespace, home: Home, clock, plans: list[Plan]) -> int:
    from inspector.kit import KitError, make_kit, save_kit
    from inspector.plan import render_diff

    if len(plans) != 1:
        raise UsageError(f"a repair kit holds one plan; this one has {len(plans)} (name one session)")
    plan = plans[0]
    if not args.json:
        _print(render_diff(plan))
    try:
        save_kit(make_kit(plan, home, clock), args.kit_out)
    except KitError as exc:
        if args.json:
            _print_json({"plans": [plan.to_json()], "kit": None, "error": str(exc)})
        else:
            _print(f"No kit saved: {exc}")
        return 1
    if args.json:
        _print_json({"plans": [plan.to_json()], "kit": args.kit_out})
    else:
        _print(
            f"Repair kit saved: {args.kit_out}\nThe user applies it with: "
            f"hermes-inspector apply-kit {os.path.basename(args.kit_out)} --write"
        )
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    from inspector.bundle import BundleError, make_bundle, select_sessions

    home = _home(args)
    if home.bundle is not None:
        raise UsageError("--home is already a support bundle; make bundles on the user's machine")
    try:
        ids = select_sessions(home, args.session_ids, attention=args.attention, every=args.all)
        if not ids:
            raise BundleError("no session matches: nothing to put in a bundle")
        contents = make_bundle(home, ids, args.output)
    except BundleError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        _print_json({"bundle": args.output, "manifest": contents.manifest})
    else:
        _print(
            contents.summary() + f"Saved {args.output} (readable only by you). Send it to support; "
            "they open it with: hermes-inspector --home " + os.path.basename(args.output)
        )
    return 0


def cmd_apply_kit(args: argparse.Namespace) -> int:
    from inspector.kit import KitError, load_kit, plan_kit
    from inspector.plan import WriteLog, render_diff

    try:
        kit = load_kit(args.kit)
    except KitError as exc:
        raise UsageError(f"{args.kit}: {exc}") from exc
    home = _home(args)
    if home.bundle is not None:
        raise UsageError("a repair kit is applied on the user's home, not on a support bundle")
    try:
        plan, problems = plan_kit(kit, home)
    except KitError as exc:
        raise UsageError(f"{args.kit}: {exc}") from exc
    written = [_apply(plan, WriteLog.default(home=home), home, False)] if args.write and not problems else []
    code = 1 if problems or any("error" in w for w in written) else 0
    if args.json:
        _print_json(_plan_json([plan], written))
        return code
    _print(render_diff(plan))
    _print_written(written, name_session=False)
    if problems:
        _print("Nothing was written.")
    elif not args.write:
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
            _print_json(
                {
                    "undone": False,
                    "error": str(exc),
                    "outcome": exc.outcome,
                    "written_files": [str(p) for p in exc.written],
                    "write_id": exc.write_id,
                }
            )
        else:
            _print(f"{UNDO_OUTCOME_HEADS.get(exc.outcome, 'Undo refused')}: {exc}")
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
    "search": cmd_search,
    "repair": cmd_repair,
    "crosscheck": cmd_crosscheck,
    "bundle": cmd_bundle,
    "apply-kit": cmd_apply_kit,
    "history": cmd_history,
    "undo": cmd_undo,
}


def _run_gui(args: argparse.Namespace) -> int:
    from inspector.jobs.offload import prestart  # no Qt: the window's child processes start importing

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


def _never_fail_to_encode() -> None:
    """Whatever the terminal's encoding (a C or Latin-1 locale), a character it cannot show is
    written as a visible escape instead of ending the command with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or detached stream: nothing will be written
                pass


def main(argv: list[str] | None = None) -> int:
    _never_fail_to_encode()
    args = build_parser().parse_args(argv)
    _setup_logging(args)
    return _dispatch(args)


# Commands that only read and print: once their output is flushed, nothing is left to do.
READ_ONLY_COMMANDS = frozenset({"audit", "list", "show", "journal", "search", "history"})


# Commands that write: when the command returns, every file, fsync and write-log line is done (the
# write's own ``finally`` blocks have run); see _leave_after_write for what their exit still does.
WRITE_COMMANDS = frozenset({"repair", "undo", "apply-kit"})


def _leave_after_write(code: int) -> None:
    """End a write command's process once the command has returned ``code``: the ``atexit``
    handlers run (logging's shutdown flushes and closes the log file, an unpacked bundle is
    removed), stdout and stderr are flushed, then the process ends without the interpreter's
    final collection, its modules' teardown and the freeing of every object one by one (about
    0.05 s of CPU and 0.1-0.2 s at the end of a 1,000-row materialize). A thread still working (not
    a daemon), or an interpreter without ``atexit._run_exitfuncs``, gets the normal exit instead
    (SystemExit), which waits for it."""
    import atexit
    import threading

    main_thread = threading.main_thread()
    working = [t for t in threading.enumerate() if t is not main_thread and not t.daemon and t.is_alive()]
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if working or run_exitfuncs is None:
        raise SystemExit(code)
    run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away: as main() treats it
        pass
    except OSError:
        code = code or 1
    os._exit(code)


def run() -> None:
    """The ``hermes-inspector`` program (and ``python -m inspector``): :func:`main` on
    ``sys.argv``. A read-only command's process ends as soon as its output is out, without a
    garbage collection over the catalogue it built and without freeing its hundred thousand
    objects one by one (together about 40 ms of a 10,000-session audit). The window and the
    commands that write leave through :func:`_leave_after_write`; the window, ``bundle`` and
    ``crosscheck`` exit the normal way."""
    _never_fail_to_encode()
    args = build_parser().parse_args()
    _setup_logging(args)
    if args.command in WRITE_COMMANDS:
        _leave_after_write(_dispatch(args))
    if args.command not in READ_ONLY_COMMANDS:
        raise SystemExit(_dispatch(args))
    gc.disable()  # a short run: its few cycles are freed by the exit
    code = _dispatch(args)
    close_bundles()  # os._exit below skips atexit: an unpacked bundle must not outlive the run
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
