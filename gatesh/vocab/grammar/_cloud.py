"""Cloud CLIs: the aws CLI."""

from __future__ import annotations

from typing import Final

from ._parse import Grammar
from ._rows import _f, _o

# Every aws option takes a value except the flags below, wherever it stands (options follow the
# service and operation as often as they precede them). The value options named are the global
# ones every command takes; the flags are the global ones and those of the s3 commands and of
# `--dryrun`, which the layers read.
AWS: Final = Grammar(
    "aws",
    _f("aws"),
    _o(
        _f("--region", "--profile", "--output", "--endpoint-url", "--query", "--ca-bundle")
        | _f("--color", "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format"),
        flags=_f("--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--version")
        | _f("--no-cli-pager", "--cli-auto-prompt", "--no-cli-auto-prompt")
        | _f("--recursive", "--force", "--dryrun", "--delete", "--quiet"),
        long_values=True,
    ),
    why="aws help (the AWS CLI's global options) and aws s3 help",
)
