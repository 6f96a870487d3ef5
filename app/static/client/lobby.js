// The lobby: the presets, a new game against bots or with open seats, open games to join, games to watch.
import { errorText, get, getPage, post } from "./api.js";
import { h, link, show } from "./dom.js";
import { levelSummary, presetSummary, t } from "./i18n.js";
import { seatName } from "./words.js";
import { ensurePlayer, playerName, rememberName, saveSeat, savedSeat, takeSeat } from "./session.js";

const LIST_REFRESH_MS = 3000;
const PAGE_SIZE = 20;

export async function lobby() {
  const [presets, levels] = await Promise.all([get("/rules/presets"), get("/bots/levels")]);
  const message = h("p", { class: "error", role: "alert" });
  const name = h("input", { id: "name", name: "name", maxlength: 40, placeholder: t("form.your_name"), value: playerName() });
  const preset = h("select", { id: "preset", name: "preset" },
    presets.map((p) => h("option", { value: p.name }, p.name)));
  const players = h("select", { id: "players", name: "players" });
  const others = h("div", { class: "seats" });
  const target = h("input", { id: "target", name: "target", type: "number", min: 1, max: 1000, placeholder: "41" });

  function seatChoice(seat) {
    return h("label", {}, t("seat.numbered", { n: seat + 1 }), h("select", { name: `seat${seat}`, "data-seat": seat },
      levels.map((level) => h("option", { value: level.level, selected: level.bot === "greedy" },
        t("lobby.level", { level: level.level, bot: level.bot, summary: levelSummary(level) }))),
      h("option", { value: "open" }, t("lobby.open_for_friend"))));
  }

  function refreshPlayers() {
    const chosen = presets.find((p) => p.name === preset.value);
    const count = Number(players.value) || chosen.players[0];
    players.replaceChildren(...chosen.players.map((n) => h("option", { value: n, selected: n === count }, t("form.n_players", { n }))));
    if (!chosen.players.includes(count)) players.value = chosen.players[0];
    others.replaceChildren(...Array.from({ length: Number(players.value) - 1 }, (_, i) => seatChoice(i + 1)));
  }
  preset.addEventListener("change", refreshPlayers);
  players.addEventListener("change", refreshPlayers);
  refreshPlayers();

  async function create(event) {
    event.preventDefault();
    rememberName(name.value.trim());
    const seats = [{ type: "human", name: name.value.trim() || t("name.you"), mine: true }];
    for (const select of others.querySelectorAll("select")) {
      seats.push(select.value === "open" ? { type: "open" } : { type: "bot", level: Number(select.value) });
    }
    const rules = { preset: preset.value };
    if (target.value) rules.target = Number(target.value);
    try {
      // The creator's seat is their player's: the game is in their games, on any device.
      const me = await ensurePlayer(name.value.trim());
      const created = await post("/games", { players: Number(players.value), rules, seats }, { token: me.token });
      saveSeat(created.game.id, 0, created.tokens[0].token);
      location.hash = `#/games/${created.game.id}`;
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  const openList = h("ul", { class: "games", id: "open-games" });
  const activeList = h("ul", { class: "games", id: "active-games" });
  const pages = { open: 1, active: 1 };
  const pagers = { open: h("div", { class: "pager", id: "open-pager" }), active: h("div", { class: "pager", id: "active-pager" }) };

  function pager(status, pagination) {
    const total = pagination.total_pages || 1;
    const turn = (to) => { pages[status] = to; refreshLists().catch(() => {}); };
    pagers[status].replaceChildren(
      h("button", { class: "small", disabled: pages[status] <= 1, onclick: () => turn(pages[status] - 1), id: `${status}-newer` }, t("pager.newer")),
      h("span", { id: `${status}-page` }, t("pager.page", { page: pages[status], pages: total, games: pagination.total ?? 0 })),
      h("button", { class: "small", disabled: pages[status] >= total, onclick: () => turn(pages[status] + 1), id: `${status}-older` }, t("pager.older")));
  }

  async function join(game, seat) {
    try {
      await takeSeat(game.id, seat, name.value.trim());
      location.hash = `#/games/${game.id}`;
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  const describeSeats = (game) => game.seats.map((s) => s.type === "open" ? t("lobby.open") : seatName(game, s.seat)).join(" · ");

  async function refreshLists() {
    const [openPage, activePage] = await Promise.all(["open", "active"].map((status) =>
      getPage(`/games?status=${status}&page_size=${PAGE_SIZE}&page=${pages[status]}`)));
    const [open, active] = [openPage.items, activePage.items];
    pager("open", openPage.pagination);
    pager("active", activePage.pagination);
    openList.replaceChildren(...(open.length ? open.map((game) => h("li", {},
      h("span", {}, `${t("game.kind", { preset: game.preset, players: game.players })}: ${describeSeats(game)}`),
      game.seats.filter((s) => s.type === "open").map((s) => savedSeat(game.id)
        ? h("span", { class: "muted" }, t("lobby.your_game"))
        : h("button", { class: "small", onclick: () => join(game, s.seat) }, t("lobby.join_seat", { n: s.seat + 1 }))))) : [h("li", { class: "muted" }, t("lobby.no_open"))]));
    activeList.replaceChildren(...(active.length ? active.map((game) => h("li", {},
      h("span", {}, `${game.preset}: ${describeSeats(game)} (${game.scores.join(" – ")})`),
      h("a", { class: "button small", href: `#/games/${game.id}` }, t("lobby.watch")))) : [h("li", { class: "muted" }, t("lobby.none_in_play"))]));
  }

  show(
    h("section", { class: "panel" },
      h("h1", {}, t("lobby.title")),
      h("p", {}, t("lobby.intro"), " ", h("a", { href: "#/rules" }, t("join.the_rules"))),
      h("form", { id: "new-game", onsubmit: create },
        h("label", {}, t("form.your_name"), name),
        h("label", {}, t("form.rules"), preset),
        h("ul", { class: "presets" }, presets.map((p) => h("li", {}, h("b", {}, p.name), `: ${presetSummary(p)}`))),
        h("label", {}, t("form.players"), players),
        others,
        h("label", {}, t("lobby.target"), target),
        h("button", { type: "submit", id: "create" }, t("lobby.start")),
        message)),
    h("section", { class: "panel" }, h("h2", {}, t("lobby.open_games")), openList, pagers.open),
    h("section", { class: "panel" }, h("h2", {}, t("lobby.in_play")), activeList, pagers.active,
      h("p", { class: "muted" }, t("lobby.share"), " ", h("code", {}, link("/games/<id>")))),
  );
  await refreshLists();
  const timer = setInterval(() => refreshLists().catch(() => {}), LIST_REFRESH_MS); // games opened elsewhere appear
  return () => clearInterval(timer);
}
