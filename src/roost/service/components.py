"""The components the roost service runs, in start order, imported (no name looked up by
string: the import contract sees every one). Append yours; ops/service.Component says what
one is."""

from __future__ import annotations

from roost.alerts.operations import COMPONENT as ALERTS
from roost.budgets.operations import COMPONENT as BUDGET
from roost.hosts.children import COMPONENT as HOST_CHILDREN
from roost.mcp.component import COMPONENT as MCP_ENDPOINT
from roost.ops.held import COMPONENT as HELD
from roost.ops.resume import COMPONENT as RESUME
from roost.ops.service import Component
from roost.push.remote import COMPONENT as HOST_PUSH
from roost.recall.operations import COMPONENT as RECALL
from roost.service.monitor import COMPONENT as MONITOR
from roost.service.readers import COMPONENT as READERS
from roost.web.component import COMPONENT as WEB

COMPONENTS: tuple[Component, ...] = (
    READERS,  # first: readers hear of a batch before the slower work on it
    MONITOR,
    MCP_ENDPOINT,  # the shared MCP endpoint
    ALERTS,  # notifications to the person (issue 21 part 4)
    RESUME,  # resume at a usage limit's reset (issue 23 part 2)
    BUDGET,  # budgets at each turn's end (issue 23 part 5)
    HELD,  # texts held behind an agent's question (issue 34)
    WEB,  # roost web, when [web] enabled = true (issue 25)
    HOST_CHILDREN,  # children on hosts: their turns' ends (issue 24 part 4)
    RECALL,  # the index of every conversation, as records grow (issue 39)
    HOST_PUSH,  # pushes for hosts' agents, answered on their host (issue 40 point 5)
)
