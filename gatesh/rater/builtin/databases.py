"""Databases: SQL that drops or empties data, and the clients and tools that run it."""

from __future__ import annotations

import re
from typing import Final

from gatesh.rater.builtin._base import C, Cmd, D, Hit, MatchResult, Rule, heads
from gatesh.vocab.programs.interpreters import is_interpreter

CLIENTS: Final = heads(
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "sqlite",
    "mongo",
    "mongosh",
    "redis-cli",
    "clickhouse-client",
    "clickhouse",
    "cqlsh",
    "sqlcmd",
    "duckdb",
    "cockroach",
    "snowsql",
    "bq",
    "usql",
    "pgcli",
    "mycli",
    "litecli",
    "isql",
    "sqlplus",
    "valkey-cli",
    "memtier",
    "influx",
    "trino",
    "presto",
    "spark-sql",
    "beeline",
    "vsql",
    "neo4j",
    "cypher-shell",
)
# SQL typed as if it were a command (the next step is usually to paste it into a client).
SQL_HEADS: Final = heads("delete", "drop", "truncate", "update", "grant", "alter", "revoke")

_PROD: Final = re.compile(
    r"\b(?:prod|production|live|primary|master|main)\b|prod[_-]|[_-]prod\b", re.I
)
_STATEMENT_SPLIT: Final = re.compile(r";\s*|\n")
_DROP_DB: Final = re.compile(
    r"\bdrop\s+(?:database|schema|keyspace)\b(?:\s+if\s+exists)?\s*[`\"']?([\w.-]*)", re.I
)
_DROP: Final = re.compile(
    r"\bdrop\s+(?:table|view|index|collection|materialized\s+view|user|role|function|trigger|sequence|type)\b(?:\s+if\s+exists)?\s*[`\"']?([\w.-]*)",
    re.I,
)
_TRUNCATE: Final = re.compile(r"\btruncate\b(?:\s+table)?\s+[`\"']?([\w.-]+)", re.I)
_DELETE: Final = re.compile(r"\bdelete\s+from\s+[`\"']?([\w.-]+)", re.I)
_UPDATE: Final = re.compile(r"\bupdate\s+[`\"']?([\w.-]+)[`\"']?\s+set\b", re.I)
_WHERE: Final = re.compile(r"\bwhere\b", re.I)
_WHERE_TRIVIAL: Final = re.compile(r"\bwhere\s+(?:1\s*=\s*1|true|'1'\s*=\s*'1')\s*$", re.I)
_ALTER_DROP: Final = re.compile(
    r"\balter\s+table\b.*\bdrop\s+(?:column|constraint|partition)\b", re.I | re.S
)
_GRANT_ALL: Final = re.compile(r"\bgrant\s+all\b|\bgrant\b.*\bto\b.*'%'|\bsuperuser\b", re.I | re.S)
_MONGO_DROPDB: Final = re.compile(r"\bdropDatabase\s*\(", re.I)
_MONGO_DROP: Final = re.compile(
    r"\.\s*drop\s*\(\s*\)|\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)|\.drop(?:Index|Indexes|User|AllUsers)\s*\(",
    re.I,
)
_REDIS: Final = re.compile(r"\b(?:flushall|flushdb)\b", re.I)
_REDIS_CONFIG: Final = re.compile(
    r"\bconfig\s+set\b|\bdebug\s+(?:segfault|crash)|\bshutdown\b", re.I
)


def judge_sql(sql: str) -> Hit | None:
    """The worst danger in ``sql`` (one or many statements) as a Hit, or None."""
    worst: Hit | None = None
    for stmt in _STATEMENT_SPLIT.split(sql):
        s = stmt.strip()
        if not s:
            continue
        hit: Hit | None = None
        if m := _DROP_DB.search(s):
            hit = Hit(
                severity=C,
                detail=f"drops the database {m.group(1) or ''}".strip(),
                remedy="take a backup (pg_dump/mysqldump) first",
            )
        elif _MONGO_DROPDB.search(s):
            hit = Hit(
                severity=C,
                detail="drops a whole database",
                remedy="take a backup (pg_dump/mysqldump) first",
            )
        elif m := _DROP.search(s):
            hit = Hit(
                detail=f"drops {m.group(1) or 'an object'}",
                remedy="take a backup (pg_dump/mysqldump) first",
            )
        elif m := _TRUNCATE.search(s):
            hit = Hit(
                detail=f"empties the table {m.group(1)}",
                remedy="add a WHERE clause and use DELETE, after a backup",
            )
        elif (m := _DELETE.search(s)) and (not _WHERE.search(s) or _WHERE_TRIVIAL.search(s)):
            hit = Hit(detail=f"deletes every row of {m.group(1)}", remedy="add a WHERE clause")
        elif (m := _UPDATE.search(s)) and not _WHERE.search(s):
            hit = Hit(detail=f"rewrites every row of {m.group(1)}", remedy="add a WHERE clause")
        elif _ALTER_DROP.search(s):
            hit = Hit(detail="drops a column or constraint", remedy="take a backup first")
        elif _MONGO_DROP.search(s):
            hit = Hit(detail="drops or empties a collection", remedy="add a filter, after a backup")
        elif _REDIS.search(s):
            hit = Hit(detail="flushes every key", remedy="delete only the keys you mean")
        elif _GRANT_ALL.search(s):
            hit = Hit(detail="grants broad privileges", remedy="grant only what is needed")
        if hit is None:
            continue
        if hit.severity is None and _PROD.search(s):
            hit = Hit(
                severity=C,
                detail=hit.detail + " in what looks like a production database",
                remedy=hit.remedy,
            )
        if worst is None or (worst.severity is None and hit.severity is not None):
            worst = hit
    return worst


