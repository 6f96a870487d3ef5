"""Names people type (players, seats, bots, apps): one rule for all of them (issue 51): NFC,
1 to 40 characters, no control or format characters, not blank, a 422 naming the field."""

import json

import pytest
import requests

from conftest import LIVE_OPERATOR_KEY
from http_helpers import create

REFUSED = {
    "NUL": "Am\x00ina",
    "a newline": "Amina\nOmar",
    "a bidi override": "\u202eanimA",
    "zero-width only": "\u200b\u200b",
    "joiners only": "\u200d\u200c",
    "blank": "   ",
    "empty": "",
    "41 characters": "a" * 41,
    # Issue 62, 5: what renders as nothing or breaks a line.
    "a Hangul filler": "\u3164",
    "a blank Braille pattern": "\u2800",
    "a line separator": "a\u2028b",
    "a paragraph separator": "a\u2029b",
    "a noncharacter": "\uffff",
    "private use": "\ue000",
    "Hangul choseong and jungseong fillers": "\u115f\u1160",
    "a halfwidth Hangul filler": "A\uffa0",
}
KEPT = {"Arabic": "أمينة", "French accents": "Hélène Léa", "emoji": "Omar 🂡", "an emoji sequence": "👩‍👩‍👧",
        "Darija in Latin letters": "Mimoun l'3arbi"}


def raw_post(client, path, text: str, **headers):
    """A JSON body written by hand, so it may hold what json.dumps would never write."""
    return client.post(path, data=text.encode(), content_type="application/json", headers=headers)


def assert_refused_naming(rv, field):
    assert rv.status_code == 422, rv.json
    assert rv.content_type == "application/problem+json"
    assert field in [error["field"] for error in rv.json["errors"]], rv.json


@pytest.mark.parametrize("name", REFUSED.values(), ids=REFUSED.keys())
def test_a_player_name_with_control_format_or_nothing_visible_is_a_422_naming_the_field(client, name):
    assert_refused_naming(client.post("/players", json={"name": name}), "name")


@pytest.mark.parametrize("name", REFUSED.values(), ids=REFUSED.keys())
def test_a_seat_name_follows_the_same_rule(client, name):
    rv = client.post("/games", json={"players": 2, "seats": [{"type": "human", "name": name}, {"type": "open"}]})
    assert_refused_naming(rv, "seats.0.name")


def test_a_lone_surrogate_is_refused_not_served_back_as_an_unpaired_escape(client):
    assert_refused_naming(raw_post(client, "/players", '{"name": "Am\\ud800ina"}'), "name")
    assert_refused_naming(raw_post(client, "/bots", '{"name": "\\udfff"}'), "name")


def test_bot_and_claimed_seat_names_take_the_one_rule(client):
    assert_refused_naming(client.post("/bots", json={"name": "bot\u202e"}), "name")
    game, _ = create(client, seats=[{"type": "human"}, {"type": "open"}])
    assert_refused_naming(client.post(f"/games/{game['id']}/seats/1", json={"name": "\t"}), "name")


@pytest.mark.parametrize("name", KEPT.values(), ids=KEPT.keys())
def test_arabic_accents_and_emoji_are_names_like_any_other(client, name):
    rv = client.post("/players", json={"name": name})
    assert rv.status_code == 201, rv.json
    assert rv.json["player"]["name"] == name
    game, _ = create(client, seats=[{"type": "human", "name": name}, {"type": "open"}])
    assert game["seats"][0]["name"] == name


def test_a_name_is_kept_nfc_normalised(client):
    decomposed = "He\u0301le\u0300ne"  # e + combining accents, as some keyboards send it
    rv = client.post("/players", json={"name": decomposed})
    assert rv.status_code == 201 and rv.json["player"]["name"] == "Hélène"
    assert json.dumps(rv.json["player"]["name"]) == json.dumps("H\u00e9l\u00e8ne")


def test_an_app_name_follows_the_rule_on_the_admin_api(live_server):
    admin = {"Authorization": f"Bearer {LIVE_OPERATOR_KEY}"}
    rv = requests.post(f"{live_server}/admin/apps", json={"name": "studio\n"}, headers=admin, timeout=10)
    assert rv.status_code == 422 and "name" in [error["field"] for error in rv.json()["errors"]]
