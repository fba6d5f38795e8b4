"""Path-use rows of the programs that work on files: readers, searchers, editors of text, and
the programs that create, copy, move, link, delete or change the metadata of files.

Part of :data:`gatesh.vocab.paths.uses.USES` (its first rows; first match of a head wins).
"""

from __future__ import annotations

from typing import Final

from gatesh._types import Change, Direction
from gatesh.vocab.paths.use import PathUse, R, U, W
from gatesh.vocab.programs.readers import READ_OPERANDS


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# Rows in table order: a program named by two rows takes the later one (see ``uses._BY_HEAD``).
ROWS: Final[tuple[PathUse, ...]] = (
    PathUse(
        READ_OPERANDS,
        "prints or compares what the files hold",
        operands=R,
        writes=_f("-o", "--output"),
    ),
    PathUse(
        _f("grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "pcregrep"),
        "searches the files; the first operand is the pattern",
        operands=R,
        skip=1,
        reads=_f("-f", "--file"),
        values=_f(
            "-e",
            "--regexp",
            "-m",
            "-A",
            "-B",
            "-C",
            "--include",
            "--exclude",
            "--exclude-dir",
            "-g",
            "--glob",
            "-t",
            "--type",
            "--max-count",
        ),
    ),
    PathUse(
        _f("awk", "gawk", "mawk", "nawk", "jq", "yq", "gojq", "xq"),
        "reads the files; the first operand is the program",
        operands=R,
        skip=1,
        reads=_f("-f", "--from-file"),
        values=_f("-F", "-v", "--arg", "--argjson", "-r"),
        in_place=_f("-i", "--inplace"),
        replaces=True,
    ),
    PathUse(
        _f("sed", "gsed"),
        "reads the files; the first operand is the script; -i rewrites them in place",
        operands=R,
        skip=1,
        reads=_f("-f", "--file"),
        values=_f("-e", "--expression", "-l", "--line-length"),
        in_place=_f("-i", "--in-place"),
        replaces=True,
    ),
    PathUse(
        _f("perl", "ruby"),
        "runs a program; -i rewrites the files it is given in place",
        operands=U,
        in_place=_f("-i", "-pi", "-p", "-ni"),
        replaces=True,
        all_operands=False,
        values=_f("-e", "-E", "-M", "-I", "-r"),
    ),
    PathUse(
        _f("touch"),
        "creates the files it names when they are missing (an empty file; nothing is replaced)",
        operands=W,
        values=_f("-d", "--date", "-t", "-r", "--reference"),
    ),
    PathUse(
        _f("chmod", "chown", "chgrp"),
        "changes the mode or owner of the files (the first operand is the mode or owner)",
        operands=W,
        skip=1,
        reads=_f("--reference"),
        values=_f("--from"),
        change=Change.META,
        deep=_f("-R", "--recursive"),
        modes=r"^-[rwxXst]+$",
    ),
    PathUse(
        _f("chattr"),
        "changes the attributes of the files (the first operand is the attribute change)",
        operands=W,
        skip=1,
        values=_f("-v", "-p"),
        change=Change.META,
        deep=_f("-R"),
        modes=r"^-[aAcCdDeFijmPsStTux]+$",
    ),
    PathUse(
        _f("setfacl"),
        "changes the access lists of the files",
        operands=W,
        values=_f("-m", "--modify", "-x", "--remove", "--set"),
        reads=_f("-M", "--modify-file", "-X", "--remove-file", "--set-file"),
        change=Change.META,
        deep=_f("-R", "--recursive"),
    ),
    PathUse(
        _f("mkdir", "mkfifo"),
        "creates the folders or pipes it names",
        operands=W,
        values=_f("-m", "--mode", "--context"),
        change=Change.CREATE,
    ),
    PathUse(
        _f("mknod"),
        "creates the device or pipe it names (the words after the name are its type and numbers)",
        operands=W,
        all_operands=False,
        values=_f("-m", "--mode", "--context"),
        change=Change.CREATE,
    ),
    PathUse(
        _f("rmdir"),
        "removes the empty folders it names",
        operands=W,
        change=Change.REMOVE_EMPTY,
    ),
    PathUse(
        _f("unzip"),
        "reads the archive it is given (its first operand; the rest name members) and extracts it "
        "into -d DIR",
        operands=R,
        all_operands=False,
        writes=_f("-d"),
        values=_f("-P", "-x"),
        deep=_f("-d"),
    ),
    PathUse(
        _f("lsof", "fuser"),
        "names the files whose users it lists (fuser -k kills them): their content is untouched",
        operands=Direction.NAMED,
        all_operands=False,
        values=_f("-p", "-u", "-g", "-c", "-s", "-a", "-n", "--namespace", "-d", "-i"),
    ),
    PathUse(
        _f("tee"),
        "writes its input to every file it names",
        operands=W,
        replaces=True,
        keeps=_f("-a", "--append"),
    ),
    PathUse(
        _f("cp", "gcp", "install", "ginstall", "ditto", "rsync"),
        "copies the sources over the destination",
        operands=R,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
        keeps=_f("-n", "--no-clobber", "--ignore-existing", "--update=none", "-b", "--backup"),
        deep=_f("-r", "-R", "-a", "--recursive", "--archive", "--delete"),
    ),
    PathUse(
        _f("mv", "gmv"),
        "moves the sources over the destination",
        operands=R,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
        keeps=_f("-n", "--no-clobber", "-b", "--backup"),
    ),
    PathUse(
        _f("ln", "gln"),
        "creates links; with -f it replaces what the link name held",
        operands=None,
        last=W,
        replaces=True,
        writes=_f("-t", "--target-directory"),
    ),
    PathUse(
        _f("rm", "unlink", "shred", "srm", "wipe", "trash", "trash-put", "rimraf", "gio-trash"),
        "deletes the files",
        operands=W,
        replaces=True,
        values=_f("-n", "--iterations", "-s", "--size"),
        change=Change.REMOVE,
    ),
    PathUse(
        _f("truncate"),
        "sets the files' size, cutting what lies beyond it",
        operands=W,
        replaces=True,
        values=_f("-s", "--size", "-o"),
        reads=_f("-r", "--reference"),
    ),
    PathUse(
        _f("sort", "shuf"),
        "reads the files; -o writes the result over its value",
        operands=R,
        writes=_f("-o", "--output"),
        replaces=True,
        values=_f(
            "-k",
            "--key",
            "-t",
            "--field-separator",
            "-S",
            "--buffer-size",
            "-T",
            "--temporary-directory",
            "-n",
            "--head-count",
            "-i",
            "--input-range",
            "--random-source",
            "--parallel",
            "--batch-size",
        ),
    ),
    PathUse(
        _f("uniq", "xxd"),
        "reads the first operand and writes the second",
        operands=R,
        last=W,
        replaces=True,
        values=_f("-f", "-s", "-w", "-c", "-g", "-l", "-o", "-s", "-n"),
    ),
    PathUse(_f("dd"), "copies if= to of=", operands=None),
)