def _sql_words(c: Cmd) -> str:
    h = c.head
    parts = c.opt_values(
        "-c", "--command", "-e", "--execute", "--eval", "-q", "--query", "-Q", "-cmd"
    )
    if h in ("sqlite3", "sqlite", "duckdb", "litecli") and len(c.pos) >= 2:
        parts.extend(c.pos[1:])
    if h in ("redis-cli", "valkey-cli"):
        parts.append(" ".join(c.pos))
    if h in ("mongo", "mongosh") and len(c.pos) >= 2:
        parts.extend(c.pos[1:])
    return "\n".join(parts)


def client_sql(c: Cmd) -> MatchResult:
    sql = _sql_words(c)
    fed = c.heredoc_fed or bool(c.feeders) or bool(c.reads)
    if fed:  # SQL from a heredoc or a pipe: look at the command line's own text
        sql += "\n" + c.ctx.text
    hit = judge_sql(sql)
    if hit is None:
        return None
    target = " ".join(c.args)
    if hit.severity is None and _PROD.search(target):
        return Hit(
            severity=C,
            detail=hit.detail + " on what looks like a production server",
            remedy=hit.remedy,
        )
    return hit


def bare_sql(c: Cmd) -> MatchResult:
    if c.head == "truncate" and any(a.startswith("-") for a in c.args):
        return None  # coreutils truncate (-s SIZE FILE): a file, judged by its git state
    return judge_sql(c.sc.raw or " ".join(c.sc.words))


def db_tools(c: Cmd) -> MatchResult:
    h = c.head
    if h == "dropdb":
        return Hit(severity=C, detail=f"drops the database {c.pos[-1] if c.pos else ''}".strip())
    if h == "mysqladmin" and c.sub(0) in ("drop", "shutdown"):
        return Hit(
            severity=C if c.sub(0) == "drop" else None,
            detail=f"mysqladmin {c.sub(0)}s a server or database",
        )
    if h == "pg_restore" and c.has("--clean", "-c"):
        return Hit(detail="drops existing objects before restoring")
    if h in ("dropuser",):
        return Hit(detail="drops a database role")
    if h in ("rails", "rake", "bin/rails") and any(
        a.startswith(("db:drop", "db:reset", "db:schema:load", "db:purge")) for a in c.args
    ):
        return Hit(detail="drops and recreates the application database")
    if h in ("manage.py", "python", "python3") and ("flush" in c.args or "reset_db" in c.args):
        return Hit(detail="empties the application database")
    if h in ("prisma",) and "reset" in c.args:
        return Hit(detail="resets the database")
    return None


# Framework tasks that drop, empty or roll back the application's whole database:
# (program or script, task words, optional flag that makes it so).
_RESETS: Final[tuple[tuple[frozenset[str], tuple[str, ...], str], ...]] = (
    (frozenset({"manage.py", "django-admin"}), ("flush",), ""),
    (frozenset({"manage.py", "django-admin"}), ("reset_db",), ""),
    (frozenset({"artisan"}), ("migrate:fresh",), ""),
    (frozenset({"artisan"}), ("migrate:reset",), ""),
    (frozenset({"artisan"}), ("migrate:refresh",), ""),
    (frozenset({"artisan"}), ("db:wipe",), ""),
    (frozenset({"alembic"}), ("downgrade", "base"), ""),
    (frozenset({"flask"}), ("db", "downgrade", "base"), ""),
    (frozenset({"prisma"}), ("migrate", "reset"), ""),
    (frozenset({"prisma"}), ("db", "push"), "--accept-data-loss"),
    (frozenset({"prisma"}), ("db", "push"), "--force-reset"),
    (frozenset({"sequelize", "sequelize-cli"}), ("db:drop",), ""),
    (frozenset({"sequelize", "sequelize-cli"}), ("db:migrate:undo:all",), ""),
    (frozenset({"knex"}), ("migrate:rollback",), "--all"),
    (frozenset({"typeorm"}), ("schema:drop",), ""),
    (frozenset({"mix"}), ("ecto.drop",), ""),
    (frozenset({"mix"}), ("ecto.reset",), ""),
    (frozenset({"console"}), ("doctrine:database:drop",), ""),
    (frozenset({"console"}), ("doctrine:schema:drop",), ""),
    (frozenset({"dotnet"}), ("ef", "database", "drop"), ""),
    (frozenset({"supabase"}), ("db", "reset"), ""),
    (frozenset({"drizzle-kit"}), ("drop",), ""),
)
_RESET_PROGRAMS: Final = frozenset().union(*(r[0] for r in _RESETS))


