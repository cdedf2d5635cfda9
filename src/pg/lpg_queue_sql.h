/*
** lpg_queue_sql.h: the SQL of the job queue in the PostgreSQL backend
** (lease.h, "The job queue"), one definition of each statement.  Private
** to src/pg/; the layout mirrors the SQLite backend's (lsq_queue_sql.h).
**
** The jobs table stays as lpg_sql.h makes it.  The queue's data lives
** beside it, keyed by job id:
**   lease_queue   one row per job: seq (the job's seq: the enqueue order),
**                 queue, priority, run_at (NULL: at once), attempt (read
**                 by nothing since step ATTEMPTS, lpg_schema_sql.h),
**                 max_attempts, payload, state (0 open, 1 completed,
**                 2 discarded, 3 cancelled), finished_at, due_at (the
**                 claim order: run_at, or for a job without, the clock
**                 mark when its row was made or reopened by retry),
**                 base_fence (the job's fence when its attempts were last
**                 counted from zero: the attempts made are its fence minus
**                 base_fence, LPG_SQL_ATTEMPT) and key (the job's unique
**                 key, NULL for none: the index lease_queue_key makes a key
**                 unique among its queue's unfinished jobs);
**   lease_errors  the errors of failed attempts, the last 20 per job (n:
**                 their order).
** Both reference jobs(id) ON DELETE CASCADE, so deleting a job deletes its
** queue row and errors.  Triggers on jobs keep lease_queue complete for
** every client, the engine or raw SQL: a row for each job inserted, its
** state completed when done becomes non-zero (reopened with a fresh
** attempt budget, base_fence = the fence, when it goes back to 0).  A
** claim writes nothing here: the fence it grows counts the attempt.
**
** Under READ COMMITTED a statement's plain reads see its snapshot, taken
** before any lock wait.  Every statement that decides on a queue state
** first locks the job's row (jobs, FOR UPDATE), then reads its queue row
** through lease_queue_now, a VOLATILE function (in PL/pgSQL from schema
** step QUEUE_NOW_PLPGSQL) whose query takes a new snapshot after the lock
** was granted; every write of a queue state holds
** the job's row lock, so that read is the state as it is.  complete and
** complete_many, which write the queue row they read, lock it FOR UPDATE
** after its job's row instead, which reads it as it is when locked, and
** call lease_queue_now only for a job whose queue row their snapshot
** lacks (lpg_sql.h: LPG_SQL_COMPLETE, LPG_SQL_COMPLETE_MANY).
** claim_next locks both rows of each candidate FOR UPDATE SKIP LOCKED,
** which re-reads them as they are when locked.
*/
#ifndef LPG_QUEUE_SQL_H
#define LPG_QUEUE_SQL_H

#include "lpg_sql.h"

/* The side tables, without references on a read-only handle's temporary
** copies.  kw: "" or "TEMP "; refs: the references clause or "". */
#define LPG_Q_SQL_TABLES(kw, refs)                                                  \
  "CREATE " kw "TABLE IF NOT EXISTS lease_queue(id bytea PRIMARY KEY" refs ","    \
  " seq int8 NOT NULL, queue bytea NOT NULL DEFAULT 'default',"                    \
  " priority int8 NOT NULL DEFAULT 0, run_at float8,"                              \
  " attempt int8 NOT NULL DEFAULT 0, max_attempts int8 NOT NULL DEFAULT 25,"       \
  " payload bytea, state int NOT NULL DEFAULT " LEASE__Q_OPEN_S ", finished_at float8);" \
  " CREATE " kw "TABLE IF NOT EXISTS lease_errors(n int8 GENERATED ALWAYS AS IDENTITY" \
  " PRIMARY KEY, id bytea NOT NULL" refs ", attempt int8, at float8, owner bytea,"  \
  " fence int8, message bytea);"
#define LPG_Q_SQL_REFS " REFERENCES jobs(id) ON DELETE CASCADE ON UPDATE CASCADE"

/*
** The clock mark (lease_int.h: lease__clock), in lease_meta under the key
** 'clock_mark' (as text), and the time a job without run_at became due:
** the mark when its row was made or reopened (0 while there is none).  The
** claim order is (priority, due_at, seq), so a job due longer goes first
** (lease_queue's column due_at and its index lease_queue_due: step 6,
** LPG_STEP_CLOCK in lpg_schema_sql.h).
*/
#define LPG_Q_SQL_MARK                                                              \
  "(SELECT value::float8 FROM " LEASE_SCHEMA_META " WHERE key = 'clock_mark')"
#define LPG_Q_SQL_DUE_NOW "coalesce(" LPG_Q_SQL_MARK ", 0)"

/*
** The queue's schema as step 1 makes it (lpg_schema_sql.h): the tables,
** their indexes, functions and the triggers on jobs; the last statements
** fill lease_queue for the jobs already there, then make the trigger that
** keeps it filled.
*/
#define LPG_Q_SQL_SCHEMA                                                            \
  LPG_Q_SQL_TABLES("", LPG_Q_SQL_REFS)                                              \
  " CREATE INDEX IF NOT EXISTS lease_queue_ready"                                   \
  " ON lease_queue(queue, priority, run_at NULLS FIRST, seq) WHERE state = " LEASE__Q_OPEN_S ";" \
  " CREATE INDEX IF NOT EXISTS lease_queue_ended"                                   \
  " ON lease_queue(finished_at) WHERE state <> " LEASE__Q_OPEN_S ";"                \
  " CREATE INDEX IF NOT EXISTS lease_errors_job ON lease_errors(id, n);"           \
  " CREATE OR REPLACE FUNCTION lease_queue_now(bytea) RETURNS SETOF lease_queue"    \
  " LANGUAGE sql VOLATILE AS $f$ SELECT * FROM lease_queue WHERE id = $1 $f$;"     \
  " CREATE OR REPLACE FUNCTION lease_errors_kept() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN DELETE FROM lease_errors WHERE id = new.id AND n <= (SELECT e.n"   \
  " FROM lease_errors e WHERE e.id = new.id ORDER BY e.n DESC LIMIT 1 OFFSET 20);"  \
  " RETURN NULL; END $f$;"                                                          \
  " DROP TRIGGER IF EXISTS lease_errors_kept ON lease_errors;"                      \
  " CREATE TRIGGER lease_errors_kept AFTER INSERT ON lease_errors"                  \
  " FOR EACH ROW EXECUTE FUNCTION lease_errors_kept();"                             \
  " CREATE OR REPLACE FUNCTION lease_jobs_changed() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN"                                                                   \
  " IF (new.done <> 0) <> (old.done <> 0) THEN UPDATE lease_queue SET"             \
  " state = CASE WHEN new.done <> 0 THEN " LEASE__Q_COMPLETED_S " ELSE " LEASE__Q_OPEN_S " END," \
  " finished_at = CASE WHEN new.done <> 0 THEN coalesce(finished_at, new.until) END," \
  " attempt = CASE WHEN new.done <> 0 THEN attempt ELSE 0 END WHERE id = new.id;"   \
  " END IF;"                                                                        \
  " IF new.fence > old.fence THEN"                                                  \
  " UPDATE lease_queue SET attempt = attempt + 1 WHERE id = new.id; END IF;"       \
  " RETURN NULL; END $f$;"                                                          \
  " DROP TRIGGER IF EXISTS lease_jobs_changed ON jobs;"                             \
  " CREATE TRIGGER lease_jobs_changed AFTER UPDATE OF fence, done ON jobs"          \
  " FOR EACH ROW WHEN (new.fence > old.fence OR (new.done <> 0) <> (old.done <> 0))" \
  " EXECUTE FUNCTION lease_jobs_changed();"                                         \
  " CREATE OR REPLACE FUNCTION lease_jobs_added() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN INSERT INTO lease_queue(id, seq, state, finished_at)"              \
  " SELECT a.id, a.seq, CASE WHEN a.done <> 0 THEN " LEASE__Q_COMPLETED_S           \
  " ELSE " LEASE__Q_OPEN_S " END,"                                                  \
  " CASE WHEN a.done <> 0 THEN a.until END FROM lease_added a"                      \
  " ON CONFLICT (id) DO NOTHING; RETURN NULL; END $f$;"                             \
  " INSERT INTO lease_queue(id, seq, state, finished_at)"                           \
  " SELECT id, seq, CASE WHEN done <> 0 THEN " LEASE__Q_COMPLETED_S                 \
  " ELSE " LEASE__Q_OPEN_S " END,"                                                  \
  " CASE WHEN done <> 0 THEN until END FROM jobs ON CONFLICT (id) DO NOTHING;"     \
  " DROP TRIGGER IF EXISTS lease_jobs_added ON jobs;"                               \
  " CREATE TRIGGER lease_jobs_added AFTER INSERT ON jobs"                            \
  " REFERENCING NEW TABLE AS lease_added FOR EACH STATEMENT"                        \
  " EXECUTE FUNCTION lease_jobs_added();"

