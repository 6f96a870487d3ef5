// The router: each address after # is a page; a reload or a shared link lands on the same page.
import { errorText } from "./api.js";
import { h, show } from "./dom.js";
import { LANGUAGES, chooseLanguage, language, loadLanguage, t } from "./i18n.js";
import { lobby } from "./lobby.js";
import { matchesPage, matchPage, replayPage } from "./matches.js";
import { leaderboards, myGames, quickPlay } from "./play.js";
import { rulesPage } from "./rules.js";
import { join, table } from "./table.js";
import { tournamentPage, tournamentsPage } from "./tournaments.js";

const ROUTES = [
  [/^\/?$/, lobby],
  [/^\/games\/([\w-]+)$/, table],
  [/^\/join\/([\w-]+)\/(\d)$/, (game, seat) => join(game, Number(seat))],
  [/^\/matches$/, matchesPage],
  [/^\/matches\/([\w-]+)$/, matchPage],
  [/^\/replay\/([\w-]+)$/, replayPage],
  [/^\/tournaments$/, tournamentsPage],
  [/^\/tournaments\/([\w~-]+)$/, tournamentPage],
  [/^\/rules$/, rulesPage],
  [/^\/play$/, quickPlay],
  [/^\/me$/, myGames],
  [/^\/leaderboards(?:\/([\w-]+))?$/, leaderboards],
];

// Each page draws itself and may return its unmount (streams closed, timers stopped), run
// before the next page is drawn. Pages load one after another: a page still loading when the
// address changes draws, then is unmounted, and never draws over the page that follows.
let unmount = () => {};

async function route() {
  unmount();
  unmount = () => {};
  const path = location.hash.replace(/^#/, "") || "/";
  for (const [pattern, page] of ROUTES) {
    const match = path.match(pattern);
    if (!match) continue;
    try {
      const stop = await page(...match.slice(1));
      if (typeof stop === "function") unmount = stop;
    } catch (error) {
      show(h("section", { class: "panel" }, h("h1", {}, t("page.wrong")),
        h("p", { class: "error", role: "alert" }, errorText(error)), h("p", {}, h("a", { href: "#/" }, t("page.back")))));
    }
    return;
  }
  show(h("section", { class: "panel" }, h("h1", {}, t("page.none")), h("p", {}, h("a", { href: "#/" }, t("page.back")))));
}

// The words come first: every page is drawn in the player's language.
await loadLanguage();
document.getElementById("language-choice").replaceChildren(h("select", {
  id: "language", "aria-label": t("nav.language"), onchange: (event) => chooseLanguage(event.target.value),
}, Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code, lang: code, selected: code === language() }, name))));

let routing = Promise.resolve();
const next = () => { routing = routing.then(route); };
window.addEventListener("hashchange", next);
next();
