// Server-Sent Events over fetch, so a seat can send its token (EventSource cannot set headers).
// After a drop it reconnects with Last-Event-ID and the server resumes after that event:
// nothing lost, nothing repeated. It stops once the game is over, or when the server refuses the
// stream with a `problem` event (no such game, a token that is not a seat's). With `after`, it
// starts after that event (no snapshot). Other streams (a tournament's) name their events: each
// goes to `onOther(kind, data)`, and `endsWith(kind, data)` says when the stream is over.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function follow(path, {
  token, after = null, onSnapshot = () => {}, onEvent, onStatus = () => {}, onOther = () => {}, endsWith = () => false,
}) {
  let lastEventId = after === null ? null : String(after);
  let stopped = false;
  let controller = null;
  let over = false;
  let refused = null;

  function dispatch(message) {
    if (message.id !== undefined) lastEventId = message.id;
    if (!message.data) return;
    const data = JSON.parse(message.data);
    if (message.event === "snapshot") {
      over = data.status === "finished";
      onSnapshot(data);
    } else if (message.event === "event") {
      over = over || data.type === "game_over";
      onEvent(data);
    } else if (message.event === "problem") {
      refused = data;
    } else {
      over = over || endsWith(message.event, data);
      onOther(message.event, data);
    }
  }

  async function read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message = {};
        for (const line of block.split("\n")) {
          if (!line || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, "");
          message[field] = field === "data" && message.data ? `${message.data}\n${value}` : value;
        }
        dispatch(message);
      }
    }
  }

  (async () => {
    let delay = 500;
    while (!stopped && !over && !refused) {
      controller = new AbortController();
      try {
        const headers = { Accept: "text/event-stream" };
        if (token) headers.Authorization = `Bearer ${token}`;
        if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
        const response = await fetch(path, { headers, signal: controller.signal, cache: "no-store" });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        onStatus("live");
        delay = 500;
        await read(response.body);
      } catch {
        if (stopped) return;
      }
      if (over || stopped || refused) break;
      onStatus("reconnecting");
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
    }
    if (over) onStatus("over");
    else if (refused) onStatus(`refused: ${refused.detail || refused.title}`);
  })();

  return () => {
    stopped = true;
    controller?.abort();
  };
}