/*
** A job's status at now (the parameter `now`; NULL gives 0, unknown), over
** j (the jobs row) and q (its lease_queue row, NULL columns when none):
** lease.h's LEASE_STATUS_* numbers, in its order of precedence.
*/
#define LPG_Q_SQL_STATUS_(now, attempt)                                             \
  "(CASE WHEN " now " IS NULL THEN 0 WHEN j.done <> 0 THEN 5"                      \
  " WHEN q.state = " LEASE__Q_DISCARDED_S " THEN 6 WHEN q.state = " LEASE__Q_CANCELLED_S " THEN 7" \
  " WHEN q.state = " LEASE__Q_WAITING_S " THEN 8"                                   \
  " WHEN j.until > " now " THEN 3"                                                 \
  " WHEN q.run_at > " now " THEN (CASE WHEN " attempt " > 0 THEN 4 ELSE 2 END)"     \
  " ELSE 1 END)"
#define LPG_Q_SQL_STATUS(now) LPG_Q_SQL_STATUS_(now, LPG_SQL_ATTEMPT("j", "q"))

/* The attempts of a job on a database before step ATTEMPTS, whose trigger
** counted them in lease_queue.attempt: read there by a read-only handle,
** which may not upgrade it (the *_OLD statements). */
#define LPG_Q_SQL_ATTEMPT_OLD "coalesce(q.attempt, 0)"

/* A job row with its queue data, lease_row's order: id, owner, until,
** fence, result (NULL unless `res`), done, blocked code, payload, queue,
** priority, run_at, attempt, max_attempts, finished_at, status (at
** `now`), seq, result size, key.  attempt: how the attempts are counted. */
#define LPG_Q_SQL_FULL_ROW_(now, res, attempt)                                      \
  "SELECT j.id, j.owner, j.until, j.fence, CASE WHEN " res " THEN j.result END,"  \
  " j.done, CASE WHEN j.done <> 0 THEN 0 ELSE " LPG_SQL_BLOCKED " END,"            \
  " q.payload, coalesce(q.queue, 'default'::bytea), coalesce(q.priority, 0),"      \
  " q.run_at, " attempt ", coalesce(q.max_attempts, 25), q.finished_at, "          \
  LPG_Q_SQL_STATUS_(now, attempt) ", j.seq, coalesce(length(j.result), 0)::int8, q.key" \
  " FROM jobs j LEFT JOIN lease_queue q ON q.id = j.id"
#define LPG_Q_SQL_FULL_ROW(now, res) LPG_Q_SQL_FULL_ROW_(now, res, LPG_SQL_ATTEMPT("j", "q"))

/* One job (contract step 3, with its queue data).  $1 id, $2 now (NULL:
** status unknown).  The _OLD statements: the same on a database before
** step ATTEMPTS (LPG_Q_SQL_ATTEMPT_OLD). */
#define LPG_Q_SQL_STATE_(attempt) LPG_Q_SQL_FULL_ROW_("$2", "true", attempt) " WHERE j.id = $1"
#define LPG_Q_SQL_STATE LPG_Q_SQL_STATE_(LPG_SQL_ATTEMPT("j", "q"))
#define LPG_Q_SQL_STATE_OLD LPG_Q_SQL_STATE_(LPG_Q_SQL_ATTEMPT_OLD)

/* A page of jobs.  $1 after (seq), $2 now, $3 limit, $4 status (0: all),
** $5 queue (NULL: all), $6 load results (0 or 1), $7 which (LEASE_LIST_*:
** the contract's view at now; 0: all). */
#define LPG_Q_SQL_LIST_(attempt)                                                    \
  LPG_Q_SQL_FULL_ROW_("$2", "$6 <> 0", attempt)                                     \
  " WHERE j.seq > $1 AND CASE $7 WHEN 0 THEN true"                                  \
  " WHEN 1 THEN j.done = 0 AND " LPG_SQL_BLOCKED " = 0 AND j.until <= $2"           \
  " WHEN 2 THEN j.done = 0 AND " LPG_SQL_BLOCKED " = 0 AND j.until > $2"            \
  " WHEN 3 THEN j.done <> 0 ELSE j.done = 0 AND " LPG_SQL_BLOCKED " <> 0 END"       \
  " AND ($4 = 0 OR " LPG_Q_SQL_STATUS_("$2", attempt) " = $4)"                     \
  " AND ($5::bytea IS NULL OR coalesce(q.queue, 'default'::bytea) = $5)"           \
  " ORDER BY j.seq LIMIT $3"
#define LPG_Q_SQL_LIST LPG_Q_SQL_LIST_(LPG_SQL_ATTEMPT("j", "q"))
#define LPG_Q_SQL_LIST_OLD LPG_Q_SQL_LIST_(LPG_Q_SQL_ATTEMPT_OLD)

/* Counts: total, done, ready, held, blocked, then one per status 1..8.
** $1 now, $2 queue (NULL: all). */
#define LPG_Q_SQL_TALLY_(attempt)                                                   \
  "SELECT count(*), count(*) FILTER (WHERE done <> 0),"                            \
  " count(*) FILTER (WHERE done = 0 AND b = 0 AND until <= $1),"                   \
  " count(*) FILTER (WHERE done = 0 AND b = 0 AND until > $1),"                    \
  " count(*) FILTER (WHERE done = 0 AND b <> 0),"                                  \
  " count(*) FILTER (WHERE s = 1), count(*) FILTER (WHERE s = 2),"                 \
  " count(*) FILTER (WHERE s = 3), count(*) FILTER (WHERE s = 4),"                 \
  " count(*) FILTER (WHERE s = 5), count(*) FILTER (WHERE s = 6),"                 \
  " count(*) FILTER (WHERE s = 7), count(*) FILTER (WHERE s = 8)"                 \
  " FROM (SELECT j.done, j.until,"                                                 \
  " CASE WHEN j.done <> 0 THEN 0 ELSE " LPG_SQL_BLOCKED " END AS b, "              \
  LPG_Q_SQL_STATUS_("$1", attempt) " AS s FROM jobs j LEFT JOIN lease_queue q ON q.id = j.id" \
  " WHERE $2::bytea IS NULL OR coalesce(q.queue, 'default'::bytea) = $2) t"
#define LPG_Q_SQL_TALLY LPG_Q_SQL_TALLY_(LPG_SQL_ATTEMPT("j", "q"))
#define LPG_Q_SQL_TALLY_OLD LPG_Q_SQL_TALLY_(LPG_Q_SQL_ATTEMPT_OLD)

/* The errors of a job, oldest first.  $1 id, $2 limit. */
#define LPG_Q_SQL_ERRORS                                                            \
  "SELECT attempt, at, owner, fence, message FROM lease_errors WHERE id = $1"      \
  " ORDER BY n LIMIT $2"

/* Enqueue one job with its data (contract step 2: nothing when the id
** exists, or when an unfinished job of the queue holds its key).  $1 id,
** $2 payload, $3 queue, $4 priority, $5 run_at (NULL: at once),
** $6 max_attempts, $7 timeout (NULL: none), $8 key (NULL: none).  The
** job starts at the fence floor (LPG_SQL_FLOOR, lpg_sql.h, which says why
** an id the snapshot holds is skipped), its attempts counted from there
** (base_fence).  The queue row inserted here is the one lease_jobs_added
** then finds; a job inserted whose queue row another client's trigger
** skipped makes the first column divide by zero (SQLSTATE 22012), so the
** statement fails and stores nothing (lpg_queue.c: enqueue_jobs).  One
** row: how many were inserted (0 or 1), and the id of the job holding the
** key (h: NULL when none, or when the id exists).  h reads the statement's
** snapshot: an enqueue of the same key by a transaction not yet committed
** is not seen, and the index lease_queue_key then refuses the second of
** them (SQLSTATE 23505, lpg_key_conflict), which runs the statement again
** to find the holder.
*/
#define LPG_Q_SQL_ENQUEUE                                                           \
  "WITH h AS (SELECT id FROM lease_queue WHERE $8::bytea IS NOT NULL AND queue = $3" \
  " AND key = $8 AND " LEASE__Q_UNFINISHED_SQL("state")                             \
  " AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1) LIMIT 1),"                    \
  " i AS (INSERT INTO jobs(id, fence) SELECT $1, " LPG_SQL_FLOOR                   \
  " WHERE NOT EXISTS (SELECT 1 FROM h) AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1)" \
  " ON CONFLICT (id) DO NOTHING RETURNING id, seq, fence),"                          \
  " q AS (INSERT INTO lease_queue(id, seq, payload, queue, priority,"               \
  " run_at, due_at, max_attempts, timeout, key, base_fence)"                        \
  " SELECT id, seq, $2, $3, $4, $5,"                                                \
  " coalesce($5, " LPG_Q_SQL_DUE_NOW "), $6, $7, $8, fence"                         \
  " FROM i RETURNING 1)"                                                            \
  " SELECT (SELECT count(*) FROM q) / CASE WHEN EXISTS (SELECT 1 FROM i)"          \
  " AND NOT EXISTS (SELECT 1 FROM q) THEN 0 ELSE 1 END, (SELECT id FROM h)"

