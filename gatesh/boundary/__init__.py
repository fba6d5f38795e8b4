"""The boundary (S16): what gatesh lets run stays inside a domain the kernel enforces.

Two halves, one wire form between them:

- The daemon (or the in-process gate) computes a command's boundary from its decision
  (:mod:`gatesh.boundary.compute`): the folders it may write, the credential stores it may not
  read, its network, the scopes and the resource limits. Its wire form
  (:meth:`gatesh.boundary.compute.Boundary.wire`) is one typed record,
  :class:`gatesh.boundary._spec.Spec`: versioned JSON in the check reply, decoded once by the
  client, which refuses a spec that is not exactly its form.
- The client that runs the command applies it just before ``exec`` (:mod:`gatesh.boundary._kernel`,
  Linux Landlock through ``ctypes``) in a child it waits for (:mod:`gatesh.boundary._parent`), so
  that it can tell the agent after the command's own output which boundary it ran in.

The client half imports the standard library only (the ``-c`` client must: S9.4, S14); so does
importing this package, which defines nothing itself.
"""
