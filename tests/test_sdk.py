"""A Python client generated from the committed spec, unmodified, plays a game on a live server."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow  # generated clients: left out of the fast loop (pytest -m 'not slow')

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def generated_client(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdk") / "ronda_client"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(bin_dir / "openapi-python-client"), "generate", "--path", str(ROOT / "openapi/openapi.json"),
                    "--meta", "none", "--output-path", str(out)], check=True, env=env, capture_output=True)
    sys.path.insert(0, str(out.parent))
    sys.path.insert(0, str(ROOT / "examples"))
    yield out
    sys.path.remove(str(out.parent))


@pytest.mark.parametrize("preset", ["simple", "traditional"])  # traditional: declarations answered together
def test_the_example_client_plays_a_whole_game_against_a_bot(generated_client, live_server, preset):
    import play_against_a_bot
    played = play_against_a_bot.play(live_server, preset=preset)
    assert max(played["scores"]) >= 41
    assert played["cards_captured"] > 0  # read from the narrowed CaptureEvents of its own actions


def test_the_example_client_rereads_and_decides_again_when_the_game_moved_first(generated_client, live_server):
    """Both seats answer a declaration at once (traditional): the slower one gets a 412."""
    import play_against_a_bot
    from ronda_client import AuthenticatedClient
    from ronda_client.api.games import get_seat_view
    game = requests.post(f"{live_server}/games", json={"players": 2, "rules": {"preset": "traditional"}, "seats": [
        {"type": "human", "name": "A"}, {"type": "human", "name": "B"}]}).json()
    tokens = [t["token"] for t in game["tokens"]]
    assert game["game"]["awaiting"] == [0, 1], "the deal opens with both seats deciding on declarations"
    me = AuthenticatedClient(base_url=live_server, token=tokens[0])
    stale = get_seat_view.sync(game["game"]["id"], client=me)
    other = requests.post(f"{live_server}/games/{stale.id}/actions", json={"type": "pass"}, headers={
        "Authorization": f"Bearer {tokens[1]}", "If-Match": f'"{stale.version}"'})
    assert other.status_code == 200
    assert play_against_a_bot.act(stale.id, me, stale, play_against_a_bot.decide(stale)) == (None, 0)
    fresh = get_seat_view.sync(stale.id, client=me)
    new_view, _ = play_against_a_bot.act(stale.id, me, fresh, play_against_a_bot.decide(fresh))
    assert new_view.version > fresh.version


def test_the_generated_client_reads_problems_as_typed_objects(generated_client, live_server):
    from ronda_client import Client
    from ronda_client.api.games import get_game
    from ronda_client.models import Problem
    problem = get_game.sync("no-such-game", client=Client(base_url=live_server))
    assert isinstance(problem, Problem) and problem.code == "game_not_found" and problem.status == 404


def test_the_example_outside_bot_plays_a_whole_match_against_greedy(generated_client, live_server):
    import outside_bot
    played = outside_bot.play_match(live_server, games=2)
    assert played["games_done"] == 2 and played["moves"] >= 20
    assert set(played["standings"]) == {played["bot"], "greedy"} and sum(played["standings"].values()) == 2
    games = requests.get(f"{live_server}/matches/{played['match_id']}/games").json()
    assert all(game["status"] == "finished" for game in games) and len(games) == 2
    events = [requests.get(f"{live_server}/games/{game['id']}/events").json() for game in games]
    assert not any(e["type"] == "turn_timeout" for log in events for e in log), "it played every move itself"
    ladder = {row["entrant"]: row for row in requests.get(f"{live_server}/ratings").json()}
    assert ladder[played["bot"]]["games"] >= 2


def test_the_example_client_skips_an_event_type_it_does_not_know(generated_client, live_server):
    """The versioning policy: new event types may come; the example keeps the ones it knows."""
    import json
    from types import SimpleNamespace

    import play_against_a_bot
    game = requests.post(f"{live_server}/games", json={"players": 2, "seats": [{"type": "human"}] * 2}).json()
    seat = game["game"]["awaiting"][0]
    token = next(t["token"] for t in game["tokens"] if t["seat"] == seat)
    view = requests.get(
        f"{live_server}/games/{game['game']['id']}/view", headers={"Authorization": f"Bearer {token}"}
    ).json()
    answer = requests.post(f"{live_server}/games/{game['game']['id']}/actions", json=view["legal_actions"][0],
                           headers={"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"'}).json()
    newer = {**answer, "events": [*answer["events"], {"id": 10 ** 6, "type": "comet", "seat": 0, "tail": [1, 2]}]}
    parsed = play_against_a_bot.action_result(SimpleNamespace(content=json.dumps(newer).encode()))
    assert [event.id for event in parsed.events] == [event["id"] for event in answer["events"]]
    assert parsed.game.version == answer["game"]["version"]


def test_the_generated_client_follows_a_game_stream_as_typed_messages(generated_client, live_server):
    """docs/clients.md: a generated Python client reads SSE by parsing each message into its model."""
    import follow_a_game
    from ronda_client import Client
    from ronda_client.models import EventMessage, GameOverEvent, PlayEvent, SnapshotMessage
    created = requests.post(f"{live_server}/games", json={"players": 2, "rules": {"preset": "simple"}, "seats": [
        {"type": "bot", "bot": "random"}, {"type": "bot", "bot": "random"}]}).json()
    client = Client(base_url=live_server)
    received = list(follow_a_game.follow(client, created["game"]["id"], last_event_id=0))
    assert all(isinstance(message, EventMessage) for message in received)
    assert [int(message.id) for message in received] == list(range(1, len(received) + 1))
    assert any(isinstance(message.data, PlayEvent) for message in received)
    assert isinstance(received[-1].data, GameOverEvent)
    snapshot, = follow_a_game.follow(client, created["game"]["id"])  # a finished game: its snapshot, then the end
    assert isinstance(snapshot, SnapshotMessage) and snapshot.data.status.value == "finished"


def test_the_example_client_plays_quick_play_a_whole_game_and_a_rematch(generated_client, live_server):
    import quick_play
    played = quick_play.play(live_server)
    assert max(played["scores"]) >= 41 and played["winner"] in (0, 1)
    assert played["rematch"] != played["game_id"] and played["rematch_status"] == "active"
    assert played["seats"] == [0, 1]
    game = requests.get(f"{live_server}/games/{played['game_id']}").json()
    assert all(seat["player"] for seat in game["seats"])


def test_the_example_studio_server_signs_its_users_in_they_play_and_one_is_deleted(generated_client, live_server):
    """Issue 63, 7: the studio's server holds its own ids and its keys, never a player's token."""
    import studio_server
    from conftest import LIVE_OPERATOR_KEY
    made = requests.post(f"{live_server}/admin/apps", json={"name": "Studio example"},
                         headers={"Authorization": f"Bearer {LIVE_OPERATOR_KEY}"}).json()
    ran = studio_server.run(live_server, made["server_key"], made["client_key"])
    assert ran["game_id"] in ran["amina_games"] and ran["amina_external_id"] == "user-1"
    assert requests.get(f"{live_server}/players/{ran['omar_deleted']}",
                        headers={"X-Ronda-App": made["client_key"]}).status_code == 404
    game = requests.get(f"{live_server}/games/{ran['game_id']}", headers={"X-Ronda-App": made["client_key"]}).json()
    assert game["status"] == "finished" and "Deleted player" in [seat["name"] for seat in game["seats"]]


def test_the_example_tournament_of_two_registered_bots_prints_its_crosstable(generated_client, live_server):
    import bot_tournament
    tournament = bot_tournament.run(live_server, games_per_pairing=2)
    assert tournament.status.value == "finished" and len(tournament.rounds) == 1
    text = bot_tournament.crosstable_text(tournament)
    lines = text.splitlines()
    assert lines[1].startswith("Ali") and lines[2].startswith("Badr"), text
    ali_wins = int(lines[1].split()[2].split("/")[0])
    badr_wins = int(lines[2].split()[1].split("/")[0])
    assert ali_wins + badr_wins == 2 and lines[1].split()[1] == "-", text
    match = requests.get(f"{live_server}/matches/{tournament.rounds[0].pairings[0].match_id}/games").json()
    events = [requests.get(f"{live_server}/games/{game['id']}/events").json() for game in match]
    assert not any(e["type"] == "turn_timeout" for log in events for e in log), "each bot played its own moves"


def test_the_generated_client_reads_each_notice_as_its_kind_and_leaves_defaulted_fields_out(generated_client,
                                                                                           live_server):
    """Issue 62, 6: a player's notices are a union on `type` (each kind its own model, as events
    are), and a request field with a server default is optional and not sent when left out."""
    from ronda_client import AuthenticatedClient, Client
    from ronda_client.api.players import create_player, wait_for_notices
    from ronda_client.models import CreateGameRequest, CreatePlayerRequest, YourTurnNotice
    request = CreateGameRequest(players=2)
    assert request.to_dict() == {"players": 2}  # `rated` and the rest: the server's defaults
    made = create_player.sync(client=Client(base_url=live_server), body=CreatePlayerRequest(name="Noor"))
    me = AuthenticatedClient(base_url=live_server, token=made.token)
    game = requests.post(f"{live_server}/games", json={"players": 2, "rules": {"preset": "simple"}, "seats": [
        {"type": "open"}, {"type": "bot", "bot": "random"}]}).json()["game"]
    claimed = requests.post(f"{live_server}/games/{game['id']}/seats/0",
                            headers={"Authorization": f"Bearer {made.token}"})
    assert claimed.status_code == 201, claimed.text
    answer = wait_for_notices.sync(client=me, wait_seconds=10)
    turns = [notice for notice in answer.notices if isinstance(notice, YourTurnNotice)]
    assert turns and turns[0].game_id == game["id"] and turns[0].version >= 1


def test_the_example_analyses_a_bot_match_and_prints_each_bots_accuracy(generated_client, live_server):
    """Issue 66, 6: a generated-client example that analyses a bot match and prints the bots' accuracies."""
    import analyse_match
    review = analyse_match.run(live_server, ("greedy", "random"), games=2)
    assert review.games_analysed == 2 and [bot.bot for bot in review.bots] == ["greedy", "random"]
    text = analyse_match.report(review)
    for bot in review.bots:
        assert f"accuracy {bot.accuracy:5.1f}" in text and 0 <= bot.accuracy <= 100
