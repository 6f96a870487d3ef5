// Quick play (a ticket, waited for), your games across devices, and the leaderboards.
import { call, errorText, get, post } from "./api.js";
import { h, show } from "./dom.js";
import { ensurePlayer, playerName, savedPlayer, saveSeat, usePlayerKey } from "./session.js";

const WAIT_SECONDS = 25;

export async function quickPlay() {
  const [presets, levels] = await Promise.all([get("/rules/presets"), get("/bots/levels")]);
  const player = savedPlayer();
  const message = h("p", { class: "error", role: "alert", id: "quick-message" });
  const name = h("input", { id: "qp-name", maxlength: 40, value: player?.name || playerName(), disabled: !!player });
  const preset = h("select", { id: "qp-rules" }, presets.map((p) => h("option", { value: p.name }, `${p.name}: ${p.summary}`)));
  const players = h("select", { id: "qp-players" });
  const rated = h("input", { id: "qp-rated", type: "checkbox" });
  const fill = h("select", { id: "qp-bot-fill" }, h("option", { value: "" }, "no bot: keep waiting until the time is up"),
    levels.map((level) => h("option", { value: level.level, selected: level.bot === "greedy" }, `a level ${level.level} bot (${level.bot})`)));
  const wait = h("input", { id: "qp-wait", type: "number", min: 1, max: 600, value: 30 });
  const waiting = h("section", { class: "panel", id: "waiting", hidden: true, "aria-live": "polite" });
  const startButton = h("button", { type: "submit", id: "qp-start" }, "Quick play");
  let ticket = null;
  let stopped = false;
  let left = false; // cancelled here: a long poll still under way answers for nobody

  function refreshPlayers() {
    const counts = presets.find((p) => p.name === preset.value).players.filter((n) => n === 2 || n === 4);
    players.replaceChildren(...counts.map((n) => h("option", { value: n }, `${n} players`)));
  }
  preset.addEventListener("change", refreshPlayers);
  refreshPlayers();

  function showWaiting() {
    waiting.hidden = false;
    waiting.replaceChildren(h("h2", {}, "Looking for players…"),
      h("p", {}, `${ticket.rules.preset}, ${ticket.players} players${ticket.rated ? ", rated" : ""}: players within `,
        h("b", { id: "qp-window" }, `${Math.round(ticket.window)}`), ` points of your ${Math.round(ticket.rating)}`,
        ` (wider the longer you wait); ${ticket.bot_fill ? `a ${ticket.bot_fill} bot` : "nobody"} at `,
        new Date(ticket.expires_at * 1000).toLocaleTimeString(), "."),
      h("button", { id: "qp-cancel", onclick: cancel }, "Cancel"));
  }

  function ended() {
    startButton.disabled = false;
    waiting.replaceChildren(h("p", { id: "qp-ended" }, ticket.status === "expired"
      ? "Nobody came in time. Try again, or let a bot fill the seats." : "You left the queue."));
  }

  async function follow(me) {
    while (!stopped && !left && ticket.status === "waiting") {
      showWaiting();
      const next = await get(`/matchmaking/tickets/${ticket.id}?wait_seconds=${WAIT_SECONDS}`, { token: me.token });
      if (left) return;
      ticket = next;
    }
    if (stopped || left) return;
    if (ticket.status === "matched") {
      saveSeat(ticket.game_id, ticket.seat, me.token);
      location.hash = `#/games/${ticket.game_id}`;
    } else {
      ended();
    }
  }

  // At once: the queue is left when the server says so, not when the long poll next answers.
  async function cancel(event) {
    const button = event?.target;
    if (button) button.disabled = true;
    const me = savedPlayer();
    try {
      const cancelled = await call("DELETE", `/matchmaking/tickets/${ticket.id}`, { token: me.token });
      if (cancelled.status !== "matched") {
        left = true;
        ticket = cancelled;
        ended();
      }
    } catch (error) {
      if (button) button.disabled = false;
      if (error.body?.status_now !== "matched") message.textContent = errorText(error); // else: the match stands
    }
  }

  async function start(event) {
    event.preventDefault();
    message.textContent = "";
    startButton.disabled = true; // one ticket at a time: a second press would be a ticket_exists
    left = false;
    try {
      const me = await ensurePlayer(name.value.trim());
      ticket = await post("/matchmaking/tickets", {
        rules: { preset: preset.value }, players: Number(players.value), rated: rated.checked,
        max_wait_seconds: Number(wait.value) || 30, bot_fill: fill.value ? Number(fill.value) : null,
      }, { token: me.token });
      await follow(me);
    } catch (error) {
      startButton.disabled = false;
      message.textContent = errorText(error);
    }
  }

  show(h("section", { class: "panel" }, h("h1", {}, "Quick play"),
    h("p", {}, "Meet players of about your rating in a new game; a bot can take the seats nobody takes in time."),
    h("form", { id: "quick-play", onsubmit: start },
      h("label", {}, "Your name", name),
      h("label", {}, "Rules", preset),
      h("label", {}, "Players", players),
      h("label", { class: "check" }, rated, " Rated (counts on the leaderboard)"),
      h("label", {}, "If nobody comes", fill),
      h("label", {}, "Wait at most (seconds)", wait),
      startButton,
      message)), waiting);
  return () => {
    stopped = true;
    if (ticket?.status === "waiting") cancel().catch(() => {});
  };
}

