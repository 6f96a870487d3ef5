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

// A browser lets a page's audio start only after the person has touched the page: the context made
// before that stays suspended, so the first tap or key anywhere resumes it, and the chime is heard.
let audio = null;
function wakeAudio() {
  if (!audio && !soundOn()) return; // no sound wanted: no audio made
  audio ??= new AudioContext();
  if (audio.state === "suspended") audio.resume();
}
for (const kind of ["pointerdown", "keydown"]) addEventListener(kind, wakeAudio, { capture: true });

function chime() {
  audio ??= new AudioContext();
  if (audio.state === "suspended") audio.resume(); // heard now if the page was touched, else at its first touch
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

// "1:05" (or "23:59:58" for a long turn): what is left of a turn, to the second; "0:00" once it has run out.
export function clockText(dueAt) {
  const left = Math.max(0, Math.ceil(dueAt - Date.now() / 1000));
  const [hours, minutes, seconds] = [Math.floor(left / 3600), Math.floor(left / 60) % 60, left % 60];
  const pad = (n) => String(n).padStart(2, "0");
  return hours ? `${hours}:${pad(minutes)}:${pad(seconds)}` : `${minutes}:${pad(seconds)}`;
}
