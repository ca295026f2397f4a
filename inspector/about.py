"""What the inspector is, in words the window's Help ▸ About and the command line share (no Qt)."""

from __future__ import annotations

# The hermes-webui commit and release whose formats and repairs the inspector mirrors byte for byte.
HERMES_WEBUI_COMMIT = "df65251d5"
HERMES_WEBUI_RELEASE = "exp-v0.52.262"
LICENCE = "MIT"
PROJECT = "Hermes Session Inspector"


def about_lines() -> list[str]:
    """Name and version, the hermes-webui release it matches, the licence."""
    from inspector import version

    return [
        f"{PROJECT} {version()}",
        f"Matches hermes-webui {HERMES_WEBUI_RELEASE} (commit {HERMES_WEBUI_COMMIT}): a repair writes the bytes "
        "that release writes.",
        f"Licence: {LICENCE}.",
    ]
