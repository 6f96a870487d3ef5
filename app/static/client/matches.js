// Bot-only matches: start one, follow its progress, read the standings, replay any of its games.
import { errorText, eventsAfter, get, post } from "./api.js";
import { cardName, cardRow, tableParts } from "./cards.js";
import { h, show } from "./dom.js";
import { t } from "./i18n.js";
import { campName, describe, seatName } from "./words.js";

const percent = (x) => x === null ? "–" : `${(100 * x).toFixed(1)}%`;

export async function matchesPage() {
  const [presets, levels, registered, ladder] = await Promise.all([
    get("/rules/presets"), get("/bots/levels"), get("/bots?page=1&page_size=100"), get("/ratings")]);
  const message = h("p", { class: "error", role: "alert" });
  const entrants = h("div", { class: "seats" });
  const botSelect = (index, chosen) => h("label", {}, t("match.entrant", { n: index }), h("select", { name: "bot" },
    levels.map(({ bot }) => h("option", { value: bot, selected: bot === chosen }, bot)),
    registered.map((bot) => h("option", { value: bot.entrant }, t("match.registered", { name: bot.name })))));
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

  show(h("section", { class: "panel" }, h("h1", {}, t("nav.matches")),
    h("p", {}, t("match.intro")),
    h("form", { id: "new-match", onsubmit: start },
      h("label", {}, t("form.rules"), preset), entrants,
      h("p", {}, h("button", { type: "button", class: "small", onclick: () => {
        const count = entrants.children.length;
        if (count < 4) entrants.append(botSelect(count, "greedy"));
      } }, t("match.add"))),
      h("label", {}, t("boards.games"), games),
      h("button", { type: "submit", id: "start-match" }, t("match.start")), message)),
  h("section", { class: "panel" }, h("h2", {}, t("match.ladder")),
    h("p", { class: "muted" }, t("match.ladder_says")),
    h("div", { class: "scroll" }, h("table", { id: "ladder" },
      h("thead", {}, h("tr", {}, [t("match.bot"), t("boards.rating"), t("boards.games"), t("match.wins"), t("match.losses")].map((title) => h("th", {}, title)))),
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
        : ` · ${t("match.forfeited", { n: match.forfeited_by, bot: nameOf(match.bots[match.forfeited_by]) })}`;
      show(h("section", { class: "panel" },
        h("h1", {}, t("match.title", { bots: match.bots.map(nameOf).join(` ${t("match.vs")} `) })),
        h("p", { id: "match-progress" }, `${match.rules.preset} · ${t("match.progress", { done: match.games_done, total: match.games_total })}`
          + ` · ${t(`status.${match.status}`)}${forfeit}`),
        h("progress", { max: match.games_total, value: match.games_done, "aria-label": t("match.played") }),
        h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": t("match.standings") }, h("table", { id: "standings" },
          h("thead", {}, h("tr", {}, [t("match.entrant_column"), t("match.bot"), t("match.wins"), t("match.win_rate"), t("match.interval"),
            t("match.mean_points"), t("match.ms_a_move")].map((title) => h("th", {}, title)))),
          h("tbody", {}, match.entrants.map((e) => h("tr", {},
            h("td", {}, e.entrant), h("td", {}, nameOf(e.bot)), h("td", {}, e.wins), h("td", {}, percent(e.win_rate)),
            h("td", {}, `${percent(e.win_rate_low)} – ${percent(e.win_rate_high)}`),
            h("td", {}, e.mean_points?.toFixed(1) ?? "–"), h("td", {}, e.mean_ms_per_move?.toFixed(2) ?? "–")))))),
        h("p", { class: "muted" }, match.seating),
        h("h2", {}, t("boards.games")),
        h("ul", { class: "games", id: "match-games" }, games.map((game) => h("li", {},
          h("span", {}, `${game.seats.map((s) => s.name).join(` ${t("match.vs")} `)}: ${game.scores.join(" – ")}`),
          h("a", { class: "button small", href: `#/replay/${game.id}` }, t("replay.replay")))))));
      if (match.status === "finished") return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })().catch((error) => {
    if (!stopped) show(h("section", { class: "panel" }, h("p", { class: "error", role: "alert" }, errorText(error))));
  });
  return () => { stopped = true; };
}

// The scores after each event, as the events give them: a round's end states them, each score
// event adds its points.
function steps(events, camps) {
  let scores = Array(camps).fill(0);
  return events.map((event) => {
    if (event.type === "score") scores = scores.map((n, camp) => camp === event.camp ? n + event.points : n);
    if (event.scores) scores = [...event.scores];
    return { event, scores };
  });
}

