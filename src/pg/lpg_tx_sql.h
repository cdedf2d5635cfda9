/*
** lpg_tx_sql.h: the SQL of fenced side effects on PostgreSQL (lpg_tx.c),
** one definition of each statement.  Private to src/pg/.
**
** PostgreSQL has no authorizer: what keeps the caller's statements inside
** with_lease from writing the engine's tables is a trigger on each of them
** (lease_guard_rows, lease_guard_truncate).  lpg_tx.c sends every statement
** of the caller's with LPG_TX_MARK in front of it, and the triggers fire
** only when the statement the client sent (current_query(): also what a
** function, a DO block or another trigger runs under it) starts with that
** mark.  The engine's own statements never carry it, nor does any other
** client's, so the guard costs them one comparison in the trigger's WHEN.
*/
#ifndef LPG_TX_SQL_H
#define LPG_TX_SQL_H

/* The mark in front of every caller statement, and its length. */
#define LPG_TX_MARK "/*lease:with_lease*/ "
#define LPG_TX_MARK_LEN 21

/* The SQLSTATE the guard raises (a class of the engine's own). */
#define LPG_TX_GUARD_STATE "LE001"

/* The guard's condition, in the triggers' WHEN. */
#define LPG_TX_SQL_MARKED "left(current_query(), 21) = ''/*lease:with_lease*/ ''"

/*
** The gate's table and the guard: the function, then both triggers on
** jobs and on every table of the current schema whose name starts with
** lease_ that lacks them (the job queue's tables too, when they exist).
** Idempotent; run under LPG_SQL_LOCK's advisory lock.
*/
#define LPG_TX_SQL_CREATE                                                                  \
  "CREATE TABLE IF NOT EXISTS lease_fences(resource bytea PRIMARY KEY"                    \
  " CHECK (resource <> ''::bytea), fence int8 NOT NULL CHECK (fence >= 0));"              \
  " CREATE OR REPLACE FUNCTION lease_guard() RETURNS trigger LANGUAGE plpgsql AS"          \
  " $lease$ BEGIN RAISE EXCEPTION USING ERRCODE = '" LPG_TX_GUARD_STATE "',"              \
  " MESSAGE = 'it would write the engine''s own tables (jobs, lease_fences): use tx"      \
  " complete, renew or fence_gate', DETAIL = 'table ' || TG_TABLE_NAME; END $lease$;"      \
  " DO $lease$ DECLARE r record; BEGIN FOR r IN " LPG_TX_SQL_UNGUARDED " LOOP"            \
  " EXECUTE format('CREATE TRIGGER lease_guard_rows BEFORE INSERT OR UPDATE OR DELETE"     \
  " ON %s FOR EACH ROW WHEN (" LPG_TX_SQL_MARKED ") EXECUTE FUNCTION lease_guard()', r.t);" \
  " EXECUTE format('CREATE TRIGGER lease_guard_truncate BEFORE TRUNCATE ON %s"            \
  " FOR EACH STATEMENT WHEN (" LPG_TX_SQL_MARKED ") EXECUTE FUNCTION lease_guard()', r.t);" \
  " END LOOP; END $lease$"

/* The engine's tables in the current schema without the guard. */
#define LPG_TX_SQL_UNGUARDED                                                               \
  "SELECT c.oid::regclass AS t FROM pg_class c"                                            \
  " WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())" \
  " AND c.relkind IN ('r', 'p') AND (c.relname = 'jobs' OR c.relname LIKE 'lease\\_%')"    \
  " AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid"                    \
  " AND g.tgname = 'lease_guard_rows')"

/* Whether the gate's table or a guard is missing (a database created
** before they were part of the schema, or a table added since). */
#define LPG_TX_SQL_MISSING \
  "SELECT to_regclass('lease_fences') IS NULL OR EXISTS (" LPG_TX_SQL_UNGUARDED ")"

/* LPG_TX_SQL_CREATE in its own transaction, under the advisory lock of
** LPG_SQL_LOCK (lpg_sql.h). */
#define LPG_TX_SQL_INIT \
  "BEGIN; SELECT pg_advisory_xact_lock(1818588019); " LPG_TX_SQL_CREATE "; COMMIT"

/*
** The lease check before the callback: complete's guard (lpg_sql.h's
** LPG_SQL_HELD_GUARD) read on the job's row locked FOR UPDATE, so the row
** is the latest version and stays so until the transaction ends, and the
** queue's state read after that lock (LPG_SQL_QUEUE_OF_J).  $1 id, $2
** owner, $3 fence, $4 now.  No row: missing.  Columns in the order the
** reasons are checked: done, the queue's end state (2 discarded, 3
** cancelled, else 0, as SQLite's LSQ_SQL_WHY column 6), owner differs,
** fence differs, blocked code, until <= now.
*/
#define LPG_TX_SQL_HOLDS                                                                    \
  "WITH j AS (SELECT * FROM jobs WHERE id = $1 FOR UPDATE),"                               \
  LPG_SQL_QUEUE_OF_J                                                                        \
  " SELECT j.done <> 0, CASE WHEN NOT (" LPG_SQL_NOT_ENDED ")"                             \
  " THEN q.state ELSE " LEASE__Q_OPEN_S " END,"                                            \
  " j.owner IS DISTINCT FROM $2, j.fence <> $3,"                                           \
  " CASE WHEN j.fence >= 9223372036854775807 THEN 3 ELSE 0 END, j.until <= $4"            \
  " FROM j, q"

/* The gate: store $2 for resource $1 unless a larger fence is stored
** (then no row changes).  Equal passes: a worker may write twice. */
#define LPG_TX_SQL_GATE                                                     \
  "INSERT INTO lease_fences(resource, fence) VALUES ($1, $2)"              \
  " ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence"           \
  " WHERE excluded.fence >= lease_fences.fence"

/* After a gate that changed no row: the fence stored for resource $1, a
** statement of its own (under READ COMMITTED it sees the larger fence
** another transaction committed while the gate waited for its lock).
** None, or one not larger, means another client's trigger skipped the
** upsert. */
#define LPG_TX_SQL_GATE_STORED "SELECT fence FROM lease_fences WHERE resource = $1"

/* Before COMMIT: fire the caller's deferred triggers now, under the mark,
** so that one of them cannot write the engine's tables at COMMIT. */
#define LPG_TX_SQL_COMMIT LPG_TX_MARK "SET CONSTRAINTS ALL IMMEDIATE; COMMIT"

#endif
