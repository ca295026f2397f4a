"""A file's fingerprint as JSON (``files.Fingerprint.to_json``: the ``fingerprint`` of ``show --json``'s
sidecar): its three fields by name.

Rule pinned here (expected values written out by hand; SHA-256 of ``abc`` from FIPS 180-2's
example): ``{"size": <bytes>, "mtime_ns": <the file's mtime in ns>, "sha256": <hex digest>}``.
"""

from __future__ import annotations

import os

from inspector.store.files import Fingerprint, read_raw

ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_a_fingerprint_as_json_names_its_size_mtime_and_sha256(tmp_path):
    path = tmp_path / "a1.json"
    path.write_bytes(b"abc")
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    raw = read_raw(path)
    assert raw.fingerprint.to_json() == {
        "size": 3,
        "mtime_ns": 1_700_000_000_123_456_789,
        "sha256": ABC_SHA256,
    }
    assert Fingerprint.of_bytes(b"abc").to_json() == {"size": 3, "mtime_ns": 0, "sha256": ABC_SHA256}
