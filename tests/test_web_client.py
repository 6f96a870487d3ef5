"""The web client at `/`, driven in a real Chromium (Debian's, through Playwright) against a live server."""

import os
import re
from pathlib import Path

import pytest
import requests

from tooling import missing, require

pytestmark = pytest.mark.slow  # Chromium: left out of the fast loop (pytest -m 'not slow')

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:
    missing("the playwright package is missing: pip install -e '.[test]'", whole_module=True)

SCREENSHOTS = (
    Path(os.environ.get("RONDA_TEST_ARTIFACTS", Path(__file__).resolve().parent.parent / "test-artifacts"))
    / "screenshots"
)
MOVE_WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser():
    chromium = require("chromium", "Debian's Chromium: sudo apt-get install -y chromium")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == [], "the page threw"


def create_in_lobby(page, base, preset="simple", target=None):
    page.goto(f"{base}/")
    page.fill("#name", "Tester")
    page.select_option("#preset", preset)
    if target:
        page.fill("#target", str(target))
    page.click("#create")
    expect(page.locator("#hand")).to_be_visible()
    return page.url.rsplit("/", 1)[1]


def two_humans(base, preset="simple"):
    created = requests.post(f"{base}/games", json={
        "players": 2, "rules": {"preset": preset}, "turn_timeout_seconds": None,
        "seats": [{"type": "human", "name": "Amina"}, {"type": "human", "name": "Omar"}]}).json()
    return created["game"], [t["token"] for t in created["tokens"]]


def sit_at(page, base, game_id, seat, token):
    """The page holds `token` for `seat`, as if it had created or joined the game itself."""
    page.goto(f"{base}/")
    page.evaluate("([key, value]) => localStorage.setItem(key, value)",
                  [f"ronda:seat:{game_id}", f'{{"seat": {seat}, "token": "{token}"}}'])
    page.goto(f"{base}/#/games/{game_id}")


def overflowing(page) -> list[str]:
    # What a row that scrolls sideways by design (the phone's navigation, a wide table) holds is not the page's.
    return page.evaluate("""() => [...document.querySelectorAll('body *')].filter((e) => {
        const box = e.getBoundingClientRect();
        for (let up = e.parentElement; up; up = up.parentElement) {
            if (['auto', 'scroll'].includes(getComputedStyle(up).overflowX)) return false;
        }
        return box.width && (box.right > innerWidth + 0.5 || box.left < -0.5);
    }).map((e) => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)
      .concat(document.documentElement.scrollWidth > innerWidth ? ['the page scrolls sideways'] : [])""")


@pytest.mark.parametrize("width, height", [(390, 844), (1280, 800)])
def test_the_lobby_fits_a_phone_and_a_laptop_without_overflow(browser, live_server, width, height):
    requests.post(
        f"{live_server}/games",
        json={"players": 2, "seats": [{"type": "human", "name": "Someone with a long name"}, {"type": "open"}]},
    )
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{live_server}/")
    expect(page.locator("#open-games li").first).to_be_visible()
    expect(page.locator(".presets li")).to_have_count(5)  # every preset, one line each
    assert overflowing(page) == []
    page.screenshot(path=SCREENSHOTS / f"lobby-{width}x{height}.png", full_page=True)
    context.close()


def test_a_whole_game_against_the_greedy_bot_played_by_clicks(page, live_server):
    game_id = create_in_lobby(page, live_server, preset="simple", target=11)
    clicks = 0
    next_move = page.locator("#hand button.card.legal, #actions button:enabled, #result")
    while True:
        next_move.first.wait_for(timeout=MOVE_WAIT_MS)
        if page.locator("#result").count():
            break
        next_move.first.click()
        clicks += 1
        if clicks == 6:
            page.screenshot(path=SCREENSHOTS / "table-mid-game.png", full_page=True)
    final = requests.get(f"{live_server}/games/{game_id}").json()
    assert final["status"] == "finished" and max(final["scores"]) >= 11
    expect(page.locator("#verification")).to_contain_text("matches the commitment")
    for camp, score in enumerate(final["scores"]):
        expect(page.locator(f'.points[data-camp="{camp}"]')).to_have_text(str(score))
    expect(page.locator("#log")).to_contain_text("Game over")
    mine = final["scores"][0] > final["scores"][1]  # seat 0 is camp 0 in a 2-player game
    expect(page.locator("#outcome")).to_have_text(
        f"You {'won' if mine else 'lost'} {' – '.join(map(str, final['scores']))}"
    )
    assert page.evaluate(f"localStorage.getItem('ronda:seat:{game_id}')") is None  # no token kept past the end
    page.screenshot(path=SCREENSHOTS / "finished-game.png", full_page=True)
    assert clicks >= 5


