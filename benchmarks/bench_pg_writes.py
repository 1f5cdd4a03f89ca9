"""The ceiling of the 16 concurrent writers: what one lesson costs PostgreSQL alone, step by step.

``bench_postgres.py`` measures the store as a host uses it (``put``: stemming, JSON, the driver,
the server). This script takes the client's work away and adds the server's back one piece at a
time, each run by 16 processes (as 16 hosts) over the same durable throwaway server, one
statement and one commit per lesson (``synchronous_commit`` on), the variants interleaved round
by round so that each meets the same moment of a shared machine:

- ``commit``: ``INSERT`` of one bigint into a table with a primary key: a round trip, a
  transaction and its WAL flush, the floor of any durable write;
- ``record``: the store's call of ``afteraction_put`` with rows made before the clock starts,
  into a database whose table keeps no stems (the trigger of ``afteraction_terms`` disabled):
  the lesson's row, its indexes and its commit;
- ``record+stems``: the same into the table as shipped (the stems written too);
- ``record+keys``: a what-if, not shipped: the stems kept as one row per (hashed (tenant, stem)
  ``bigint`` key, record) with the tenant outside the btree's key, the smallest btree entry that
  the search could still reach with leakproof equalities (``KEYS_LAYOUT``); ``record+keys incl``
  the same with the tenant ``INCLUDE``d in each entry, which a search needs (``KEYS_INCLUDED_LAYOUT``);
- ``record+ranked`` (not among the default ``--variants``): a what-if, not shipped: no ``search``
  tsvector; the writer gives each distinct stem's ``ts_rank`` in the record (``pg_ranks``) and
  ``put_ranked`` stores it in the stem row, where a search would read it (``RANKED_LAYOUT``);
  ``record+ranked keys`` the same with ``record+keys``' hashed keys;
- ``put``: ``PostgresStore.put`` of the lessons (stemming and serializing in the writer too),
  as ``bench_postgres.py`` measures it;
- ``outcome`` (not among the default ``--variants``): ``Memory.record_outcome`` of one keyed
  outcome for each lesson, stored before the clock starts (a read, then an update under the
  revision check; the text is unchanged, so the stems are not rewritten): what the end of a run
  adds for each lesson it was given; ``outcome known`` the same with the lesson as the run's
  search returned it (``known=``), as a run's feedback passes it: it read nothing first until the
  fourteenth session, and reads the lesson first now as ``outcome`` does (``known`` is checked,
  never written from), so the two should measure alike.

- ``record+stems literal`` (not among the default ``--variants``): a what-if, not shipped: ``search``
  a plain column that the writer fills with a tsvector literal (``literal``, made before the clock
  starts) instead of a column the server generates; ``put literal`` the same with the row, the
  literal and the call made inside the clock on one plain connection, beside ``row+call``, the
  shipped ``row`` and call on one plain connection.

Besides those (the default ``--variants``), ``record -…`` variants each take one piece away from
``record`` (``ON CONFLICT``, the ``search`` column, the scope index, forced row-level security)
to show what it costs; see ``VARIANTS``. Measured in docs/postgres.md ("The ceiling").

Per variant: lessons/s, and CPU per lesson in the writers (``process_time``) and in the server
(its ended sessions' CPU, ``bench_postgres.server_cpu``); medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import corpus
import psycopg
from bench_postgres import _WRITES_START, WRITERS, server_cpu
from pg_ranks import encoded, row_ranks

import afteraction as aa
from afteraction.store.postgres import _PUT, PostgresStore, row
from afteraction.store.postgres_schema import TABLE, TERMS
from afteraction.store.postgres_write_schema import PUT, PUT_ARGUMENTS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.pg import APP_ROLE, Cluster

_NO_STEMS = (f"ALTER TABLE {TABLE} DISABLE TRIGGER {TERMS}_index",)
_ARGUMENTS = ", ".join(f"p_{name} {kind}" for name, kind in PUT_ARGUMENTS)
_VALUES = ", ".join(f"p_{name}" for name, _ in PUT_ARGUMENTS)
_COLUMNS = ", ".join(f'"{name}"' if name == "user" else name for name, _ in PUT_ARGUMENTS)
#: The what-if layout of ``record+keys``, made by the superuser in that variant's database.
KEYS_LAYOUT = (
    "CREATE TABLE terms_keys (key bigint NOT NULL, pk bigint NOT NULL, tenant text NOT NULL, PRIMARY KEY (key, pk))",
    "ALTER TABLE terms_keys ENABLE ROW LEVEL SECURITY",
    "CREATE POLICY terms_keys_inserts ON terms_keys FOR INSERT "
    "WITH CHECK (tenant = (SELECT current_setting('afteraction.tenant', true)))",
    f"GRANT INSERT ON terms_keys TO {APP_ROLE}",
    f"DROP TRIGGER {TERMS}_index ON {TABLE}",
    """CREATE FUNCTION terms_keys_index() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO terms_keys (key, pk, tenant)
        SELECT hashtextextended(NEW.tenant || ' ' || term, 0), NEW.pk, NEW.tenant
        FROM unnest(tsvector_to_array(NEW.search)) AS term;
        RETURN NULL;
    END $$""",
    f"CREATE TRIGGER terms_keys_index AFTER INSERT ON {TABLE} FOR EACH ROW EXECUTE FUNCTION terms_keys_index()",
)
#: ``record+keys`` with the tenant kept in each index entry (``INCLUDE``): the row-level security
#: filter is then read from the index, not the heap, so a search's probes stay index-only (at 1M
#: lessons, without it the search read every matching stem row's heap page: 52 against 7.5 ms p50).
KEYS_INCLUDED_LAYOUT = (
    KEYS_LAYOUT[0].replace("PRIMARY KEY (key, pk))", "UNIQUE (key, pk) INCLUDE (tenant))"),
    *KEYS_LAYOUT[1:],
)
#: The what-if of ``record+ranked``: no ``search`` column; each stem row holds the stem's
#: ``ts_rank`` in the record (``pg_ranks``), made by the writer and passed with the distinct stems
#: to ``put_ranked``, which inserts the row and then the stem rows itself. Stems and ranks go as
#: two texts (``pg_ranks.encoded``): as ``text[]`` and ``real[]`` parameters psycopg took ~200 µs
#: more of the writer's CPU per lesson to adapt them. The rank is in the btree (``INCLUDE``) so
#: that a search could read it without visiting the table.
_RANKED = "afteraction_put_ranked"
_RANKED_CALL = f"SELECT {_RANKED}({', '.join(f'%s::{kind}' for _, kind in PUT_ARGUMENTS)}, %s::text, %s::text)"

_STEMS = "unnest(string_to_array(p_terms, ' '), p_ranks::real[]) AS u (t, r)"


def _ranked_layout(insert_stems: str) -> tuple[str, ...]:
    """The ranked layout, ``insert_stems`` storing the stem rows from ``_STEMS`` and ``v_pk``."""
    return (
        f"DROP TRIGGER {TERMS}_index ON {TABLE}",
        f"ALTER TABLE {TABLE} DROP COLUMN search",
        f"""CREATE FUNCTION {_RANKED}({_ARGUMENTS}, p_terms text, p_ranks text)
        RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE
            v_pk bigint;
        BEGIN
            PERFORM set_config('afteraction.tenant', p_tenant, true);
            INSERT INTO {TABLE} ({_COLUMNS}) VALUES ({_VALUES})
            ON CONFLICT (tenant, id) DO NOTHING RETURNING pk INTO v_pk;
            IF v_pk IS NULL THEN
                RETURN 0;
            END IF;
            {insert_stems};
            RETURN 1;
        END $$""",
    )


RANKED_LAYOUT = (
    f"ALTER TABLE {TERMS} ADD COLUMN rank real NOT NULL",
    f"ALTER TABLE {TERMS} DROP CONSTRAINT {TERMS}_pkey, ADD PRIMARY KEY (tenant, term, pk) INCLUDE (rank)",
    *_ranked_layout(f"INSERT INTO {TERMS} (tenant, term, pk, rank) SELECT p_tenant, t, v_pk, r FROM {_STEMS}"),
)
#: ``record+ranked keys``: the same with ``record+keys``' hashed (tenant, stem) ``bigint`` keys.
RANKED_KEYS_LAYOUT = (
    "CREATE TABLE terms_keys (key bigint NOT NULL, pk bigint NOT NULL, tenant text NOT NULL, rank real NOT NULL, "
    "PRIMARY KEY (key, pk) INCLUDE (rank))",
    *KEYS_LAYOUT[1:4],
    *_ranked_layout(
        "INSERT INTO terms_keys (key, pk, tenant, rank) "
        f"SELECT hashtextextended(p_tenant || ' ' || t, 0), v_pk, p_tenant, r FROM {_STEMS}"
    ),
)


#: The what-if of ``record+stems literal``: ``search`` a plain column, written by the writer as a
#: tsvector literal (``literal``) instead of computed by the server from the three stemmed texts.
_LITERAL = "afteraction_put_literal"
_LITERAL_CALL = f"SELECT {_LITERAL}({', '.join(f'%s::{kind}' for _, kind in PUT_ARGUMENTS)}, %s::tsvector)"
LITERAL_LAYOUT = (
    f"ALTER TABLE {TABLE} ALTER COLUMN search DROP EXPRESSION",
    f"""CREATE FUNCTION {_LITERAL}({_ARGUMENTS}, p_search tsvector) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
        inserted integer;
    BEGIN
        PERFORM set_config('afteraction.tenant', p_tenant, true);
        INSERT INTO {TABLE} ({_COLUMNS}, search) VALUES ({_VALUES}, p_search) ON CONFLICT (tenant, id) DO NOTHING;
        GET DIAGNOSTICS inserted = ROW_COUNT;
        RETURN inserted;
    END $$""",
)


#: The what-if of ``record+stems in function``: ``search`` a plain column that ``afteraction_put``
#: fills with the generated column's expression, in the INSERT it plans once per connection.
IN_FUNCTION_LAYOUT = (
    f"ALTER TABLE {TABLE} ALTER COLUMN search DROP EXPRESSION",
    f"""CREATE OR REPLACE FUNCTION {PUT}({_ARGUMENTS}) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
        inserted integer;
    BEGIN
        PERFORM set_config('afteraction.tenant', p_tenant, true);
        INSERT INTO {TABLE} ({_COLUMNS}, search) VALUES ({_VALUES},
            setweight(to_tsvector('simple'::regconfig, p_task_terms), 'A')
            || setweight(to_tsvector('simple'::regconfig, p_summary_terms), 'B')
            || setweight(to_tsvector('simple'::regconfig, p_lesson_terms), 'C'))
        ON CONFLICT (tenant, id) DO NOTHING;
        GET DIAGNOSTICS inserted = ROW_COUNT;
        RETURN inserted;
    END $$""",
)


def literal(task_terms: str, summary_terms: str, lesson_terms: str) -> str:
    """The ``search`` tsvector of a lesson of ordinary size (at most 256 words, none over 2,046
    bytes) as a literal: what ``setweight(to_tsvector('simple', …), 'A') || … 'B' || … 'C'``
    makes of the three stemmed texts, each word at the next position (the same text as the
    server's on 2,000 of the corpus' lessons; the limits past that size are not modelled)."""
    marks: dict[str, list[str]] = {}
    at = 0
    for weight, field in zip("ABC", (task_terms, summary_terms, lesson_terms), strict=True):
        for word in field.split():
            at += 1
            marks.setdefault(word, []).append(f"{at}{weight}")
    return " ".join(f"'{word}':{','.join(found)}" for word, found in marks.items())


def _plain_insert(handler: str = "") -> tuple[str, ...]:
    """``record`` with ``afteraction_put`` a plain ``INSERT`` (no ``ON CONFLICT``), ending in ``handler``."""
    return (
        *_NO_STEMS,
        f"""CREATE OR REPLACE FUNCTION {PUT}({_ARGUMENTS}) RETURNS integer LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM set_config('afteraction.tenant', p_tenant, true);
            INSERT INTO {TABLE} ({_COLUMNS}) VALUES ({_VALUES});
            RETURN 1;
        {handler}
        END $$""",
    )


#: Each variant: how its writers store a lesson (``commit``: one bigint; ``call``: the store's
#: call of ``afteraction_put`` with rows made beforehand; ``ranked``: the call of ``put_ranked``
#: with rows, stems and ranks made beforehand; ``put``: ``PostgresStore.put``), and
#: what the superuser changes in its database first. The ``record -…`` ones take one piece
#: away from ``record`` to show what it costs; none of them is shipped.
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "commit": ("commit", ()),
    "record": ("call", _NO_STEMS),
    "record -ON CONFLICT": ("call", _plain_insert()),
    "record -ON CONFLICT +EXCEPTION": ("call", _plain_insert("EXCEPTION WHEN unique_violation THEN RETURN 0;")),
    "record -search column": ("call", (*_NO_STEMS, f"ALTER TABLE {TABLE} DROP COLUMN search")),
    "record -scope index": ("call", (*_NO_STEMS, f"DROP INDEX {TABLE}_scope_created")),
    "record -RLS": ("call", (*_NO_STEMS, f"ALTER TABLE {TABLE} NO FORCE ROW LEVEL SECURITY")),
    "record+stems": ("call", ()),
    "record+stems literal": ("literal", LITERAL_LAYOUT),
    "record+stems in function": ("call", IN_FUNCTION_LAYOUT),
    "put in function": ("put", IN_FUNCTION_LAYOUT),
    "put literal": ("put literal", LITERAL_LAYOUT),
    "record+keys": ("call", KEYS_LAYOUT),
    "record+keys incl": ("call", KEYS_INCLUDED_LAYOUT),
    "record+ranked": ("ranked", RANKED_LAYOUT),
    "record+ranked keys": ("ranked", RANKED_KEYS_LAYOUT),
    "put": ("put", ()),
    "row+call": ("row+call", ()),
    "outcome": ("outcome", ()),
    "outcome known": ("outcome known", ()),
}
DEFAULT = ("commit", "record", "record+stems", "record+keys", "record+keys incl", "put")


def _writer(how: str, url: str, start: int, n: int, ready: Any, go: Any, spent: Any) -> None:
    lessons = corpus.experiences(start, n)
    rows = [row(e) for e in lessons]
    if how == "ranked":
        rows = [(*values, *encoded(*row_ranks(values))) for values in rows]
    elif how == "literal":
        rows = [(*values, literal(*values[-3:])) for values in rows]
    store = PostgresStore(url, max_size=1) if how in ("put", "outcome", "outcome known") else None
    db = None if store is not None else psycopg.connect(url, autocommit=True)
    memory = None
    if how.startswith("outcome"):  # the lessons are there before the clock starts; timed: one outcome each
        assert store is not None
        store.put_many(lessons)
        memory = aa.Memory(store, embedder=None)
        memory.handed.add(lessons)  # as a run's search would have handed them out
    try:
        ready.wait()
        go.wait()
        cpu = time.process_time()
        if memory is not None:
            for experience in lessons:
                known = experience if how == "outcome known" else None
                memory.record_outcome(
                    experience.id, scope=experience.scope, success=True, key=f"run:{experience.id}", known=known
                )
        elif store is not None:
            for experience in lessons:
                store.put(experience)
        elif how == "put literal":  # as ``put`` would with the tsvector made by the writer: one plain connection
            assert db is not None
            for experience in lessons:
                values = row(experience)
                db.execute(_LITERAL_CALL, (*values, literal(*values[-3:])), prepare=False)
        elif how == "row+call":  # ``put`` as shipped, on one plain connection as ``put literal``
            assert db is not None
            for experience in lessons:
                db.execute(_PUT, row(experience), prepare=False)
        elif how == "commit":
            assert db is not None
            for i in range(start, start + n):
                db.execute("INSERT INTO floor_rows VALUES (%s)", (i,))
        else:
            assert db is not None
            statement = {"ranked": _RANKED_CALL, "literal": _LITERAL_CALL}.get(how, _PUT)
            for values in rows:
                db.execute(statement, values, prepare=False)
        spent.put((time.process_time() - cpu, time.perf_counter()))
    finally:
        if store is not None:
            store.close()
        if db is not None:
            db.close()


def run(variant: str, url: str, cluster: Cluster, total: int, writers: int) -> dict[str, float]:
    each = total // writers
    context = multiprocessing.get_context("spawn")
    ready, go, spent = context.Barrier(writers + 1), context.Barrier(writers + 1), context.Queue()
    starts = [_WRITES_START + k * each for k in range(writers)]
    how = VARIANTS[variant][0]
    processes = [context.Process(target=_writer, args=(how, url, s, each, ready, go, spent)) for s in starts]
    for process in processes:
        process.start()
    ready.wait()
    before = server_cpu(cluster)
    go.wait()
    started = time.perf_counter()
    for process in processes:
        process.join()
    if any(p.exitcode != 0 for p in processes):
        raise SystemExit(f"a {variant} writer failed")
    reports = [spent.get() for _ in processes]  # (CPU seconds, when it finished: not its exit)
    elapsed = max(done for _, done in reports) - started
    client = sum(cpu for cpu, _ in reports)
    n = each * writers
    return {"per_s": n / elapsed, "client_us": client / n * 1e6, "server_us": (server_cpu(cluster) - before) / n * 1e6}


def _name(variant: str) -> str:
    return f"v_{list(VARIANTS).index(variant)}"


def _empty(cluster: Cluster, variants: list[str]) -> None:
    """Every variant's tables emptied and a checkpoint: each run starts from the same state."""
    for variant in variants:
        with psycopg.connect(cluster.url(_name(variant), "postgres"), autocommit=True) as db:
            db.execute(f"TRUNCATE floor_rows, {TABLE}, {TERMS} CASCADE")
            if variant in ("record+keys", "record+keys incl", "record+ranked keys"):
                db.execute("TRUNCATE terms_keys")
            db.execute("CHECKPOINT")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=8_000, help="lessons per variant and round (default 8000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every variant, interleaved (default 3)")
    parser.add_argument("--variants", default=",".join(DEFAULT), help=f"comma-separated, among: {', '.join(VARIANTS)}")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it still runs")
    args = parser.parse_args(argv)
    variants, writers = args.variants.split(","), WRITERS
    if set(variants) - set(VARIANTS) or args.writes < WRITERS or args.rounds <= 0:
        parser.error(f"--variants must be among {','.join(VARIANTS)}, --writes at least {WRITERS}, --rounds positive")
    if args.smoke:
        args.writes, args.rounds, writers = 40, 1, 2
    cluster = Cluster(durable=True)
    try:
        urls = {}
        for variant in variants:
            name = _name(variant)
            urls[variant] = cluster.database(name)
            PostgresStore(urls[variant]).close()  # migrates
            with psycopg.connect(cluster.url(name, "postgres"), autocommit=True) as db:
                db.execute("CREATE TABLE floor_rows (id bigint PRIMARY KEY)")
                db.execute(f"GRANT INSERT ON floor_rows TO {APP_ROLE}")
                for statement in VARIANTS[variant][1]:
                    db.execute(statement)
        found: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
        for n in range(args.rounds):
            for variant in variants if n % 2 == 0 else reversed(variants):
                _empty(cluster, variants)
                found[variant].append(run(variant, urls[variant], cluster, args.writes, writers))
                print(f"  round {n + 1} {variant}: {found[variant][-1]}", file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{writers} writers, {args.writes:,} lessons per variant and round, {args.rounds} rounds; load {load} at end")
    print("| variant | lessons/s (median; runs) | CPU per lesson: writer | server | lessons/s per busy core |")
    print("|---|---|---|---|---|")
    for variant, runs in found.items():
        rate, client, server = (statistics.median(r[k] for r in runs) for k in ("per_s", "client_us", "server_us"))
        rates = ", ".join(f"{r['per_s']:,.0f}" for r in runs)
        print(
            f"| {variant} | {rate:,.0f} ({rates}) | {client:,.0f} µs | {server:,.0f} µs "
            f"| {1e6 / (client + server):,.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