/*
** Enqueue many jobs with their data and without keys or dependencies, one
** statement (contract step 2 for each: nothing when the id exists; an id
** named twice in the batch is added once, with the data of its first
** entry).  $1 ids, $2 payloads, $3 queues (bytea[]), $4 priorities
** (int8[]), $5 run_at (float8[], NULL: at once), $6 max_attempts (int8[]),
** $7 timeouts (float8[], NULL: none), each in the input order.  The jobs
** rows are inserted in that order (seq), each at the fence floor (the
** look for an id the snapshot holds by key, as LPG_SQL_ENQUEUE_MANY's), each
** queue row from its job's first entry, as LPG_Q_SQL_ENQUEUE's; rows: the positions (1-based) of
** the entries inserted (whose queue rows lpg_enqueue_run then looks for:
** one another client's trigger skipped fails the batch).
*/
#define LPG_Q_SQL_ENQUEUE_DATA                                                      \
  "WITH a AS (SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::int8[]," \
  " $5::float8[], $6::int8[], $7::float8[])"                                        \
  " WITH ORDINALITY a(id, payload, queue, priority, run_at, max_attempts, timeout, k))," \
  " f AS (SELECT DISTINCT ON (id) * FROM a ORDER BY id, k),"                         \
  " i AS (INSERT INTO jobs(id, fence) SELECT id, " LPG_SQL_FLOOR " FROM a"         \
  " WHERE (SELECT true FROM jobs j WHERE j.id = a.id) IS NULL ORDER BY k"          \
  " ON CONFLICT (id) DO NOTHING RETURNING id, seq, fence),"                          \
  " q AS (INSERT INTO lease_queue(id, seq, payload, queue, priority,"               \
  " run_at, due_at, max_attempts, timeout, base_fence)"                             \
  " SELECT i.id, i.seq, f.payload,"                                                 \
  " f.queue, f.priority, f.run_at, coalesce(f.run_at, " LPG_Q_SQL_DUE_NOW "),"      \
  " f.max_attempts, f.timeout, i.fence"                                             \
  " FROM i JOIN f ON f.id = i.id RETURNING id)"                                     \
  " SELECT f.k FROM i JOIN f ON f.id = i.id"

/* A job's timeout (NULL: none), for lease_state on a database of step
** TIMEOUT's layout or newer.  $1 id. */
#define LPG_Q_SQL_TIMEOUT "SELECT timeout FROM lease_queue WHERE id = $1"

/*
** claim_next: the ready jobs of a queue in (priority, due_at, seq) order
** (the job due longer first: LPG_Q_SQL_DUE_NOW), both rows of each
** locked, those another transaction holds locked skipped.  A candidate
** whose lease expired unreported (an owner still named) gets its error
** recorded, and is
** discarded instead of claimed when that was its last attempt (x.last:
** attempt >= max_attempts, the core's rule lease__after_expiry, written
** here so that one statement records, discards and claims).  $1 queue,
** $2 now, $3 owner, $4 now + ttl, $5 how many.  Rows, in claim order: id,
** new fence (NULL: not claimed), payload, queue, priority, attempt (this
** claim's), max_attempts, then for the ledger lapsed (the lease had
** expired unreported) and the lapsed lease's owner and fence, then
** timeout (NULL: none), last, whether the discard stored, and whether a
** lapsed lease's error record was not stored.  A candidate neither
** claimed nor discarded, or whose error record is missing, is one whose
** write another client's trigger skipped (the caller fails: lpg_queue.c,
** claim_rounds).
**
** The two UPDATEs find their rows by the array of the candidates' ids
** alone (= ANY: one index scan, its keys sorted once), and the result
** joins the candidates to the rows the UPDATEs returned.  An
** UPDATE joined to the candidates would, in a plan that loops over them,
** scan the index under each candidate with the whole array among its keys
** and sort the array anew each time: n² comparisons for n jobs.  Without
** the array, a plan made while the tables were tiny may read the whole
** index of jobs at every claim once they have grown.
*/
#define LPG_Q_SQL_CLAIM_NEXT LPG_Q_SQL_CLAIM_NEXT_("", "", "$5")

/*
** The statements of a claim of one job (Q_CLAIM_ONE, Q_CLAIM_ONE_FREE,
** Q_CLAIM_ONE_KEEPING: lpg_queue.c, claim_stmt): each the statement of
** its name without ONE (Q_CLAIM_NEXT...), with LIMIT 1 written in it ($5,
** always 1 there, is not read).  The plan a connection keeps is made
** without the parameters' values, and a LIMIT $5 it reckons at a tenth of
** the rows the scan of lease_queue_due finds: once the tables are analyzed
** grown, that plan is costed far above one made for LIMIT 1, and
** PostgreSQL's plan cache then plans the statement anew at every run (about
** half a millisecond of the server's time a claim, more than running it).
** With the limit in the text, the kept plan is the one made for its value.
*/
#define LPG_Q_SQL_CLAIM_ONE LPG_Q_SQL_CLAIM_NEXT_("", "", "1")

/* claim_next's statement for a queue without settings, in the pipeline
** that reads them (lpg_queue.c: claim_pipelined, ccn_pipelined): it
** claims nothing while queue $1 has a settings row, so a queue with
** settings is claimed only under them (claim_under), in the same
** transaction. */
#define LPG_Q_SQL_CLAIM_NEXT_FREE LPG_Q_SQL_CLAIM_NEXT_FREE_("$5")
#define LPG_Q_SQL_CLAIM_ONE_FREE LPG_Q_SQL_CLAIM_NEXT_FREE_("1")
#define LPG_Q_SQL_CLAIM_NEXT_FREE_(limit)                                           \
  LPG_Q_SQL_CLAIM_NEXT_(" AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = $1)", "", limit)

/*
** claim_next's statement for complete_claim_next's one round trip
** (lpg_queue.c: ccn_committed), after LPG_Q_SQL_COMPLETE_LOCKING, with two
** more parameters: $6 the clock mark the handle judged the complete's now
** against (lease__clock_settled; NULL when it found none), $7 the
** completed job's id.  It divides by zero (SQLSTATE 22012), so that the
** transaction is rolled back, the complete before with it, when
** LPG_Q_SQL_CCN_CHECK fails, and when a candidate it would discard, whose
** claim did not store, or whose lapsed lease's error record did not; such
** a round runs in ccn_pipelined's transaction instead, with the rounds
** after it, and fails there before its COMMIT.
*/
#define LPG_Q_SQL_CLAIM_NEXT_KEEPING LPG_Q_SQL_CLAIM_NEXT_KEEPING_("$5")
#define LPG_Q_SQL_CLAIM_ONE_KEEPING LPG_Q_SQL_CLAIM_NEXT_KEEPING_("1")
#define LPG_Q_SQL_CLAIM_NEXT_KEEPING_(limit)                                        \
  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN x.last OR u.id IS NULL" \
                        " OR (x.lapsed AND NOT EXISTS (SELECT 1 FROM e WHERE e.id = x.id)) THEN 0 ELSE 1 END", limit)

/*
** The keeping claim's check, a condition on its candidates that reads
** none of their columns, so that PostgreSQL tests it once, before the
** first candidate (a one-time filter), whether or not there is one: the
** clock mark is still $6 (NULL: the database still has none); queue $1
** has no settings row (a queue with settings is claimed under them,
** claim_controlled), read under the queue's lock, which the complete
** before took; and the job $7 is done (the complete stored, or it was
** completed before: a refusal the caller hears as a reason, never a
** failure).  Else it divides by zero.
*/
#define LPG_Q_SQL_CCN_CHECK                                                         \
  " AND 1 / CASE WHEN " LPG_Q_SQL_MARK " IS NOT DISTINCT FROM $6"                    \
  " AND NOT EXISTS (SELECT 1"                                                       \
  " FROM lease_queues WHERE name = $1) AND EXISTS (SELECT 1 FROM jobs"             \
  " WHERE id = $7 AND done <> 0) THEN 1 ELSE 0 END = 1"