def test_a_reload_keeps_the_seat(page, live_server):
    game_id = create_in_lobby(page, live_server)
    hand = page.locator("#hand .card").all_inner_texts()
    page.reload()
    expect(page.locator("h1")).to_contain_text("you are Tester")  # the seat by its name, not "seat 0"
    expect(page.locator("#hand .card")).to_have_count(len(hand))
    assert page.url.endswith(f"#/games/{game_id}")


def test_a_spectator_page_follows_a_game_live(page, live_server):
    game, tokens = two_humans(live_server)
    page.goto(f"{live_server}/#/games/{game['id']}")
    expect(page.locator("h1")).to_contain_text("watching")
    expect(page.locator("#hand")).to_have_count(0)  # a spectator sees no hand
    mover = game["awaiting"][0]
    view = requests.get(
        f"{live_server}/games/{game['id']}/view", headers={"Authorization": f"Bearer {tokens[mover]}"}
    ).json()
    played = requests.post(f"{live_server}/games/{game['id']}/actions", json=view["legal_actions"][0], headers={
        "Authorization": f"Bearer {tokens[mover]}", "If-Match": f'"{view["version"]}"'})
    assert played.status_code == 200
    names = ["Amina", "Omar"]
    expect(page.locator("#log")).to_contain_text(re.compile(f"{names[mover]} plays the .+"))
    expect(page.locator("#status")).to_contain_text(f"Waiting for {names[1 - mover]}")


def test_a_dropped_stream_reconnects_with_last_event_id_and_misses_nothing(page, live_server):
    game, tokens = two_humans(live_server)
    log = requests.get(f"{live_server}/games/{game['id']}/events").json()
    shown_from = requests.get(f"{live_server}/games/{game['id']}").json()[
        "deal_event_id"
    ]  # the table's log starts there
    streams = []

    def drop_the_first(route):
        streams.append(route.request.headers.get("last-event-id"))
        if len(streams) == 1:  # the first connection ends at once, as a restarted server's would
            return route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=": bye\n\n")
        return route.continue_()

    page.route("**/stream", drop_the_first)
    page.goto(f"{live_server}/#/games/{game['id']}")
    expect(page.locator("#log li")).to_have_count(len([e for e in log if e["id"] >= shown_from]))
    for _ in range(200):  # "live" shows as soon as a stream answers, the dropped one included
        if len(streams) >= 2:
            break
        page.wait_for_timeout(50)
    assert streams[:2] == [str(log[-1]["id"])] * 2  # resumed after the last event it had, not from scratch
    expect(page.locator(".game-head")).to_contain_text("live")  # the second connection is open
    mover = game["awaiting"][0]
    view = requests.get(
        f"{live_server}/games/{game['id']}/view", headers={"Authorization": f"Bearer {tokens[mover]}"}
    ).json()
    assert requests.post(f"{live_server}/games/{game['id']}/actions", json=view["legal_actions"][0], headers={
        "Authorization": f"Bearer {tokens[mover]}", "If-Match": f'"{view["version"]}"'}).status_code == 200
    after = requests.get(f"{live_server}/games/{game['id']}/events").json()
    expect(page.locator("#log li")).to_have_count(
        len([e for e in after if e["id"] >= shown_from])
    )  # each new one, once


