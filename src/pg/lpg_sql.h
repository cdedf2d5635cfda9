/*
** lpg_sql.h: the SQL of the PostgreSQL backend, one definition of each
** statement.  Private to src/pg/.
**
** Every connection runs READ COMMITTED (lpg.c sets it whatever the
** server's default).  Every guarded write is one statement: a CTE locks the
** job's row (FOR UPDATE), a data-modifying CTE updates it only when the
** contract's checks pass on that locked row, and the outer SELECT reports
** those same checks, so a refusal's reason describes the row as it was
** when the write was refused.  A plain CTE would read the statement's
** snapshot, taken before the lock wait, and could report a state that no
** longer exists.
**
** Parameters are sent in binary: ids, owners and results are bytea, so
** zero bytes round-trip.
*/
#ifndef LPG_SQL_H
#define LPG_SQL_H

#include "lease_int.h"   /* the queue states, LEASE__Q_*_S */

/* The gate's table and the with_lease guard, created by the schema's step
** 1 after every other table (the guard covers each lease_ table there is). */
#include "lpg_tx_sql.h"

/* The largest fence, LEASE_FENCE_MAX, as SQL text. */
#define LPG_FENCE_MAX "9223372036854775807"

/* Contract step 1: the table.  The CHECKs keep what the engine cannot
** honour out of the table (an empty id, a negative fence, an until that is
** not a number); seq is the enqueue order (SQLite's rowid). */
#define LPG_SQL_CREATE_JOBS                                                         \
  "CREATE TABLE IF NOT EXISTS jobs(id bytea PRIMARY KEY CHECK (id <> ''::bytea),"  \
  " owner bytea, until float8 NOT NULL DEFAULT 0 CHECK (until <> 'NaN'),"          \
  " fence int8 NOT NULL DEFAULT 0 CHECK (fence >= 0), result bytea,"               \
  " done int NOT NULL DEFAULT 0, seq int8 GENERATED ALWAYS AS IDENTITY)"

/* The jobs not done in enqueue order, read by the list of jobs by status
** (LPG_Q_SQL_LIST_). */
#define LPG_SQL_CREATE_PENDING_INDEX \
  "CREATE INDEX IF NOT EXISTS lease_jobs_pending ON jobs(seq) WHERE done = 0"

/* Concurrent CREATE TABLE IF NOT EXISTS of one table can fail on the
** catalog's unique index: whoever changes the schema takes this
** transaction-level advisory lock first ("lease" in ASCII as the key). */
#define LPG_SQL_LOCK "SELECT pg_advisory_xact_lock(1818588019)"

/* The columns of an existing jobs table, as format_type names them. */
#define LPG_SQL_COLUMNS                                                      \
  "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull" \
  " FROM pg_attribute a WHERE a.attrelid = to_regclass('jobs')"              \
  " AND a.attnum > 0 AND NOT a.attisdropped"

/* Why a job not done can never be handed out, as lease_int.h's blocked
** code: the table's CHECKs leave only a fence at its maximum. */
#define LPG_SQL_BLOCKED "(CASE WHEN fence >= " LPG_FENCE_MAX " THEN 3 ELSE 0 END)"

/*
** The fence floor: the highest fence of a job prune deleted
** (LPG_Q_SQL_PRUNE), in lease_meta under the key 'fence_floor' (as text;
** no row: 0).  Every job the engine inserts starts at the floor
** (LPG_SQL_FLOOR), so a fence handed out before a prune is never handed
** out again, not even to a job enqueued again under the same id
** (docs/contract/CONTRACT.md); a job at the floor LEASE_FENCE_MAX starts
** blocked, as a job whose fence reached it is.  LPG_SQL_FLOOR_OF(v): text
** v as a floor (a value not a number of digits reads as 0).
**
** The floor is read in the statement's snapshot.  A job prune deletes
** after that snapshot was taken is still there for the statement, so
** each insert below skips an id its snapshot holds rather
** than wait for the deleting transaction and insert the id at a floor
** read before that one raised it: such an enqueue comes before the prune
** and finds the job.  A job enqueued, claimed, completed and pruned
** entirely after the snapshot and before the insert reaches its id (an
** insert that waited for another client's insert of the same id) would
** start at the floor the snapshot read: the trigger lease_jobs_added
** reads the floor again after the inserts and raises such a job to it
** (schema step 18, lpg_schema_sql.h: LPG_STEP_ADDED_FLOOR).
*/
#define LPG_SQL_FLOOR_OF(v)                                                       \
  "(CASE WHEN " v " ~ '^[0-9]{1,19}$' THEN least(" v "::numeric, " LPG_FENCE_MAX ")::int8" \
  " ELSE 0 END)"
