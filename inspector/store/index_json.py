"""``_index.json`` parsed and written whole, faster than the general exact helpers, same results.

A one-session save (repair-interrupted, promote, ...) parses the whole index and writes it again
(hermes' fast path). On the 10,000-session bench index (22 MB, 9,903 rows) the general helpers of
:mod:`inspector.store.jsonfmt` spent about half their time around orjson rather than in it:

* :func:`parse_index_rows` is :func:`~inspector.store.jsonfmt.loads_bytes_fast` itself, whose depth
  wrap is now made by one ``b"".join`` (one 22 MB copy instead of the two of ``+``) for every caller.
* :func:`dumps_index_rows` is :func:`~inspector.store.jsonfmt.dumps_pretty_fast` of the rows as one
  ``orjson.dumps(rows, option=OPT_INDENT_2)`` instead of one call per row, its lines shifted and
  joined: each row gets the same check as before (``jsonfmt._orjson_writes_like_stdlib``), and a
  row whose only fault is a float value of its own that orjson writes otherwise (an
  ``estimated_cost`` of ``1e-05``; 13 rows of the bench index) has that value given as an
  ``orjson.Fragment`` of the stdlib's text, instead of sending the row to the key-by-key writer.
  Anything else goes to ``dumps_pretty_fast``, which decides (and raises) exactly as before.
  (The check itself, about 70 ms of Python over the bench index's 545,000 values, stays: the
  same rule made a level at a time with ``map``/``compress`` in C measured slower, 114-123 ms.)

This module only reads jsonfmt's helpers (it changes none of them); ``tests/store/test_index_json.py``
holds both functions to the stdlib (``json.loads`` / ``json.dumps(rows, ensure_ascii=False,
indent=2)``, as hermes' index writer calls it).
"""

from __future__ import annotations

from typing import Any

from inspector.store import jsonfmt
from inspector.store.jsonfmt import (
    FAST_DUMP_MAX_DEPTH,
    STDLIB_INDENT_IN_C,
    _float_text,
    _orjson_escapes_like_stdlib,
    _orjson_writes_like_stdlib,
    dumps_pretty_fast,
)

_orjson = jsonfmt._orjson

# ---------------------------------------------------------------- parse


# Exactly ``json.loads(data.decode("utf-8"))`` (the same value, or the same exception).
parse_index_rows = jsonfmt.loads_bytes_fast


# ---------------------------------------------------------------- write

_Fragment = getattr(_orjson, "Fragment", None)  # orjson >= 3.9: JSON text written as it is


def _float_like_stdlib(value: float) -> bool:
    return _orjson.dumps(value) == float.__repr__(value).encode("ascii")


def _patched_row(row: dict, limit: int) -> dict | None:
    """``row`` with each of its own float values that orjson writes unlike the stdlib (``1e-05``,
    which orjson writes ``1e-5``; ``NaN``) replaced by a :class:`orjson.Fragment` holding the
    stdlib's text of it, when that is all that keeps orjson from writing the row like the stdlib
    (the rest passes ``jsonfmt._orjson_writes_like_stdlib``); else None."""
    if _Fragment is None:
        return None
    bad = [k for k, v in row.items() if type(v) is float and not _float_like_stdlib(v)]
    if not bad:
        return None
    skip = set(bad)
    if not _orjson_writes_like_stdlib({k: v for k, v in row.items() if k not in skip}, limit):
        return None
    patched = dict(row)
    for k in bad:
        patched[k] = _Fragment(_float_text(row[k]).encode("ascii"))
    return patched


def dumps_index_rows(rows: Any) -> bytes:
    """Exactly :func:`~inspector.store.jsonfmt.dumps_pretty` of ``rows`` (same bytes, same
    exceptions), as one ``orjson.dumps(rows, option=OPT_INDENT_2)``.

    :func:`~inspector.store.jsonfmt.dumps_pretty_fast` checks each row of a long list on its own
    (``jsonfmt._orjson_writes_like_stdlib``), has orjson write it, shifts its lines and joins the
    rows; a row holding a float orjson writes otherwise (an ``estimated_cost`` of ``1e-05``: 13 of
    the bench index's 9,903 rows) is split further, key by key. Here every row gets the same check,
    a row failing it only for floats that are its own values gets those floats as
    :class:`orjson.Fragment` s of the stdlib's own text (:func:`_patched_row`; a value written as
    given, so the layout around it is orjson's), and the whole list is written by one call: the
    layout of a list at the top is the rows' texts, each shifted one level, joined as ``json.dumps``
    joins items (what ``dumps_pretty_fast`` assembles by hand). Anything else (a row that is not a
    dict, a row that fails for another reason, orjson without ``Fragment``, any error) goes to
    ``dumps_pretty_fast``, which decides (and raises) exactly as before."""
    if (
        STDLIB_INDENT_IN_C
        or type(rows) is not list
        or not rows
        or _orjson is None
        or not _orjson_escapes_like_stdlib()
    ):
        return dumps_pretty_fast(rows)
    limit = FAST_DUMP_MAX_DEPTH - 1  # a row's own level is 2
    check = _orjson_writes_like_stdlib
    out: list | None = None
    for i, row in enumerate(rows):
        if type(row) is not dict:
            return dumps_pretty_fast(rows)
        if check(row, limit):
            continue
        patched = _patched_row(row, limit)
        if patched is None:
            return dumps_pretty_fast(rows)
        if out is None:
            out = list(rows)
        out[i] = patched
    try:
        return _orjson.dumps(rows if out is None else out, option=_orjson.OPT_INDENT_2)
    except Exception:  # noqa: BLE001 - any surprise: the exact writer decides (and raises)
        return dumps_pretty_fast(rows)
