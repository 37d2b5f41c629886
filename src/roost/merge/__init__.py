"""Review and merge (issue 38 points 3-5), one room: `rules` reads git's diff and merge-tree
output and decides (pure), store/merge.py keeps the merges, the base moves and the collision
marks (SQL), `operations` takes an agent's work, tells its siblings and watches for agents
that collide, `commands` is `roost merge` and `roost conflicts`."""