/* claim_next's statement, cond: more conditions on the candidates, extra:
** more columns after its own, limit: how many (SQL). */
#define LPG_Q_SQL_CLAIM_NEXT_(cond, extra, limit)                                   \
  "WITH c AS (SELECT q.id, q.payload, q.queue, q.priority, q.due_at, q.seq,"       \
  " " LPG_SQL_ATTEMPT("j", "q") " AS attempt, q.max_attempts, q.timeout, j.owner, j.until," \
  " j.fence"                                                                       \
  " FROM lease_queue q CROSS JOIN LATERAL (SELECT owner, until, fence FROM jobs"    \
  " WHERE jobs.id = q.id AND " LPG_SQL_UNKEYED("done") " = 0 AND until <= $2"      \
  " AND fence < " LPG_FENCE_MAX                                                     \
  " FOR UPDATE SKIP LOCKED) j"                                                      \
  " WHERE q.state = " LEASE__Q_OPEN_S " AND q.queue = $1 AND (q.run_at IS NULL OR q.run_at <= $2)" \
  cond " ORDER BY q.priority, q.due_at, q.seq LIMIT " limit                              \
  " FOR UPDATE OF q SKIP LOCKED),"                                                  \
  " x AS (SELECT c.*, c.owner IS NOT NULL AS lapsed,"                               \
  " c.owner IS NOT NULL AND c.attempt >= c.max_attempts AS last FROM c),"           \
  " e AS (INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"        \
  " SELECT id, attempt, until, owner, fence, 'lease expired'::bytea FROM x WHERE lapsed" \
  " RETURNING id),"                                                                 \
  " d AS (UPDATE lease_queue SET state = " LEASE__Q_DISCARDED_S ", finished_at = $2" \
  " WHERE lease_queue.id = ANY(ARRAY(SELECT id FROM x WHERE last))"                \
  " RETURNING lease_queue.id),"                                                     \
  " u AS (UPDATE jobs SET owner = $3, until = $4, fence = jobs.fence + 1"           \
  " WHERE jobs.id = ANY(ARRAY(SELECT id FROM x WHERE NOT last))"                   \
  " RETURNING jobs.id, jobs.fence AS taken)"                                        \
  " SELECT x.id, u.taken, x.payload, x.queue, x.priority, x.attempt + 1, x.max_attempts," \
  " x.lapsed, x.owner, x.fence, x.timeout, x.last, d.id IS NOT NULL,"               \
  " x.lapsed AND NOT EXISTS (SELECT 1 FROM e WHERE e.id = x.id)" extra                              \
  " FROM x LEFT JOIN u ON u.id = x.id LEFT JOIN d ON d.id = x.id"                  \
  " ORDER BY x.priority, x.due_at, x.seq"

/*
** fail's guarded write: complete's guard on the locked row (and the
** queue's state read after the lock), then the lease ends (owner NULL,
** until 0; the fence is kept) and, when it stored, the error is recorded.
** $1 id, $2 owner, $3 fence, $4 now, $5 message (NULL: none).  One row:
** LPG_SQL_REPORT's columns, then attempt, max_attempts and how many errors
** it recorded (1 when it stored, unless another client's trigger skipped
** the insert).
*/
#define LPG_Q_SQL_FAIL                                                              \
  LPG_SQL_HELD_LOCK " u AS (UPDATE jobs SET owner = NULL, until = 0 FROM j, q"     \
  LPG_SQL_HELD_GUARD ","                                                            \
  " e AS (INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"        \
  " SELECT $1, q.attempt, $4, $2, $3, $5 FROM q WHERE EXISTS (SELECT 1 FROM u) RETURNING 1)" \
  " SELECT (SELECT count(*) FROM u), j.id IS NOT NULL, j.done <> 0,"               \
  " j.owner IS DISTINCT FROM $2, j.fence <> $3, j.until <= $4,"                    \
  " CASE WHEN j.fence >= " LPG_FENCE_MAX " THEN 3 ELSE 0 END, j.until > $4,"       \
  " q.state, q.attempt, q.max_attempts, (SELECT count(*) FROM e)"                  \
  " FROM (SELECT 1) one LEFT JOIN j ON true LEFT JOIN q ON true"

/* After a failure: $1 id, $2 the attempts to count as made (base_fence =
** the fence minus them), $3 state, $4 run_at, $5 finished_at. */
#define LPG_Q_SQL_AFTER_FAIL                                                        \
  "UPDATE lease_queue SET base_fence = (SELECT fence FROM jobs WHERE jobs.id = $1) - $2," \
  " state = $3, run_at = $4,"                                                       \
  " due_at = coalesce($4, due_at), finished_at = $5"                                \
  " WHERE id = $1"

/*
** Dependencies (lease.h: lease_new_job's after) in lease_deps(child,
** parent), schema step DEPS (lpg_schema_sql.h, which also makes the
** trigger lease_deps_follow that opens or cancels waiting children).  A
** job whose parents are not all completed: q its lease_queue row.  The
** parents' ids are read into an array first, so that their queue rows
** are found by id whatever the statistics the plan was made from.
*/
#define LPG_Q_SQL_DEP_PENDING(q)                                                    \
  "EXISTS (SELECT 1 FROM lease_queue p WHERE p.id = ANY(ARRAY(SELECT d.parent"     \
  " FROM lease_deps d WHERE d.child = " q ".id)) AND p.state <> " LEASE__Q_COMPLETED_S ")"

/* A listed job's queue state at enqueue, its row locked FOR SHARE so it
** cannot end or complete before the enqueue commits; read after the lock.
** $1 its id.  Then 1 when its queue row is flagged waited_on (or it has
** none), else 0.  No row: missing. */
#define LPG_Q_SQL_DEP_STATE                                                         \
  "SELECT coalesce(s.state, " LEASE__Q_OPEN_S "), coalesce(s.waited_on, true)::int4"  \
  " FROM (SELECT id FROM jobs WHERE id = $1"                                        \
  " FOR SHARE) j LEFT JOIN LATERAL lease_queue_now(j.id) s ON true"

/* The job id (SQL) flagged waited_on, when it is not already (step 22's
** triggers). */
#define LPG_SQL_FLAG_JOB(id) "UPDATE lease_queue SET waited_on = true WHERE id = " id " AND NOT waited_on"

/* An enqueue flags the listed jobs $1 it locked (LPG_Q_SQL_DEP_STATE)
** itself, in id order, before it stores its dependencies (lpg_queue.c:
** flag_parents). */
#define LPG_Q_SQL_DEP_FLAG LPG_SQL_FLAG_JOB("$1")

/* Store that $1 runs after job $2 (the holder, for an entry of the same
** batch skipped because its key was held), whose jobs row the enqueue has
** locked with LPG_Q_SQL_DEP_STATE, so that it cannot end before the
** enqueue commits (the trigger lease_deps_added marks $2's queue row
** waited_on, which the trigger lease_deps_follow fires for: the trigger
** of its end then sees the edge).  Then $1 waits while one of its parents
** is not completed (DEP_WAIT: whether it stored the wait, then whether,
** as the statement's snapshot has it, the job is open with a parent not
** completed: both read one snapshot, so a wait not stored of a job that
** needed it was skipped by another client's trigger). */
#define LPG_Q_SQL_DEP_ADD                                                           \
  "INSERT INTO lease_deps(child, parent) VALUES ($1, $2) ON CONFLICT DO NOTHING"
#define LPG_Q_SQL_DEP_UNWAITED_(id)                                                 \
  "id = " id " AND " LPG_SQL_UNKEYED("state") " = " LEASE__Q_OPEN_S                \
  " AND " LPG_Q_SQL_DEP_PENDING("lease_queue")
#define LPG_Q_SQL_DEP_WAIT                                                          \
  "WITH w AS (UPDATE lease_queue SET state = " LEASE__Q_WAITING_S                  \
  " WHERE " LPG_Q_SQL_DEP_UNWAITED_("$1") " RETURNING 1)"                          \
  " SELECT EXISTS (SELECT 1 FROM w), EXISTS (SELECT 1 FROM lease_queue WHERE "     \
  LPG_Q_SQL_DEP_UNWAITED_("$1") ")"

/* After a DEP_ADD that changed no row: a row when the edge $1 after $2 is
** there (the same job listed twice), none when a trigger skipped it.  It
** runs in the enqueue's transaction, which holds the parent locked. */
#define LPG_Q_SQL_DEP_THERE "SELECT 1 FROM lease_deps WHERE child = $1 AND parent = $2"

/* The jobs $1 runs after, by id: id, status at $2 (0: no longer there). */
#define LPG_Q_SQL_DEPS                                                              \
  "SELECT d.parent, coalesce((SELECT " LPG_Q_SQL_STATUS("$2")                       \
  " FROM jobs j LEFT JOIN lease_queue q ON q.id = j.id WHERE j.id = d.parent), 0)" \
  " FROM lease_deps d WHERE d.child = $1 ORDER BY d.parent LIMIT $3"