#define LPG_SQL_FLOOR                                                             \
  "coalesce((SELECT " LPG_SQL_FLOOR_OF("value") " FROM " LEASE_SCHEMA_META         \
  " WHERE key = 'fence_floor'), 0)"

/* Contract step 2 for many ids without data, in the array's order (the
** trigger lease_jobs_added gives each its queue row, base_fence its
** fence), each at the fence floor.  The look for an id the snapshot
** holds (LPG_SQL_FLOOR) is a subquery per id, which the planner keeps as
** a lookup by the key; as NOT EXISTS it may join the whole of jobs (spec
** 35, "plans as the tables grow").  $1 bytea[].  Rows: the ids inserted
** (for the ledger). */
#define LPG_SQL_ENQUEUE_MANY                                                      \
  "INSERT INTO jobs(id, fence) SELECT id, " LPG_SQL_FLOOR                         \
  " FROM unnest($1::bytea[]) WITH ORDINALITY t(id, n)"                            \
  " WHERE (SELECT true FROM jobs j WHERE j.id = t.id) IS NULL"                   \
  " ORDER BY n ON CONFLICT (id) DO NOTHING RETURNING id"

/* The first of the ids $1 (bytea[], in its order) that no row of jobs
** has, looked up one by one as LPG_SQL_ENQUEUE_MANY does.  An enqueue
** whose INSERT added fewer jobs than it was given runs it as a statement
** of its own, which under READ COMMITTED sees what other clients
** committed meanwhile: a row means another client's trigger skipped that
** id's insert (lpg_many.c: lpg_enqueue_missing). */
#define LPG_SQL_JOBS_MISSING                                                      \
  "SELECT id FROM unnest($1::bytea[]) WITH ORDINALITY t(id, n)"                   \
  " WHERE (SELECT true FROM jobs j WHERE j.id = t.id) IS NULL ORDER BY n LIMIT 1"

/* Of the ids $1 (bytea[], in its order, no id twice), jobs a batch
** enqueue inserted: NULL when each has its queue row (counted in one scan
** of the index), else the first without one, which another client's
** trigger skipped (LPG_Q_SQL_ENQUEUE_DATA's, or lease_jobs_added's for
** LPG_SQL_ENQUEUE_MANY).  Only a BEFORE INSERT row trigger (tgtype bits
** ROW, BEFORE, INSERT) that is not the engine's guard, or a rule, on
** lease_queue can skip an insert: with neither, as the catalog has it
** after the INSERT (a trigger made later waits for this transaction's
** lock), the rows are not looked at.  One row.  Run in the enqueue's
** transaction, after its INSERT (lpg_many.c: lpg_enqueue_run). */
#define LPG_SQL_UNQUEUED                                                          \
  "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'lease_queue'::regclass" \
  " AND tgtype & 7 = 7 AND tgname <> 'lease_guard_rows')"                         \
  " OR EXISTS (SELECT 1 FROM pg_rewrite WHERE ev_class = 'lease_queue'::regclass)" \
  " THEN (SELECT CASE WHEN count(*) < cardinality($1::bytea[]) THEN (SELECT t.id"  \
  " FROM unnest($1::bytea[]) WITH ORDINALITY t(id, n)"                            \
  " WHERE (SELECT true FROM lease_queue q WHERE q.id = t.id) IS NULL ORDER BY n LIMIT 1) END" \
  " FROM lease_queue WHERE id = ANY($1::bytea[])) END"

/*
** The guarded writes.  Each returns one row: the claim's new fence (or for
** the others the number of rows written), NULL or 0 when refused; then the
** checks on the locked row: found, done, owner differs, fence differs (a
** claim checks neither: false, false), until <= now, blocked code,
** until > now, the queue's end state (2
** discarded, 3 cancelled; lpg_queue_sql.h).  A missing job gives found =
** false and NULLs.  joins: the other CTEs the columns read.
** LPG_SQL_REPORT_FROM: the same, the row the joins hang from being the
** one row of one (a FROM item aliased one, always read, as the outer side
** of the joins: LPG_Q_SQL_COMPLETE_LOCKING takes a lock in it).
*/
#define LPG_SQL_REPORT(owner, fence, expired, held, ended, joins)              \
  LPG_SQL_REPORT_FROM("(SELECT 1) one", owner, fence, expired, held, ended, joins)