def test_a_412_race_is_recovered_by_reading_again_and_offering_the_move_again(page, live_server):
    game, tokens = two_humans(live_server, preset="traditional")  # both seats answer declarations at once
    assert game["awaiting"] == [0, 1]
    page.route("**/stream", lambda route: route.abort())  # the page hears nothing of the other seat's move
    views = []
    page.on("response", lambda response: views.append(response.url) if response.url.endswith("/view") else None)
    sit_at(page, live_server, game["id"], 0, tokens[0])
    expect(page.locator('#actions button[data-action="pass"]')).to_be_visible()
    for _ in range(100):  # the table reads its view twice on opening (the second after starting its stream)
        if len(views) >= 2:
            break
        page.wait_for_timeout(50)
    other = requests.post(f"{live_server}/games/{game['id']}/actions", json={"type": "pass"}, headers={
        "Authorization": f"Bearer {tokens[1]}", "If-Match": f'"{game["version"]}"'})
    assert other.status_code == 200
    page.click('#actions button[data-action="pass"]')  # sent on the version it saw: 412
    expect(page.locator("#notice")).to_contain_text("moved on")
    page.click("#retry")
    expect(page.locator('#actions button[data-action="pass"]')).to_have_count(0)  # the answer's view: passed
    expect(page.locator("#notice")).to_have_count(0)
    events = requests.get(f"{live_server}/games/{game['id']}/events").json()
    assert [e["seat"] for e in events if e["type"] == "pass"] == [1, 0]  # the other seat's, then the retried one


def test_the_matches_page_shows_a_small_matchs_standings_and_replays_its_games(page, live_server):
    page.goto(f"{live_server}/#/matches")
    page.fill("#games", "4")
    page.click("#start-match")
    expect(page.locator("#standings tbody tr")).to_have_count(2)
    expect(page.locator("body")).to_contain_text("4 of 4 games · finished", timeout=60_000)
    match_id = page.url.rsplit("/", 1)[1]
    match = requests.get(f"{live_server}/matches/{match_id}").json()
    for row, entrant in zip(page.locator("#standings tbody tr").all(), match["entrants"], strict=False):
        cells = row.locator("td").all_inner_texts()
        assert cells[1] == entrant["bot"] and cells[2] == str(entrant["wins"])
        assert cells[4] == f"{100 * entrant['win_rate_low']:.1f}% – {100 * entrant['win_rate_high']:.1f}%"
    page.screenshot(path=SCREENSHOTS / "matches.png", full_page=True)
    page.locator("#match-games a").first.click()
    first_step = page.locator("#step-label").inner_text()
    page.click("#next")
    expect(page.locator("#step-label")).not_to_have_text(first_step)
    game_id = page.url.rsplit("/", 1)[1]
    events = requests.get(f"{live_server}/games/{game_id}/events?limit=2000").json()
    first_play = next(e for e in events if e["type"] == "play")
    # The step names the move, and the table is the one after it. Declarations are moves too and
    # come before a hand's first play, so the walk passes each of them on its way to the first play.
    label = page.locator("#step-label")
    for _ in range(sum(1 for e in events if e["type"] in ("declaration", "pass")) + 1):
        before = label.inner_text()
        page.click("#next-move")
        expect(label).not_to_have_text(before)
        if "plays" in label.inner_text():
            break
        expect(label).to_contain_text("declares")
    expect(label).to_contain_text("plays")
    hand = page.locator(f"#replay-hands .seat[data-seat='{first_play['seat']}'] .card")
    expect(hand.first).to_be_visible()
    assert first_play["card"] not in [card.get_attribute("data-card") for card in hand.all()]
    page.click("#last")
    expect(page.locator("#step-label")).to_contain_text("Game over")
    # Issue 66, 5: reviewed by the master, each player's accuracy, and each decision's mark and best option.
    page.click("#review-game")
    expect(page.locator("#review li")).to_have_count(2, timeout=60_000)
    analysis = requests.get(f"{live_server}/games/{game_id}/analysis").json()
    for seat in analysis["seats"]:
        expect(page.locator(f"#review li[data-seat='{seat['seat']}']")).to_contain_text(f"{seat['accuracy']:.1f}")
    page.click("#first")
    page.click("#next-move")
    first = analysis["decisions"][0]
    expect(page.locator("#decision")).to_contain_text(first["mark"].capitalize())
    expect(page.locator("#decision")).to_contain_text("Played")
    page.screenshot(path=SCREENSHOTS / "review.png", full_page=True)


