"""The light parse of a sidecar (``save.light_parse_sidecar`` with ``save._light_sidecar``'s shape)
keeps every key an index row takes, ``self`` and ``message_count`` included, each value as the JSON
says (what the exact parse gives of them); and it makes its decoder on first use, where none has
been made yet in this process."""

from __future__ import annotations

from inspector.repair import save

SIDECAR = (
    b'{"session_id": "a1", "title": "T", "self": {"x": [1, 2]}, "message_count": 7, '
    b'"messages": [{"role": "user", "content": "hi", "timestamp": 3}]}'
)


def test_self_and_message_count_are_kept_as_the_json_says() -> None:
    obj = save.light_parse_sidecar(SIDECAR)
    assert obj is not None
    assert obj["self"] == {"x": [1, 2]}
    assert obj["message_count"] == 7
    assert obj["session_id"] == "a1" and obj["title"] == "T"
    assert obj["messages"] == [{"role": "user", "timestamp": 3}]


def test_the_decoder_is_made_on_first_use(monkeypatch) -> None:
    monkeypatch.setattr(save, "_light", None)  # as in a fresh process
    obj = save.light_parse_sidecar(SIDECAR)
    assert obj is not None and obj["message_count"] == 7
    assert obj["self"] == {"x": [1, 2]}  # the decoder made here keeps ``self`` too
    assert save._light is not None and save._light is not False  # made, and kept
