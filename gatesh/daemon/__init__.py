"""The per-user daemon (S9), one module per concern:

server     the process (lock, socket, signals) and each connection: hello, typed dispatch
protocol   the wire format: newline-delimited JSON, ops, roles, error replies
core       what the handlers share: connections, config and backends, watchers and events
sessions   sessions and the pending book the daemon keeps (coalesced writes)
routing    the ``check`` op: decide, finish, and who is asked (a watcher, the surface, nobody)
verbs      the human-only ops: answer, approve, deny, mandate, resume
auditpipe  the audit writer: each line before its reply, fsync-ed after
procs      process facts from /proc: ancestry, harness sessions, gated processes
admin      ``gatesh status``, ``log`` and ``dump``: the person's read-only views
"""
