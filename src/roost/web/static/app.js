// roost web: live pages over server-sent events (pushed; the page never polls) and the terminal.
"use strict";
const data = JSON.parse(document.body.dataset.roost || "{}");
const csrf = document.querySelector('meta[name="roost-csrf"]').content;

function post(path, body) {
  return fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "x-roost-csrf": csrf },
    body: JSON.stringify(body || {}),
  }).then((r) => r.json());
}

function setBadge(el, status) {
  if (!el) return;
  el.textContent = status || "unknown";
  el.className = "badge s-" + (status || "unknown");
}

// Browser notifications for alert events (an agent waits, fails, stops), once allowed.
const notifyButton = document.getElementById("notify");
if ("Notification" in window && Notification.permission === "default") {
  notifyButton.hidden = false;
  notifyButton.onclick = () => Notification.requestPermission().then(() => { notifyButton.hidden = true; });
}
function alertPerson(ev) {
  if (!ev.alert || !("Notification" in window) || Notification.permission !== "granted") return;
  new Notification(ev.agent + ": " + ev.alert, { body: ev.reason || "", tag: "roost-" + ev.agent_id });
}

function fleetPage() {
  const fleet = document.getElementById("fleet");
  // One regrouping at a time, at most every 300 ms: a burst of events costs one fetch.
  let busy = false, again = false;
  const refresh = () => {
    if (busy) { again = true; return; }
    busy = true;
    fetch("/?part=section", { credentials: "same-origin" }).then((r) => r.text())
      .then((html) => { fleet.innerHTML = html; })
      .finally(() => setTimeout(() => { busy = false; if (again) { again = false; refresh(); } }, 300));
  };
  const source = new EventSource("/events");
  source.onopen = () => { document.body.dataset.live = "1"; }; // changes reach this page now
  source.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    alertPerson(ev);
    if (ev.kind === "status") {
      const row = fleet.querySelector('li[data-agent="' + CSS.escape(ev.agent_id) + '"]');
      setBadge(row && row.querySelector("[data-badge]"), ev.status);
    }
    refresh(); // regroup: who needs the person goes on top
  };
}

function agentPage() {
  const screen = document.getElementById("screen");
  const choices = document.getElementById("choices");
  const receipt = document.getElementById("receipt");
  const badge = document.querySelector(".agent-head [data-badge]");
  const base = "/a/" + encodeURIComponent(data.name);
  const show = (text, bad) => { receipt.textContent = text; receipt.className = "receipt" + (bad ? " bad" : ""); };
  const drawChoices = (asked) => {
    // a waiting agent's question and a button per choice; each answers only that question
    const parts = [];
    if (asked) {
      const p = document.createElement("p");
      p.className = "question"; p.textContent = asked.text;
      parts.push(p);
      for (const [key, label] of asked.choices) {
        const b = document.createElement("button");
        b.type = "button"; b.className = "choice"; b.dataset.key = key; b.dataset.question = asked.id;
        b.textContent = key + ". " + label;
        parts.push(b);
      }
    }
    choices.replaceChildren(...parts);
  };
  choices.addEventListener("click", (e) => {
    const key = e.target.dataset && e.target.dataset.key;
    if (!key) return;
    show("answering…");
    post(base + "/answer", { choice: key, question: e.target.dataset.question })
      .then((r) => show(r.error || r.receipt, !!r.error));
  });
  const live = new EventSource(base + "/live");
  live.onmessage = (m) => {
    const now = JSON.parse(m.data);
    if (now.error) { show(now.error, true); return; }
    screen.innerHTML = now.screen; // HTML the server escaped (core/web.screen_html)
    screen.scrollTop = screen.scrollHeight; // the prompt and any dialog sit at the bottom
    setBadge(badge, now.status);
    drawChoices(now.question);
  };
  const events = new EventSource("/events");
  events.onmessage = (m) => alertPerson(JSON.parse(m.data));
  const form = document.getElementById("send");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = form.elements.text.value;
    if (!text.trim()) return;
    show("sending…");
    post(base + "/send", { text }).then((r) => {
      show(r.error || r.receipt, !!r.error || !r.delivered);
      if (r.delivered) form.elements.text.value = "";
    });
  });
  const place = document.getElementById("place");
  place.addEventListener("submit", (e) => {
    e.preventDefault();
    show("placing…");
    post(base + "/place", { tab: place.elements.tab.value }).then((r) => show(r.error || r.receipt, !!r.error));
  });
  document.querySelectorAll("[data-action]").forEach((b) => {
    b.addEventListener("click", () => {
      show(b.dataset.action + "…");
      post(base + "/" + b.dataset.action).then((r) => show(r.error || r.receipt, !!r.error));
    });
  });
}

