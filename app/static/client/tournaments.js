// Tournaments: start one (bots, people, or both), enter an open one as a player, follow the
// standings, the crosstable and the rounds live (the tournament's stream, resumable).
import { errorText, get, post } from "./api.js";
import { h, show } from "./dom.js";
import { ensurePlayer, playerName, savedPlayer } from "./session.js";
import { follow } from "./sse.js";

const REFRESH_MS = 3000; // a read also moves the tournament on when no worker's sweep does
const FORMATS = { round_robin: "Round robin", swiss: "Swiss", arena: "Arena" };
const OVER = ["finished", "cancelled"];

export async function tournamentsPage() {
  const [presets, levels, listed] = await Promise.all([
    get("/rules/presets"), get("/bots/levels"), get("/tournaments?page=1&page_size=30")]);
  const message = h("p", { class: "error", role: "alert" });
  const format = h("select", { id: "t-format" }, Object.entries(FORMATS).map(([value, name]) => h("option", { value }, name)));
  const preset = h("select", { id: "t-preset" }, presets.filter((p) => p.players.includes(2))
    .map((p) => h("option", { value: p.name }, p.name)));
  const bots = h("div", { class: "seats", id: "t-bots" });
  const botChoice = (chosen) => h("label", {}, `Bot ${bots.children.length + 1}`, h("select", { name: "bot" },
    h("option", { value: "" }, "none"), levels.map(({ bot }) => h("option", { value: bot, selected: bot === chosen }, bot))));
  bots.append(botChoice("greedy"), botChoice("random"));
  const opens = h("input", { id: "t-opens", type: "number", min: 0, max: 1440, value: 2, "aria-label": "Open for people (minutes)" });
  const games = h("input", { id: "t-games", type: "number", min: 1, max: 100, value: 2 });
  const rounds = h("input", { id: "t-rounds", type: "number", min: 1, max: 64, placeholder: "5" });
  const minutes = h("input", { id: "t-minutes", type: "number", min: 1, max: 1440, value: 10 });
  const turn = h("input", { id: "t-turn", type: "number", min: 10, max: 86400, value: 60 });
  const size = h("select", { id: "t-size" }, [2, 3, 4].map((n) => h("option", { value: n }, n === 2 ? "2" : `${n} (Swiss, arena)`)));

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

  show(h("section", { class: "panel" }, h("h1", {}, "Tournaments"),
    h("p", {}, "Round robin, Swiss or arena, of bots and people. Open one for a few minutes and people enter it ",
      "from here; each of their games comes to their games list and stream."),
    h("form", { id: "new-tournament", onsubmit: start },
      h("label", {}, "Format", format), h("label", {}, "Rules", preset), bots,
      h("p", {}, h("button", { type: "button", class: "small", onclick: () => bots.append(botChoice("casual")) }, "Add a bot")),
      h("label", {}, "Open for people (minutes, 0: start now)", opens),
      h("label", {}, "Players a table", size), h("label", {}, "Games a table", games), h("label", {}, "Swiss rounds", rounds),
      h("label", {}, "Arena minutes", minutes), h("label", {}, "Seconds a turn (people)", turn),
      h("button", { type: "submit", id: "start-tournament" }, "Create the tournament"), message)),
  h("section", { class: "panel" }, h("h2", {}, "Latest"),
    h("ul", { class: "games", id: "tournaments" }, listed.length ? listed.map((t) => h("li", {},
      h("a", { href: `#/tournaments/${t.id}` }, `${FORMATS[t.format]} · ${t.names.length} entrants · ${t.status}`),
      ` ${t.names.slice(0, 6).join(", ")}${t.names.length > 6 ? "…" : ""}`)) : h("li", { class: "muted" }, "None yet."))));
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

  const name = h("input", { id: "t-name", maxlength: 40, placeholder: "Your name", value: playerName(), "aria-label": "Your name" });

  async function enter() {
    try {
      const me = await ensurePlayer(name.value.trim());
      await post(`/tournaments/${tournamentId}/entrants`, undefined, { token: me.token });
      await refresh();
    } catch (error) {
      fail(error);
    }
  }

  function draw(t) {
    const me = savedPlayer();
    const mine = me ? t.entrants.indexOf(`player:${me.id}`) : -1;
    const when = t.status === "open" ? ` · starts ${new Date(t.starts_at).toLocaleTimeString()}`
      : t.ends_at && t.status === "running" ? ` · pairs until ${new Date(t.ends_at).toLocaleTimeString()}` : "";
    show(h("section", { class: "panel" },
      h("h1", {}, `${FORMATS[t.format]}: ${t.names.length} entrants`),
      h("p", { id: "t-status" }, `${t.rules.preset} · ${t.status}${when} · ${t.games_per_pairing} game(s) a table of `
        + `${t.players_per_table}${t.teams ? " in partnerships" : ""}`
        + (t.rounds_total ? ` · round ${t.rounds_played} of ${t.rounds_total}` : ` · ${t.rounds_played} rounds`)
        + (t.rated ? " · rated" : "")),
      t.status === "open" && mine < 0
        ? h("p", {}, me ? null : name, h("button", { type: "button", id: "enter", onclick: enter }, me ? `Enter as ${me.name}` : "Enter"))
        : mine >= 0 ? h("p", { id: "entered" }, "You are in. Your games come to ", h("a", { href: "#/me" }, "Your games"), ".") : null,
      message,
      h("h2", {}, "Standings"),
      h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "Standings" }, h("table", { id: "t-standings" },
        h("thead", {}, h("tr", {}, ["#", "Entrant", "Points", "Games", "Buchholz", "S-B", "Performance"].map((title) => h("th", {}, title)))),
        h("tbody", {}, t.standings.map((row) => h("tr", { class: row.entrant === mine ? "mine" : null },
          h("td", {}, row.rank), h("td", {}, row.name), h("td", {}, row.points), h("td", {}, row.games),
          h("td", {}, row.buchholz), h("td", {}, row.sonneborn_berger),
          h("td", {}, row.performance === null ? "–"
            : `${Math.round(row.performance)} (${Math.round(row.performance_low)}–${Math.round(row.performance_high)})`)))))),
      h("h2", {}, "Crosstable"),
      h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "Crosstable" }, h("table", { id: "t-crosstable" },
        h("thead", {}, h("tr", {}, h("th", {}, ""), t.names.map((name, i) => h("th", { title: name }, `${i + 1}`)))),
        h("tbody", {}, t.crosstable.map((row) => {
          const cells = Object.fromEntries(row.against.map((cell) => [cell.opponent, `${cell.wins}/${cell.games}`]));
          return h("tr", {}, h("th", {}, `${row.entrant + 1}. ${row.name}`),
            t.names.map((_, i) => h("td", {}, i === row.entrant ? "×" : cells[i] ?? "")));
        })))),
      h("h2", {}, "Rounds"),
      h("ol", { class: "games", id: "t-rounds", start: 1 }, t.rounds.slice().reverse().map((round) => h("li", { value: round.round + 1 },
        h("span", {}, `Round ${round.round + 1}: `),
        round.pairings.map((p) => h("span", { class: "pairing" }, pairingText(t, p), " ", pairingLink(p), " ")))))));
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

function pairingText(t, p) {
  if (p.seats.length === 1) return `${t.names[p.seats[0]]} (bye)`;
  const wins = p.result ? p.result.wins : p.wins;
  const score = wins ? ` ${wins.join("–")}${p.result ? "" : "…"}` : " …";
  return `${p.seats.map((e) => t.names[e]).join(" vs ")}${score}`;
}

function pairingLink(p) {
  if (p.match_id) return h("a", { class: "button small", href: `#/matches/${p.match_id}` }, "Match");
  if (p.games) return h("a", { class: "button small", href: `#/games/${p.games.at(-1)}` }, p.result ? "Last game" : "Game");
  return null;
}