def test_the_rules_are_in_the_client(page, live_server):
    page.goto(f"{live_server}/#/rules")
    # A player's guide first, the full rules (with the client authors' JSON) after it.
    expect(page.locator("article h1")).to_have_text(["How to play Ronda, in two minutes",
                                                     "Ronda: the rules this service plays"])
    expect(page.locator("#full-rules table").first).to_be_visible()
    assert page.locator("#guide code").count() <= 1  # the guide talks to players, not to programs


def test_the_api_docs_render_with_no_internet(page, live_server):
    outside = []

    def local_only(route):
        if route.request.url.startswith(live_server):
            return route.continue_()
        outside.append(route.request.url)
        return route.abort()

    page.route("**/*", local_only)
    violations = []
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))
    page.goto(f"{live_server}/docs")
    operations = page.locator(".opblock-summary")
    expect(operations.first).to_be_visible(timeout=20_000)
    spec = requests.get(f"{live_server}/openapi.json").json()
    # Every operation, and every webhook event (the spec's `webhooks` section), drawn.
    assert operations.count() == sum(method != "parameters" for section in ("paths", "webhooks")
                                     for path in spec[section].values() for method in path)
    operations.first.click()  # an operation opens, its schemas drawn
    expect(page.locator(".opblock-body").first).to_be_visible()
    assert outside == []
    policy = requests.get(f"{live_server}/docs").headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self' 'sha256-" in policy and "unsafe-eval" not in policy
    assert violations == [], violations


@pytest.mark.parametrize("first", ["creator", "friend"])
def test_the_creator_sees_a_friend_join_and_whose_turn_it_is_without_a_reload(browser, live_server, first):
    """Seat 1 open for a friend who joins by the invite link in a second browser: the creator's
    page shows the friend's name and the right turn by itself; before that, nothing is playable."""
    created = requests.post(f"{live_server}/games", json={
        "players": 2, "rules": {"preset": "simple"}, "first_dealer": 1 if first == "creator" else 0,
        "seats": [{"type": "human", "name": "Amina"}, {"type": "open"}]}).json()
    game_id, token = created["game"]["id"], created["tokens"][0]["token"]
    contexts = [browser.new_context(viewport={"width": 1280, "height": 800}) for _ in range(2)]
    try:
        creator, friend = (context.new_page() for context in contexts)
        sit_at(creator, live_server, game_id, 0, token)
        expect(creator.locator("#status")).to_contain_text("Waiting for players")
        expect(creator.locator("#hand .card")).not_to_have_count(0)
        expect(creator.locator("#hand .card.legal")).to_have_count(0)  # shown, not offered
        friend.goto(f"{live_server}/#/join/{game_id}/1")
        friend.fill("#name", "Youssef")
        friend.click("button[type=submit]")
        expect(friend.locator("#hand")).to_be_visible()
        expect(creator.locator(".seats-row")).to_contain_text("Youssef", timeout=5_000)
        expect(creator.locator("#log")).to_contain_text("Youssef takes seat 2")
        if first == "creator":
            expect(creator.locator("#status")).to_contain_text("Your turn", timeout=5_000)
            expect(friend.locator("#status")).to_contain_text("Waiting for Amina")
        else:
            expect(creator.locator("#status")).to_contain_text("Waiting for Youssef", timeout=5_000)
            expect(friend.locator("#status")).to_contain_text("Your turn")
        creator.screenshot(path=SCREENSHOTS / f"friend-joined-{first}-first.png", full_page=True)
    finally:
        for context in contexts:
            context.close()


