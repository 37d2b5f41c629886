"""Budgets (issue 23 part 5), one room: `rules` parses a budget and tells when usage reached it
(pure), `operations` parks the agents past theirs and keeps `[budget] max_live` (a service
component). The counts are the usage room's; `roost policy NAME --budget` sets one
(cli/main.py)."""
