// roost web's service worker (issue 40): a push shows a notification with the payload's title,
// body and actions (a waiting agent's choices); a tap on an action POSTs the answer to roost web
// with the push's one-time capability; a reply typed into a notification's text field (an action
// of type "text": Chromium, where event.reply carries it) POSTs it as {capability, text}; a tap
// elsewhere, or on the reply action where the platform has no text field, opens (or focuses)
// the agent's page.
// Every notification and receipt is also posted to the open pages (they show it).
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function tell(message) {
  return self.clients.matchAll({ type: "window", includeUncontrolled: true })
    .then((pages) => pages.forEach((p) => p.postMessage(message)));
}

function show(data) {
  const options = {
    body: data.body || "",
    tag: data.tag || "roost",
    renotify: true,
    data: { url: data.url || "/", capability: data.capability || null, agent: data.agent || "" },
    actions: (data.actions || []).slice(0, 2),
    icon: "/icon-192.png",
  };
  return Promise.all([
    self.registration.showNotification(data.title || "roost", options),
    tell({ roostPush: data }),
  ]);
}

self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = { title: "roost", body: event.data ? event.data.text() : "" }; }
  event.waitUntil(show(data));
});

function answer(capability, choice, reply) {
  const body = reply === undefined ? { capability, choice } : { capability, text: reply };
  return fetch("/push/answer", {
    method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then((r) => r.json()).then((r) => {
    const said = r.applied ? r.receipt : "not applied: " + (r.error || "refused");
    return tell({ roostAnswer: r, said });
  });
}

function clicked(notification, action, reply) {
  const d = notification.data || {};
  notification.close();
  if (action === "reply" && d.capability && typeof reply === "string" && reply.trim()) {
    return answer(d.capability, null, reply);
  }
  if (action && action !== "reply" && d.capability) return answer(d.capability, action);
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((pages) => {
    const here = pages.find((p) => new URL(p.url).pathname === d.url);
    return here ? here.focus() : self.clients.openWindow(d.url || "/");
  });
}

self.addEventListener("notificationclick", (event) =>
  event.waitUntil(clicked(event.notification, event.action, event.reply)));

// A test hook (tests/test_push_browser.py): headless Chromium cannot tap a notification, so a
// page may ask the worker to act as the tap would ({roostClick: {tag, action, reply}}: reply as
// event.reply would carry what was typed into a text action).
self.addEventListener("message", (event) => {
  const click = event.data && event.data.roostClick;
  if (!click) return;
  event.waitUntil(self.registration.getNotifications({ tag: click.tag }).then((found) => {
    if (!found.length) return tell({ roostClickMissed: click.tag });
    return clicked(found[0], click.action, click.reply);
  }));
});