def test_a_failed_read_of_the_view_is_retried_until_the_table_catches_up(page, live_server):
    game_id = create_in_lobby(page, live_server, preset="simple")
    failed = []

    def fail_once(route):
        if not failed:
            failed.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route(f"**/games/{game_id}/view", fail_once)
    page.locator("#hand button.card.legal").first.click()
    expect(page.locator("#hand button.card.legal").first).to_be_visible(timeout=MOVE_WAIT_MS)  # the bot moved, seen
    expect(page.locator("#notice")).to_have_count(0)
    assert failed, "no read of the view failed"
    server = requests.get(f"{live_server}/games/{game_id}").json()
    expect(page.locator("#last-move")).to_be_visible()
    assert page.evaluate("document.querySelectorAll('#hand .card').length") == server["hand_counts"][0]
    page.screenshot(path=SCREENSHOTS / "caught-up-after-a-failed-read.png", full_page=True)


def test_the_lobby_shows_a_game_opened_elsewhere_within_seconds(page, live_server):
    page.goto(f"{live_server}/")
    expect(page.locator("#open-games")).to_be_visible()
    name = f"Elsewhere {os.getpid()}"
    requests.post(
        f"{live_server}/games", json={"players": 2, "seats": [{"type": "human", "name": name}, {"type": "open"}]}
    )
    expect(page.locator("#open-games")).to_contain_text(name, timeout=8_000)


def test_every_kind_of_event_reads_as_words(page, live_server):
    from test_openapi import _events_of_whole_games
    examples = {}
    for event in _events_of_whole_games():
        examples.setdefault(event["type"], event)
    page.goto(f"{live_server}/")
    page.locator("#new-game").wait_for()  # the words loaded
    game = {"seats": [{"seat": 0, "name": "Amina"}, {"seat": 1, "name": "Omar"}, {"seat": 2, "name": "Lina"},
                      {"seat": 3, "name": "Driss"}], "camps": [0, 1, 0, 1]}
    streak_capture = {"id": 9, "type": "capture", "seat": 0, "camp": 0, "card": "3e", "taken": [], "reason": "match"}
    lines = page.evaluate("""async ([events, game]) => {
        const { describe } = await import("/static/client/words.js");
        return events.map((event) => describe(event, game));
    }""", [[*examples.values(), streak_capture], game])
    assert "taking no card" in lines.pop()
    spec = requests.get(f"{live_server}/openapi.json").json()
    assert set(examples) == set(spec["components"]["schemas"]["Event"]["discriminator"]["mapping"])
    for event, line in zip(examples.values(), lines, strict=False):
        assert line != event["type"] and "undefined" not in line and "null" not in line, (event, line)


def test_the_page_allows_only_its_own_origin_and_sends_no_referrer(live_server):
    page = requests.get(f"{live_server}/")
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer"


# Every word (up to 24 characters: seeds, hashes and links may break; a line may end after a
# hyphen) that the page shows on more than one line.
BROKEN_WORDS = """() => {
    const broken = [];
    const walker = document.createTreeWalker(document.getElementById("main"), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.textContent.matchAll(/[^\\s-]+/g)) {  // a line may end after a hyphen
            if (match[0].length < 2 || match[0].length > 24) continue;
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) broken.push(match[0]);
        }
    }
    return broken;
}"""


def test_no_page_breaks_a_word_or_number_on_a_phone(browser, live_server):
    game, tokens = two_humans(live_server)
    match = requests.post(f"{live_server}/matches", json={"bots": ["greedy", "casual"], "games": 1,
                                                          "rules": {"preset": "simple"}}).json()
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        sit_at(page, live_server, game["id"], 0, tokens[0])
        expect(page.locator("#hand")).to_be_visible()
        pages = {"table": None, "lobby": "/#/", "matches": "/#/matches", "match": f"/#/matches/{match['id']}",
                 "rules": "/#/rules"}
        for name, address in pages.items():
            if address:
                page.goto(f"{live_server}{address}")
            expect(page.locator("#main > *").first).to_be_visible()
            page.wait_for_timeout(500)  # lists and tables filled
            assert page.evaluate(BROKEN_WORDS) == [], name
        page.screenshot(path=SCREENSHOTS / "matches-phone.png", full_page=True)
    finally:
        context.close()


