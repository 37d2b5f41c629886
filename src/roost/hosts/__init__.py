"""Remote hosts over OpenSSH (issue 24, docs/HOSTS.md), one room: `rules` builds the ssh argv, the
remote command line and `HOST:AGENT` targets (pure), store/hosts.py is how to reach each host
(SQL), `operations` asks a host's roost and joins the fleet's view, `commands` is `roost host`
and `ls --all`/`watch --all`. Children on a host: `childrules` says what a line of a host's
stream means to a parent here (pure), `children` creates, messages and follows them (their rows:
store/hostchildren.py). Elsewhere by their layer's rule: ssh itself runs in system/ssh.py,
`ls --all`'s Click-free path is cli/fastall.py (beside `ls`'s, cli/fast.py), the web's hosts
page is web/hosts.py, a command on a host is cli/remote.py."""
