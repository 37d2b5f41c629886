"""Token usage and its estimated cost (issue 23 part 4), one room: `rules` reads the CLIs' session
files' counts and `prices` prices them (both pure), store/usage.py stores the totals (SQL),
`operations` reads what each agent's files gained, `commands` is `roost usage`."""
