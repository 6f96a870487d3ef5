// Tournaments: start one (bots, people, or both), enter an open one as a player, follow the
// standings, the crosstable and the rounds live (the tournament's stream, resumable).
import { errorText, get, post } from "./api.js";
import { h, show } from "./dom.js";
import { list, t, timeOfDay } from "./i18n.js";
import { ensurePlayer, playerName, savedPlayer } from "./session.js";
import { follow } from "./sse.js";

const REFRESH_MS = 3000; // a read also moves the tournament on when no worker's sweep does
const FORMATS = ["round_robin", "swiss", "arena"];
const formatName = (format) => t(`tournament.${format}`);
const OVER = ["finished", "cancelled"];

export async function tournamentsPage() {
  const [presets, levels, listed] = await Promise.all([
    get("/rules/presets"), get("/bots/levels"), get("/tournaments?page=1&page_size=30")]);
  const message = h("p", { class: "error", role: "alert" });
  const format = h("select", { id: "t-format" }, FORMATS.map((value) => h("option", { value }, formatName(value))));
  const preset = h("select", { id: "t-preset" }, presets.filter((p) => p.players.includes(2))
    .map((p) => h("option", { value: p.name }, p.name)));
  const bots = h("div", { class: "seats", id: "t-bots" });
  const botChoice = (chosen) => h("label", {}, t("tournament.bot", { n: bots.children.length + 1 }), h("select", { name: "bot" },
    h("option", { value: "" }, t("tournament.no_bot")), levels.map(({ bot }) => h("option", { value: bot, selected: bot === chosen }, bot))));
  bots.append(botChoice("greedy"));  // one at a time: each label numbers the bots already there
  bots.append(botChoice("random"));
  const opens = h("input", { id: "t-opens", type: "number", min: 0, max: 1440, value: 2, "aria-label": t("tournament.opens_short") });
  const games = h("input", { id: "t-games", type: "number", min: 1, max: 100, value: 2 });
  const rounds = h("input", { id: "t-rounds", type: "number", min: 1, max: 64, placeholder: "5" });
  const minutes = h("input", { id: "t-minutes", type: "number", min: 1, max: 1440, value: 10 });
  const turn = h("input", { id: "t-turn", type: "number", min: 10, max: 86400, value: 60 });
  const size = h("select", { id: "t-size" }, [2, 3, 4].map((n) => h("option", { value: n }, n === 2 ? "2" : t("tournament.size_swiss", { n }))));

  async function start(event) {
    event.preventDefault();
    const body = {
      format: format.value, rules: { preset: preset.value }, games_per_pairing: Number(games.value),
      entrants: [...bots.querySelectorAll("select")].map((s) => s.value).filter(Boolean), turn_seconds: Number(turn.value),
      players_per_table: Number(size.value),
    };
    if (opens.value !== "" && Number(opens.value) > 0) body.starts_in_seconds = Math.round(Number(opens.value) * 60);
    if (format.value === "swiss" && rounds.value) body.rounds = Number(rounds.value);
    if (format.value === "arena") body.duration_seconds = Math.round(Number(minutes.value) * 60);
    try {
      const tournament = await post("/tournaments", body);
      location.hash = `#/tournaments/${tournament.id}`;
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  show(h("section", { class: "panel" }, h("h1", {}, t("nav.tournaments")),
    h("p", {}, t("tournament.intro")),
    h("form", { id: "new-tournament", onsubmit: start },
      h("label", {}, t("tournament.format"), format), h("label", {}, t("form.rules"), preset), bots,
      h("p", {}, h("button", { type: "button", class: "small", onclick: () => bots.append(botChoice("casual")) }, t("tournament.add_bot"))),
      h("label", {}, t("tournament.opens"), opens),
      h("label", {}, t("tournament.size"), size), h("label", {}, t("tournament.games"), games), h("label", {}, t("tournament.rounds"), rounds),
      h("label", {}, t("tournament.minutes"), minutes), h("label", {}, t("tournament.turn"), turn),
      h("button", { type: "submit", id: "start-tournament" }, t("tournament.create")), message)),
  h("section", { class: "panel" }, h("h2", {}, t("tournament.latest")),
    h("ul", { class: "games", id: "tournaments" }, listed.length ? listed.map((tour) => h("li", {},
      h("a", { href: `#/tournaments/${tour.id}` }, `${formatName(tour.format)} · ${t("tournament.entrants", { n: tour.names.length })} · ${t(`status.${tour.status}`)}`),
      ` ${list(tour.names.slice(0, 6))}${tour.names.length > 6 ? "…" : ""}`)) : h("li", { class: "muted" }, t("mine.none_finished")))));
}

export function tournamentPage(tournamentId) {
  let stopped = false;
  let stopStream = () => {};
  let timer = null;
  const message = h("p", { class: "error", role: "alert", id: "t-message" });

  async function refresh() {
    const tournament = await get(`/tournaments/${tournamentId}`);
    if (stopped) return;
    draw(tournament);
    clearTimeout(timer);
    if (!OVER.includes(tournament.status)) timer = setTimeout(() => refresh().catch(fail), REFRESH_MS);
  }

  function fail(error) {
    if (!stopped) message.textContent = errorText(error);
  }

  const name = h("input", { id: "t-name", maxlength: 40, placeholder: t("form.your_name"), value: playerName(), "aria-label": t("form.your_name") });

  async function enter() {
    try {
      const me = await ensurePlayer(name.value.trim());
      await post(`/tournaments/${tournamentId}/entrants`, undefined, { token: me.token });
      await refresh();
    } catch (error) {
      fail(error);
    }
  }

  function draw(tour) {
    const me = savedPlayer();
    const mine = me ? tour.entrants.indexOf(`player:${me.id}`) : -1;
    const when = tour.status === "open" ? ` · ${t("tournament.starts", { at: timeOfDay(tour.starts_at) })}`
      : tour.ends_at && tour.status === "running" ? ` · ${t("tournament.pairs_until", { at: timeOfDay(tour.ends_at) })}` : "";
    show(h("section", { class: "panel" },
      h("h1", {}, `${formatName(tour.format)}: ${t("tournament.entrants", { n: tour.names.length })}`),
      h("p", { id: "t-status" }, `${tour.rules.preset} · ${t(`status.${tour.status}`)}${when} · `
        + t(tour.teams ? "tournament.tables_teams" : "tournament.tables", { games: tour.games_per_pairing, size: tour.players_per_table })
        + ` · ${tour.rounds_total ? t("tournament.round_of", { n: tour.rounds_played, of: tour.rounds_total }) : t("tournament.rounds_played", { n: tour.rounds_played })}`
        + (tour.rated ? ` · ${t("quick.rated_short")}` : "")),
      tour.status === "open" && mine < 0
        ? h("p", {}, me ? null : name, h("button", { type: "button", id: "enter", onclick: enter }, me ? t("tournament.enter_as", { name: me.name }) : t("tournament.enter")))
        : mine >= 0 ? h("p", { id: "entered" }, t("tournament.entered"), " ", h("a", { href: "#/me" }, t("nav.mine"))) : null,
      message,
      h("h2", {}, t("match.standings")),
      h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": t("match.standings") }, h("table", { id: "t-standings" },
        h("thead", {}, h("tr", {}, ["#", t("match.entrant_column"), t("tournament.points"), t("boards.games"), "Buchholz", "S-B",
          t("tournament.performance")].map((title) => h("th", {}, title)))),
        h("tbody", {}, tour.standings.map((row) => h("tr", { class: row.entrant === mine ? "mine" : null },
          h("td", {}, row.rank), h("td", {}, row.name), h("td", {}, row.points), h("td", {}, row.games),
          h("td", {}, row.buchholz), h("td", {}, row.sonneborn_berger),
          h("td", {}, row.performance === null ? "–"
            : `${Math.round(row.performance)} (${Math.round(row.performance_low)}–${Math.round(row.performance_high)})`)))))),
      h("h2", {}, t("tournament.crosstable")),
      h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": t("tournament.crosstable") }, h("table", { id: "t-crosstable" },
        h("thead", {}, h("tr", {}, h("th", {}, ""), tour.names.map((name, i) => h("th", { title: name }, `${i + 1}`)))),
        h("tbody", {}, tour.crosstable.map((row) => {
          const cells = Object.fromEntries(row.against.map((cell) => [cell.opponent, `${cell.wins}/${cell.games}`]));
          return h("tr", {}, h("th", {}, `${row.entrant + 1}. ${row.name}`),
            tour.names.map((_, i) => h("td", {}, i === row.entrant ? "×" : cells[i] ?? "")));
        })))),
      h("h2", {}, t("tournament.rounds_title")),
      h("ol", { class: "games", id: "t-rounds", start: 1 }, tour.rounds.slice().reverse().map((round) => h("li", { value: round.round + 1 },
        h("span", {}, `${t("result.round")} ${round.round + 1}: `),
        round.pairings.map((p) => h("span", { class: "pairing" }, pairingText(tour, p), " ", pairingLink(p), " ")))))));
  }

  (async () => {
    await refresh();
    stopStream = follow(`/tournaments/${tournamentId}/stream`, {
      onEvent: () => {},
      onOther: () => refresh().catch(fail),
      endsWith: (kind, data) => kind === "standings" && OVER.includes(data.status),
    });
  })().catch(fail);
  return () => {
    stopped = true;
    clearTimeout(timer);
    stopStream();
  };
}

function pairingText(tour, p) {
  if (p.seats.length === 1) return `${tour.names[p.seats[0]]} ${t("tournament.bye")}`;
  const wins = p.result ? p.result.wins : p.wins;
  const score = wins ? ` ${wins.join("–")}${p.result ? "" : "…"}` : " …";
  return `${p.seats.map((e) => tour.names[e]).join(` ${t("match.vs")} `)}${score}`;
}

function pairingLink(p) {
  if (p.match_id) return h("a", { class: "button small", href: `#/matches/${p.match_id}` }, t("tournament.match"));
  if (p.games) return h("a", { class: "button small", href: `#/games/${p.games.at(-1)}` }, t(p.result ? "tournament.last_game" : "tournament.game"));
  return null;
}
