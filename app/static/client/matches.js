// Bot-only matches: start one, follow its progress, read the standings, replay any of its games.
import { errorText, eventsAfter, get, post } from "./api.js";
import { cardRow } from "./cards.js";
import { h, show } from "./dom.js";
import { campName, describe } from "./words.js";

const percent = (x) => x === null ? "–" : `${(100 * x).toFixed(1)}%`;

export async function matchesPage() {
  const [presets, levels, registered, ladder] = await Promise.all([
    get("/rules/presets"), get("/bots/levels"), get("/bots?page=1&page_size=100"), get("/ratings")]);
  const message = h("p", { class: "error", role: "alert" });
  const entrants = h("div", { class: "seats" });
  const botSelect = (index, chosen) => h("label", {}, `Entrant ${index}`, h("select", { name: "bot" },
    levels.map(({ bot }) => h("option", { value: bot, selected: bot === chosen }, bot)),
    registered.map((bot) => h("option", { value: bot.entrant }, `${bot.name} (registered bot)`))));
  entrants.append(botSelect(0, "greedy"), botSelect(1, "random"));
  const games = h("input", { id: "games", type: "number", min: 1, max: 1000, value: 20 });
  const preset = h("select", { id: "match-preset" }, presets.map((p) => h("option", { value: p.name }, p.name)));

  async function start(event) {
    event.preventDefault();
    const bots = [...entrants.querySelectorAll("select")].map((select) => select.value);
    try {
      const match = await post("/matches", { bots, games: Number(games.value), rules: { preset: preset.value } });
      location.hash = `#/matches/${match.id}`;
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  show(h("section", { class: "panel" }, h("h1", {}, "Bot matches"),
    h("p", {}, "Bots play each other on the workers; the seats rotate and every deck is dealt once per rotation, ",
      "so luck evens out. Win rates come with their 95% Wilson interval."),
    h("form", { id: "new-match", onsubmit: start },
      h("label", {}, "Rules", preset), entrants,
      h("p", {}, h("button", { type: "button", class: "small", onclick: () => {
        const count = entrants.children.length;
        if (count < 4) entrants.append(botSelect(count, "greedy"));
      } }, "Add an entrant")),
      h("label", {}, "Games", games),
      h("button", { type: "submit", id: "start-match" }, "Start the match"), message)),
  h("section", { class: "panel" }, h("h2", {}, "Rating ladder (Elo)"),
    h("p", { class: "muted" }, "Every match game between two different bots counts; everyone starts at 1500."),
    h("div", { class: "scroll" }, h("table", { id: "ladder" },
      h("thead", {}, h("tr", {}, ["Bot", "Rating", "Games", "Wins", "Losses"].map((title) => h("th", {}, title)))),
      h("tbody", {}, ladder.map((row) => h("tr", {}, h("td", {}, nameOf(row.entrant)), h("td", {}, row.rating.toFixed(0)),
        h("td", {}, row.games), h("td", {}, row.wins), h("td", {}, row.losses))))))));

  function nameOf(entrant) {
    return registered.find((bot) => bot.entrant === entrant)?.name ?? entrant;
  }
}

export function matchPage(matchId) {
  let stopped = false;
  (async () => {
    const registered = await get("/bots?page=1&page_size=100");
    const nameOf = (bot) => registered.find((entry) => entry.entrant === bot)?.name ?? bot;
    while (!stopped) {
      const match = await get(`/matches/${matchId}`);
      const games = await get(`/matches/${matchId}/games?page=1&page_size=100`);
      if (stopped) return;
      const forfeit = match.forfeited_by === null ? ""
        : ` · forfeited by entrant ${match.forfeited_by} (${nameOf(match.bots[match.forfeited_by])})`;
      show(h("section", { class: "panel" },
        h("h1", {}, `Match: ${match.bots.map(nameOf).join(" vs ")}`),
        h("p", { id: "match-progress" },
          `${match.rules.preset} · ${match.games_done} of ${match.games_total} games · ${match.status}${forfeit}`),
        h("progress", { max: match.games_total, value: match.games_done }),
        h("div", { class: "scroll" }, h("table", { id: "standings" },
          h("thead", {}, h("tr", {}, ["Entrant", "Bot", "Wins", "Win rate", "95% interval", "Mean points", "ms a move"]
            .map((title) => h("th", {}, title)))),
          h("tbody", {}, match.entrants.map((e) => h("tr", {},
            h("td", {}, e.entrant), h("td", {}, nameOf(e.bot)), h("td", {}, e.wins), h("td", {}, percent(e.win_rate)),
            h("td", {}, `${percent(e.win_rate_low)} – ${percent(e.win_rate_high)}`),
            h("td", {}, e.mean_points?.toFixed(1) ?? "–"), h("td", {}, e.mean_ms_per_move?.toFixed(2) ?? "–")))))),
        h("p", { class: "muted" }, match.seating),
        h("h2", {}, "Games"),
        h("ul", { class: "games", id: "match-games" }, games.map((game) => h("li", {},
          h("span", {}, `${game.seats.map((s) => s.name).join(" vs ")}: ${game.scores.join(" – ")}`),
          h("a", { class: "button small", href: `#/replay/${game.id}` }, "Replay"))))));
      if (match.status === "finished") return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })().catch((error) => {
    if (!stopped) show(h("section", { class: "panel" }, h("p", { class: "error", role: "alert" }, errorText(error))));
  });
  return () => { stopped = true; };
}

// The scores after each event, as the events give them: a round's end states them, each score
// event adds its points. The client keeps no rules of its own: the table is shown as each deal
// dealt it (the log says what happened to it since).
function steps(events, camps) {
  let scores = Array(camps).fill(0), dealt = [];
  return events.map((event) => {
    if (event.type === "deal") dealt = event.table;
    if (event.type === "score") scores = scores.map((n, camp) => camp === event.camp ? n + event.points : n);
    if (event.scores) scores = [...event.scores];
    return { event, scores, dealt };
  });
}

export async function replayPage(gameId) {
  const game = await get(`/games/${gameId}`);
  const events = await eventsAfter(gameId); // a replay steps through the whole game
  const camps = new Set(game.camps).size;
  const replay = steps(events, camps);
  let at = 0;
  const slider = h("input", { type: "range", min: 0, max: replay.length - 1, value: 0, id: "step" });

  function render() {
    const step = replay[at];
    slider.value = at;
    board.replaceChildren(
      h("p", { id: "step-label" }, `Step ${at + 1} of ${replay.length}: `, h("b", {}, describe(step.event, game))),
      h("div", { class: "scores" }, [...Array(camps).keys()].map((camp) => h("div", { class: "camp" },
        h("span", { class: "who" }, campName(game, camp)), h("span", { class: "points" }, step.scores[camp])))),
      h("h2", {}, "Table as this deal dealt it"),
      step.dealt.length ? cardRow(step.dealt) : h("p", { class: "muted" }, "empty"),
      h("ol", { class: "log", start: Math.max(1, at - 7) }, replay.slice(Math.max(0, at - 8), at + 1)
        .map((s) => h("li", {}, describe(s.event, game)))));
  }
  const go = (to) => { at = Math.max(0, Math.min(replay.length - 1, to)); render(); };
  slider.addEventListener("input", () => go(Number(slider.value)));
  const board = h("div", { id: "replay" });
  show(h("section", { class: "panel" },
    h("h1", {}, `Replay: ${game.seats.map((s) => s.name).join(" vs ")}`),
    h("p", { class: "muted" }, `${game.preset} · ${game.status}${game.seed ? ` · seed ${game.seed}` : ""}`),
    h("div", { class: "controls" },
      h("button", { onclick: () => go(0), "aria-label": "first" }, "◀◀"),
      h("button", { onclick: () => go(at - 1), id: "previous", "aria-label": "previous" }, "◀"),
      h("button", { onclick: () => go(at + 1), id: "next", "aria-label": "next" }, "▶"),
      h("button", { onclick: () => go(replay.length - 1), id: "last", "aria-label": "last" }, "▶▶"), slider),
    board));
  render();
}
