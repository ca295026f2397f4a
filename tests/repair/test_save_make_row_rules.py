"""One sidecar's index row (``save._make_row``), as the ``_Row`` docstring says: keyed and sorted by
``session_id``, ``message_count`` and ``updated_at``; its text is the row as an item of hermes'
``json.dumps(rows, ensure_ascii=False, indent=2)`` (every line after the first indented two more
spaces), UTF-8; where that text cannot be made (a lone surrogate UTF-8 cannot hold) the text is None
and the row dict itself is kept instead."""

from __future__ import annotations

from inspector.repair import save


def test_a_row_gets_its_text_as_an_item_of_the_indented_list() -> None:
    row = {"session_id": "a1", "title": "Caf\u00e9", "message_count": 2, "updated_at": 1.5}
    made = save._make_row(row)
    assert made.session_id == "a1" and made.message_count == 2 and made.updated_at == 1.5
    assert made.text == (
        b'{\n    "session_id": "a1",\n    "title": "Caf\xc3\xa9",\n    "message_count": 2,\n'
        b'    "updated_at": 1.5\n  }'
    )
    assert made.row is None  # the text stands for it


def test_a_row_utf8_cannot_hold_keeps_the_dict_instead_of_a_text() -> None:
    row = {"session_id": "b2", "title": "\ud800", "message_count": 0, "updated_at": None}
    made = save._make_row(row)
    assert made.text is None
    assert made.row is row
    assert (made.session_id, made.message_count, made.updated_at) == ("b2", 0, None)