def test_the_match_page_names_registered_bots_and_shows_a_forfeit(page, live_server):
    bot = requests.post(f"{live_server}/bots", json={"name": "Sleepy Mimoun"}).json()["bot"]
    match = requests.post(f"{live_server}/matches", json={"bots": [bot["entrant"], "greedy"], "games": 2,
                                                          "move_seconds": 1, "rules": {"preset": "simple"}}).json()
    page.goto(f"{live_server}/#/matches/{match['id']}")
    expect(page.locator("h1")).to_contain_text("Sleepy Mimoun vs greedy")
    expect(page.locator("#match-progress")).to_contain_text("forfeited by entrant 0 (Sleepy Mimoun)", timeout=60_000)
    expect(page.locator("#standings")).to_contain_text("Sleepy Mimoun")
    page.screenshot(path=SCREENSHOTS / "match-forfeited.png", full_page=True)


def test_the_declare_button_names_what_is_declared(page, live_server):
    for attempt in range(200):  # a seed whose first deal gives seat 0 something to declare
        created = requests.post(f"{live_server}/games", json={
            "players": 2, "rules": {"preset": "traditional"}, "seed": f"declare-{attempt}",
            "seats": [{"type": "human", "name": "Amina"}, {"type": "human", "name": "Omar"}]}).json()
        token = created["tokens"][0]["token"]
        view = requests.get(f"{live_server}/games/{created['game']['id']}/view",
                            headers={"Authorization": f"Bearer {token}"}).json()
        if view["holding"]:
            break
    holding = view["holding"]
    sit_at(page, live_server, created["game"]["id"], 0, token)
    expect(page.locator('#actions button[data-action="declare"]')).to_have_text(
        f"Declare a {holding['kind'].replace('_', ' ')} of {holding['rank']}s")
    page.screenshot(path=SCREENSHOTS / "declare-names-the-declaration.png", full_page=True)


def stored_player(page) -> dict:
    return page.evaluate("JSON.parse(localStorage.getItem('ronda:player'))")


