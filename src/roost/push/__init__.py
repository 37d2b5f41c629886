"""Needs you, on the phone (issue 40), one room: `rules` says what a device's credential, a
pairing code and a capability look like and when each is refused, what a push says (from an
alert edge and a question's choices) and draws the app's icons (pure); store/push.py keeps the
devices, their subscriptions, pairing codes and capabilities (hashed); `operations` pairs,
subscribes, sends Web Push (RFC 8030/8291/8292: pywebpush, loaded lazily) and applies an answer
from a notification as `roost answer` does; `commands` is `roost web pair` and `roost web
devices`."""