/*
** retry: unless the job is open and held (until > now), reopen it (done 0,
** no owner, until 0; the fence kept) with a fresh attempt budget, due
** since now (due_at).  ok is the core's rule (lease__retry_reason) on the
** locked row, in SQL, so the statement reads and writes at once; h is
** another unfinished job of the queue holding the job's key, which keeps
** it as it is (LEASE_DUPLICATE; a holder not yet committed: the index
** lease_queue_key refuses the reopen, and lpg_key_conflict runs the
** statement again), looked up by the key in a subquery of its own, whose
** plan can only be keyed by it.  $1 id, $2 now.  One row, the facts the
** rule reads: found, done, the queue's state, held (until > now), and h's
** id.  A reopen of which a write did not store (another client's trigger
** skipped it) divides by zero (SQLSTATE 22012): nothing is stored.
*/
#define LPG_Q_SQL_RETRY                                                             \
  "WITH j AS (SELECT id, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE),"  \
  LPG_SQL_QUEUE_OF_J ","                                                            \
  " h AS (SELECT o.id FROM j, lease_queue_now(j.id) k CROSS JOIN LATERAL"          \
  " (SELECT o.id FROM lease_queue o WHERE o.queue = k.queue AND o.key = k.key"      \
  " AND o.id <> k.id AND " LEASE__Q_UNFINISHED_SQL("o.state") " LIMIT 1) o),"      \
  " ok AS (SELECT j.id, j.fence FROM j, q WHERE NOT (j.done = 0 AND q.state = " LEASE__Q_OPEN_S    \
  " AND j.until > $2) AND NOT EXISTS (SELECT 1 FROM h)),"                           \
  " u AS (UPDATE jobs SET done = 0, owner = NULL, until = 0 FROM ok"                \
  " WHERE jobs.id = $1 AND jobs.id = ok.id RETURNING 1),"                           \
  " r AS (UPDATE lease_queue SET state = " LEASE__Q_OPEN_S ", base_fence = ok.fence," \
  " run_at = NULL, due_at = $2, finished_at = NULL"                                 \
  " FROM ok WHERE lease_queue.id = $1 AND lease_queue.id = ok.id RETURNING 1)"     \
  " SELECT j.id IS NOT NULL, j.done <> 0, q.state, j.until > $2, (SELECT id FROM h),"  \
  " 1 / CASE WHEN NOT EXISTS (SELECT 1 FROM ok)"                                    \
  " OR (EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM r)) THEN 1 ELSE 0 END"   \
  " FROM (SELECT 1) one LEFT JOIN j ON true LEFT JOIN q ON true"

/* cancel: an open or waiting job (not done, not ended: the core's rule,
** lease__cancel_reason, in SQL) is cancelled at now (lease_deps_follow
** then cancels the jobs waiting for it).  $1 id, $2 now.  One
** row: found, done, the queue's state before.  A cancel that did not
** store (another client's trigger skipped it) divides by zero (SQLSTATE
** 22012). */
#define LPG_Q_SQL_CANCEL                                                            \
  "WITH j AS (SELECT id, done, fence FROM jobs WHERE id = $1 FOR UPDATE),"         \
  LPG_SQL_QUEUE_OF_J ","                                                            \
  " u AS (UPDATE lease_queue SET state = " LEASE__Q_CANCELLED_S ", finished_at = $2 FROM j, q" \
  " WHERE lease_queue.id = $1 AND lease_queue.id = j.id AND j.done = 0"            \
  " AND q.state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S ") RETURNING 1)"      \
  " SELECT j.id IS NOT NULL, j.done <> 0, q.state,"                                 \
  " 1 / CASE WHEN j.done = 0 AND q.state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S ")" \
  " AND NOT EXISTS (SELECT 1 FROM u) THEN 0 ELSE 1 END"                             \
  " FROM (SELECT 1) one LEFT JOIN j ON true LEFT JOIN q ON true"

/*
** prune: delete the jobs the queue ended before $1 (finished_at < $1), of
** queue $2 (NULL: all) and state $3 (0: any ended), never one still held
** (not done, until > $4: lease__prune_held).  Each job's row is locked first, in id order as
** complete_many locks them (so the two cannot deadlock), then its queue
** row read as it is (lease_queue_now); the references delete the queue
** rows and errors.  The fence floor (LPG_SQL_FLOOR, lpg_sql.h) is raised
** to the highest fence deleted, never lowered: the upsert takes the floor
** row's lock, so concurrent prunes raise it one after the other, each
** from the value the last one committed.  Rows: the ids deleted.  A
** floor to raise that the upsert did not store (another client's trigger
** skipped it) divides by zero (SQLSTATE 22012): nothing is deleted.
*/
#define LPG_Q_SQL_ENDED(s)                                                          \
  s ".state <> " LEASE__Q_OPEN_S " AND " s ".finished_at < $1"                      \
  " AND ($2::bytea IS NULL OR " s ".queue = $2)"                                    \
  " AND ($3 = 0 OR " s ".state = $3)"
#define LPG_Q_SQL_PRUNE                                                             \
  "WITH c AS (SELECT jobs.id FROM jobs WHERE jobs.id IN (SELECT q.id FROM lease_queue q" \
  " WHERE " LPG_Q_SQL_ENDED("q") ") AND NOT (jobs.done = 0 AND jobs.until > $4)"    \
  " ORDER BY jobs.id FOR UPDATE),"                                                  \
  " d AS (DELETE FROM jobs USING c, LATERAL lease_queue_now(c.id) s"                \
  " WHERE jobs.id = c.id AND " LPG_Q_SQL_ENDED("s") " RETURNING jobs.id, jobs.fence)," \
  " f AS (INSERT INTO " LEASE_SCHEMA_META "(key, value)"                             \
  " SELECT 'fence_floor', max(fence)::text FROM d HAVING max(fence) > 0"            \
  " ON CONFLICT (key) DO UPDATE SET value = greatest("                              \
  LPG_SQL_FLOOR_OF(LEASE_SCHEMA_META ".value") ", excluded.value::int8)::text"      \
  " RETURNING 1)"                                                                   \
  " SELECT id, 1 / CASE WHEN EXISTS (SELECT 1 FROM f)"                              \
  " OR NOT EXISTS (SELECT 1 FROM d WHERE fence > 0) THEN 1 ELSE 0 END FROM d"

/* The clock mark (no row: none), and its move to $1. */
#define LPG_Q_SQL_CLOCK_READ "SELECT " LPG_Q_SQL_MARK
#define LPG_Q_SQL_CLOCK_MOVE                                                        \
  "INSERT INTO " LEASE_SCHEMA_META "(key, value) VALUES ('clock_mark', $1::text)"   \
  " ON CONFLICT (key) DO UPDATE SET value = excluded.value"

/*
** A clock mark another client stored as a text that PostgreSQL's float8
** input refuses (LPG_Q_SQL_FLOAT8_TEXT), removed; one row when it was:
** lpg_queue.c, lpg_q_mark_dropped, runs it once a statement failed on a
** text float8 refused (every statement, and every trigger function, that
** reads the mark as a float8 fails while it is there).  The mark then
** counts as none, as SQLite's reads take a mark that is no number.
*/
#define LPG_Q_SQL_CLOCK_DROP                                                        \
  "DELETE FROM " LEASE_SCHEMA_META " WHERE key = 'clock_mark'"                      \
  " AND NOT " LPG_Q_SQL_FLOAT8_TEXT("value") " RETURNING 1"

/*
** Whether the text v (SQL) is one PostgreSQL's float8 input reads, decided
** without reading it so: Infinity, inf or NaN in any case, signed or not;
** or a decimal number (an exponent of at most four digits, at most 1000
** characters, spaces around it) that is 0 or, read as a numeric, within
** float8's range (its largest value, down to its smallest denormal).  The
** CASE tests in order, so numeric reads only a decimal number.  A text
** float8 reads that this does not take (a hexadecimal one, as the C
** library reads it) is dropped only after a statement failed on another
** text: the mark then counts as none.
*/
#define LPG_Q_SQL_FLOAT8_TEXT(v)                                                    \
  "(CASE WHEN " v " ~* '^\\s*[-+]?(nan|inf|infinity)\\s*$' THEN true"              \
  " WHEN length(" v ") > 1000 OR " v " !~ '^\\s*[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)" \
  "([eE][-+]?[0-9]{1,4})?\\s*$' THEN false"                                        \
  " ELSE " v "::numeric = 0"                                                        \
  " OR abs(" v "::numeric) BETWEEN 2.5e-324 AND 1.7976931348623157e308 END)"