def play_out_over_http(base, game_id, tokens, until_round=None):
    """Both seats play random legal actions over HTTP until the game ends, or reaches round `until_round`
    (from 0), while the pages follow it live."""
    import random
    rng = random.Random(7)
    while True:
        spectator = requests.get(f"{base}/games/{game_id}").json()
        if spectator["status"] == "finished" or (until_round is not None and spectator["round"] >= until_round):
            return spectator
        for token in tokens:
            view = requests.get(f"{base}/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}).json()
            if view["seat"] in view["awaiting"]:
                requests.post(f"{base}/games/{game_id}/actions", json=rng.choice(view["legal_actions"]),
                              headers={"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"'})


def test_quick_play_brings_two_browsers_to_one_game_then_a_rematch_and_a_third_device_plays_on(browser, live_server):
    """Issue 40: Quick play in two browsers lands both in one game; at game over both press
    Rematch and sit in the next game; a third browser, given one player's key, opens that game
    at the player's seat."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 800}) for _ in range(3)]
    try:
        amina, omar, elsewhere = (context.new_page() for context in contexts)
        for page, name in ((amina, "Amina"), (omar, "Omar")):
            page.goto(f"{live_server}/#/play")
            page.fill("#qp-name", name)
            page.select_option("#qp-rules", "elaborate")
            page.select_option("#qp-bot-fill", "")
            page.click("#qp-start")
        for page in (amina, omar):
            expect(page.locator("#hand")).to_be_visible(timeout=15_000)
        game_id = amina.url.rsplit("/", 1)[1]
        assert omar.url.rsplit("/", 1)[1] == game_id
        amina.screenshot(path=SCREENSHOTS / "quick-play-matched.png", full_page=True)
        players = [stored_player(page) for page in (amina, omar)]
        play_out_over_http(live_server, game_id, [player["token"] for player in players])
        for page in (amina, omar):
            expect(page.locator("#rematch")).to_be_visible(timeout=15_000)
        amina.click("#rematch")
        expect(amina.locator("#status")).to_contain_text("Waiting for players", timeout=10_000)
        next_id = amina.url.rsplit("/", 1)[1]
        assert next_id != game_id
        expect(omar.locator("#rematch-offer")).to_contain_text("Amina asks for a rematch", timeout=10_000)
        omar.screenshot(path=SCREENSHOTS / "rematch-offered.png", full_page=True)
        omar.click("#accept-rematch")
        expect(omar.locator("#hand")).to_be_visible(timeout=10_000)
        assert omar.url.rsplit("/", 1)[1] == next_id
        expect(amina.locator(".seats-row")).to_contain_text("Omar", timeout=10_000)
        omar.screenshot(path=SCREENSHOTS / "rematch.png", full_page=True)
        # A third device: Amina's player key alone opens her seat of the rematch.
        elsewhere.goto(f"{live_server}/#/me")
        elsewhere.fill("#player-key", players[0]["token"])
        elsewhere.click("#use-key button[type=submit]")
        expect(elsewhere.locator("#my-active")).to_contain_text("elaborate", timeout=10_000)
        elsewhere.click(f"#my-active a[href='#/games/{next_id}']")
        expect(elsewhere.locator("#hand")).to_be_visible(timeout=10_000)
        seat = requests.get(f"{live_server}/games/{next_id}/view",
                            headers={"Authorization": f"Bearer {players[0]['token']}"}).json()["seat"]
        assert elsewhere.locator("#hand .card").count() == requests.get(
            f"{live_server}/games/{next_id}").json()["hand_counts"][seat]
        elsewhere.screenshot(path=SCREENSHOTS / "third-device.png", full_page=True)
    finally:
        for context in contexts:
            context.close()


def test_the_leaderboard_page_lists_a_pool(page, live_server):
    page.goto(f"{live_server}/#/leaderboards/simple-2")
    expect(page.locator("#leaderboard")).to_be_visible()
    expect(page.locator("#pool")).to_have_value("simple-2")


def test_the_tournaments_page_starts_one_follows_it_live_and_a_player_enters_an_open_one(page, live_server):
    page.goto(f"{live_server}/#/tournaments")
    expect(page.locator("#t-bots label")).to_have_count(2)
    labels = [text.split("\n")[0].strip() for text in page.locator("#t-bots label").all_inner_texts()]
    assert labels[:2] == ["Bot 1", "Bot 2"], labels  # numbered in order
    page.fill("#t-opens", "0")
    page.fill("#t-games", "1")
    page.click("#start-tournament")
    expect(page.locator("#t-standings")).to_be_visible()
    expect(page.locator("#t-status")).to_contain_text("finished", timeout=MOVE_WAIT_MS)
    cells = page.locator("#t-crosstable tbody td").all_inner_texts()
    assert sorted(cells) == ["0/1", "1/1", "×", "×"], cells  # one game: one won it, the other lost it
    assert page.locator("#t-rounds a", has_text="Match").count() == 1
    page.screenshot(path=str(SCREENSHOTS / "tournament-finished.png"), full_page=True)
    opened = requests.post(f"{live_server}/tournaments", json={
        "format": "swiss", "entrants": ["greedy"], "starts_in_seconds": 600, "rules": {"preset": "simple"}}).json()
    page.goto(f"{live_server}/#/tournaments/{opened['id']}")
    page.fill("#t-name", "Amina")
    page.click("#enter")
    expect(page.locator("#entered")).to_be_visible()
    entrants = requests.get(f"{live_server}/tournaments/{opened['id']}").json()["names"]
    assert entrants == ["greedy", "Amina"]
    page.goto(f"{live_server}/#/tournaments")
    expect(page.locator("#tournaments")).to_contain_text("Swiss · 2 entrants · open")
    page.screenshot(path=str(SCREENSHOTS / "tournaments.png"), full_page=True)


def test_quick_play_cancel_leaves_the_queue_at_once_and_start_is_disabled_while_waiting(page, live_server):
    page.goto(f"{live_server}/#/play")
    page.fill("#qp-name", "Waiter")
    page.select_option("#qp-bot-fill", "")
    page.fill("#qp-wait", "120")
    page.click("#qp-start")
    expect(page.locator("#qp-cancel")).to_be_visible()
    expect(page.locator("#qp-start")).to_be_disabled()
    page.click("#qp-cancel")
    expect(page.locator("#qp-ended")).to_have_text("You left the queue.", timeout=5_000)  # not the long poll's 25 s
    expect(page.locator("#qp-start")).to_be_enabled()
    page.click("#qp-start")  # a new ticket: the cancelled one is no ticket_exists
    expect(page.locator("#qp-cancel")).to_be_visible()
    assert page.locator("#quick-message").inner_text() == ""
    page.click("#qp-cancel")
    expect(page.locator("#qp-ended")).to_be_visible(timeout=5_000)


def test_a_game_made_in_the_lobby_or_joined_by_invite_is_in_your_games_and_an_open_one_can_be_returned_to(
        browser, live_server):
    creator = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    game_id = create_in_lobby(creator, live_server)  # against a bot: it starts at once
    creator.goto(f"{live_server}/#/me")
    expect(creator.locator("#my-active")).to_contain_text("Tester")
    creator.goto(f"{live_server}/")
    creator.select_option("[data-seat='1']", "open")
    creator.click("#create")
    expect(creator.locator("#hand, #status").first).to_be_visible()
    opened = creator.url.rsplit("/", 1)[1]
    assert opened != game_id
    creator.goto(f"{live_server}/#/me")
    creator.click(f"#my-open a[href='#/games/{opened}']")
    expect(creator.locator("#status")).to_contain_text("Waiting for players")
    friend = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    friend.goto(f"{live_server}/#/join/{opened}/1")
    friend.fill("#name", "Friend")
    friend.click("button[type=submit]")
    expect(friend.locator("#hand")).to_be_visible()
    friend.goto(f"{live_server}/#/me")
    expect(friend.locator("#my-active")).to_contain_text("Friend")
    creator.context.close()
    friend.context.close()


def test_the_account_panel_renames_keys_a_device_signs_others_out_downloads_and_deletes(page, live_server):
    """Issue 63, 7: what a person does with their account, from the page alone."""
    made = requests.post(f"{live_server}/players", json={"name": "Amina"}).json()
    me = {"Authorization": f"Bearer {made['token']}"}
    page.goto(f"{live_server}/#/me")
    page.fill("#player-key", made["token"])
    page.click("#use-key button[type=submit]")
    expect(page.locator("#account")).to_be_visible(timeout=10_000)
    page.click("#make-device-key")
    expect(page.locator("#device-key")).to_have_value(re.compile(r"^rply\."))
    other = {"Authorization": f"Bearer {page.input_value('#device-key')}"}
    assert requests.get(f"{live_server}/players/me", headers=other).status_code == 200
    page.fill("#new-name", "Amina B.")
    page.click("#rename button[type=submit]")
    expect(page.locator("#account-said")).to_contain_text("Amina B.")
    assert requests.get(f"{live_server}/players/me", headers=me).json()["name"] == "Amina B."
    page.click("#sign-out-others")
    expect(page.locator("#account-said")).to_contain_text("signed out")
    assert requests.get(f"{live_server}/players/me", headers=other).status_code == 401
    with page.expect_download() as download:
        page.click("#download-data")
    exported = download.value.path().read_text()
    assert '"name": "Amina B."' in exported and made["token"] not in exported
    page.screenshot(path=SCREENSHOTS / "account.png", full_page=True)
    page.on("dialog", lambda dialog: dialog.accept())
    page.click("#delete-account")
    page.wait_for_url(re.compile(r"#/$"))
    assert requests.get(f"{live_server}/players/me", headers=me).status_code == 401
    assert page.evaluate("() => localStorage.getItem('ronda:player')") is None


def test_a_seat_resigns_from_the_table_after_saying_yes(page, live_server):
    game, tokens = two_humans(live_server)
    sit_at(page, live_server, game["id"], 0, tokens[0])
    expect(page.locator("#resign")).to_be_visible()
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#resign")
    assert requests.get(f"{live_server}/games/{game['id']}").json()["status"] == "active"
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#resign")
    # Before its first move, a resignation calls the game off.
    expect(page.locator("main")).to_contain_text("Seat 1 left before its first move", timeout=10_000)
    over = requests.get(f"{live_server}/games/{game['id']}").json()
    assert over["status"] == "finished" and over["outcome"] == {"reason": "aborted", "seat": 0}
    expect(page.locator("#resign")).to_have_count(0)