#define LPG_SQL_REPORT_FROM(one, owner, fence, expired, held, ended, joins)    \
  " SELECT " owner ", j.id IS NOT NULL, j.done <> 0, " fence ", " expired ","  \
  " CASE WHEN j.fence >= " LPG_FENCE_MAX " THEN 3 ELSE 0 END, " held ", " ended \
  " FROM " one " LEFT JOIN j ON true" joins

/*
** A column c of a row the statement finds by its id, in a test that must
** not choose the index: c + 0 matches no partial index's predicate
** (lease_jobs_pending: done = 0; lease_queue_due: state = 0;
** lease_queue_ended: state <> 0).  A plan the connection keeps is made
** from the statistics of its first runs, and on tables that were tiny
** then, a scan of such an index with the id as a filter costs what the
** lookup by the primary key costs; once the tables grow it reads every
** entry (spec 35, "plans as the tables grow").
*/
#define LPG_SQL_UNKEYED(c) "(" c " + 0)"

/* The attempts a job has made: its fence's growth since its queue row's
** base_fence (step ATTEMPTS, lpg_schema_sql.h), never below 0 (another
** client may lower a fence, which the contract forbids), 0 without a queue
** row.  j is its jobs row, q its lease_queue row.  As SQLite counts them
** (lsq_queue_sql.h: LSQ_SQL_ATTEMPT). */
#define LPG_SQL_ATTEMPT(j, q) "greatest(0, coalesce(" j ".fence - " q ".base_fence, 0))"

/*
** The queue's state of the job j locked (q: state, attempt, max_attempts;
** the defaults when it has no queue row), read through lease_queue_now
** (lpg_queue_sql.h), a VOLATILE function: under READ COMMITTED each of its
** queries takes a new snapshot, and LATERAL on j runs it after j's row is
** locked, so it sees what the last holder of that lock committed.  Every
** write of a queue state holds the job's row lock.  A guard requires
** q.state < 2 (LPG_SQL_NOT_ENDED): not discarded, not cancelled.
*/
#define LPG_SQL_QUEUE_OF_J                                                    \
  " q AS (SELECT coalesce(s.state, " LEASE__Q_OPEN_S ") AS state,"                    \
  " " LPG_SQL_ATTEMPT("j", "s") " AS attempt,"                                         \
  " coalesce(s.max_attempts, 25) AS max_attempts"                             \
  " FROM j LEFT JOIN LATERAL lease_queue_now(j.id) s ON true)"
#define LPG_SQL_NOT_ENDED "q.state < " LEASE__Q_DISCARDED_S

