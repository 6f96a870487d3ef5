"""Issue 54, item 4: the web client's words, one catalogue per language. Every catalogue has every
key English has, with the same {placeholders}; every key the client asks for is in them."""

import json
import re
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parent.parent / "app" / "static" / "client"
CATALOGUES = {path.stem: json.loads(path.read_text()) for path in sorted((CLIENT / "i18n").glob("*.json"))}
ENGLISH = CATALOGUES["en"]
SCRIPTS = {path.name: path.read_text() for path in CLIENT.glob("*.js")}
# Keys built at run time from a family and a value the server sends.
FAMILIES = {
    "suit": "obce", "suit_of": "obce", "figure": ["10", "11", "12"],
    "preset_summary": ["classic", "traditional", "runda", "simple", "elaborate"],
    "level_summary": ["1", "2", "3", "4", "5", "6"], "declaration": ["ronda", "double_ronda", "tringa"],
    "connection": ["connecting", "live", "reconnecting", "over"],
    "status": ["open", "active", "running", "finished", "cancelled"],
    "tournament": ["round_robin", "swiss", "arena"], "mark": ["best", "good", "inaccuracy", "mistake", "blunder"],
}
placeholders = re.compile(r"\{(\w+)\}")


def test_the_client_speaks_english_french_arabic_and_spanish():
    assert set(CATALOGUES) == {"en", "fr", "ar", "es"}
    offered = r'LANGUAGES = \{ en: "English", fr: "Français", ar: "العربية", es: "Español" \}'
    assert re.search(offered, SCRIPTS["i18n.js"])


@pytest.mark.parametrize("language", ["fr", "ar", "es"])
def test_a_catalogue_has_every_key_with_the_same_placeholders_and_words_of_its_own(language):
    words = CATALOGUES[language]
    assert sorted(set(ENGLISH) - set(words)) == [], "missing keys"
    assert sorted(set(words) - set(ENGLISH)) == [], "keys English does not have"
    for key, english in ENGLISH.items():
        assert set(placeholders.findall(words[key])) == set(placeholders.findall(english)), key
    words_only = lambda text: placeholders.sub("", text).strip(" ().:·,")  # noqa: E731
    untranslated = [key for key, english in ENGLISH.items() if words[key] == english and len(words_only(english)) > 15]
    assert untranslated == []


def test_every_key_the_client_asks_for_is_in_the_catalogue():
    asked = set()
    for source in SCRIPTS.values():
        asked |= set(re.findall(r'\bt\(\s*"([a-z_]+\.[a-z0-9_]+)"', source))
        # t(condition ? "a.key" : "another.key")
        for first, second in re.findall(r'"([a-z_]+\.[a-z0-9_]+)"\s*:\s*"([a-z_]+\.[a-z0-9_]+)"', source):
            asked |= {first, second}
    asked |= {f"{family}.{value}" for family, values in FAMILIES.items() for value in values}
    html = (CLIENT.parent / "index.html").read_text()
    asked |= set(re.findall(r'data-i18n="([a-z_.]+)"', html))
    assert len(asked) > 250
    assert sorted(asked - set(ENGLISH)) == []


def test_the_player_s_guide_is_in_every_language():
    for language in ("fr", "ar", "es"):
        guide = (CLIENT.parent / f"guide.{language}.md").read_text()
        english = (CLIENT.parent / "guide.md").read_text()
        assert guide.count("\n- ") == english.count("\n- "), language  # the same points, each said


def test_every_preset_and_bot_level_the_server_offers_has_its_summary_in_every_language(client):
    """Issue 61, 8: the lobby and quick play show presets' and levels' summaries in the player's
    language: a preset or level added on the server without its words fails here."""
    presets = {preset["name"] for preset in client.get("/rules/presets").json}
    levels = {str(level["level"]) for level in client.get("/bots/levels").json}
    assert presets == set(FAMILIES["preset_summary"]) and levels == set(FAMILIES["level_summary"])
