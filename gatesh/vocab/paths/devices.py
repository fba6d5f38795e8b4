"""Devices a program only inspects, and devices whose reading never ends.

:data:`DEVICE_READS` names, per program, the forms that print, test, position or copy from the
devices (``/dev/...``) they are given without writing them; :func:`device_read` answers for one
command. :data:`ENDLESS_DEVICES` are the devices a read of never ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gatesh.vocab.words import split_args


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


# Devices whose reading never ends: a program that keeps what it reads fills memory, and a copy of
# them fills the disk (the builtin rater's exhaustion rules; never read-only).
ENDLESS_DEVICES: Final = frozenset({"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})


@dataclass(frozen=True)
class DeviceRead:
    """A program that, in the forms this row names, does not write the devices (``/dev/…``) it is
    given: it prints what is on them, tests, positions or ejects them, or copies from them.

    A form is matched on the command's static words (with one dynamic word nothing matches: it could
    be any option). A single-dash cluster (``-svw``) counts as each of its letters.

    - ``flags`` None: any option is allowed except ``writes``. A set: every option given is one of
      ``flags`` or ``values`` (an allow-list), and one of ``need`` (default: ``flags``) is given.
    - ``verbs``: the first operand that is not a path is one of these. A row with both ``flags``
      and ``verbs`` matches either form (``parted -l``, ``parted DEV print``).
    - ``values``: options that take a value; ``outputs``: those whose value is written (a device
      named there is not covered).
    - ``read_operands``: only the first N operands are read, later ones written (``ddrescue IN OUT``).
    - ``max_operands``: with more operands the program writes (``e2label DEV NAME`` sets the label).
    """

    heads: frozenset[str]
    why: str
    verbs: frozenset[str] = frozenset()
    flags: frozenset[str] | None = None
    need: frozenset[str] | None = None
    writes: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    outputs: frozenset[str] = frozenset()
    read_operands: int | None = None
    max_operands: int | None = None


DEVICE_READS: Final[tuple[DeviceRead, ...]] = (
    DeviceRead(
        _f("smartctl"),
        "reads a drive's health, identity and logs; -t starts the drive's own self-test, "
        "which keeps the data",
        writes=_f("-s", "--smart", "-o", "--offlineauto", "-S", "--saveauto", "--set"),
        values=_f(
            "-d",
            "--device",
            "-t",
            "--test",
            "-l",
            "--log",
            "-T",
            "--tolerance",
            "-b",
            "--badsum",
            "-r",
            "--report",
            "-n",
            "--nocheck",
            "-f",
            "--format",
            "-v",
            "--vendorattribute",
            "-F",
            "--firmwarebug",
            "-P",
            "--presets",
            "-B",
            "--drivedb",
            "-g",
            "--get",
            "-q",
            "--quietmode",
        ),
    ),
    DeviceRead(
        _f(
            "dumpe2fs",
            "e2freefrag",
            "dump.exfat",
            "blkid",
            "grub-probe",
            "pvdisplay",
            "vgdisplay",
            "lvdisplay",
            "pvs",
            "vgs",
            "lvs",
            "findfs",
            "fsstat",
            "mmls",
            "fls",
            "istat",
            "ils",
            "ffind",
            "ntfsinfo",
            "ntfsls",
            "ntfscluster",
            "xfs_info",
            "edid-decode",
            "efibootdump",
            "evtest",
            "timg",
            "zbarcam",
            "gpm",
            "intercept",
            "extundelete",
            "photorec",
            "pvscan",
            "fftest",
        ),
        "prints what is on the disk, file system or input/video device it is given, or copies files "
        "out of it; the device is only read",
        values=_f(
            "-o", "--output", "--output-dir", "-c", "-t", "-m", "-s", "-f", "-z", "-i", "-S", "-T"
        ),
        outputs=_f("-o", "--output", "--output-dir", "-c"),
    ),
    DeviceRead(
        _f("pvck"),
        "pvck --dump prints LVM metadata from the disk",
        flags=_f("--dump", "-v", "--verbose"),
        need=_f("--dump"),
        values=_f("--dump", "-f", "--file", "--settings", "--commandprofile", "--config"),
        outputs=_f("-f", "--file"),
    ),
    DeviceRead(
        _f("cryptsetup"),
        "these verbs print a LUKS header or a mapping's status",
        verbs=_f(
            "luksDump",
            "status",
            "isLuks",
            "luksUUID",
            "tcryptDump",
            "bitlkDump",
            "fvault2Dump",
            "benchmark",
        ),
        writes=_f("--dump-volume-key", "--dump-master-key"),
    ),
    DeviceRead(
        _f("udisksctl"),
        "these verbs print a device's properties",
        verbs=_f("info", "status", "dump", "monitor"),
        values=_f("-b", "--block-device", "-p", "--object-path", "-d", "--drive"),
    ),
    DeviceRead(
        _f("udevadm"),
        "these verbs print a device's udev properties or watch its events",
        verbs=_f("info", "monitor"),
        values=_f("-q", "--query", "-n", "--name", "-p", "--path"),
    ),
    DeviceRead(
        _f("dmstats"),
        "these verbs print device-mapper statistics",
        verbs=_f("list", "report", "print"),
    ),
    DeviceRead(
        _f("blockdev"),
        "the --get* and --report forms print a block device's settings",
        flags=_f(
            "--report",
            "--getsz",
            "--getss",
            "--getpbsz",
            "--getiomin",
            "--getioopt",
            "--getalignoff",
            "--getmaxsect",
            "--getbsz",
            "--getsize",
            "--getsize64",
            "--getra",
            "--getfra",
            "--getro",
            "--getdiscardzeroes",
            "--getdiskseq",
            "--getzonesz",
            "-v",
            "-q",
        ),
        need=_f(
            "--report",
            "--getsz",
            "--getss",
            "--getpbsz",
            "--getiomin",
            "--getioopt",
            "--getalignoff",
            "--getmaxsect",
            "--getbsz",
            "--getsize",
            "--getsize64",
            "--getra",
            "--getfra",
            "--getro",
            "--getdiscardzeroes",
            "--getdiskseq",
            "--getzonesz",
        ),
    ),
    DeviceRead(
        _f("tune.exfat"),
        "-l, -u and -i print an exFAT volume's label, GUID and serial",
        flags=_f(
            "-l", "--print-label", "-u", "--print-guid", "-i", "--print-serial", "-v", "--verbose"
        ),
        need=_f("-l", "--print-label", "-u", "--print-guid", "-i", "--print-serial"),
    ),
    DeviceRead(
        _f("handbrakecli"),
        "transcodes the disc or file named by -i (only read) into what -o names",
        values=_f(
            "-i",
            "--input",
            "-o",
            "--output",
            "-t",
            "--title",
            "-f",
            "--format",
            "-e",
            "--encoder",
            "-s",
            "--subtitle",
            "-a",
            "--audio",
            "-E",
            "--aencoder",
            "-q",
            "--quality",
            "-Z",
            "--preset",
            "-b",
            "--vb",
            "-r",
            "--rate",
            "-w",
            "--width",
            "-l",
            "--height",
        ),
        outputs=_f("-o", "--output"),
    ),
    DeviceRead(
        _f("cdrdao"),
        "these verbs read a disc or print its table of contents; `write` burns one",
        verbs=_f(
            "read-cd",
            "read-toc",
            "read-cddb",
            "disk-info",
            "msinfo",
            "scanbus",
            "drive-info",
            "show-toc",
            "toc-info",
            "toc-size",
            "discid",
            "show-data",
            "read-test",
        ),
        values=_f(
            "--device",
            "--driver",
            "--datafile",
            "--read-subchan",
            "--session",
            "-v",
            "--paranoia-mode",
        ),
        outputs=_f("--datafile"),
    ),
    DeviceRead(
        _f("tunelp"), "-s prints the printer port's status", flags=_f("-s", "--status", "-q")
    ),
    DeviceRead(
        _f("setserial"),
        "given only the port (and -a/-b/-g/-G), prints its settings; more words set them",
        max_operands=1,
        writes=_f("-z"),
    ),
    DeviceRead(
        _f("xfs_admin"), "-l and -u print an XFS volume's label and UUID", flags=_f("-l", "-u")
    ),
    DeviceRead(
        _f("fatlabel", "exfatlabel", "e2label", "ntfslabel", "swaplabel"),
        "given only the device, prints its label (a second operand would set it)",
        max_operands=1,
        writes=_f(
            "-r", "--reset", "--new-serial", "--new-half-serial", "-L", "--label", "-U", "--uuid"
        ),
    ),
    DeviceRead(
        _f("badblocks"),
        "without -w or -n it only reads the disk looking for bad blocks",
        writes=_f("-w", "-n", "-f", "-X"),
        values=_f("-b", "-c", "-e", "-d", "-p", "-t", "-i", "-o"),
        outputs=_f("-o"),
    ),
    DeviceRead(
        _f(
            "e2fsck",
            "fsck",
            "fsck.ext2",
            "fsck.ext3",
            "fsck.ext4",
            "xfs_repair",
            "fsck.fat",
            "fsck.vfat",
            "dosfsck",
            "fsck.exfat",
        ),
        "-n opens the file system read-only and answers no to every repair",
        flags=_f("-n", "--no-action", "-f", "-v", "-t", "-C", "-N", "-V"),
        need=_f("-n", "-N", "--no-action"),
        values=_f("-t", "-C"),
    ),
    DeviceRead(
        _f("lvm_import_vdo"),
        "--dry-run prints what the conversion would do",
        flags=_f("--dry-run", "-v", "--verbose", "-n", "--name", "-y", "--yes"),
        need=_f("--dry-run"),
        values=_f("-n", "--name"),
    ),
    DeviceRead(
        _f("hdparm"),
        "these options print a drive's identity, power state or settings, or time reads",
        flags=_f("-I", "-i", "-C", "-g", "-t", "-T", "-H", "--Istdout", "--direct"),
        need=_f("-I", "-i", "-C", "-g", "-t", "-T", "-H", "--Istdout"),
    ),
    DeviceRead(
        _f("e2undo"),
        "-n is a dry run and -h prints the undo file's header: the disk is not written",
        flags=_f("-n", "-h", "-v"),
        need=_f("-n", "-h"),
    ),
    DeviceRead(
        _f("e4defrag"),
        "-c only reports how fragmented the files are",
        flags=_f("-c", "-v"),
        need=_f("-c"),
    ),
    DeviceRead(
        _f("debugfs"),
        "without -w it opens the file system read-only",
        writes=_f("-w", "-c", "-D"),
        values=_f("-f", "-R", "-b", "-s", "-d"),
    ),
    DeviceRead(
        _f("mt", "mt-st", "mt-gnu"),
        "these verbs position, rewind or eject a tape or report its status; "
        "writing a filemark or erasing is another verb",
        verbs=_f(
            "status",
            "rewind",
            "fsf",
            "fsfm",
            "bsf",
            "bsfm",
            "fsr",
            "bsr",
            "asf",
            "eod",
            "seod",
            "eject",
            "offline",
            "rewoffl",
            "tell",
            "load",
            "lock",
            "unlock",
            "retension",
            "stshowopt",
        ),
        values=_f("-f", "-t"),
    ),
    DeviceRead(
        _f("eject"),
        "opens a drive's tray or releases removable media; nothing on it is written",
        writes=_f("-i", "--manualeject", "-a", "--auto", "-c", "--changerslot", "-x", "--cdspeed"),
    ),
    DeviceRead(
        _f("ioping"),
        "times reads from the disk; -W would write",
        writes=_f("-W", "--write"),
        values=_f("-c", "-i", "-s", "-S", "-w", "-l", "-o", "-p", "-P"),
    ),
    DeviceRead(
        _f("e2image"),
        "reads the file system's metadata into an image (the second operand); -I would "
        "write an image back",
        writes=_f("-I"),
        read_operands=1,
        values=_f("-o", "-O"),
    ),
    DeviceRead(
        _f("ddrescue", "gddrescue"),
        "copies the first operand (only read) to the second",
        read_operands=1,
        values=_f("-b", "-c", "-i", "-o", "-s", "-K", "-r", "-m"),
    ),
    DeviceRead(
        _f("fdisk", "gdisk"),
        "-l lists the partition tables",
        flags=_f("-l", "--list", "-b", "-u", "-o", "--output"),
        need=_f("-l", "--list"),
        values=_f("-b", "-o", "--output"),
    ),
    DeviceRead(
        _f("sfdisk"),
        "these options print or check the partition table",
        flags=_f(
            "-l",
            "--list",
            "-d",
            "--dump",
            "-s",
            "--show-size",
            "-V",
            "--verify",
            "-J",
            "--json",
            "-g",
            "--show-geometry",
            "-F",
            "--list-free",
            "-q",
            "--quiet",
        ),
        need=_f(
            "-l",
            "--list",
            "-d",
            "--dump",
            "-s",
            "--show-size",
            "-V",
            "--verify",
            "-J",
            "--json",
            "-g",
            "--show-geometry",
            "-F",
            "--list-free",
        ),
    ),
    DeviceRead(
        _f("sgdisk"),
        "these options print or verify the GUID partition table (-b saves a copy of it)",
        flags=_f(
            "-p",
            "--print",
            "-v",
            "--verify",
            "-L",
            "--list-types",
            "-i",
            "--info",
            "-O",
            "--print-mbr",
            "-D",
            "--display-alignment",
            "-b",
            "--backup",
        ),
        values=_f("-i", "--info", "-b", "--backup"),
        outputs=_f("-b", "--backup"),
    ),
    DeviceRead(
        _f("parted"),
        "-l and the print verb list the partition tables",
        verbs=_f("print"),
        flags=_f("-l", "--list", "-s", "--script", "-m", "--machine"),
        need=_f("-l", "--list"),
    ),
    DeviceRead(
        _f("wipefs"),
        "without -a or -o it lists the signatures on the device; with -n it changes nothing",
        writes=_f(
            "-a", "--all", "-o", "--offset", "-f", "--force", "-b", "--backup", "-t", "--types"
        ),
        values=_f("-O", "--output", "-o", "--offset", "-t", "--types"),
    ),
    DeviceRead(
        _f("mdadm"),
        "these modes print a RAID array's or member disk's state",
        flags=_f(
            "-D",
            "--detail",
            "-E",
            "--examine",
            "-Q",
            "--query",
            "--detail-platform",
            "-b",
            "--brief",
            "-v",
            "--verbose",
            "-s",
            "--scan",
            "--export",
        ),
        need=_f("-D", "--detail", "-E", "--examine", "-Q", "--query", "--detail-platform"),
    ),
)
_NO_ACT: Final = frozenset({"-n", "--no-act"})  # wipefs: with these, nothing is written
_DEVICE_READS: Final[dict[str, DeviceRead]] = {h: r for r in DEVICE_READS for h in r.heads}


def device_read(head: str, args: tuple[tuple[str, bool], ...]) -> frozenset[str] | None:
    """The devices (``/dev/…`` words) the command ``head ARGS`` only reads, by :data:`DEVICE_READS`;
    None when no row covers this form. ``args``: the words after the head as (text, static)."""
    row = _DEVICE_READS.get(head)
    if row is None or not all(static for _, static in args):
        return None
    allowed = (row.flags or frozenset()) | row.values
    opts, operands = split_args((t for t, _ in args), with_arg=row.values)
    options: list[str] = []
    valued: list[
        str
    ] = []  # option values: a device named there is read, unless the option is an output
    it = iter(opts)
    for o in it:
        name, eq, value = o.partition("=")
        if (
            not name.startswith("--")
            and len(name) > 2
            and name not in allowed
            and name not in row.writes
        ):
            options.extend(f"-{ch}" for ch in name[1:])  # a cluster: each letter its own option
        else:
            options.append(name)
        given = value if eq else (next(it, "") if o in row.values else "")
        if given and name not in row.outputs:
            valued.append(given)
    if row.writes & set(options) and not (head == "wipefs" and _NO_ACT & set(options)):
        return None
    verb = next((w for w in operands if "/" not in w), "")
    if row.flags is None:
        ok = not row.verbs or verb in row.verbs
    else:
        only_allowed = all(o in allowed for o in options)
        ok = only_allowed and any(o in (row.need or row.flags) for o in options)
        ok = ok or bool(row.verbs and verb in row.verbs and only_allowed)
    if not ok or (row.max_operands is not None and len(operands) > row.max_operands):
        return None
    named = operands if row.read_operands is None else operands[: row.read_operands]
    return frozenset(w for w in (*named, *valued) if w.startswith("/dev/"))