/*
** Contract step 4.  $1 id, $2 owner, $3 now, $4 now + ttl.  A lease that
** expired unreported (x.lapsed: an owner still named, until <= now) counts
** against the job first: its error is recorded, and when it was the last
** attempt (x.last: attempt >= max_attempts, the core's rule
** lease__after_expiry, written here so that one statement records,
** discards and claims) the job is discarded instead of claimed.  After
** the report's columns, for the ledger: lapsed, to be discarded so, the
** lapsed lease's owner and fence, then whether the discard stored (not
** when another client's trigger skipped it: lpg.c, lpg_write_read, fails).
** The error is recorded only with the discard or the claim stored, so a
** write another client's trigger skipped stores nothing, in a transaction
** or not; an error record such a trigger skipped makes the last column
** divide by zero (SQLSTATE 22012: lpg.c's guarded reports LEASE_MISMATCH),
** so the claim fails and stores nothing.
*/
#define LPG_SQL_CLAIM                                                                 \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE)," \
  LPG_SQL_QUEUE_OF_J ","                                                              \
  " x AS (SELECT j.owner IS NOT NULL AND j.done = 0 AND q.state = " LEASE__Q_OPEN_S    \
  " AND j.until <= $3"                                                                \
  " AND j.fence < " LPG_FENCE_MAX " AS lapsed, q.attempt >= q.max_attempts AS last FROM j, q)," \
  " d AS (UPDATE lease_queue SET state = " LEASE__Q_DISCARDED_S ", finished_at = $3 FROM x" \
  " WHERE lease_queue.id = $1 AND x.lapsed AND x.last RETURNING 1),"                  \
  " u AS (UPDATE jobs SET owner = $2, until = $4, fence = jobs.fence + 1 FROM j, q, x" \
  " WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.until <= $3"          \
  " AND j.fence < " LPG_FENCE_MAX " AND " LPG_SQL_NOT_ENDED                           \
  " AND NOT (x.lapsed AND x.last) RETURNING jobs.fence),"                             \
  " e AS (INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"          \
  " SELECT j.id, q.attempt, j.until, j.owner, j.fence, 'lease expired'::bytea"        \
  " FROM j, q, x WHERE x.lapsed AND (EXISTS (SELECT 1 FROM d) OR EXISTS (SELECT 1 FROM u))" \
  " RETURNING 1)"                                                                    \
  LPG_SQL_REPORT("(SELECT fence FROM u)", "false, false", "j.until <= $3", "j.until > $3", \
                 "CASE WHEN x.lapsed AND x.last THEN " LEASE__Q_DISCARDED_S " ELSE q.state END," \
                 " x.lapsed, x.lapsed AND x.last, j.owner, j.fence, EXISTS (SELECT 1 FROM d),"  \
                 " 1 / CASE WHEN x.lapsed AND (EXISTS (SELECT 1 FROM d)"            \
                 " OR EXISTS (SELECT 1 FROM u)) AND NOT EXISTS (SELECT 1 FROM e)"  \
                 " THEN 0 ELSE 1 END",                                              \
                 " LEFT JOIN q ON true LEFT JOIN x ON true")

/* The lock and the guard renew and complete share.  $1 id, $2 owner,
** $3 fence, $4 now. */
#define LPG_SQL_HELD_LOCK                                                             \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE)," \
  LPG_SQL_QUEUE_OF_J ","
#define LPG_SQL_HELD_GUARD                                                            \
  " WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.owner = $2"          \
  " AND j.fence = $3"                                                                 \
  " AND j.until > $4 AND j.fence < " LPG_FENCE_MAX " AND " LPG_SQL_NOT_ENDED         \
  " RETURNING 1)"
#define LPG_SQL_HELD_REPORT_FROM(one, stored)                                         \
  LPG_SQL_REPORT_FROM(one, stored, "j.owner IS DISTINCT FROM $2, j.fence <> $3",        \
                      "j.until <= $4", "j.until > $4", "q.state", " LEFT JOIN q ON true")
#define LPG_SQL_HELD_REPORT LPG_SQL_HELD_REPORT_FROM("(SELECT 1) one", "(SELECT count(*) FROM u)")

/* Contract step 5.  $5 now + ttl. */
#define LPG_SQL_RENEW \
  LPG_SQL_HELD_LOCK " u AS (UPDATE jobs SET until = $5 FROM j, q" LPG_SQL_HELD_GUARD LPG_SQL_HELD_REPORT

/* Contract step 6.  $5 result.  The job's queue row is locked FOR UPDATE
** after the job's row (s), which reads it as the last holder of its lock
** committed it; a job whose queue row the statement's snapshot lacks
** (one another client added while the complete waited) reads it through
** lease_queue_now (lpg_queue_sql.h), as LPG_SQL_COMPLETE_MANY does.  Once
** stored, the queue row s locked (seen) is completed at now, written by
** this statement, which counts up the job's lease_completions, so that
** lease_jobs_changed does not fire for it (schema step QUIET_COMPLETE); a
** row added after the snapshot is completed by the trigger, at the
** lease's end.  A row s locked that f's UPDATE did not write was skipped
** by another client's trigger and would stay open, no trigger completing
** it: the report's first column divides by zero then, the statement fails
** and stores nothing (SQLSTATE 22012, which lpg.c's guarded reports as
** LEASE_MISMATCH).  The CASE's branches run in order: a complete that
** wrote its queue row reads nothing more.  LPG_SQL_COMPLETE_FROM(one):
** the same, its report hanging from one (LPG_SQL_REPORT_FROM). */
#define LPG_SQL_COMPLETE LPG_SQL_COMPLETE_FROM("(SELECT 1) one")
#define LPG_SQL_COMPLETE_FROM(one)                                                    \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE)," \
  " q AS (SELECT coalesce(s.state, (SELECT n.state FROM lease_queue_now(j.id) n), "   \
  LEASE__Q_OPEN_S ") AS state, s.state IS NOT NULL AS seen FROM j"                    \
  " LEFT JOIN LATERAL (SELECT state FROM lease_queue WHERE lease_queue.id = j.id"     \
  " FOR UPDATE) s ON true),"                                                          \
  " u AS (UPDATE jobs SET result = $5, done = 1,"                                     \
  " lease_completions = jobs.lease_completions + q.seen::int"                         \
  " FROM j, q" LPG_SQL_HELD_GUARD                                                     \
  ", f AS (UPDATE lease_queue SET state = " LEASE__Q_COMPLETED_S ", finished_at = $4"    \
  " WHERE id = $1 AND EXISTS (SELECT 1 FROM u) RETURNING 1)"                          \
  LPG_SQL_HELD_REPORT_FROM(one, "(SELECT count(*) FROM u) / CASE WHEN EXISTS (SELECT 1 FROM f)" \
                           " THEN 1 WHEN EXISTS (SELECT 1 FROM u) AND (SELECT seen FROM q)" \
                           " THEN 0 ELSE 1 END")

