// A game at the table: your seat (with the token kept from creating or joining) or a spectator's view.
// The view is the truth: every change (our action, a stream event) ends in reading it again.
import { allEvents, claimSeat, forgetSeat, get, playerName, post, savedSeat } from "./api.js";
import { cardBack, cardElement, cardName, cardRow } from "./cards.js";
import { errorText, h, link, show } from "./dom.js";
import { follow } from "./sse.js";
import { campName, describe } from "./words.js";

const sameAction = (a, b) => a.type === b.type && (a.card ?? null) === (b.card ?? null);

export async function table(gameId) {
  let seat = savedSeat(gameId);
  let view;
  try {
    view = seat ? await get(`/games/${gameId}/view`, { token: seat.token }) : await get(`/games/${gameId}`);
  } catch (error) {
    if (!seat || error.status !== 401) throw error;
    forgetSeat(gameId); // a token this game no longer knows: watch instead
    seat = null;
    view = await get(`/games/${gameId}`);
  }
  const token = seat?.token;
  const viewPath = token ? `/games/${gameId}/view` : `/games/${gameId}`;
  const log = await allEvents(gameId, token);
  let notice = null;
  let busy = false;
  let connection = "connecting";
  let refreshing = false;
  let readAgain = false;

  function accept(newer) {
    if (newer.version >= view.version) view = newer;
  }

  // One read at a time; a change that comes during a read asks for one more read after it.
  async function refresh() {
    if (refreshing) {
      readAgain = true;
      return;
    }
    refreshing = true;
    try {
      do {
        readAgain = false;
        accept(await get(viewPath, { token }));
      } while (readAgain);
    } catch (error) {
      notice = { text: `Could not read the game: ${errorText(error)}` };
    } finally {
      refreshing = false;
    }
    render();
  }

  async function act(action) {
    if (busy) return;
    busy = true;
    notice = null;
    render();
    try {
      const result = await post(`/games/${gameId}/actions`, action, { token, version: view.version });
      accept(result.game);
    } catch (error) {
      if (error.status === 412) { // someone acted first: read again, then offer the move again if it still stands
        accept(await get(viewPath, { token }));
        const still = view.legal_actions.some((legal) => sameAction(legal, action));
        notice = still
          ? { text: "The game moved on before your move arrived. Your move still stands:", retry: action }
          : { text: "The game moved on before your move arrived, and it no longer stands. Choose again." };
      } else {
        notice = { text: errorText(error) };
      }
    }
    busy = false;
    render();
  }

  const stop = follow(`/games/${gameId}/stream`, {
    token,
    after: log.at(-1)?.id ?? 0,
    onEvent(event) {
      if (!log.length || event.id > log.at(-1).id) log.push(event);
      refresh();
    },
    onStatus(status) {
      connection = status;
      render();
    },
  });
  window.addEventListener("hashchange", stop, { once: true });
  refresh(); // a move made between reading the view and reading the log is in neither stream nor view

  const actionLabel = (action) => action.type === "play" ? `Play the ${cardName(action.card)}`
    : action.type === "declare" ? "Declare" : "Declare nothing";

  function scores() {
    const camps = [...new Set(view.camps)];
    return h("section", { class: "scores", id: "scores" }, camps.map((camp) => h("div", {
      class: `camp${view.winner === camp ? " winner" : ""}${seat && view.camps[seat.seat] === camp ? " mine" : ""}`,
    }, h("span", { class: "who" }, campName(view, camp)),
      h("span", { class: "points", "data-camp": camp }, `${view.scores[camp]}`),
      h("span", { class: "muted" }, ` / ${view.rules.target} · captured ${view.captured_counts[camp]}`))));
  }

  function seats() {
    return h("section", { class: "seats-row" }, view.seats.map((s) => h("div", {
      class: `seat-chip${view.awaiting.includes(s.seat) ? " awaited" : ""}${seat?.seat === s.seat ? " me" : ""}`,
    }, h("b", {}, s.type === "open" ? "(open seat)" : s.name || `seat ${s.seat}`),
      s.type === "bot" && !s.name?.includes(s.bot) ? h("span", { class: "muted" }, ` (${s.bot} bot)`) : null,
      h("span", { class: "backs" }, Array.from({ length: view.hand_counts[s.seat] }, cardBack)),
      s.type === "open" ? h("input", { class: "share", readonly: true, value: link(`/join/${gameId}/${s.seat}`), title: "invite link" }) : null)));
  }

  function status() {
    if (view.status === "finished") return "Game over.";
    if (view.status === "open") return "Waiting for players to join the open seats.";
    const names = view.awaiting.map((s) => view.seats[s].name || `seat ${s}`);
    const mine = seat && view.awaiting.includes(seat.seat);
    const what = view.phase === "declaring" ? "to declare" : "to play";
    return mine ? `Your turn ${what}.` : `Waiting for ${names.join(" and ")} ${what}.`;
  }

  function hand() {
    if (!seat || view.status === "finished") return null;
    const playable = new Set(view.legal_actions.filter((a) => a.type === "play").map((a) => a.card));
    const others = view.legal_actions.filter((a) => a.type !== "play");
    return h("section", { class: "hand", id: "hand" }, h("h2", {}, "Your hand"),
      cardRow(view.hand, (card) => playable.has(card) && !busy
        ? { legal: true, onPick: () => act({ type: "play", card }) } : {}),
      others.length ? h("div", { class: "actions", id: "actions" }, others.map((action) =>
        h("button", { "data-action": action.type, disabled: busy, onclick: () => act(action) }, actionLabel(action)))) : null);
  }

  function declarations() {
    if (!view.declarations.length) return null;
    return h("section", { class: "declarations" }, h("h2", {}, "Declarations this deal"),
      h("ul", {}, view.declarations.map((d) => h("li", {},
        `${view.seats[d.seat].name}: ${d.kind.replace("_", " ")}${d.rank === null ? " (rank hidden)" : ` of ${d.rank}s`}`))));
  }

  function result() {
    if (view.status !== "finished") return null;
    const check = h("span", { id: "verification" });
    if (crypto.subtle) {
      crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${view.seed_salt}:${view.seed}`)).then((digest) => {
        const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
        check.textContent = hex === view.seed_commitment ? "✓ SHA-256(salt:seed) matches the commitment shown from the start."
          : "✗ SHA-256(salt:seed) does not match the commitment!";
      });
    }
    return h("section", { class: "result panel", id: "result" },
      h("h2", {}, `${campName(view, view.winner)} won ${view.scores.join(" – ")}`),
      h("dl", {}, h("dt", {}, "Seed"), h("dd", {}, h("code", {}, view.seed)),
        h("dt", {}, "Salt"), h("dd", {}, h("code", {}, view.seed_salt)),
        h("dt", {}, "Commitment"), h("dd", {}, h("code", {}, view.seed_commitment))),
      h("p", {}, check),
      h("p", { class: "muted" }, "To verify the deal: the SHA-256 of \"<salt>:<seed>\" must equal the commitment this game showed ",
        "from its creation; then every round's deck follows from the seed alone (", h("a", { href: "#/rules" }, "rules, §12"), ")."),
      h("p", {}, h("a", { class: "button", href: `#/replay/${gameId}` }, "Replay it step by step"), " ",
        h("a", { class: "button", href: "#/" }, "Back to the lobby")));
  }

  function render() {
    if (location.hash !== `#/games/${gameId}`) return;
    const logList = h("ol", { class: "log", id: "log" }, log.map((event) => h("li", {}, describe(event, view))));
    show(
      h("section", { class: "game-head" },
        h("h1", {}, `${view.preset} · ${seat ? `seat ${seat.seat}` : "watching"}`),
        h("p", { class: "muted" }, `Round ${view.round + 1}, deal ${view.deal + 1} of ${view.deals_in_round} · ${view.stock_count} in the stock`
          + ` · ${view.streak.length > 1 ? `streak: ${view.streak.system} ×${view.streak.length} · ` : ""}${connection}`),
        h("p", { class: "share-line" }, "Watch link: ", h("input", { class: "share", readonly: true, value: link(`/games/${gameId}`) }))),
      scores(),
      h("p", { class: `status${seat && view.awaiting.includes(seat.seat) ? " mine" : ""}`, id: "status" }, status()),
      notice ? h("p", { class: "notice", id: "notice", role: "alert" }, notice.text, " ",
        notice.retry ? h("button", { id: "retry", onclick: () => act(notice.retry) }, actionLabel(notice.retry)) : null) : null,
      result(),
      seats(),
      h("section", { class: "table", id: "table" }, h("h2", {}, "Table"),
        view.table.length ? cardRow(view.table) : h("p", { class: "muted" }, "The table is empty."),
        view.pile.length ? h("div", {}, h("h3", {}, "Pile"), cardRow(view.pile)) : null),
      hand(),
      declarations(),
      h("section", { class: "panel" }, h("h2", {}, "What happened"), logList),
    );
    logList.scrollTop = logList.scrollHeight;
  }

  render();
}

export function join(gameId, seatNumber) {
  const name = h("input", { id: "name", maxlength: 40, placeholder: "Your name", value: playerName() });
  const message = h("p", { class: "error", role: "alert" });
  show(h("section", { class: "panel" }, h("h1", {}, `Join seat ${seatNumber}`),
    h("form", {
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await claimSeat(gameId, seatNumber, name.value.trim());
          location.hash = `#/games/${gameId}`;
        } catch (error) {
          message.textContent = errorText(error);
        }
      },
    }, h("label", {}, "Your name", name), h("button", { type: "submit" }, "Take the seat"), message),
    h("p", {}, h("a", { href: `#/games/${gameId}` }, "Only watch"))));
}
