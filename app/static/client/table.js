// The table page draws a game's state (game.js) and nothing else: your seat's hand and actions,
// or a spectator's view. It returns its unmount.
import { errorText, post } from "./api.js";
import { cardBack, cardName, cardRow } from "./cards.js";
import { h, link, show } from "./dom.js";
import { openGame } from "./game.js";
import { playerName, saveSeat, takeSeat } from "./session.js";
import { campName, describe, holdingName } from "./words.js";

export async function table(gameId) {
  const game = await openGame(gameId);
  const { state, act } = game;
  const { seat } = state;
  let view = state.view;

  const actionLabel = (action) => action.type === "play" ? `Play the ${cardName(action.card)}`
    : action.type === "declare" ? `Declare ${holdingName(view.holding)}` : "Declare nothing";

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

  const sinceLastPlay = () => state.log.slice(state.log.findLastIndex((event) => event.type === "play"));

  // The card the last move left on the table, marked there for a moment.
  function justLaid() {
    const last = state.log.at(-1);
    return last?.type === "drop" ? last.card : null;
  }

  // What the last move took off the table (its own card included), shown beside it for a moment.
  function justTaken() {
    const taken = sinceLastPlay().flatMap((event) => event.type === "capture" ? [event.card, ...event.taken]
      : event.type === "pile_collected" ? event.cards : []);
    return taken.length ? h("div", { class: "just-taken", id: "just-taken" }, h("h3", {}, "Just taken"),
      cardRow(taken, () => ({ fresh: true }))) : null;
  }

  // What just happened, where the eyes are: the events since the last card was played.
  function lastMove() {
    const from = state.log.findLastIndex((event) => event.type === "play" || event.type === "seat_taken");
    if (from < 0) return null;
    return h("p", { class: "last-move", id: "last-move" }, state.log.slice(from).map((event) => describe(event, view)).join(" "));
  }

  function hand() {
    if (!seat || view.status === "finished") return null;
    // Before every seat is taken nothing can be played: the hand is shown, not offered.
    const legal = view.status === "active" ? view.legal_actions : [];
    const playable = new Set(legal.filter((a) => a.type === "play").map((a) => a.card));
    const others = legal.filter((a) => a.type !== "play");
    return h("section", { class: "hand", id: "hand" }, h("h2", {}, "Your hand"), lastMove(),
      cardRow(view.hand, (card) => playable.has(card) && !state.busy
        ? { legal: true, onPick: () => act({ type: "play", card }) } : {}),
      others.length ? h("div", { class: "actions", id: "actions" }, others.map((action) =>
        h("button", { "data-action": action.type, disabled: state.busy, onclick: () => act(action) }, actionLabel(action)))) : null);
  }

  function declarations() {
    if (!view.declarations.length) return null;
    return h("section", { class: "declarations" }, h("h2", {}, "Declarations this deal"),
      h("ul", {}, view.declarations.map((d) => h("li", {},
        `${view.seats[d.seat].name}: ${d.kind.replace("_", " ")}${d.rank === null ? " (rank hidden)" : ` of ${d.rank}s`}`))));
  }

  function outcome() {
    const score = view.scores.join(" – ");
    if (!seat) return `${campName(view, view.winner)} won ${score}`;
    return view.camps[seat.seat] === view.winner ? `You won ${score}` : `You lost ${score}`;
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
      h("h2", { id: "outcome" }, outcome()),
      h("dl", {}, h("dt", {}, "Seed"), h("dd", {}, h("code", {}, view.seed)),
        h("dt", {}, "Salt"), h("dd", {}, h("code", {}, view.seed_salt)),
        h("dt", {}, "Commitment"), h("dd", {}, h("code", {}, view.seed_commitment))),
      h("p", {}, check),
      h("p", { class: "muted" }, "To verify the deal: the SHA-256 of \"<salt>:<seed>\" must equal the commitment this game showed ",
        "from its creation; then every round's deck follows from the seed alone (", h("a", { href: "#/rules" }, "rules, §12"), ")."),
      h("p", {}, seat ? h("button", { id: "rematch", onclick: rematch }, "Rematch") : null, " ",
        h("a", { class: "button", href: `#/replay/${gameId}` }, "Replay it step by step"), " ",
        h("a", { class: "button", href: "#/" }, "New game")),
      rematchNotice);
  }

  const rematchNotice = h("p", { class: "error", role: "alert", id: "rematch-notice" });

  // The next game, the same seats: the first to ask offers it, the others take their seats by asking too.
  async function rematch() {
    try {
      const next = await post(`/games/${gameId}/rematch`, undefined, { token: seat.token });
      saveSeat(next.game.id, next.seat, next.token);
      location.hash = `#/games/${next.game.id}`;
    } catch (error) {
      rematchNotice.textContent = errorText(error);
    }
  }

  function render() {
    view = state.view;
    const { notice, connection } = state;
    const logList = h("ol", { class: "log", id: "log" }, state.log.map((event) => h("li", {}, describe(event, view))));
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
        view.table.length ? cardRow(view.table, (card) => ({ fresh: card === justLaid() }))
          : h("p", { class: "muted" }, "The table is empty."),
        justTaken(),
        view.pile.length ? h("div", {}, h("h3", {}, "Pile"), cardRow(view.pile)) : null),
      hand(),
      declarations(),
      h("section", { class: "panel" }, h("h2", {}, "What happened"), logList),
    );
    logList.scrollTop = logList.scrollHeight;
  }

  game.subscribe(render);
  render();
  return () => game.stop();
}

export function join(gameId, seatNumber) {
  const name = h("input", { id: "name", maxlength: 40, placeholder: "Your name", value: playerName() });
  const message = h("p", { class: "error", role: "alert" });
  show(h("section", { class: "panel" }, h("h1", {}, `Join seat ${seatNumber}`),
    h("form", {
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await takeSeat(gameId, seatNumber, name.value.trim());
          location.hash = `#/games/${gameId}`;
        } catch (error) {
          message.textContent = errorText(error);
        }
      },
    }, h("label", {}, "Your name", name), h("button", { type: "submit" }, "Take the seat"), message),
    h("p", {}, h("a", { href: `#/games/${gameId}` }, "Only watch"))));
}