/*
** Contract step 6 for a batch, one statement.  $1 the ids (bytea[], in id
** order, no id twice), $2 their fences (int8[]), $3 their results
** (bytea[], NULL elements for none), $4 owner, $5 now.  g takes the ids in
** $1's order and, for each, locks the job's row and then its queue row,
** each looked up by its key: the jobs rows are locked in id order, as
** complete's one by one, and a queue row under its job's lock, as every
** write of a queue state takes them.  Under READ COMMITTED a row locked
** FOR UPDATE is read as the last holder of its lock committed it, so the
** state is the one after the job's lock; but such a lock finds only the
** rows the statement's snapshot has, so a job without a queue row there
** reads it through lease_queue_now (a new snapshot: one another client
** added during the wait), as LPG_SQL_QUEUE_OF_J reads it for one job.
** The UPDATE's WHERE carries complete's whole guard for each job with its
** own fence.  One report row per id, in $1's order: LPG_SQL_REPORT's
** columns (the first: 1 when stored, else 0), then the id's position in
** $1.  The stored jobs' queue rows are completed at now here, as
** LPG_SQL_COMPLETE does, found by the array of the stored ids (= ANY),
** and each job whose queue row g locked (seen: the row is in the
** snapshot this UPDATE reads) gets its lease_completions counted up, so
** that lease_jobs_changed does not fire for it; a queue row added during
** the wait is not in that snapshot, so the trigger completes it, at the
** lease's end.  The last column: 1 when the job's queue row g locked was
** not written though its job was (another client's trigger skipped it:
** lpg_many.c fails the batch, which rolls back); looked for per row only
** when f wrote fewer rows than u stored jobs with a queue row g locked.
** Every row is reached by its key and the CTEs are never joined
** to each other: a plan the connection keeps is made for a batch of 10
** rows, and a join of two CTEs planned so runs as a nested loop whose
** cost grows with the square of the batch, where a join to a table scans
** all of it once the tables grow (spec 35, "plans as the tables grow").
*/
#define LPG_SQL_COMPLETE_MANY                                                        \
  "WITH a AS (SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[])"            \
  " WITH ORDINALITY a(id, fence, result, k)),"                                       \
  " g AS (SELECT a.id, a.fence AS want, a.result, a.k, j.id IS NOT NULL AS found,"   \
  " s.state IS NOT NULL AS seen,"                                                    \
  " j.owner, j.done, j.until, j.fence,"                                              \
  " CASE WHEN j.id IS NOT NULL THEN coalesce(s.state,"                               \
  " (SELECT n.state FROM lease_queue_now(j.id) n), " LEASE__Q_OPEN_S ")"             \
  " END AS state"                                                                    \
  " FROM a LEFT JOIN LATERAL (SELECT id, owner, done, until, fence FROM jobs"        \
  " WHERE jobs.id = a.id FOR UPDATE) j ON true"                                      \
  " LEFT JOIN LATERAL (SELECT state FROM lease_queue WHERE lease_queue.id = j.id"    \
  " FOR UPDATE) s ON true),"                                                         \
  " u AS (UPDATE jobs SET result = g.result, done = 1,"                              \
  " lease_completions = jobs.lease_completions + g.seen::int FROM g"                 \
  " WHERE jobs.id = g.id AND g.done = 0"                                             \
  " AND g.owner = $4 AND g.fence = g.want AND g.until > $5"                          \
  " AND g.fence < " LPG_FENCE_MAX " AND g.state < " LEASE__Q_DISCARDED_S             \
  " RETURNING jobs.id, g.seen),"                                                     \
  " f AS (UPDATE lease_queue SET state = " LEASE__Q_COMPLETED_S ", finished_at = $5"  \
  " WHERE id = ANY(ARRAY(SELECT id FROM u)) RETURNING id)"                           \
  " SELECT (g.id IN (SELECT id FROM u))::int::int8, g.found, g.done <> 0,"           \
  " g.owner IS DISTINCT FROM $4, g.fence <> g.want, g.until <= $5,"                  \
  " CASE WHEN g.fence >= " LPG_FENCE_MAX " THEN 3 ELSE 0 END, g.until > $5,"         \
  " g.state, g.k,"                                                                   \
  " CASE WHEN (SELECT count(*) FROM f) < (SELECT count(*) FROM u WHERE u.seen)"    \
  " THEN g.seen AND g.id IN (SELECT id FROM u) AND g.id NOT IN (SELECT id FROM f)"  \
  " ELSE false END"                                                                  \
  " FROM g ORDER BY g.k"

