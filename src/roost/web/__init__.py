"""roost web: the fleet, each agent and a live terminal in a browser (`roost web`; docs/WEB.md).
Needs the `web` extra (Starlette, uvicorn); imported only by that command."""