/*
** Queue control (lease.h: lease_pause, lease_limit), the layout of the
** SQLite backend's (lsq_queue_sql.h): lease_queues, one row per queue with
** settings; lease_queue_claims, when claim_next handed out each job of a
** queue with a rate limit.  The tables are schema step 5 (LPG_STEP_CONTROL
** in lpg_schema_sql.h); LPG_Q_SQL_CONTROL_TEMP: empty temporary ones of
** the same layout, for a read-only handle on an older database.
*/
/* For a read-only handle on a database older than LPG_KEY_READABLE: its
** queue rows with key NULL, through a temporary view (pg_temp names before
** the database's schema) over the database's lease_queue; or, with the
** empty temporary queue table of one older than LPG_QUEUE_READABLE, that
** table given the column. */
#define LPG_Q_SQL_KEY_VIEW                                                          \
  "CREATE TEMP VIEW lease_queue AS SELECT q.*, NULL::bytea AS key FROM lease_queue q"
#define LPG_Q_SQL_KEY_TEMP "ALTER TABLE pg_temp.lease_queue ADD COLUMN IF NOT EXISTS key bytea"

#define LPG_Q_SQL_CONTROL_TEMP                                                      \
  "CREATE TEMP TABLE IF NOT EXISTS lease_queues(name bytea PRIMARY KEY,"          \
  " paused int NOT NULL DEFAULT 0, concurrency int8, rate int8, per float8);"      \
  " CREATE TEMP TABLE IF NOT EXISTS lease_queue_claims(queue bytea NOT NULL, at float8 NOT NULL)"

/* A queue's settings, read plainly (lock 0) or with its row locked (FOR
** UPDATE: claims of a queue with settings take turns, each counting after
** the one before committed).  $1 queue.  Columns: paused, concurrency,
** rate, per (0: none). */
#define LPG_Q_SQL_SETTINGS_(lock)                                                   \
  "SELECT paused::int8, coalesce(concurrency, 0), coalesce(rate, 0), coalesce(per, 0)" \
  " FROM lease_queues WHERE name = $1" lock
#define LPG_Q_SQL_SETTINGS LPG_Q_SQL_SETTINGS_("")
#define LPG_Q_SQL_SETTINGS_LOCKED LPG_Q_SQL_SETTINGS_(" FOR UPDATE")

/*
** The advisory lock of a queue ($1) that orders its claims and the
** changes of its settings: each claim transaction takes it shared, as a
** statement of its own before those that read the settings and claim;
** pause, resume and limit take it exclusive before they write
** lease_queues.  So a change waits for the claims in progress, and a claim
** that starts while it is in progress waits for its commit; under READ
** COMMITTED each statement after the lock takes its snapshot once the
** lock is granted, and sees the change.  Without it a claim could read
** the settings, or find none, before a pause commits, and commit its
** claims after the pause has returned.  The key: lease's class (the
** number of LPG_SQL_LOCK, in the two-int4 form, a lock space apart from
** the one-int8 form's) and a hash of the queue's name and of the jobs
** table (queues of the same name in two schemas do not wait for each
** other; two queues whose hashes collide only take turns).
** LPG_Q_SQL_QUEUE_KEY_OF(q): the key of the queue q (SQL, bytea).
*/
#define LPG_Q_SQL_QUEUE_KEY LPG_Q_SQL_QUEUE_KEY_OF("$1")
#define LPG_Q_SQL_QUEUE_KEY_OF(q)                                                    \
  "1818588019, hashtext(encode(" q ", 'hex') || ' ' || 'jobs'::regclass::oid::text)"
#define LPG_Q_SQL_CLAIM_LOCK "SELECT pg_advisory_xact_lock_shared(" LPG_Q_SQL_QUEUE_KEY ")"
#define LPG_Q_SQL_CONTROL_LOCK "SELECT pg_advisory_xact_lock(" LPG_Q_SQL_QUEUE_KEY ")"

/*
** complete_claim_next's complete when it commits in one round trip
** (lpg_queue.c: ccn_committed): LPG_SQL_COMPLETE ($1 to $5), which also
** takes the lock of the queue $6 the claim after it reads, shared, as
** LPG_Q_SQL_CLAIM_LOCK does.  The lock is in the report's FROM item,
** which the statement always reads (the outer side of its joins), so it
** is taken whatever the complete finds; the claim's statement, run after
** this one, takes its snapshot under the lock.
*/
#define LPG_Q_SQL_COMPLETE_LOCKING                                                   \
  LPG_SQL_COMPLETE_FROM("(SELECT 1 FROM pg_advisory_xact_lock_shared("              \
                        LPG_Q_SQL_QUEUE_KEY_OF("$6") ")) one")

/*
** Whether the index lease_jobs_live on jobs (LPG_Q_SQL_LIVE_INDEX) is
** valid: NULL when there is none.  It is found as an index of jobs, the
** table the statement reads, whatever schemas search_path lists.
*/
#define LPG_Q_SQL_LIVE_VALID                                                        \
  "(SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"    \
  " WHERE i.indrelid = 'jobs'::regclass AND c.relname = 'lease_jobs_live')"

/*
** The live leases of a queue: its jobs not done held (until > $2), in any
** queue state: a job cancelled while a worker holds it keeps its slot
** until that lease ends, as the worker may still be running it.
** $1 queue.  While lease_jobs_live is valid, the held jobs of every queue
** are read by its range until > $2, each one's queue row by its id.  Its
** predicate, (done + 0) = 0 AND until > 0, is this test's alone: no other
** index of jobs can stand in for it here (lease_jobs_pending, on done = 0,
** would read every job not done: on tables tiny when the plan was made
** the two cost the same), and it stands in for no other (claim_next's
** test of a candidate, (done + 0) = 0 AND until <= now, does not imply
** until > 0).  Without it (no concurrency limit was set through the
** engine, or lease_limit could not make it: a role that does not own
** jobs), the queue's open jobs are read by lease_queue_due, its backlog
** included, and the others not completed (discarded, cancelled, waiting)
** by lease_queue_aside, each one's jobs row by its id.  The CASE runs one
** of the two.  Each lookup is a subquery of its own: written as a join, a
** plan kept from tiny tables would read a whole table for each row (spec
** 35, "plans as the tables grow").
*/
#define LPG_Q_SQL_LIVE_AMONG(states)                                                \
  "(SELECT count(*) FROM lease_queue q CROSS JOIN LATERAL (SELECT done, until"      \
  " FROM jobs WHERE jobs.id = q.id LIMIT 1) j"                                      \
  " WHERE q.queue = $1 AND q.state " states " AND j.done = 0 AND j.until > $2)"
#define LPG_Q_SQL_LIVE                                                              \
  "SELECT CASE WHEN coalesce(" LPG_Q_SQL_LIVE_VALID ", false)"                      \
  " THEN (SELECT count(*) FROM jobs j CROSS JOIN LATERAL (SELECT q.queue"          \
  " FROM lease_queue q WHERE q.id = j.id LIMIT 1) q"                                \
  " WHERE " LPG_SQL_UNKEYED("j.done") " = 0 AND j.until > 0 AND j.until > $2"     \
  " AND q.queue = $1)"                                                               \
  " ELSE " LPG_Q_SQL_LIVE_AMONG("= " LEASE__Q_OPEN_S)                               \
  " + " LPG_Q_SQL_LIVE_AMONG(">= " LEASE__Q_DISCARDED_S) " END"

/*
** lease_jobs_live, jobs(until) of the jobs held or once held and not done
** (see LPG_Q_SQL_LIVE for how its predicate is written), for
** LPG_Q_SQL_LIVE.  It exists while some queue has a concurrency limit, so
** a database without one pays nothing for it at each write of until
** (which it keeps from being a HOT update), as SQLite's
** LSQ_SQL_LIVE_INDEX.  lease_limit, once its settings have committed,
** makes or drops it (lpg_queue.c: live_index), outside any transaction
** and CONCURRENTLY, so writes to jobs go on while it builds and no lock of
** the settings' transaction is held while it waits:
**   LPG_Q_SQL_LIVE_LOCK   the session's advisory lock of this index of
**                         this jobs table, taken without waiting (a
**                         session that waits for it holds a snapshot the
**                         holder's build would wait for); false: another
**                         session is at it, and looks at what must change
**                         again after it lets go;
**   LPG_Q_SQL_LIVE_WANT   what must change: "make", "remake" (an index a
**                         build that failed left invalid), "drop", or "";
**                         then jobs' schema, quoted, for the DROP.
*/
#define LPG_Q_SQL_LIVE_KEY "hashtextextended('lease_jobs_live ' || 'jobs'::regclass::oid::text, 0)"
#define LPG_Q_SQL_LIVE_LOCK "SELECT pg_try_advisory_lock(" LPG_Q_SQL_LIVE_KEY ")"
#define LPG_Q_SQL_LIVE_UNLOCK "SELECT pg_advisory_unlock(" LPG_Q_SQL_LIVE_KEY ")"
#define LPG_Q_SQL_LIVE_WANT                                                         \
  "SELECT CASE WHEN EXISTS (SELECT 1 FROM lease_queues WHERE concurrency IS NOT NULL)" \
  " THEN CASE WHEN valid IS NULL THEN 'make' WHEN NOT valid THEN 'remake' ELSE '' END" \
  " WHEN valid IS NOT NULL THEN 'drop' ELSE '' END,"                                 \
  " (SELECT quote_ident(n.nspname) FROM pg_class c JOIN pg_namespace n"             \
  " ON n.oid = c.relnamespace WHERE c.oid = 'jobs'::regclass)"                      \
  " FROM (SELECT " LPG_Q_SQL_LIVE_VALID " AS valid) i"
