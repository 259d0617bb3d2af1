"""The edge: one websocket's gateway (limits, parse, dispatch), what hello and a close
mean (arrivals), the HTTP side (the page, downloads, health, metrics), the PROXY protocol
and the counts per client address; the page's own files are in ``static/``."""
