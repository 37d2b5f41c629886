"""Git worktrees per agent (issue 22), one room: `rules` says where a worktree lives, what its
branch is called and whether removing it could lose anything (pure), store/worktrees.py points
agents at their worktrees (SQL), `operations` makes and removes them, `commands` is `roost
worktree` and `roost fork`. Git itself is run by system/git.py, which fork and doctor use too."""