#define LPG_Q_SQL_LIVE_INDEX                                                        \
  "CREATE INDEX CONCURRENTLY IF NOT EXISTS lease_jobs_live ON jobs(until)"         \
  " WHERE " LPG_SQL_UNKEYED("done") " = 0 AND until > 0"
#define LPG_Q_SQL_LIVE_DROP "DROP INDEX CONCURRENTLY IF EXISTS %s.lease_jobs_live"

/* The rate's window (lease__queue_facts): $1 queue, $2 now, $3 per.
** Columns: the claim's time (at: now, or the latest claim less per when
** that is later) and the claims in (at - per, at + per).  It prunes the
** claims at or before the later of at and the latest claim, less twice
** per (the count reads the snapshot from before the DELETE, and the two
** ranges do not meet). */
#define LPG_Q_SQL_RECENT                                                            \
  "WITH m AS (SELECT max(at) AS m FROM lease_queue_claims WHERE queue = $1),"       \
  " t AS (SELECT greatest($2, m - $3) AS t, m FROM m),"                             \
  " d AS (DELETE FROM lease_queue_claims WHERE queue = $1"                          \
  " AND at <= (SELECT greatest(t, m) - 2 * $3 FROM t))"                             \
  " SELECT t, (SELECT count(*) FROM lease_queue_claims WHERE queue = $1"            \
  " AND at > t - $3 AND at < t + $3) FROM t"

/* Record $3 claims of queue $1 at $2 (the claim's time). */
#define LPG_Q_SQL_RECORD                                                            \
  "INSERT INTO lease_queue_claims(queue, at) SELECT $1, $2 FROM generate_series(1, $3)"

/* Write settings: $1 queue, $2 paused; or $2 concurrency, $3 rate, $4 per
** (NULL: none).  Then a row left with none goes, and the claims of a
** queue without a rate. */
#define LPG_Q_SQL_SET_PAUSED                                                        \
  "INSERT INTO lease_queues(name, paused) VALUES ($1, $2)"                          \
  " ON CONFLICT (name) DO UPDATE SET paused = excluded.paused"
#define LPG_Q_SQL_SET_LIMITS                                                        \
  "INSERT INTO lease_queues(name, concurrency, rate, per) VALUES ($1, $2, $3, $4)"  \
  " ON CONFLICT (name) DO UPDATE SET concurrency = excluded.concurrency,"           \
  " rate = excluded.rate, per = excluded.per"
#define LPG_Q_SQL_TIDY                                                              \
  "WITH d AS (DELETE FROM lease_queues WHERE name = $1 AND paused = 0"              \
  " AND concurrency IS NULL AND rate IS NULL RETURNING 1)"                          \
  " DELETE FROM lease_queue_claims WHERE queue = $1 AND NOT EXISTS"                 \
  " (SELECT 1 FROM lease_queues WHERE name = $1 AND rate IS NOT NULL)"

/* Every queue with jobs or settings, by name, with its settings. */
#define LPG_Q_SQL_QUEUES                                                            \
  "SELECT n.name, coalesce(s.paused, 0)::int8, coalesce(s.concurrency, 0), coalesce(s.rate, 0)," \
  " coalesce(s.per, 0) FROM (SELECT queue AS name FROM lease_queue UNION"            \
  " SELECT name FROM lease_queues) AS n LEFT JOIN lease_queues AS s ON s.name = n.name" \
  " ORDER BY n.name"

/*
** The events ledger (lpg_events.c).  Add: $1 at (NULL: the server's
** clock, seconds since the epoch), $2 op, $3 id, $4 queue, $5 owner, $6
** fence, $7 reason (0: ok, stored as outcome 0 and reason NULL); returns
** its seq.  Prune: the events with seq <= $1, and those before the first
** whose at >= $2, one seq range.  Read: after seq $1, of id $2 (NULL:
** all), at most $3, in seq order.
*/
#define LPG_Q_SQL_EVENT_CLOCK "extract(epoch FROM clock_timestamp())::float8"
#define LPG_Q_SQL_EVENT_ADD                                                         \
  "INSERT INTO lease_events(at, op, id, queue, owner, fence, outcome, reason)"     \
  " VALUES (coalesce($1, " LPG_Q_SQL_EVENT_CLOCK "), $2, $3, $4, $5, $6, ($7 <> 0)::int," \
  " nullif($7, 0)) RETURNING seq"
#define LPG_Q_SQL_EVENT_PRUNE                                                       \
  "DELETE FROM lease_events WHERE seq <= greatest($1, coalesce((SELECT seq FROM"   \
  " lease_events WHERE at >= $2 ORDER BY seq LIMIT 1), 0) - 1)"
#define LPG_Q_SQL_EVENT_READ                                                        \
  "SELECT seq, at, op, id, queue, owner, fence, coalesce(reason, 0) FROM lease_events" \
  " WHERE seq > $1 AND ($2::bytea IS NULL OR id = $2) ORDER BY seq LIMIT $3"

/*
** lease_wait's look: when the earliest job of queue $1 becomes claimable
** (claim_next's rule, as LPG_Q_SQL_CLAIM_NEXT: open, not done, the fence
** below its maximum, the later of run_at and until), NULL when there is
** none, and while the queue is paused (its resume wakes the waiters);
** then the server's clock, and the queue's concurrency limit, rate and
** per as LPG_Q_SQL_SETTINGS gives them (0: none), for LPG_Q_SQL_LIMIT_DUE.
*/
#define LPG_Q_SQL_DUE_SETTING(col)                                                  \
  "coalesce((SELECT " col " FROM lease_queues WHERE name = $1), 0)"
#define LPG_Q_SQL_DUE                                                               \
  "SELECT min(greatest(coalesce(q.run_at, 0), j.until)),"                          \
  " extract(epoch FROM clock_timestamp())::float8, "                               \
  LPG_Q_SQL_DUE_SETTING("concurrency") ", " LPG_Q_SQL_DUE_SETTING("rate") ", "     \
  LPG_Q_SQL_DUE_SETTING("per")                                                      \
  " FROM lease_queue q JOIN jobs j ON j.id = q.id"                                 \
  " WHERE q.state = " LEASE__Q_OPEN_S " AND q.queue = $1 AND j.done = 0"           \
  " AND j.fence < " LPG_FENCE_MAX                                                  \
  " AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = $1 AND paused <> 0)"

/*
** lease_wait's look at a queue's limits (claim's rule, lease__claim_room,
** over the facts claim_under reads): seconds from $2 (the server's clock
** as LPG_Q_SQL_DUE read it) until each limit may leave room, NULL when it
** leaves room now.  $1 queue, $3 its concurrency limit, $4 and $5 its rate
** (0: none).  First column: while $3 of its leases are live
** (LPG_Q_SQL_LIVE), the earliest of their ends, read as that count reads
** them (LPG_Q_SQL_LIVE_UNTIL_AMONG: LPG_Q_SQL_LIVE_AMONG's min).  Second: while the claims counted at the claim's time
** (LPG_Q_SQL_RECENT's) reach $4, the time the earliest of them leaves the
** window (its time plus $5: later than the claim's time, which is now or
** later).  Both are later than now; a lease or claim this look did not
** see is seen at the next one.
*/
#define LPG_Q_SQL_LIVE_UNTIL_AMONG(states)                                          \
  "(SELECT min(j.until) FROM lease_queue q CROSS JOIN LATERAL (SELECT done, until"  \
  " FROM jobs WHERE jobs.id = q.id LIMIT 1) j"                                      \
  " WHERE q.queue = $1 AND q.state " states " AND j.done = 0 AND j.until > $2)"
