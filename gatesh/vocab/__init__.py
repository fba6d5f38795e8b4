"""The one vocabulary every layer shares: data, not code.

Reader, policy, rater and daemon import these tables instead of keeping their own lists, so a name
the gate treats as a shell in one layer is a shell in all of them. One module per domain:
``programs`` (shells, interpreters and their inline-code flags, command-valued positions),
``hosts`` (loopback names and host rules), ``paths`` (path classes and what reading or writing
each means), ``places`` (the protected places self-protection, the path classes and the boundary
all read).
"""
