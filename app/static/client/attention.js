// What calls a player back to the table: a sound on their turn (off until they turn it on, then
// remembered), the tab's title and icon, and the turn clock's words.
const SOUND_KEY = "ronda:sound";
const TITLE = document.title;
const ICON = document.querySelector("link[rel=icon]")?.getAttribute("href") ?? "data:,";
const TURN_ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#e0b12f" stroke="#1f5f3f" stroke-width="2"/></svg>')}`;

export const soundOn = () => localStorage.getItem(SOUND_KEY) === "on";
export function setSound(on) {
  localStorage.setItem(SOUND_KEY, on ? "on" : "off");
}

let audio = null;
function chime() {
  audio ??= new AudioContext();
  const start = audio.currentTime;
  for (const [i, pitch] of [660, 880].entries()) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = pitch;
    gain.gain.setValueAtTime(0.0001, start + i * 0.14);
    gain.gain.exponentialRampToValueAtTime(0.2, start + i * 0.14 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + i * 0.14 + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start(start + i * 0.14);
    tone.stop(start + i * 0.14 + 0.3);
  }
}

function setIcon(href) {
  const icon = document.querySelector("link[rel=icon]");
  if (icon) icon.setAttribute("href", href);
}

// Called on every drawing of the table: a turn that has just become the player's is announced once.
let wasMyTurn = false;
export function turnCue(myTurn, titleWhenMine) {
  document.title = myTurn ? `● ${titleWhenMine} · ${TITLE}` : TITLE;
  setIcon(myTurn ? TURN_ICON : ICON);
  if (myTurn && !wasMyTurn && soundOn()) chime();
  wasMyTurn = myTurn;
}

export function clearTurnCue() {
  wasMyTurn = false;
  document.title = TITLE;
  setIcon(ICON);
}

// "1:05": what is left of a turn, to the second; "0:00" once it has run out.
export function clockText(dueAt) {
  const left = Math.max(0, Math.ceil(dueAt - Date.now() / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}