/* Contract step 7.  $1 id, $2 owner, $3 fence; the fence is kept.  A
** release that stores gives its attempt back: the job's attempts (its
** fence's growth since base_fence) drop by one, never below 0, so that
** claims a release ended never use up max_attempts. */
#define LPG_SQL_RELEASE                                                               \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE)," \
  " u AS (UPDATE jobs SET owner = NULL, until = 0 FROM j"                             \
  " WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.owner = $2"          \
  " AND j.fence = $3 RETURNING 1),"                                                   \
  " g AS (UPDATE lease_queue SET base_fence = base_fence + 1 WHERE id = $1"         \
  " AND EXISTS (SELECT 1 FROM u) AND base_fence < (SELECT fence FROM j))"             \
  LPG_SQL_REPORT("(SELECT count(*) FROM u)", "j.owner IS DISTINCT FROM $2, j.fence <> $3", \
                 "false", "false", "0", "")

/* The server's clock, seconds since the epoch. */
#define LPG_SQL_NOW "SELECT extract(epoch FROM clock_timestamp())::float8"

/* The channel of the wake signals (lpg_wake.c). */
#define LPG_WAKE_CHANNEL "lease_wake"

/* The wake signal: $1 the queue (NULL: any queue), in hex as the payload. */
#define LPG_SQL_WAKE \
  "SELECT pg_notify('" LPG_WAKE_CHANNEL "', coalesce(encode($1, 'hex'), ''))"

/*
** The statements of this header by their names in the lists
** (lease_statements.h, lpg_int.h's LPG_OWN_STATEMENTS): SQL, parameter
** count, parameter types in $n order (lpg.c's table).
*/
#define LPG_STMT_ENQUEUE_MANY LPG_SQL_ENQUEUE_MANY, 1, {T_BYTEA_ARRAY}
#define LPG_STMT_JOBS_MISSING LPG_SQL_JOBS_MISSING, 1, {T_BYTEA_ARRAY}
#define LPG_STMT_UNQUEUED LPG_SQL_UNQUEUED, 1, {T_BYTEA_ARRAY}
#define LPG_STMT_CLAIM LPG_SQL_CLAIM, 4, {T_BYTEA, T_BYTEA, T_FLOAT8, T_FLOAT8}
#define LPG_STMT_RENEW LPG_SQL_RENEW, 5, {T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_FLOAT8}
#define LPG_STMT_COMPLETE LPG_SQL_COMPLETE, 5, {T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_BYTEA}
#define LPG_STMT_RELEASE LPG_SQL_RELEASE, 3, {T_BYTEA, T_BYTEA, T_INT8}
#define LPG_STMT_COMPLETE_MANY                                                      \
  LPG_SQL_COMPLETE_MANY, 5, {T_BYTEA_ARRAY, T_INT8_ARRAY, T_BYTEA_ARRAY, T_BYTEA, T_FLOAT8}
#define LPG_STMT_NOW LPG_SQL_NOW, 0, {0}
#define LPG_STMT_WAKE LPG_SQL_WAKE, 1, {T_BYTEA}

#endif
