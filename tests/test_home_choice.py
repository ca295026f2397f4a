"""A picked folder is read as the home the user meant (issue 16: choosing the sessions or webui
folder instead of the home is recognised and corrected)."""

from __future__ import annotations

from inspector.home_choice import home_for_chosen_folder


def _home(tmp_path):
    home = tmp_path / "hermes"
    (home / "webui" / "sessions").mkdir(parents=True)
    return home


def test_the_sessions_folder_means_the_home_two_levels_up(tmp_path):
    home = _home(tmp_path)
    choice = home_for_chosen_folder(home / "webui" / "sessions")
    assert choice.home == home and "sessions folder" in choice.note and str(home) in choice.note


def test_the_webui_folder_means_the_home_above_it(tmp_path):
    home = _home(tmp_path)
    choice = home_for_chosen_folder(home / "webui")
    assert choice.home == home and "WebUI state folder" in choice.note


def test_a_home_stays_a_home_even_with_a_sessions_like_name(tmp_path):
    home = _home(tmp_path)
    assert home_for_chosen_folder(home) == home_for_chosen_folder(str(home))
    assert home_for_chosen_folder(home).note is None and home_for_chosen_folder(home).home == home
    named = tmp_path / "webui"  # a home that happens to be called webui, with its own webui/ inside
    (named / "webui" / "sessions").mkdir(parents=True)
    assert home_for_chosen_folder(named).home == named


def test_any_other_folder_is_taken_as_it_is(tmp_path):
    other = tmp_path / "sessions"  # not under a webui folder
    other.mkdir()
    assert home_for_chosen_folder(other).home == other and home_for_chosen_folder(other).note is None