// A finished game step by step: by event, by move (a card played, a declaration) or by round,
// with the table and every hand at that step (the server plays the game over: replayGame).
export async function replayPage(gameId) {
  const game = await get(`/games/${gameId}`);
  const events = await eventsAfter(gameId); // a replay steps through the whole game
  const frames = game.status === "finished" ? await get(`/games/${gameId}/replay`).catch(() => []) : [];
  const camps = new Set(game.camps).size;
  const replay = steps(events, camps);
  let analysis = await get(`/games/${gameId}/analysis`).catch(() => null);
  const moves = replay.map((step, index) => ["play", "declaration", "pass"].includes(step.event.type) ? index : -1).filter((i) => i >= 0);
  const rounds = replay.map((step, index) => step.event.type === "round_start" ? index : -1).filter((i) => i >= 0);
  let at = 0;
  const slider = h("input", { type: "range", min: 0, max: replay.length - 1, value: 0, id: "step", "aria-label": t("replay.slider") });

  // The table after the action an event belongs to (a frame follows each action, its id its last event's):
  // a step that names a move shows the move made.
  const frameAt = (eventId) => frames.find((frame) => frame.event_id >= eventId) ?? frames.at(-1);

  function tableAt(step) {
    const frame = frameAt(step.event.id);
    if (!frame) return h("p", { class: "muted" }, t("replay.not_over"));
    return h("div", {},
      h("section", { class: "table" }, tableParts(frame)),
      h("div", { class: "replay-hands", id: "replay-hands" }, game.seats.map((seat) => h("div", { class: "seat", "data-seat": seat.seat },
        h("b", {}, seatName(game, seat.seat)),
        frame.hands[seat.seat].length ? cardRow(frame.hands[seat.seat]) : h("span", { class: "muted" }, t("replay.no_card"))))));
  }

  // The analysis's decision a step shows: the seat's first move after the log's `event_id`.
  const decisionAt = (step) => analysis?.status === "done" ? analysis.decisions.find((d) => d.seat === step.event.seat
    && events.find((e) => e.id > d.event_id && ["play", "declaration", "pass"].includes(e.type) && e.seat === d.seat)?.id === step.event.id) : null;
  const actionName = (action) => action.type === "play" ? cardName(action.card) : t(action.type === "declare" ? "review.declare" : "review.pass");
  const points = (x) => (x > 0 ? "+" : "") + x.toFixed(1);

  function weighed(step) {
    const decision = decisionAt(step);
    if (!decision) return null;
    const chosen = decision.options.find((o) => o.action.type === decision.chosen.type && o.action.card === decision.chosen.card);
    const best = decision.options.find((o) => o.action.type === decision.best.type && o.action.card === decision.best.card);
    return h("p", { id: "decision", class: `mark-${decision.mark}` }, h("b", {}, t(`mark.${decision.mark}`)), " ",
      t("review.decision", { chosen: actionName(decision.chosen), value: points(chosen.value), all: points(chosen.all_cards_value) }),
      decision.mark === "best" ? null : ` ${t("review.best", { best: actionName(decision.best), value: points(best.value) })}`);
  }

  // Each player's accuracy once the analysis is done; else the button that asks for it, or its progress.
  function review() {
    if (!game.seed) return null; // a game still being played has no review
    if (!analysis) return h("p", { id: "review" }, h("button", { id: "review-game", onclick: ask }, t("review.ask")));
    if (analysis.status === "failed") return h("p", { id: "review", class: "error" }, t("review.failed", { why: analysis.error }));
    if (analysis.status !== "done") {
      return h("p", { id: "review", role: "status" }, t("review.running", { done: analysis.progress.decisions_done, total: analysis.progress.decisions_total ?? "…" }));
    }
    return h("ul", { id: "review", class: "accuracy" }, analysis.seats.map((seat) => h("li", { "data-seat": seat.seat },
      t("review.accuracy", { who: seatName(game, seat.seat), accuracy: seat.accuracy.toFixed(1), loss: seat.mean_loss.toFixed(2) }))));
  }
  async function ask() {
    try {
      analysis = await post(`/games/${gameId}/analysis`);
    } catch (error) {
      reviewed.replaceChildren(h("p", { class: "error" }, errorText(error)));
      return;
    }
    follow();
  }
  async function follow() {
    render();
    while (analysis && ["pending", "running"].includes(analysis.status)) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      analysis = await get(`/games/${gameId}/analysis`).catch(() => analysis);
      render();
    }
  }

  function render() {
    const step = replay[at];
    slider.value = at;
    reviewed.replaceChildren(review() ?? "");
    board.replaceChildren(
      h("p", { id: "step-label", role: "status" }, `${t("replay.step", { n: at + 1, of: replay.length })} `, h("b", {}, describe(step.event, game))),
      weighed(step),
      h("div", { class: "scores" }, [...Array(camps).keys()].map((camp) => h("div", { class: "camp" },
        h("span", { class: "who" }, campName(game, camp)), h("span", { class: "points" }, step.scores[camp])))),
      tableAt(step),
      h("ol", { class: "log", start: Math.max(1, at - 7), tabindex: 0, "aria-label": t("replay.last_steps") },
        replay.slice(Math.max(0, at - 8), at + 1).map((s) => h("li", {}, describe(s.event, game)))));
  }
  const go = (to) => { at = Math.max(0, Math.min(replay.length - 1, to)); render(); };
  const next = (marks) => marks.find((index) => index > at) ?? replay.length - 1;
  const previous = (marks) => marks.findLast((index) => index < at) ?? 0;
  slider.addEventListener("input", () => go(Number(slider.value)));
  const board = h("div", { id: "replay" });
  const reviewed = h("div", { id: "review-panel" });
  const button = (label, id, onclick) => h("button", { onclick, id, "aria-label": label, title: label }, label);
  show(h("section", { class: "panel" },
    h("h1", {}, t("replay.title", { seats: game.seats.map((s) => seatName(game, s.seat)).join(` ${t("match.vs")} `) })),
    h("p", { class: "muted" }, `${game.preset} · ${t(`status.${game.status}`)}${game.seed ? ` · ${t("replay.seed", { seed: game.seed })}` : ""}`),
    h("div", { class: "controls" },
      button(t("replay.first"), "first", () => go(0)),
      button(t("replay.previous_round"), "previous-round", () => go(previous(rounds))),
      button(t("replay.previous_move"), "previous-move", () => go(previous(moves))),
      button(t("replay.previous"), "previous", () => go(at - 1)),
      button(t("replay.next"), "next", () => go(at + 1)),
      button(t("replay.next_move"), "next-move", () => go(next(moves))),
      button(t("replay.next_round"), "next-round", () => go(next(rounds))),
      button(t("replay.last"), "last", () => go(replay.length - 1)), slider),
    reviewed, board));
  follow();
}
