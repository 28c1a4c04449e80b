"""The scoring core: run payloads and results (base), statuses and errors, the judge client, prices."""