def framework_reset(c: Cmd) -> MatchResult:
    """A framework's task that drops or empties the application database (run through its script:
    ``python manage.py flush``, ``php artisan migrate:fresh``, ``npx prisma migrate reset``)."""
    words = [a for a in c.args if not a.startswith("-")]
    program = c.head
    if program not in _RESET_PROGRAMS and not is_interpreter(program):
        return None
    if words and words[0].rsplit("/", 1)[-1] in _RESET_PROGRAMS and program not in _RESET_PROGRAMS:
        program, words = words[0].rsplit("/", 1)[-1], words[1:]  # python manage.py, php artisan
    if program not in _RESET_PROGRAMS or c.has("--help", "-h", "--dry-run"):
        return None
    lowered = [w.lower() for w in words]
    for names, task, flag in _RESETS:
        if program in names and lowered[: len(task)] == list(task) and (not flag or c.has(flag)):
            return Hit(detail=f"{program} {' '.join(task)} {flag}".rstrip() + " drops the data")
    if (
        program == "alembic"
        and lowered[:1] == ["downgrade"]
        and lowered[1:2]
        and lowered[1].startswith("-")
    ):
        return Hit(detail="alembic downgrade rolls migrations back, dropping what they made")
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "db.destructive-sql",
        D,
        "This SQL {detail}.",
        client_sql,
        heads=CLIENTS,
        remedy="add a WHERE clause",
        examples=(
            "psql -c 'DROP TABLE users'",
            "mysql -e 'DELETE FROM orders'",
            "sqlite3 app.db 'DROP TABLE t'",
            "redis-cli FLUSHALL",
            "psql -c 'DROP DATABASE prod'",
            "echo 'TRUNCATE users;' | psql",
            "mongosh --eval 'db.dropDatabase()'",
        ),
        counter=(
            "psql -c 'SELECT 1'",
            "mysql -e 'DELETE FROM t WHERE id = 3'",
            "redis-cli GET k",
            "sqlite3 app.db .tables",
        ),
    ),
    Rule(
        "db.bare-sql",
        D,
        "This SQL {detail}.",
        bare_sql,
        heads=SQL_HEADS,
        remedy="add a WHERE clause",
        examples=("DELETE FROM users;", "DROP TABLE users;", "TRUNCATE TABLE users;"),
        counter=("UPDATE users SET a = 1 WHERE id = 2;", "truncate -s 0 README.md"),
    ),
    Rule(
        "db.tool-drop",
        D,
        "This {detail}.",
        db_tools,
        heads=heads(
            "dropdb", "mysqladmin", "pg_restore", "dropuser", "rails", "rake", "manage.py", "prisma"
        ),
        remedy="take a backup (pg_dump/mysqldump) first",
        examples=(
            "dropdb myapp",
            "mysqladmin drop shop",
            "rails db:drop",
            "pg_restore --clean -d app dump",
        ),
        counter=("createdb myapp", "pg_restore -l dump", "rails db:migrate"),
    ),
    Rule(
        "db.framework-reset",
        D,
        "This empties the application's database ({detail}).",
        framework_reset,
        tried_on=lambda h: h in _RESET_PROGRAMS or is_interpreter(h),
        remedy="take a backup first, or reset only a disposable test database",
        examples=(
            "python manage.py flush --noinput",
            "php artisan migrate:fresh",
            "alembic downgrade base",
            "prisma migrate reset --force",
            "prisma db push --accept-data-loss",
            "npx sequelize db:drop",
            "./manage.py reset_db",
        ),
        counter=(
            "python manage.py migrate",
            "php artisan migrate",
            "alembic upgrade head",
            "prisma db push",
            "prisma generate",
        ),
    ),
)
