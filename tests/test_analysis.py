"""Game review (issue 66): every decision of a finished game weighed from what its seat knew, exact
where the seat knows every hand, asked for once, computed on the workers, kept with the game."""

import math
import random
import time

import pytest

from app.bots import choose_action
from app.bots.review import exact_end, margin, review_decision, review_game, seat_reviews
from app.engine import Game, perform, rules_from_request
from app.engine.replay import played_over
from app.engine.views import deal_events, seat_knowledge


def played_game(seed: str, bots=("greedy", "random"), preset="classic") -> list[dict]:
    """A game's log, its bots reading the deal as they do in play."""
    rules = rules_from_request({"preset": preset})
    game = Game(rules, len(bots), seed=seed, first_dealer=0)
    log = list(game.events)
    rng = random.Random(seed)
    while game.winner is None:
        seat = game.awaiting()[0]
        log += perform(game, seat, choose_action(bots[seat], seat_knowledge(game, seat, deal_events(log)), rng))
    return [dict(event, id=number) for number, event in enumerate(log, 1)]


def brute_force_margin(game: Game, camp: int, root: Game) -> float:
    """Plain minimax to the round's end, every line searched (no pruning): the reference."""
    if game.winner is not None or game.round_index != root.round_index:
        return margin(game, root, camp)
    mover = game.awaiting()[0]
    values = []
    for action in game.legal_actions(mover):
        child = game.clone(deal_next_round=False)
        child.apply(mover, action)
        values.append(brute_force_margin(child, camp, root))
    return max(values) if game.camp_of[mover] == camp else min(values)


def test_a_two_player_last_deal_is_valued_exactly_as_a_brute_force_search_finds():
    """Issue 66, 1: once the stock is empty, a 2-player seat has seen every card but the other
    hand: the position is of perfect information, and each option's value is the exact margin."""
    checked = 0
    for seed in ("exact-1", "exact-2", "exact-3"):
        events = played_game(seed)
        rules = rules_from_request({"preset": "classic"})
        before, previous_event = None, 0
        for position, seat, _, event_id in played_over(rules, 2, seed, 0, events):
            if seat is not None and before is not None and not before.stock and before.winner is None:
                history = deal_events(events[:previous_event])  # ids count from 1: the events up to it
                chosen = before.legal_actions(seat)[0]
                decision = review_decision(before, history, seat, chosen, random.Random(0), budget_ms=1)
                assert decision.exact and decision.worlds == 1
                for option in decision.options:
                    after = before.clone(deal_next_round=False)
                    after.apply(seat, next(a for a in before.legal_actions(seat)
                                           if _same(option.action, a)))
                    exact = brute_force_margin(after, before.camp_of[seat], before)
                    assert option.value == pytest.approx(exact) == option.all_cards_value
                    assert option.value_low == option.value_high == option.value
                checked += 1
            before, previous_event = position.clone(deal_next_round=False), event_id
    assert checked >= 6


def _same(action: dict, engine_action: int) -> bool:
    from app.engine import action_to_dict
    return action_to_dict(engine_action) == action


def test_alpha_beta_finds_the_margin_of_every_line_searched():
    """The exact search cuts lines, never the value: the same as the plain minimax, from the deal's start."""
    events = played_game("cuts")
    rules = rules_from_request({"preset": "classic"})
    compared = 0
    for position, seat, _, _ in played_over(rules, 2, "cuts", 0, events):
        if seat is not None and not position.stock and position.winner is None and position.awaiting():
            root = position.clone(deal_next_round=False)
            camp = root.camp_of[root.awaiting()[0]]
            assert margin(exact_end(root.clone(deal_next_round=False), camp, root), root, camp) == \
                brute_force_margin(root, camp, root)
            compared += 1
    assert compared >= 3


def test_every_decision_is_listed_forced_ones_marked_best_and_accuracy_is_lichess_s():
    events = played_game("listed")
    rules = rules_from_request({"preset": "classic"})
    decisions = [d.as_dict() for d in review_game(played_over(rules, 2, "listed", 0, events), events,
                                                  lambda index: random.Random(index), budget_ms=1)]
    steps = [seat for _, seat, _, _ in played_over(rules, 2, "listed", 0, events) if seat is not None]
    assert [d["index"] for d in decisions] == list(range(len(steps)))
    assert [d["seat"] for d in decisions] == steps
    assert all(d["mark"] == "best" and d["loss"] == 0 for d in decisions if d["forced"])
    assert all(d["loss"] >= 0 and d["chosen"] in [o["action"] for o in d["options"]] for d in decisions)
    for review in seat_reviews(decisions, 2):
        own = [d for d in decisions if d["seat"] == review.seat and not d["forced"]]
        assert review.choices == len(own) and sum(review.marks.values()) == len(own)
        lichess = [103.1668 * math.exp(-0.04354 * min(100, d["win_chance_loss"] * 100)) - 3.1669 for d in own]
        assert review.accuracy == pytest.approx(sum(min(100, max(0, a)) for a in lichess) / len(own), abs=0.05)


