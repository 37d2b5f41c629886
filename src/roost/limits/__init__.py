"""Usage limits (issue 23), one room: `rules` reads a limit and its reset from a CLI's words
(pure), store/limits.py keeps the limits seen (SQL), `operations` records them as the status
pipeline sees them and lists those that hold, `commands` is `roost limits`. Acting on a reset
(resuming an agent held by one) is ops/resume.py's."""
