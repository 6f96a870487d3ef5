// Quick play (a ticket, waited for), your games across devices, and the leaderboards.
import { call, errorText, get, post } from "./api.js";
import { h, show } from "./dom.js";
import { presetSummary, t, timeOfDay } from "./i18n.js";
import { ensurePlayer, forgetPlayer, playerName, renamedPlayer, savedPlayer, saveSeat, usePlayerKey } from "./session.js";

const WAIT_SECONDS = 25;

export async function quickPlay() {
  const [presets, levels] = await Promise.all([get("/rules/presets"), get("/bots/levels")]);
  const player = savedPlayer();
  const message = h("p", { class: "error", role: "alert", id: "quick-message" });
  const name = h("input", { id: "qp-name", maxlength: 40, value: player?.name || playerName(), disabled: !!player });
  const preset = h("select", { id: "qp-rules" }, presets.map((p) => h("option", { value: p.name }, `${p.name}: ${presetSummary(p)}`)));
  const players = h("select", { id: "qp-players" });
  const rated = h("input", { id: "qp-rated", type: "checkbox" });
  const fill = h("select", { id: "qp-bot-fill" }, h("option", { value: "" }, t("quick.no_bot")),
    levels.map((level) => h("option", { value: level.level, selected: level.bot === "greedy" }, t("quick.bot_level", { level: level.level, bot: level.bot }))));
  const wait = h("input", { id: "qp-wait", type: "number", min: 1, max: 600, value: 30 });
  const waiting = h("section", { class: "panel", id: "waiting", hidden: true, "aria-live": "polite" });
  const startButton = h("button", { type: "submit", id: "qp-start" }, t("nav.play"));
  let ticket = null;
  let stopped = false;
  let left = false; // cancelled here: a long poll still under way answers for nobody

  function refreshPlayers() {
    const counts = presets.find((p) => p.name === preset.value).players.filter((n) => n === 2 || n === 4);
    players.replaceChildren(...counts.map((n) => h("option", { value: n }, t("form.n_players", { n }))));
  }
  preset.addEventListener("change", refreshPlayers);
  refreshPlayers();

  function showWaiting() {
    waiting.hidden = false;
    waiting.replaceChildren(h("h2", {}, t("quick.looking")),
      h("p", {}, `${t("game.kind", { preset: ticket.rules.preset, players: ticket.players })}${ticket.rated ? `, ${t("quick.rated_short")}` : ""}: `,
        t("quick.window_before"), " ", h("b", { id: "qp-window" }, `${Math.round(ticket.window)}`), " ",
        t("quick.window_after", { rating: Math.round(ticket.rating),
          fill: ticket.bot_fill ? t("quick.fill_bot", { bot: ticket.bot_fill }) : t("quick.fill_nobody"),
          at: timeOfDay(ticket.expires_at * 1000) })),
      h("button", { id: "qp-cancel", onclick: cancel }, t("quick.cancel")));
  }

  function ended() {
    startButton.disabled = false;
    waiting.replaceChildren(h("p", { id: "qp-ended" }, t(ticket.status === "expired" ? "quick.expired" : "quick.left")));
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

  show(h("section", { class: "panel" }, h("h1", {}, t("nav.play")),
    h("p", {}, t("quick.intro")),
    h("form", { id: "quick-play", onsubmit: start },
      h("label", {}, t("form.your_name"), name),
      h("label", {}, t("form.rules"), preset),
      h("label", {}, t("form.players"), players),
      h("label", { class: "check" }, rated, ` ${t("quick.rated")}`),
      h("label", {}, t("quick.if_nobody"), fill),
      h("label", {}, t("quick.wait"), wait),
      startButton,
      message)), waiting);
  return () => {
    stopped = true;
    if (ticket?.status === "waiting") cancel().catch(() => {});
  };
}

export async function myGames() {
  const message = h("p", { class: "error", role: "alert" });
  const key = h("input", { id: "player-key", autocomplete: "off", "aria-label": t("mine.key") });
  const useKey = h("form", { id: "use-key", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await usePlayerKey(key.value.trim());
      await myGames();
    } catch (error) {
      message.textContent = errorText(error);
    }
  } }, h("label", {}, t("mine.continue_here"), key), h("button", { type: "submit" }, t("mine.use_key")), message);
  const me = savedPlayer();
  if (!me) {
    show(h("section", { class: "panel" }, h("h1", {}, t("nav.mine")),
      h("p", {}, t("mine.become_before"), " ", h("a", { href: "#/play" }, t("nav.play")), " ", t("mine.become_after")),
      useKey));
    return;
  }
  const [open, active, finished, record] = await Promise.all([
    get("/players/me/games?status=open&page_size=50", { token: me.token }),
    get("/players/me/games?status=active&page_size=50", { token: me.token }),
    get("/players/me/games?status=finished&page_size=20", { token: me.token }),
    get("/players/me", { token: me.token })]);
  const row = (game) => h("li", {}, h("a", { href: `#/games/${game.id}` },
    `${game.preset}: ${game.seats.map((s) => s.name || t("lobby.open")).join(" · ")}`),
    game.your_turn ? h("b", { class: "your-turn" }, ` ${t("table.title_cue")}`) : null,
    game.status === "finished" ? ` (${game.scores.join(" – ")})` : null);
  show(h("section", { class: "panel" }, h("h1", {}, t("mine.games_of", { name: record.name })),
    h("p", { class: "muted" }, t("mine.record", { games: record.games, wins: record.wins }),
      record.ratings.map((r) => ` · ${r.pool}: ${Math.round(r.rating)}${r.provisional ? "?" : ""}`).join("")),
    open.length ? [h("h2", {}, t("mine.waiting")), h("ul", { class: "games", id: "my-open" }, open.map(row))] : null,
    h("h2", {}, t("mine.in_play")), h("ul", { class: "games", id: "my-active" },
      active.length ? active.map(row) : h("li", { class: "muted" }, t("mine.none_active"))),
    h("h2", {}, t("mine.finished")), h("ul", { class: "games", id: "my-finished" },
      finished.length ? finished.map(row) : h("li", { class: "muted" }, t("mine.none_finished")))),
  h("section", { class: "panel" }, h("h2", {}, t("mine.other_device")),
    h("p", {}, t("mine.key_says")), deviceKey(me), useKey),
  account(me, record));
}