function termPage() {
  const box = document.getElementById("term");
  const term = new Terminal({ convertEol: false, fontSize: 13, disableStdin: !data.typing });
  term.open(box);
  const cell = { w: 8, h: 17 };
  const cols = Math.max(20, Math.floor(box.clientWidth / cell.w));
  const rows = Math.max(8, Math.floor(box.clientHeight / cell.h));
  term.resize(cols, rows);
  const proto = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(proto + location.host + "/a/" + encodeURIComponent(data.name) + "/ws");
  ws.binaryType = "arraybuffer";
  ws.onopen = () => ws.send(JSON.stringify({ resize: [term.cols, term.rows] }));
  ws.onmessage = (m) => term.write(new Uint8Array(m.data));
  ws.onclose = () => term.write("\r\n[disconnected]\r\n");
  const enc = new TextEncoder();
  if (data.typing) term.onData((d) => ws.send(enc.encode(d)));
  window.roostTerm = term;
  window.roostSocket = ws; // for bench/bench_web.py's echo timing
}

// The installable app (issue 40): the service worker; on a paired phone, a button subscribes it
// to Web Push; an agent's page says which agent it shows (its pushes stay quiet meanwhile); what
// the worker shows or answers is shown here too.
function b64bytes(text) {
  const padded = (text + "===".slice((text.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}
function phone() {
  if (!("serviceWorker" in navigator)) return;
  const pushed = document.getElementById("pushed");
  navigator.serviceWorker.addEventListener("message", (m) => {
    const d = m.data || {};
    const text = d.said || (d.roostPush && d.roostPush.title);
    if (!text) return;
    pushed.textContent = text; pushed.hidden = false;
    window.roostPushed = (window.roostPushed || []).concat([d]);
  });
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).then((reg) => {
    window.roostWorker = reg;
    document.body.dataset.worker = "1";
    return fetch("/push/key", { credentials: "same-origin" }).then((r) => r.json()).then((k) => {
      if (!k.device || !("PushManager" in window)) return;
      const button = document.getElementById("push");
      const subscribe = () => reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64bytes(k.key) })
        .then((sub) => post("/push/subscribe", sub.toJSON()))
        .then((r) => { button.hidden = !r.subscribed; button.textContent = r.error || "Push to this phone"; });
      reg.pushManager.getSubscription().then((sub) => {
        if (sub) { post("/push/subscribe", sub.toJSON()); return; } // the server keeps it anew
        if (k.subscribed) return; // subscribed already (this browser's subscription, kept there)
        button.hidden = false;
        button.onclick = subscribe;
      });
    });
  }).catch(() => {});
  if (data.page === "agent") {
    const say = (agent) => post("/push/viewing", { agent }).catch(() => {});
    const now = () => say(document.visibilityState === "visible" ? data.name : null);
    now();
    document.addEventListener("visibilitychange", now);
    setInterval(now, 30000);
    window.addEventListener("pagehide", () => say(null));
  }
}
phone();

if (data.page === "fleet") fleetPage();
else if (data.page === "agent") agentPage();
else if (data.page === "term" && window.Terminal) termPage();