@pytest.mark.slow
def test_a_review_cut_short_goes_on_alike_from_where_it_stopped():
    """A worker killed mid-analysis: the next part starts at the next decision, and each decision's
    worlds come from its own seed, so the whole is what one run would have made."""
    events = played_game("resumed")
    rules = rules_from_request({"preset": "classic"})

    def review(start):
        return [d.as_dict() for d in review_game(played_over(rules, 2, "resumed", 0, events), events,
                                                 lambda index: random.Random(f"resumed:{index}"),
                                                 budget_ms=0, start=start)]
    whole = review(0)
    assert review(0)[:10] + review(10) == whole


@pytest.fixture(scope="module")
def analysing(redis_url):
    """The app with its bots and analyses on threads of its own (the embedded mode), a decision's
    time 2 ms, and one app whose quota is two analyses an hour."""
    from app import create_app
    app = create_app({"REDIS_URL": redis_url, "TESTING": True, "BOT_DISPATCH": "inprocess",
                      "RATE_LIMIT_PER_ADDRESS": 0, "RATE_LIMIT_PER_TOKEN": 0, "ANALYSIS_BUDGET_MS": 2})
    return app


def finished_bot_game(client, headers=None, preset="simple") -> str:
    game = client.post("/games", json={"players": 2, "rules": {"preset": preset}, "seats": [
        {"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "random"}]}, headers=headers or {}).json["game"]
    wait_until(lambda: client.get(f"/games/{game['id']}", headers=headers or {}).json["status"] == "finished")
    return game["id"]


def wait_until(condition, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if found := condition():
            return found
        time.sleep(0.05)
    raise AssertionError("not within the wait")


def test_a_finished_game_is_analysed_once_and_every_reader_gets_the_same(analysing):
    client = analysing.test_client()
    live = client.post("/games", json={"players": 2}).json["game"]
    refused = client.post(f"/games/{live['id']}/analysis")
    assert refused.status_code == 409 and refused.json["code"] == "game_not_over"
    assert client.get(f"/games/{live['id']}/analysis").json["code"] == "analysis_not_found"
    game_id = finished_bot_game(client)
    first = client.post(f"/games/{game_id}/analysis")
    assert first.status_code == 202 and first.headers["Location"].endswith(f"/games/{game_id}/analysis")
    assert first.json["status"] in ("pending", "running", "done")
    again = client.post(f"/games/{game_id}/analysis")
    assert again.status_code == 202 and again.json["requested_at"] == first.json["requested_at"]
    done = wait_until(lambda: (a := client.get(f"/games/{game_id}/analysis").json)["status"] == "done" and a)
    steps = [seat for _, seat, _, _ in played_over(*analysing.services.games.finished_log(game_id)) if seat is not None]
    assert done["progress"] == {"decisions_done": len(steps), "decisions_total": len(steps)}
    assert [d["seat"] for d in done["decisions"]] == steps  # every decision, automatic declarations not among them
    assert [s["seat"] for s in done["seats"]] == [0, 1] and all(0 <= s["accuracy"] <= 100 for s in done["seats"])
    assert client.post(f"/games/{game_id}/analysis").json["finished_at"] == done["finished_at"]


def test_analyses_count_on_the_apps_hourly_quota_and_stay_inside_the_app(analysing):
    client = analysing.test_client()
    _, keys = analysing.services.apps.create("Reviews", quotas={"analyses_per_hour": 1})
    studio = {"X-Ronda-App": keys["client"]}
    first, second = finished_bot_game(client, studio), finished_bot_game(client, studio)
    assert client.post(f"/games/{first}/analysis", headers=studio).status_code == 202
    over = client.post(f"/games/{second}/analysis", headers=studio)
    assert over.status_code == 429 and over.json["code"] == "quota_exceeded" and int(over.headers["Retry-After"]) >= 1
    assert client.post(f"/games/{first}/analysis", headers=studio).status_code == 202  # the same one: not counted
    assert client.get(f"/games/{first}/analysis").status_code == 404  # outside the app: no such game
    assert client.get(f"/games/{second}/analysis", headers=studio).json["code"] == "analysis_not_found"


@pytest.mark.slow
def test_a_match_s_games_are_analysed_and_reviewed_per_bot(analysing):
    client = analysing.test_client()
    match = client.post("/matches", json={"bots": ["greedy", "random"], "games": 2,
                                          "rules": {"preset": "simple"}}).json
    wait_until(lambda: client.get(f"/matches/{match['id']}").json["status"] == "finished")
    asked = client.post(f"/matches/{match['id']}/analysis")
    assert asked.status_code == 202 and asked.json["games"] == 2
    review = wait_until(lambda: (r := client.get(f"/matches/{match['id']}/analysis").json)["games_analysed"] == 2
                        and r)
    assert [bot["bot"] for bot in review["bots"]] == ["greedy", "random"]
    for bot in review["bots"]:
        assert bot["decisions"] > 0 and 0 <= bot["accuracy"] <= 100
        assert all(worst["game_id"].startswith(match["id"]) or worst["game_id"] for worst in bot["worst"])
        losses = [worst["loss"] for worst in bot["worst"]]
        assert losses == sorted(losses, reverse=True)
