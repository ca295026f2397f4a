"""A folder the user picked, read as the Hermes home they meant (no Qt).

People often pick the folder they can see the chats in, ``<home>/webui/sessions``, or the
``<home>/webui`` folder, instead of the home itself. Those two are recognised and corrected
to the home (with a note saying so); anything else is taken as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SESSIONS = "sessions"
WEBUI = "webui"


@dataclass(frozen=True)
class HomeChoice:
    home: Path  # the folder to open as the Hermes home
    note: str | None  # said when the picked folder was corrected


def home_for_chosen_folder(folder: str | Path) -> HomeChoice:
    """The Hermes home for a picked folder: ``…/webui/sessions`` and ``…/webui`` become the home
    above them; a folder that is already a home (it has ``webui/``) stays as it is."""
    path = Path(folder).expanduser().absolute()
    if (path / WEBUI).is_dir():
        return HomeChoice(path, None)
    if path.name == SESSIONS and path.parent.name == WEBUI:
        home = path.parent.parent
        return HomeChoice(home, f"{path} is the sessions folder; opened the Hermes home above it, {home}")
    if path.name == WEBUI and (path / SESSIONS).is_dir():
        home = path.parent
        return HomeChoice(home, f"{path} is the WebUI state folder; opened the Hermes home above it, {home}")
    return HomeChoice(path, None)
