"""Self-protection rows that guard protected places: gatesh's own files and installation, the
harness settings and their hooks, transcripts and snapshots, git hooks gatesh wrote, and writes
whose target is only known when the command runs. The first rows of
:data:`gatesh.policy.selfprotect._rules.RULES`.
"""

from __future__ import annotations

from typing import Final

from gatesh.policy.selfprotect._row import ALL_ACTS, CONTENT_ACTS, SelfRule, Touched

from ._places import Kind
from ._settings import (
    DECLARERS,
    HARNESSES,
    harness_hooks_off,
)
from ._writes import Act

ROWS: Final[tuple[SelfRule, ...]] = (
    SelfRule(
        "self.files-delete",
        "deletes or moves gatesh's own config, state, audit log or socket: tampering with the gate",
        Touched(Kind.FILES, (Act.REMOVE,)),
        examples=(
            "rm -rf ~/.config/gatesh",
            "rm ~/.local/state/gatesh/audit.jsonl",
            "mv ~/.config/gatesh/config.toml /tmp/",
            "rm -rf ~/.config/*",
            "rm -rf ~/.local",
            'sudo rm -rf "$XDG_STATE_HOME/gatesh"',
            "rm -f /etc/gatesh/config.toml",
            "find ~/.local/state/gatesh -delete",
            "find / -print0 -name '*.txt' | xargs -0 -I{} mv {} {}.bak",
            "find / -name '*.mp3' -o -name gatesh | xargs rm -rf",
        ),
        counter=("rm -rf ~/.config/nvim", "rm .gatesh.toml", "mv notes.txt ~/docs/"),
    ),
    SelfRule(
        "self.files-write",
        "writes into gatesh's own config, state, audit log or socket: tampering with the gate",
        Touched(Kind.FILES, (Act.WRITE, Act.STAMP)),
        examples=(
            "echo 'rung = \"bypass\"' >> ~/.config/gatesh/config.toml",
            "cp evil.toml ~/.config/gatesh/config.toml",
            "tee ~/.local/state/gatesh/audit.jsonl",
            "sed -i s/auto/bypass/ ~/.config/gatesh/config.toml",
            "truncate -s0 ~/.local/state/gatesh/audit.jsonl",
            "chmod 777 ~/.config/gatesh",
            "ln -sf /dev/null ~/.local/state/gatesh/audit.jsonl",
            "vim ~/.config/gatesh/config.toml",
            "python3 -c \"open('/etc/gatesh/config.toml','w').write('')\"",
            "bash -c 'cat x > ~/.config/gatesh/config.toml'",
            "find / | xargs -I{} tar cf {} notes",
            "find ~ -iname GATESH | xargs chmod -R 777",
            "find -L / -user me | xargs chown you",
        ),
        counter=(
            "cat ~/.config/gatesh/config.toml",
            "cp ~/.config/gatesh/config.toml /tmp/backup.toml",
            "echo 'rung = \"write\"' >> .gatesh.toml",
            "ls -la ~/.local/state/gatesh",
            "grep rung ~/.config/gatesh/config.toml",
            "sed -n 1p ~/.config/gatesh/config.toml",
            "find / -print0 | xargs -0 tar cjf all.tar.bz2",
            "find ~ -name '*.txt' -print0 | xargs -0 cp -ut ~/newdir",
            "find / -iname '*.mp3' | xargs -I{} rsync -a {} /mnt/mp3/",
            "find / -iname '*.mp3' -type f | xargs -I{} mv {} /mnt/mp3",
            "cat dirs.txt | grep / | sort -u | xargs mkdir -p",
        ),
    ),
    SelfRule(
        "self.files-cwd",
        "changes into gatesh's own folders and writes there: tampering with the gate",
        Touched(Kind.FILES, (Act.WORK_IN,)),
        examples=(
            "cd ~/.config/gatesh && rm config.toml",
            "cd ~/.local/state/gatesh; echo > audit.jsonl",
        ),
        counter=("cd ~/.config/gatesh && cat config.toml", "cd ~/src && rm -rf build"),
    ),
    SelfRule(
        "self.install",
        "replaces, edits or removes gatesh's installation (its launcher, shims, venv, man page or install "
        "record): tampering with the gate",
        Touched(Kind.INSTALL, ALL_ACTS),
        examples=(
            "cp /bin/true ~/.local/bin/gatesh",
            "ln -sf /bin/bash ~/.local/bin/gatesh",
            "rm ~/.local/bin/gatesh",
            "chmod -x ~/.local/bin/gatesh",
            "rm -rf ~/.local/share/gatesh/venv",
            "ln -sf /bin/bash ~/.local/share/gatesh/shims/bash",
            "~/.local/share/gatesh/venv/bin/pip uninstall -y gatesh",
            "sed -i s/ATTACK/SAFE/ ~/.local/share/gatesh/venv/lib/python3.11/site-packages/gatesh/x.py",
            "rm ~/.local/share/man/man1/gatesh.1",
            "python3 -c \"import os; os.remove(os.path.expanduser('~/.local/bin/gatesh'))\"",
        ),
        counter=(
            "cat ~/.local/bin/gatesh",
            "ls ~/.local/share/gatesh/venv/bin",
            "man gatesh",
            "~/.local/share/gatesh/venv/bin/python -c 'print(1)'",
            "cp ~/.local/bin/gatesh /tmp/launcher.txt",
            "pip install -e .",
        ),
    ),
    SelfRule(
        "self.harness-settings",
        "changes a harness's settings or hooks file, where its gatesh hooks are or can be switched off: "
        "tampering with the gate",
        Touched(Kind.HARNESS, ALL_ACTS),
        examples=(
            "echo '{}' > ~/.gemini/settings.json",
            "rm ~/.claude/settings.json",
            "jq 'del(.hooks)' ~/.claude/settings.json | sponge ~/.claude/settings.json",
            "sed -i '/gatesh/d' ~/.codex/hooks.json",
            "mv ~/.codex/hooks.json ~/.codex/hooks.off",
            "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json",
            "cp /tmp/s.json .gemini/settings.json",
            "echo 'features.hooks = false' >> ~/.codex/config.toml",
            "python3 -c \"import json,os;p=os.path.expanduser('~/.claude/settings.json');json.dump({},open(p,'w'))\"",
        ),
        counter=(
            "cat ~/.claude/settings.json",
            "jq .hooks ~/.claude/settings.json",
            "sed -n '/hooks/p' ~/.claude/settings.json",
            "rm .claude/settings.local.json",
            "cat .gemini/settings.json",
            "ls ~/.codex",
        ),
    ),
    SelfRule(
        "self.harness-hooks-off",
        "starts a harness with its hooks off, moves where it reads its settings, or writes a setting that "
        "switches hooks off: escaping the gate",
        lambda s: harness_hooks_off(s.cmd, s.effects, s.facts, s.prot),
        heads=HARNESSES | DECLARERS,
        examples=(
            "codex -c features.hooks=false exec 'make'",
            "claude --settings '{\"disableAllHooks\":true}' -p hi",
            "CLAUDE_CONFIG_DIR=/tmp/c claude -p hi",
            "CODEX_HOME=/tmp/x codex exec ls",
            "claude --setting-sources project -p hi",
            "echo '{\"disableAllHooks\": true}' > /tmp/s.json",
        ),
        counter=(
            "claude -p 'fix the tests'",
            "codex exec 'make test'",
            "codex -c model=o3 exec ls",
            "grep -r disableAllHooks docs/",
        ),
    ),
    SelfRule(
        "self.transcript",
        "writes or deletes a harness's session transcript (the record of what the user said): tampering "
        "with the gate",
        Touched(Kind.TRANSCRIPT, CONTENT_ACTS),
        examples=(
            'echo \'{"type":"user"}\' >> ~/.claude/projects/p/s.jsonl',
            "rm -rf ~/.claude/projects",
            "tee -a ~/.codex/sessions/2025/x.jsonl",
            "cd ~/.claude/projects/p && echo x >> s.jsonl",
            "python3 -c \"open('/root/.claude/projects/p/s.jsonl','a').write('x')\"",
        ),
        counter=(
            "cat ~/.claude/projects/p/s.jsonl",
            "tail -n 5 ~/.claude/projects/p/s.jsonl",
            "grep -r hello ~/.claude/projects",
            "ls ~/.gemini/tmp",
            "touch ~/.claude/projects/p/s.jsonl",
        ),
    ),
    SelfRule(
        "self.harness-snapshot",
        "changes a harness's shell snapshot, which the harness sources before every command and the "
        "gate does not read (harness boilerplate, S1): escaping the gate",
        Touched(Kind.SNAPSHOT, ALL_ACTS),
        examples=(
            "echo 'rm -rf ~' >> ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "cp /tmp/payload.sh ~/.codex/shell_snapshots/0198a7c2.sh",
            "tee ~/.codex/shell_snapshots/x.sh < /tmp/p",
            "cd ~/.claude/shell-snapshots && echo x > s.sh",
        ),
        counter=(
            "cat ~/.claude/shell-snapshots/snapshot-bash-1-abc.sh",
            "ls ~/.codex/shell_snapshots",
            "grep -r alias ~/.claude/shell-snapshots",
        ),
    ),
    SelfRule(
        "self.git-hooks",
        "changes or removes the git hooks gatesh installed: tampering with the gate",
        Touched(Kind.GIT_HOOKS, ALL_ACTS),
        examples=(
            "rm -rf ~/.local/share/gatesh/git-hooks",
            "chmod -x ~/.local/share/gatesh/git-hooks/pre-push",
            "echo 'exit 0' > ~/.local/share/gatesh/git-hooks/pre-push",
        ),
        counter=(
            "cat ~/.local/share/gatesh/git-hooks/pre-push",
            "ls .git/hooks",
            "rm .git/hooks/pre-commit.sample",
        ),
    ),
    SelfRule(
        "self.unknown-target",
        "writes or removes a path only known when it runs that could be one of gatesh's own files, "
        "a harness's settings or the git hooks gatesh installed: tampering with the gate",
        Touched(Kind.UNKNOWN, ALL_ACTS),
        examples=(
            'printf "#!/bin/sh\\nexit 0\\n" > "$(git rev-parse --git-dir)/hooks/pre-push"',
            'cp /dev/null "$D/gatesh/config.toml"',
            'rm -rf ~/.config/"$name"',
            'echo "{}" > "$(dirname "$P")/settings.json"',
            'tee "${STATE}/audit.jsonl" < /dev/null',
        ),
        counter=(
            'echo x > "$out"',
            'cp a.txt "$dest"',
            'echo x > "$f".bak',
            'rm -rf "$BUILD_DIR/venv"',
            'echo x > "$HOME/notes/$f"',
        ),
    ),
)
