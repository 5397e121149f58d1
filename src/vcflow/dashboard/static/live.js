// The live region and the connection indicator in the header.

// The polite live region: phase changes are batched so a busy flow does not
// flood a screen reader (at most one message per 2 s).
const pending = [];
let announceTimer = null;
export function announce(text) {
  pending.push(text);
  if (announceTimer) return;
  announceTimer = setTimeout(() => {
    const el = document.getElementById("announce");
    const items = pending.splice(0);
    el.textContent = items.length > 3 ? `${items.slice(-3).join(". ")} (and ${items.length - 3} more)` : items.join(". ");
    announceTimer = null;
  }, 2000);
}

export function setConn(state) {
  const el = document.getElementById("conn");
  el.dataset.state = state || "";
  el.textContent = state === "live" ? "Live" : state === "reconnecting" ? "Reconnecting…" : "";
}
