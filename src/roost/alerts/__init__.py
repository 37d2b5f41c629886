"""Alerts to the person (issue 21), one room: `rules` picks the event log's edges worth one and
words them (pure), store/alerts.py keeps the cursor, the edges and the outbox (SQL),
`operations` decides and delivers (a service component; the channels' network side is
system/outbound.py), `commands` is `roost notify`. Not ops/notify.py, which tells a parent agent
of its child."""