// A key of its own for another device, so that each device signs out alone.
function deviceKey(me) {
  const shown = h("p", { id: "device-key-line" });
  return h("div", {}, h("button", { id: "make-device-key", class: "secondary", onclick: async () => {
    try {
      const made = await post("/players/me/tokens", { device: t("mine.another_device") }, { token: me.token });
      shown.replaceChildren(h("input", { id: "device-key", readonly: true, value: made.token, "aria-label": t("mine.your_key") }));
    } catch (error) {
      shown.textContent = errorText(error);
    }
  } }, t("mine.make_key")), shown);
}

// The account: rename, sign the other devices out, a copy of the data, deletion (asked first).
function account(me, record) {
  const said = h("p", { id: "account-said", role: "status" });
  const attempt = (work) => async (event) => {
    event?.preventDefault?.();
    try {
      said.textContent = await work();
    } catch (error) {
      said.textContent = errorText(error);
    }
  };
  const newName = h("input", { id: "new-name", value: record.name, maxlength: 40, required: true, "aria-label": t("mine.new_name") });
  return h("section", { class: "panel", id: "account" }, h("h2", {}, t("mine.account")),
    h("form", { id: "rename", onsubmit: attempt(async () => {
      const renamed = await call("PATCH", "/players/me", { body: { name: newName.value }, token: me.token });
      renamedPlayer(renamed.name);
      return t("mine.renamed", { name: renamed.name });
    }) }, h("label", {}, t("mine.new_name"), " ", newName), h("button", { type: "submit" }, t("mine.rename"))),
    h("p", { class: "buttons" },
      h("button", { id: "sign-out-others", class: "secondary", onclick: attempt(async () => {
        await call("DELETE", "/players/me/tokens", { token: me.token });
        return t("mine.signed_out");
      }) }, t("mine.sign_out_others")),
      h("button", { id: "download-data", class: "secondary", onclick: attempt(async () => {
        const data = await get("/players/me/export", { token: me.token });
        const file = h("a", { href: URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" })),
          download: "ronda-my-data.json" });
        file.click();
        return t("mine.downloaded");
      }) }, t("mine.download")),
      h("button", { id: "delete-account", class: "danger", onclick: attempt(async () => {
        if (!confirm(t("mine.delete_confirm"))) return "";
        await call("DELETE", "/players/me", { token: me.token });
        forgetPlayer();
        location.hash = "#/";
        return t("mine.deleted");
      }) }, t("mine.delete"))),
    said);
}

export async function leaderboards(pool) {
  const pools = await get("/leaderboards");
  const chosen = pool || "classic-2";
  const rows = await get(`/leaderboards/${chosen}?page_size=50`);
  const picker = h("select", { id: "pool", "aria-label": t("boards.pool"), onchange: (event) => { location.hash = `#/leaderboards/${event.target.value}`; } },
    pools.map((p) => h("option", { value: p.name, selected: p.name === chosen }, t("game.kind", { preset: p.preset, players: p.players }))));
  show(h("section", { class: "panel" }, h("h1", {}, t("nav.leaderboards")), h("label", {}, `${t("boards.pool")} `, picker),
    h("table", { id: "leaderboard" }, h("thead", {}, h("tr", {}, ["#", t("boards.who"), t("boards.rating"), t("boards.games"), t("boards.won")].map((title) => h("th", {}, title)))),
      h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, h("td", {}, r.rank), h("td", {}, r.name),
        h("td", {}, `${Math.round(r.rating)}${r.provisional ? ` ${t("boards.provisional")}` : ""}`), h("td", {}, r.games), h("td", {}, r.wins)))
        : h("tr", {}, h("td", { colspan: 5, class: "muted" }, t("boards.none")))))));
}
