"""Undo (S17): a snapshot before an allowed command writes, and ``gatesh undo`` to put it back.

- :mod:`~gatesh.undo.cover` — whether a snapshot will hold what a command loses, judged before it
  runs (the rater reads it, so a loss a snapshot holds is reversible);
- :mod:`~gatesh.undo.guard` — the snapshot taken between deciding and finishing an allowed
  command, and the decision without undo when it cannot be taken;
- :mod:`~gatesh.undo.snapshot` — the engine: a work tree, its refs and index into its own object
  store, files outside any repository into gatesh's state folder;
- :mod:`~gatesh.undo.store` — the book of snapshots and their expiry;
- :mod:`~gatesh.undo.restore` — the plan and the restore of ``gatesh undo ID``.

``gatesh undo``, a person's verb, is :mod:`gatesh.undo_cli`: it sends its op through
:mod:`gatesh.people`, which stands above the snapshot engine, so it lives outside this package.

This package's own ``__init__`` imports nothing: the rater imports :mod:`~gatesh.undo.cover`
on every decision, and must not pay for the rest.
"""