export async function myGames() {
  const message = h("p", { class: "error", role: "alert" });
  const key = h("input", { id: "player-key", autocomplete: "off", "aria-label": "Player key" });
  const useKey = h("form", { id: "use-key", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await usePlayerKey(key.value.trim());
      await myGames();
    } catch (error) {
      message.textContent = errorText(error);
    }
  } }, h("label", {}, "Continue here as the player of this key", key), h("button", { type: "submit" }, "Use the key"), message);
  const me = savedPlayer();
  if (!me) {
    show(h("section", { class: "panel" }, h("h1", {}, "Your games"),
      h("p", {}, "Play with ", h("a", { href: "#/play" }, "Quick play"), " to become a player, or use your player key from another device."),
      useKey));
    return;
  }
  const [open, active, finished, record] = await Promise.all([
    get("/players/me/games?status=open&page_size=50", { token: me.token }),
    get("/players/me/games?status=active&page_size=50", { token: me.token }),
    get("/players/me/games?status=finished&page_size=20", { token: me.token }),
    get("/players/me", { token: me.token })]);
  const row = (game) => h("li", {}, h("a", { href: `#/games/${game.id}` },
    `${game.preset}: ${game.seats.map((s) => s.name || "open").join(" · ")}`),
    game.your_turn ? h("b", { class: "your-turn" }, " Your turn") : null,
    game.status === "finished" ? ` (${game.scores.join(" – ")})` : null);
  show(h("section", { class: "panel" }, h("h1", {}, `${record.name}'s games`),
    h("p", { class: "muted" }, `${record.games} finished, ${record.wins} won`,
      record.ratings.map((r) => ` · ${r.pool}: ${Math.round(r.rating)}${r.provisional ? "?" : ""}`).join("")),
    open.length ? [h("h2", {}, "Waiting for players"), h("ul", { class: "games", id: "my-open" }, open.map(row))] : null,
    h("h2", {}, "In play"), h("ul", { class: "games", id: "my-active" },
      active.length ? active.map(row) : h("li", { class: "muted" }, "None: try Quick play.")),
    h("h2", {}, "Finished"), h("ul", { class: "games", id: "my-finished" },
      finished.length ? finished.map(row) : h("li", { class: "muted" }, "None yet."))),
  h("section", { class: "panel" }, h("h2", {}, "On another device"),
    h("p", {}, "Your player key acts for all your games: keep it secret, paste it on your other device."),
    h("details", {}, h("summary", {}, "Show your player key"),
      h("input", { id: "my-key", readonly: true, value: me.token, "aria-label": "Your player key" })),
    useKey));
}

export async function leaderboards(pool) {
  const pools = await get("/leaderboards");
  const chosen = pool || "classic-2";
  const rows = await get(`/leaderboards/${chosen}?page_size=50`);
  const picker = h("select", { id: "pool", "aria-label": "Pool", onchange: (event) => { location.hash = `#/leaderboards/${event.target.value}`; } },
    pools.map((p) => h("option", { value: p.name, selected: p.name === chosen }, `${p.preset}, ${p.players} players`)));
  show(h("section", { class: "panel" }, h("h1", {}, "Leaderboards"), h("label", {}, "Pool ", picker),
    h("table", { id: "leaderboard" }, h("thead", {}, h("tr", {}, ["#", "Who", "Rating", "Games", "Won"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, h("td", {}, r.rank), h("td", {}, r.name),
        h("td", {}, `${Math.round(r.rating)}${r.provisional ? " (provisional)" : ""}`), h("td", {}, r.games), h("td", {}, r.wins)))
        : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No rated game in this pool yet."))))));
}
