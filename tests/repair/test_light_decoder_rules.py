"""The light parse's decoder (``save._light_decoder``): made once, with msgspec, of the sidecar's
shape (the keys an index row takes, and of each message only ``role``, ``_ts``, ``timestamp`` and
``_partial``); none without msgspec (the exact parse is used then)."""

from __future__ import annotations

from inspector.repair import save

SIDECAR = b'{"session_id": "a", "title": "T", "messages": [{"role": "user", "content": "long text", "timestamp": 1}]}'


def _fresh(monkeypatch, msgspec=...):
    monkeypatch.setattr(save, "_light", None)
    if msgspec is not ...:
        monkeypatch.setattr(save, "_msgspec", msgspec)
    return save._light_decoder()


def test_without_msgspec_there_is_no_light_decoder(monkeypatch) -> None:
    assert _fresh(monkeypatch, msgspec=None) is False
    assert save._light is False  # and the answer is kept


def test_the_light_decoder_keeps_only_what_an_index_row_takes_of_a_message(monkeypatch) -> None:
    decoder = _fresh(monkeypatch)
    assert decoder is not False and save._light is decoder  # made once, then kept
    obj = decoder.decode(save._LIGHT_OPEN + SIDECAR + save._LIGHT_CLOSE)
    for _ in range(save._LIGHT_WRAP):
        (obj,) = obj
    assert obj["session_id"] == "a" and obj["title"] == "T"
    assert obj["messages"] == [{"role": "user", "timestamp": 1}]  # the text is checked, never built