// The Changes page: a tap on a line's number opens a comment box under it; "Send" sends the
// open comments to the agent as one message (the review room's send: acknowledged).
function changesPage() {
  const base = "/a/" + encodeURIComponent(data.name);
  const receipt = document.getElementById("receipt");
  const show = (text, bad) => { receipt.textContent = text; receipt.classList.toggle("bad", !!bad); };
  document.querySelectorAll("tr[data-line] td.ln.new").forEach((cell) => {
    cell.classList.add("tap");
    cell.addEventListener("click", () => {
      const row = cell.parentElement;
      if (row.nextElementSibling && row.nextElementSibling.classList.contains("comment-form")) return;
      const path = row.closest("section.file").dataset.path;
      const form = document.createElement("tr");
      form.className = "comment-form";
      form.innerHTML = '<td colspan="3"><form class="send"><textarea name="text" rows="2"></textarea>' +
        '<button type="submit">Comment</button></form></td>';
      row.after(form);
      const box = form.querySelector("textarea");
      box.placeholder = "Comment on " + path + ":" + row.dataset.line;
      box.focus();
      form.querySelector("form").addEventListener("submit", (e) => {
        e.preventDefault();
        if (!box.value.trim()) return;
        post(base + "/comment", { path, start: Number(row.dataset.line), text: box.value }).then((r) => {
          show(r.error || r.receipt, !!r.error);
          if (!r.error) location.reload();
        });
      });
    });
  });
  const send = document.getElementById("review-send");
  if (send) send.addEventListener("click", () => {
    show("sending…");
    post(base + "/review").then((r) => {
      show(r.error || r.receipt, !!r.error || !r.delivered);
      if (r.delivered) setTimeout(() => location.reload(), 800);
    });
  });
}
if (data.page === "changes") changesPage();
// The Changes page's Merge: `roost merge NAME` (its refusals said on the page), after a confirm.
(function mergeButton() {
  const button = document.getElementById("merge");
  if (!button || data.page !== "changes") return;
  const receipt = document.getElementById("receipt");
  button.addEventListener("click", () => {
    const mode = document.getElementById("merge-mode").value;
    if (!window.confirm("Merge " + data.name + "'s committed work (" + mode + ")?")) return;
    receipt.textContent = "merging…";
    post("/a/" + encodeURIComponent(data.name) + "/merge", { mode }).then((r) => {
      receipt.textContent = r.error || r.receipt + (r.note ? " (" + r.note + ")" : "");
      receipt.classList.toggle("bad", !!r.error);
    });
  });
})();
// The Changes page's "Merge selected hunks": `roost merge NAME --hunks` of the hunks ticked, each
// with the fingerprint the page drew it with (a hunk changed since is refused: reload).
(function mergeHunks() {
  const button = document.getElementById("merge-hunks");
  if (!button || data.page !== "changes") return;
  const receipt = document.getElementById("receipt");
  const boxes = () => [...document.querySelectorAll("input.hunk-pick")];
  const count = () => {
    const n = boxes().filter((b) => b.checked).length;
    button.disabled = n === 0;
    button.textContent = n ? "Merge " + n + " selected hunk" + (n === 1 ? "" : "s") : "Merge selected hunks";
  };
  boxes().forEach((b) => b.addEventListener("change", count));
  button.addEventListener("click", () => {
    const hunks = boxes().filter((b) => b.checked).map((b) => ({
      path: b.closest("section.file").dataset.path,
      number: Number(b.dataset.hunk),
      fingerprint: b.dataset.fingerprint,
    }));
    if (!hunks.length) return;
    if (!window.confirm("Merge " + hunks.length + " hunk(s) of " + data.name + "'s change as one commit?")) return;
    receipt.textContent = "merging…";
    post("/a/" + encodeURIComponent(data.name) + "/merge-hunks", { hunks }).then((r) => {
      receipt.textContent = r.error || r.receipt;
      receipt.classList.toggle("bad", !!r.error);
      if (!r.error) boxes().forEach((b) => { b.checked = false; });
      count();
    });
  });
})();