#define LPG_Q_SQL_LIMIT_DUE                                                         \
  "WITH m AS (SELECT max(at) AS m FROM lease_queue_claims WHERE queue = $1),"       \
  " t AS (SELECT greatest($2, m - $5) AS t FROM m)"                                 \
  " SELECT CASE WHEN $3 > 0 AND (" LPG_Q_SQL_LIVE ") >= $3"                        \
  " THEN (SELECT CASE WHEN coalesce(" LPG_Q_SQL_LIVE_VALID ", false)"               \
  " THEN (SELECT min(j.until) FROM jobs j CROSS JOIN LATERAL (SELECT q.queue"       \
  " FROM lease_queue q WHERE q.id = j.id LIMIT 1) q"                                \
  " WHERE " LPG_SQL_UNKEYED("j.done") " = 0 AND j.until > 0 AND j.until > $2"     \
  " AND q.queue = $1)"                                                               \
  " ELSE least(" LPG_Q_SQL_LIVE_UNTIL_AMONG("= " LEASE__Q_OPEN_S) ", "               \
  LPG_Q_SQL_LIVE_UNTIL_AMONG(">= " LEASE__Q_DISCARDED_S) ") END) - $2 END,"         \
  " (SELECT CASE WHEN $4 > 0 AND count(*) >= $4"                                    \
  " THEN min(at) + $5 - $2 END FROM lease_queue_claims"                            \
  " WHERE queue = $1 AND at > t.t - $5 AND at < t.t + $5) FROM t"

/* The queue's statements by their names in the lists (lease_statements.h,
** lpg_int.h's LPG_OWN_STATEMENTS): SQL, parameter count, parameter types
** in $n order (lpg.c's table). */
#define LPG_STMT_Q_STATE LPG_Q_SQL_STATE, 2, {T_BYTEA, T_FLOAT8}
#define LPG_STMT_Q_STATE_OLD LPG_Q_SQL_STATE_OLD, 2, {T_BYTEA, T_FLOAT8}
#define LPG_STMT_Q_LIST                                                             \
  LPG_Q_SQL_LIST, 7, {T_INT8, T_FLOAT8, T_INT4, T_INT4, T_BYTEA, T_INT4, T_INT4}
#define LPG_STMT_Q_LIST_OLD                                                         \
  LPG_Q_SQL_LIST_OLD, 7, {T_INT8, T_FLOAT8, T_INT4, T_INT4, T_BYTEA, T_INT4, T_INT4}
#define LPG_STMT_TALLY LPG_Q_SQL_TALLY, 2, {T_FLOAT8, T_BYTEA}
#define LPG_STMT_TALLY_OLD LPG_Q_SQL_TALLY_OLD, 2, {T_FLOAT8, T_BYTEA}
#define LPG_STMT_Q_ERRORS LPG_Q_SQL_ERRORS, 2, {T_BYTEA, T_INT4}
#define LPG_STMT_ENQUEUE                                                            \
  LPG_Q_SQL_ENQUEUE, 8,                                                             \
  {T_BYTEA, T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_INT8, T_FLOAT8, T_BYTEA}
#define LPG_STMT_Q_TIMEOUT LPG_Q_SQL_TIMEOUT, 1, {T_BYTEA}
#define LPG_STMT_ENQUEUE_DATA                                                       \
  LPG_Q_SQL_ENQUEUE_DATA, 7, {T_BYTEA_ARRAY, T_BYTEA_ARRAY, T_BYTEA_ARRAY, T_INT8_ARRAY, \
  T_FLOAT8_ARRAY, T_INT8_ARRAY, T_FLOAT8_ARRAY}
#define LPG_STMT_Q_CLAIM_NEXT                                                       \
  LPG_Q_SQL_CLAIM_NEXT, 5, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_CLAIM_NEXT_FREE                                                  \
  LPG_Q_SQL_CLAIM_NEXT_FREE, 5, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_CLAIM_LOCK LPG_Q_SQL_CLAIM_LOCK, 1, {T_BYTEA}
#define LPG_STMT_Q_CONTROL_LOCK LPG_Q_SQL_CONTROL_LOCK, 1, {T_BYTEA}
#define LPG_STMT_Q_CLAIM_NEXT_KEEPING                                               \
  LPG_Q_SQL_CLAIM_NEXT_KEEPING, 7, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4, T_FLOAT8, T_BYTEA}
#define LPG_STMT_Q_CLAIM_ONE                                                        \
  LPG_Q_SQL_CLAIM_ONE, 5, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_CLAIM_ONE_FREE                                                   \
  LPG_Q_SQL_CLAIM_ONE_FREE, 5, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_CLAIM_ONE_KEEPING                                                \
  LPG_Q_SQL_CLAIM_ONE_KEEPING, 7, {T_BYTEA, T_FLOAT8, T_BYTEA, T_FLOAT8, T_INT4, T_FLOAT8, T_BYTEA}
#define LPG_STMT_Q_FAIL LPG_Q_SQL_FAIL, 5, {T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_BYTEA}
#define LPG_STMT_Q_AFTER_FAIL LPG_Q_SQL_AFTER_FAIL, 5, {T_BYTEA, T_INT8, T_INT4, T_FLOAT8, T_FLOAT8}
#define LPG_STMT_Q_RETRY LPG_Q_SQL_RETRY, 2, {T_BYTEA, T_FLOAT8}
#define LPG_STMT_Q_CANCEL LPG_Q_SQL_CANCEL, 2, {T_BYTEA, T_FLOAT8}
#define LPG_STMT_Q_PRUNE LPG_Q_SQL_PRUNE, 4, {T_FLOAT8, T_BYTEA, T_INT4, T_FLOAT8}
#define LPG_STMT_Q_SETTINGS LPG_Q_SQL_SETTINGS, 1, {T_BYTEA}
#define LPG_STMT_Q_SETTINGS_LOCKED LPG_Q_SQL_SETTINGS_LOCKED, 1, {T_BYTEA}
#define LPG_STMT_Q_COMPLETE_LOCKING                                                 \
  LPG_Q_SQL_COMPLETE_LOCKING, 6, {T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_BYTEA, T_BYTEA}
#define LPG_STMT_Q_LIVE LPG_Q_SQL_LIVE, 2, {T_BYTEA, T_FLOAT8}
#define LPG_STMT_Q_RECENT LPG_Q_SQL_RECENT, 3, {T_BYTEA, T_FLOAT8, T_FLOAT8}
#define LPG_STMT_Q_RECORD_CLAIMS LPG_Q_SQL_RECORD, 3, {T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_SET_PAUSED LPG_Q_SQL_SET_PAUSED, 2, {T_BYTEA, T_INT4}
#define LPG_STMT_Q_SET_LIMITS LPG_Q_SQL_SET_LIMITS, 4, {T_BYTEA, T_INT8, T_INT8, T_FLOAT8}
#define LPG_STMT_Q_TIDY LPG_Q_SQL_TIDY, 1, {T_BYTEA}
#define LPG_STMT_Q_QUEUES LPG_Q_SQL_QUEUES, 0, {0}
#define LPG_STMT_Q_DEP_STATE LPG_Q_SQL_DEP_STATE, 1, {T_BYTEA}
#define LPG_STMT_Q_DEP_ADD LPG_Q_SQL_DEP_ADD, 2, {T_BYTEA, T_BYTEA}
#define LPG_STMT_Q_DEP_FLAG LPG_Q_SQL_DEP_FLAG, 1, {T_BYTEA}
#define LPG_STMT_Q_DEP_WAIT LPG_Q_SQL_DEP_WAIT, 1, {T_BYTEA}
#define LPG_STMT_Q_DEP_THERE LPG_Q_SQL_DEP_THERE, 2, {T_BYTEA, T_BYTEA}
#define LPG_STMT_Q_DEPS LPG_Q_SQL_DEPS, 3, {T_BYTEA, T_FLOAT8, T_INT4}
#define LPG_STMT_Q_DUE LPG_Q_SQL_DUE, 1, {T_BYTEA}
#define LPG_STMT_Q_LIMIT_DUE LPG_Q_SQL_LIMIT_DUE, 5, {T_BYTEA, T_FLOAT8, T_INT8, T_INT8, T_FLOAT8}
#define LPG_STMT_CLOCK_READ LPG_Q_SQL_CLOCK_READ, 0, {0}
#define LPG_STMT_CLOCK_DROP LPG_Q_SQL_CLOCK_DROP, 0, {0}
#define LPG_STMT_CLOCK_MOVE LPG_Q_SQL_CLOCK_MOVE, 1, {T_FLOAT8}
#define LPG_STMT_EVENT_ADD                                                          \
  LPG_Q_SQL_EVENT_ADD, 7, {T_FLOAT8, T_INT4, T_BYTEA, T_BYTEA, T_BYTEA, T_INT8, T_INT4}
#define LPG_STMT_EVENT_PRUNE LPG_Q_SQL_EVENT_PRUNE, 2, {T_INT8, T_FLOAT8}
#define LPG_STMT_EVENT_READ LPG_Q_SQL_EVENT_READ, 3, {T_INT8, T_BYTEA, T_INT4}

#endif
