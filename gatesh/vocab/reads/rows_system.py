"""Read-only rows of the programs that print, search and describe files, and of the system's
information commands (the first part of :data:`gatesh.vocab.reads.RULES`).
"""

from __future__ import annotations

from typing import Final

from gatesh.vocab.programs.readers import PRINT_OR_DESCRIBE
from gatesh.vocab.reads.checks_system import find_reads, ip_reads, sed_reads
from gatesh.vocab.reads.checks_tools import SYSTEMCTL_READS
from gatesh.vocab.reads.rule import ReadOnlyRule, forbid, max_operands

# getent's databases it does not only read here: the shadow files (credentials), and the ones a
# lookup sends to the network's name servers.
_NOT_ONLY_READ_BY_GETENT: Final = frozenset(
    {"shadow", "gshadow", "hosts", "ahosts", "ahostsv4", "ahostsv6", "networks"}
)

ROWS: Final[tuple[ReadOnlyRule, ...]] = (
    ReadOnlyRule(
        "ro.read-files",
        PRINT_OR_DESCRIBE,
        "print or describe files they are given; they write nothing but standard output",
        examples=(
            "cat README.md",
            "head -n 20 src/main.py",
            "tail -f /var/log/syslog",
            "wc -l *.py",
            "sha256sum dist/app.tar.gz",
            "stat -c %s file",
            "file -b image.png",
        ),
        counter=("cat ~/.ssh/id_rsa", "cat .env", "file -C -m magic", "cat x > y"),
        check=forbid(short="", long=("--compile",), words=("-C",)),
    ),
    ReadOnlyRule(
        "ro.encode",
        frozenset({"base64", "base32", "basenc", "xxd"}),
        "encode or dump a file to standard output (an output-file operand would write, so at most one)",
        examples=("base64 -d blob.txt", "xxd -l 64 bin.dat"),
        counter=("xxd -r dump.hex out.bin",),
        check=max_operands(
            1, frozenset({"-l", "-s", "-c", "-g", "-o", "-w", "--wrap", "-n", "-C"})
        ),
    ),
    ReadOnlyRule(
        "ro.list",
        frozenset(
            {
                "ls",
                "ll",
                "la",
                "dir",
                "vdir",
                "exa",
                "eza",
                "lsd",
                "du",
                "df",
                "lsblk",
                "lsof",
                "findmnt",
                "lscpu",
                "lsusb",
                "lspci",
                "lsmod",
                "lshw",
                "free",
                "uptime",
                "nproc",
                "blkid",
            }
        ),
        "list files, disks, devices or usage; they change nothing",
        examples=("ls -la", "du -sh node_modules", "df -h", "lsblk", "ls -R src | head"),
        counter=("ls > listing.txt", "ls >> ~/.bashrc"),
    ),
    ReadOnlyRule(
        "ro.tree",
        frozenset({"tree"}),
        "lists a folder as a tree (-o would write a file)",
        examples=("tree -L 2 src",),
        counter=("tree -o out.txt",),
        check=forbid(short="o", long=("--output",)),
    ),
    ReadOnlyRule(
        "ro.search",
        frozenset(
            {
                "grep",
                "egrep",
                "fgrep",
                "zgrep",
                "ag",
                "ack",
                "locate",
                "plocate",
                "mlocate",
                "whatis",
                "apropos",
                "look",
            }
        ),
        "search text or file names and print matches",
        examples=("grep -rn TODO src", "ag foo", "grep -c x a.txt"),
        counter=("grep x a > b",),
    ),
    ReadOnlyRule(
        "ro.rg",
        frozenset({"rg", "ripgrep"}),
        "searches text (--pre would run a program on every file)",
        examples=("rg -n 'fn main'",),
        counter=("rg --pre ./decode foo",),
        check=forbid(long=("--pre",)),
    ),
    ReadOnlyRule(
        "ro.fd",
        frozenset({"fd", "fdfind"}),
        "finds file names (-x/-X would run a program per match)",
        examples=("fd -e py",),
        counter=("fd -e tmp -x rm",),
        check=forbid(short="xX", long=("--exec", "--exec-batch")),
    ),
    ReadOnlyRule(
        "ro.find",
        frozenset({"find", "bfs", "gfind"}),
        "walks folders and prints names (-delete, -fprint, -ok, -execdir or -exec of a writer would act)",
        examples=(
            "find . -name '*.py'",
            "find src -type f -exec grep -l TODO {} +",
            "find / -name core 2>/dev/null",
        ),
        counter=(
            "find . -name '*.pyc' -delete",
            "find . -exec rm {} \\;",
            "find . -fprint out.txt",
            "find /usr/bin -perm -4000",
            "find //.aws -name credentials -type f",
        ),
        check=find_reads,
    ),
    ReadOnlyRule(
        "ro.text",
        frozenset(
            {
                "cut",
                "tr",
                "paste",
                "column",
                "fold",
                "fmt",
                "expand",
                "unexpand",
                "rev",
                "join",
                "comm",
                "diff",
                "diff3",
                "sdiff",
                "cmp",
                "colordiff",
                "seq",
                "tsort",
                "numfmt",
                "jq",
                "gojq",
                "jaq",
                "expr",
                "factor",
                "cal",
                "ncal",
                "bc",
                "xmllint",
                "csvlook",
                "wdiff",
                "difft",
                "delta",
            }
        ),
        "filter or compare text to standard output; they take no output file",
        examples=(
            "cut -d: -f1 /etc/passwd",
            "diff -u a.txt b.txt",
            "jq .name package.json",
            "tr a-z A-Z",
        ),
        counter=("jq . x > x.json",),
        check=forbid(long=("--output", "--in-place"), words=("-i",)),
    ),
    ReadOnlyRule(
        "ro.sort",
        frozenset({"sort", "shuf", "iconv"}),
        "order or convert text (-o would write a file)",
        examples=("sort -u names.txt", "sort -k2 -n data | head"),
        counter=("sort -o out.txt in.txt", "sort -uo x y"),
        check=forbid(short="o", long=("--output", "--compress-program")),
    ),
    ReadOnlyRule(
        "ro.uniq",
        frozenset({"uniq"}),
        "filters repeated lines (a second operand is an output file)",
        examples=("sort f | uniq -c",),
        counter=("uniq in.txt out.txt",),
        check=max_operands(1, frozenset({"-f", "-s", "-w"})),
    ),
    ReadOnlyRule(
        "ro.sed",
        frozenset({"sed", "gsed"}),
        "prints edited text (in-place -i, script files, and w/W/e commands would write or run)",
        examples=("sed -n '1,20p' file", "sed 's/a/b/g' in.txt", "sed -e 's/x/y/' -e '/^#/d' f"),
        counter=(
            "sed -i 's/a/b/' f",
            "sed 's/a/b/w out' f",
            "sed -f script.sed f",
            "sed '1e date' f",
            "sed -ni p f",
        ),
        check=sed_reads,
    ),
    ReadOnlyRule(
        "ro.yq",
        frozenset({"yq"}),
        "queries YAML (-i would edit in place)",
        examples=("yq '.services' compose.yaml",),
        counter=("yq -i '.a = 1' x.yaml",),
        check=forbid(short="i", long=("--inplace",)),
    ),
    ReadOnlyRule(
        "ro.shell",
        frozenset(
            {
                "echo",
                "printf",
                "pwd",
                "true",
                "false",
                ":",
                "test",
                "[",
                "[[",
                "cd",
                "pushd",
                "popd",
                "dirs",
                "sleep",
                "wait",
                "type",
                "help",
                "jobs",
                "times",
                "caller",
                "tput",
                "clear",
                "yes",
            }
        ),
        "shell builtins that print, test or move within folders",
        examples=(
            "echo hello",
            "pwd",
            "cd src && ls",
            "test -f x && echo yes",
            "printf '%s\\n' a b",
        ),
        counter=("echo x > file.txt", "echo hi >> ~/.bashrc"),
    ),
    ReadOnlyRule(
        "ro.which",
        frozenset({"which", "whereis", "command", "hash"}),
        "say where a program is (command -v/-V only; hash without -r/-p/-d)",
        examples=("which python3", "command -v git", "whereis -b ls"),
        counter=("command rm -rf x", "hash -p /tmp/x ls"),
        check=lambda a: (
            (bool(a) and a[0] in ("-v", "-V", "-a", "-t", "-l"))
            or not any(x in ("-p", "-d", "-r") for x in a)
        ),
    ),
    ReadOnlyRule(
        "ro.system-info",
        frozenset(
            {
                "whoami",
                "id",
                "groups",
                "users",
                "who",
                "w",
                "uname",
                "tty",
                "locale",
                "getconf",
                "last",
                "lastlog",
                "lsb_release",
                "sw_vers",
                "ps",
                "pgrep",
                "pidof",
                "pstree",
                "vmstat",
                "iostat",
                "mpstat",
                "printenv",
                "env",
                "ss",
                "netstat",
                "nvidia-smi",
                "sensors",
                "logname",
                "pinky",
                "hostid",
                "runlevel",
                "lsns",
                "ipcs",
            }
        ),
        "report who and what is running; they change nothing",
        examples=("whoami", "uname -a", "ps aux | grep node", "ss -ltnp", "env", "printenv PATH"),
        counter=("env -i", "ps aux > ps.txt"),
        check=lambda a: (
            not any(
                x
                in (
                    "-i",
                    "--ignore-environment",
                    "-u",
                    "--unset",
                    "-o",
                    "-C",
                    "-S",
                    "shadow",
                    "gshadow",
                )
                for x in a
            )
        ),
    ),
    ReadOnlyRule(
        "ro.getent",
        frozenset({"getent"}),
        "reads the system's account and service databases; it changes nothing",
        examples=("getent passwd", "getent group docker", "getent services 22"),
        counter=("getent shadow", 'getent hosts "$TOKEN.x.example"', "getent ahostsv4 db"),
        # A name lookup sends the name to the network's name servers: a name built from a secret
        # carries it out, so those databases are rated (net.dns-secret), never read-only.
        check=lambda a: not any(x in _NOT_ONLY_READ_BY_GETENT for x in a),
    ),
    ReadOnlyRule(
        "ro.hostname",
        frozenset({"hostname", "domainname"}),
        "prints the host name (an operand would set it)",
        examples=("hostname", "hostname -I"),
        counter=("hostname newname", "hostname -F file"),
        check=lambda a: (
            not any(not x.startswith("-") for x in a)
            and not any(x in ("-F", "--file", "-b") for x in a)
        ),
    ),
    ReadOnlyRule(
        "ro.date",
        frozenset({"date"}),
        "prints the date (-s would set the clock)",
        examples=("date +%s", "date -u"),
        counter=("date -s '2020-01-01'",),
        check=forbid(short="s", long=("--set",)),
    ),
    ReadOnlyRule(
        "ro.top",
        frozenset({"top", "htop", "btop", "atop"}),
        "shows processes in batch mode",
        examples=("top -b -n 1",),
        counter=("top",),
        check=lambda a: any(x.startswith("-b") or x == "-bn1" for x in a),
    ),
    ReadOnlyRule(
        "ro.dmesg",
        frozenset({"dmesg"}),
        "prints the kernel log (-c/-C/-D/-E/-n would change it)",
        examples=("dmesg | tail",),
        counter=("dmesg -C",),
        check=forbid(
            short="cCDEn",
            long=("--clear", "--read-clear", "--console-off", "--console-on", "--console-level"),
        ),
    ),
    ReadOnlyRule(
        "ro.journalctl",
        frozenset({"journalctl"}),
        "reads the journal (vacuum, rotate, flush would change it)",
        examples=("journalctl -u nginx --since today",),
        counter=("journalctl --vacuum-size=100M",),
        check=forbid(
            long=(
                "--vacuum-size",
                "--vacuum-time",
                "--vacuum-files",
                "--rotate",
                "--flush",
                "--sync",
                "--relinquish-var",
                "--setup-keys",
                "--update-catalog",
                "--smart-relinquish-var",
            )
        ),
    ),
    ReadOnlyRule(
        "ro.systemctl",
        frozenset({"systemctl"}),
        "queries units (start/stop/enable/… change the system)",
        examples=(
            "systemctl status nginx",
            "systemctl list-units --type=service",
            "systemctl is-active docker",
        ),
        counter=("systemctl restart nginx", "systemctl enable --now x"),
        check=SYSTEMCTL_READS,
    ),
    ReadOnlyRule(
        "ro.systemd-query",
        frozenset(
            {
                "hostnamectl",
                "timedatectl",
                "localectl",
                "loginctl",
                "networkctl",
                "resolvectl",
                "bootctl",
                "systemd-analyze",
            }
        ),
        "report systemd state (status, list and show verbs only)",
        examples=("timedatectl", "hostnamectl status", "loginctl list-sessions"),
        counter=("hostnamectl set-hostname x", "timedatectl set-timezone UTC"),
        check=lambda a: (
            next((x for x in a if not x.startswith("-")), "status")
            in (
                "status",
                "show",
                "list",
                "list-timezones",
                "list-sessions",
                "list-users",
                "list-seats",
                "show-session",
                "show-user",
                "session-status",
                "user-status",
                "list-keymaps",
                "list-locales",
                "blame",
                "time",
                "critical-chain",
                "query",
                "statistics",
                "dns",
            )
        ),
    ),
    ReadOnlyRule(
        "ro.ip",
        frozenset({"ip", "ifconfig", "route", "arp", "iw", "iwconfig", "nmcli"}),
        "show network configuration (add/del/set/up/down would change it)",
        examples=(
            "ip addr",
            "ip -br a",
            "ip route show",
            "ifconfig",
            "route -n",
            "nmcli device status",
        ),
        counter=(
            "ip link set eth0 down",
            "ip addr add 10.0.0.2/24 dev eth0",
            "ifconfig eth0 down",
            "route add default gw 1.2.3.4",
        ),
        check=lambda a: (
            ip_reads(a)
            and not any(
                x
                in (
                    "add",
                    "del",
                    "delete",
                    "set",
                    "up",
                    "down",
                    "flush",
                    "change",
                    "replace",
                    "connect",
                    "disconnect",
                    "modify",
                    "-d",
                    "-s",
                    "-f",
                    "--file",
                    "-batch",
                    "-b",
                    "-force",
                    "--set",
                    "--delete",
                )
                for x in a
            )
        ),
    ),
    ReadOnlyRule(
        "ro.history",
        frozenset({"history"}),
        "prints shell history (-c, -d, -w, -a would change it)",
        examples=("history | tail -5", "history 20"),
        counter=("history -c",),
        check=lambda a: not a or (len(a) == 1 and a[0].isdigit()),
    ),
    ReadOnlyRule(
        "ro.umask",
        frozenset({"umask", "ulimit"}),
        "print the mask or limits (a value would set them)",
        examples=("umask", "ulimit -a", "ulimit -n"),
        counter=("umask 000", "ulimit -n 1"),
        check=lambda a: not any(not x.startswith("-") for x in a),
    ),
)
