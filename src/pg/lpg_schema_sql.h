/*
** lpg_schema_sql.h: the PostgreSQL backend's schema steps (src/core/
** lease_schema.h) and its version row, in the connection's schema (the
** first of search_path).  Each LPG_STEP_<NAME> is the SQL of one step,
** "" for a step with nothing to do on PostgreSQL; lpg_schema.c runs them
** at a writable open, every pending step in one transaction under
** LPG_SQL_LOCK.  A step's text stays as released: a later change to the
** layout is a new step.
*/
#ifndef LPG_SCHEMA_SQL_H
#define LPG_SCHEMA_SQL_H

#include "lease_schema.h"
#include "lpg_queue_sql.h"

/* Step 1 (v0 -> v1): the index of jobs not done, the job queue's tables
** and triggers (LPG_Q_SQL_SCHEMA), then the gate's table and the
** with_lease guard on every lease_ table (last: it covers them all). */
#define LPG_STEP_QUEUE \
  LPG_SQL_CREATE_PENDING_INDEX "; " LPG_Q_SQL_SCHEMA " " LPG_TX_SQL_CREATE

/* Step 2 (v1 -> v2): nothing.  SQLite's queue table changed its layout;
** PostgreSQL's keeps its attempt column (until step 7) and the index on
** jobs. */
#define LPG_STEP_REFENCE ""

/* Step 3 (v2 -> v3): nothing.  A job whose id changes keeps its queue
** row and errors through the references' ON UPDATE CASCADE since step 1. */
#define LPG_STEP_RENAMED ""

/* Step 4 (v3 -> v4): the schedules' table lease_schedules (lease.h,
** "Schedules"; read and written by lpg_schedule.c).  Names, cron
** expressions, queues and payloads are bytea, as the jobs' ids are.
** Nothing else: the guard upgrade_body puts on every lease_ table at the
** end of an upgrade covers it. */
#define LPG_STEP_SCHEDULES                                                        \
  "CREATE TABLE IF NOT EXISTS lease_schedules(name bytea PRIMARY KEY,"           \
  " every float8, cron bytea, queue bytea NOT NULL DEFAULT 'default', payload bytea," \
  " priority int8 NOT NULL DEFAULT 0, max_attempts int8 NOT NULL DEFAULT 25,"   \
  " created_at float8 NOT NULL, next_at float8 NOT NULL, last_at float8)"

/* Step 5 (v4 -> v5): queue control's tables (lease.h: lease_pause,
** lease_limit; their reads: lpg_queue_sql.h). */
#define LPG_STEP_CONTROL                                                          \
  "CREATE TABLE IF NOT EXISTS lease_queues(name bytea PRIMARY KEY,"               \
  " paused int NOT NULL DEFAULT 0, concurrency int8, rate int8, per float8);"    \
  " CREATE TABLE IF NOT EXISTS lease_queue_claims(queue bytea NOT NULL, at float8 NOT NULL);" \
  " CREATE INDEX IF NOT EXISTS lease_queue_claims_at ON lease_queue_claims(queue, at)"

/*
** Step 6 (v5 -> v6): the claim order by due time (lease_int.h:
** lease__clock).  lease_queue gets the column due_at, a row there now due
** at its run_at (0 without one: before every job enqueued later); the
** index lease_queue_due (queue, priority, due_at, seq) replaces
** lease_queue_ready; the function of the trigger lease_jobs_added is made
** anew to give a job inserted by any client due_at = the clock mark
** (LPG_Q_SQL_DUE_NOW).  lease_meta, which holds the mark, is made first
** (the upgrade writes the version row there after the steps).
*/
#define LPG_STEP_CLOCK                                                            \
  LPG_SQL_META_CREATE ";"                                                         \
  " ALTER TABLE lease_queue ADD COLUMN due_at float8 NOT NULL DEFAULT 0;"        \
  " UPDATE lease_queue SET due_at = run_at WHERE run_at IS NOT NULL;"             \
  " DROP INDEX IF EXISTS lease_queue_ready;"                                      \
  " CREATE INDEX lease_queue_due"                                                 \
  " ON lease_queue(queue, priority, due_at, seq) WHERE state = " LEASE__Q_OPEN_S ";" \
  " CREATE OR REPLACE FUNCTION lease_jobs_added() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN INSERT INTO lease_queue(id, seq, state, finished_at, due_at)"    \
  " SELECT a.id, a.seq, CASE WHEN a.done <> 0 THEN " LEASE__Q_COMPLETED_S          \
  " ELSE " LEASE__Q_OPEN_S " END,"                                                \
  " CASE WHEN a.done <> 0 THEN a.until END, " LPG_Q_SQL_DUE_NOW " FROM lease_added a" \
  " ON CONFLICT (id) DO NOTHING; RETURN NULL; END $f$"

/* The trigger lease_jobs_changed (made by step 7, its WHEN narrowed by
** step 21): fires when a job's done changes between 0 and not 0, and
** `also` (SQL opened by " AND ", or "") holds. */
#define LPG_JOBS_CHANGED_TRIGGER(also)                                              \
  "DROP TRIGGER IF EXISTS lease_jobs_changed ON jobs;"                              \
  " CREATE TRIGGER lease_jobs_changed AFTER UPDATE OF done ON jobs"                 \
  " FOR EACH ROW WHEN ((new.done <> 0) <> (old.done <> 0)" also ")"                 \
  " EXECUTE FUNCTION lease_jobs_changed()"

/* The trigger lease_deps_follow (made by step 10, its WHEN narrowed by
** step 21): fires when a job's queue row enters a state that ends it
** (completed, discarded, cancelled) and `first` (SQL closed by " AND ",
** or "") holds. */
#define LPG_DEPS_FOLLOW_TRIGGER(first)                                              \
  "DROP TRIGGER IF EXISTS lease_deps_follow ON lease_queue;"                        \
  " CREATE TRIGGER lease_deps_follow AFTER UPDATE OF state ON lease_queue"          \
  " FOR EACH ROW WHEN (" first "new.state IN (" LEASE__Q_COMPLETED_S ","            \
  " " LEASE__Q_DISCARDED_S ", " LEASE__Q_CANCELLED_S ")"                            \
  " AND new.state IS DISTINCT FROM old.state)"                                      \
  " EXECUTE FUNCTION lease_deps_follow()"

/*
** Step 7 (v6 -> v7): attempts counted as SQLite counts them, the fence's
** growth since base_fence (LPG_SQL_ATTEMPT), where a trigger counted them
** up in lease_queue.attempt at each claim.  lease_queue gets the column
** base_fence, each row's set so that its job keeps its count (fence -
** attempt); the trigger lease_jobs_changed fires only when done changes,
** and a job reopened gets base_fence = its fence (a fresh attempt budget);
** lease_jobs_added gives a job inserted by any client base_fence = its
** fence.  The column attempt stays, read by nothing on this layout.
*/
#define LPG_STEP_ATTEMPTS                                                         \
  "ALTER TABLE lease_queue ADD COLUMN base_fence int8 NOT NULL DEFAULT 0;"        \
  " UPDATE lease_queue SET base_fence = jobs.fence - lease_queue.attempt FROM jobs" \
  " WHERE jobs.id = lease_queue.id;"                                              \
  " CREATE OR REPLACE FUNCTION lease_jobs_changed() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN UPDATE lease_queue SET"                                          \
  " state = CASE WHEN new.done <> 0 THEN " LEASE__Q_COMPLETED_S " ELSE " LEASE__Q_OPEN_S " END," \
  " finished_at = CASE WHEN new.done <> 0 THEN coalesce(finished_at, new.until) END," \
  " base_fence = CASE WHEN new.done <> 0 THEN base_fence ELSE new.fence END"      \
  " WHERE id = new.id; RETURN NULL; END $f$;"                                     \
  " " LPG_JOBS_CHANGED_TRIGGER("") ";"                                             \
  " CREATE OR REPLACE FUNCTION lease_jobs_added() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN INSERT INTO lease_queue(id, seq, state, finished_at, due_at, base_fence)" \
  " SELECT a.id, a.seq, CASE WHEN a.done <> 0 THEN " LEASE__Q_COMPLETED_S          \
  " ELSE " LEASE__Q_OPEN_S " END,"                                                \
  " CASE WHEN a.done <> 0 THEN a.until END, " LPG_Q_SQL_DUE_NOW ", a.fence FROM lease_added a" \
  " ON CONFLICT (id) DO NOTHING; RETURN NULL; END $f$"

/* Step 8 (v7 -> v8): the events ledger's table lease_events (lease.h, "The
** events ledger"): seq a bigserial (pruned by seq ranges), op and reason
** as lease.h's numbers, outcome 0 (ok) or 1 (refused).  No index beside
** the key: every write inserts a row. */
#define LPG_STEP_EVENTS                                                           \
  "CREATE TABLE IF NOT EXISTS lease_events(seq bigserial PRIMARY KEY,"            \
  " at float8 NOT NULL, op int4 NOT NULL, id bytea, queue bytea, owner bytea,"    \
  " fence int8, outcome int4 NOT NULL, reason int4)"

/* Step 9 (v8 -> v9): lease_queue's column timeout (lease_new_job.timeout:
** seconds, NULL for none), written by enqueue, read by claim_next and
** lease_state. */
#define LPG_STEP_TIMEOUT "ALTER TABLE lease_queue ADD COLUMN timeout float8"

/*
** Step 10 (v9 -> v10): dependencies (lease.h: lease_new_job's after): the
** table of edges lease_deps(child, parent), a child's edges going with
** its job, the index by parent, and the trigger lease_deps_follow on
** lease_queue that follows a parent's end in the statement that ends it:
** completed opens its waiting children whose parents are now all
** completed (due at run_at or the clock mark); discarded or cancelled
** cancels them, each with the error 'dependency "<parent>" was <word>',
** which fires the trigger again for theirs.  Every path that completes a
** job (complete, complete_many, complete_claim_next, tx_complete) stores
** done = 1 only when its guard passes, and lease_jobs_changed turns that
** into the state: a refused write opens nothing.
*/
#define LPG_STEP_DEPS                                                             \
  "CREATE TABLE IF NOT EXISTS lease_deps(child bytea NOT NULL" LPG_Q_SQL_REFS ","  \
  " parent bytea NOT NULL, PRIMARY KEY (child, parent));"                         \
  " CREATE INDEX IF NOT EXISTS lease_deps_parent ON lease_deps(parent, child);"   \
  " CREATE OR REPLACE FUNCTION lease_deps_follow() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN IF new.state = " LEASE__Q_COMPLETED_S " THEN"                   \
  " UPDATE lease_queue c SET state = " LEASE__Q_OPEN_S ","                        \
  " due_at = coalesce(c.run_at, " LPG_Q_SQL_DUE_NOW ")"                           \
  " WHERE c.state = " LEASE__Q_WAITING_S                                          \
  " AND c.id IN (SELECT d.child FROM lease_deps d WHERE d.parent = new.id)"       \
  " AND NOT EXISTS (SELECT 1 FROM lease_deps d JOIN lease_queue p ON p.id = d.parent" \
  " WHERE d.child = c.id AND p.state <> " LEASE__Q_COMPLETED_S ");"               \
  " ELSE INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"        \
  " SELECT c.id, 0, new.finished_at, NULL, NULL,"                                 \
  " convert_to('dependency \"', 'UTF8') || new.id || convert_to('\" was ' ||"    \
  " CASE WHEN new.state = " LEASE__Q_DISCARDED_S " THEN 'discarded' ELSE 'cancelled' END, 'UTF8')" \
  " FROM lease_deps d JOIN lease_queue c ON c.id = d.child"                       \
  " WHERE d.parent = new.id AND c.state = " LEASE__Q_WAITING_S ";"                \
  " UPDATE lease_queue c SET state = " LEASE__Q_CANCELLED_S ", finished_at = new.finished_at" \
  " FROM lease_deps d WHERE d.parent = new.id AND d.child = c.id"                 \
  " AND c.state = " LEASE__Q_WAITING_S "; END IF; RETURN NULL; END $f$;"          \
  " " LPG_DEPS_FOLLOW_TRIGGER("")

/*
** Step 11 (v10 -> v11): unique keys (lease.h: lease_new_job's key).
** lease_queue gets the column key (NULL: none, as every row there has);
** the unique index lease_queue_key on (queue, key) over the rows with a
** key the queue has not finished makes a key held by one unfinished job
** of a queue at a time, whoever writes.
*/
#define LPG_STEP_UNIQUE                                                           \
  "ALTER TABLE lease_queue ADD COLUMN key bytea;"                                 \
  " CREATE UNIQUE INDEX lease_queue_key ON lease_queue(queue, key)"               \
  " WHERE key IS NOT NULL AND " LEASE__Q_UNFINISHED_SQL("state")

/*
** Step 12 (v11 -> v12): lease_deps_follow as step 10 made it, but
** recording a ledger event (op cancel, outcome ok) for each waiting job a
** discard or cancel cancels, when the session's setting lease.events is
** on (a handle recording events sets it), and first locking the jobs rows
** of the parent's children (in id order), so that
** what it reads of their other parents is what the last holder of each
** lock committed: two parents of one child completed at once by two
** transactions each see the other's end once the first commits, and the
** second opens the child (without the lock each read the other as not
** completed, and the child waited for ever).  Every other write of a
** queue state holds that lock already.
*/
#define LPG_STEP_DEPS_FOLLOW LPG_DEPS_FOLLOW_FN("")

/* lease_deps_follow as step 12 made it, its body opened by first (SQL
** run before anything else; "" for none). */
#define LPG_DEPS_FOLLOW_FN(first)                                                   \
  "CREATE OR REPLACE FUNCTION lease_deps_follow() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN " first "PERFORM 1 FROM jobs WHERE id IN (SELECT d.child FROM lease_deps d" \
  " WHERE d.parent = new.id) ORDER BY id FOR UPDATE;"                             \
  " IF new.state = " LEASE__Q_COMPLETED_S " THEN"                                 \
  " UPDATE lease_queue c SET state = " LEASE__Q_OPEN_S ","                        \
  " due_at = coalesce(c.run_at, " LPG_Q_SQL_DUE_NOW ")"                           \
  " WHERE c.state = " LEASE__Q_WAITING_S                                          \
  " AND c.id IN (SELECT d.child FROM lease_deps d WHERE d.parent = new.id)"       \
  " AND NOT EXISTS (SELECT 1 FROM lease_deps d JOIN lease_queue p ON p.id = d.parent" \
  " WHERE d.child = c.id AND p.state <> " LEASE__Q_COMPLETED_S ");"               \
  " ELSE IF current_setting('lease.events', true) = 'on' THEN"                   \
  " INSERT INTO lease_events(at, op, id, queue, owner, fence, outcome, reason)"   \
  " SELECT coalesce(new.finished_at, " LPG_Q_SQL_DUE_NOW "), " LEASE__EV_CANCEL_S "," \
  " c.id, c.queue, NULL, NULL, 0, NULL FROM lease_deps d JOIN lease_queue c"      \
  " ON c.id = d.child WHERE d.parent = new.id AND c.state = " LEASE__Q_WAITING_S   \
  " ORDER BY c.id; END IF;"                                                       \
  " INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"             \
  " SELECT c.id, 0, new.finished_at, NULL, NULL,"                                 \
  " convert_to('dependency \"', 'UTF8') || new.id || convert_to('\" was ' ||"    \
  " CASE WHEN new.state = " LEASE__Q_DISCARDED_S " THEN 'discarded' ELSE 'cancelled' END, 'UTF8')" \
  " FROM lease_deps d JOIN lease_queue c ON c.id = d.child"                       \
  " WHERE d.parent = new.id AND c.state = " LEASE__Q_WAITING_S ";"                \
  " UPDATE lease_queue c SET state = " LEASE__Q_CANCELLED_S ", finished_at = new.finished_at" \
  " FROM lease_deps d WHERE d.parent = new.id AND d.child = c.id"                 \
  " AND c.state = " LEASE__Q_WAITING_S "; END IF; RETURN NULL; END $f$"

/*
** Step 13 (v12 -> v13): lease_jobs_changed as step 7 made it, but when
** done becomes non-zero on a job whose queue row the same statement has
** already made completed (the engine's complete and complete_many set the
** state and finished_at in the statement that stores done = 1:
** LPG_SQL_COMPLETE, LPG_SQL_COMPLETE_MANY), it writes nothing: one new
** version of that row per completion, not two.  done set by another
** client (the row still open) and a job reopened are written as before.
*/
#define LPG_STEP_COMPLETE_ONCE                                                      \
  "CREATE OR REPLACE FUNCTION lease_jobs_changed() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN UPDATE lease_queue SET"                                            \
  " state = CASE WHEN new.done <> 0 THEN " LEASE__Q_COMPLETED_S " ELSE " LEASE__Q_OPEN_S " END," \
  " finished_at = CASE WHEN new.done <> 0 THEN coalesce(finished_at, new.until) END," \
  " base_fence = CASE WHEN new.done <> 0 THEN base_fence ELSE new.fence END"        \
  " WHERE id = new.id AND (new.done = 0 OR state <> " LEASE__Q_COMPLETED_S ");"     \
  " RETURN NULL; END $f$"

/*
** Step 14 (v13 -> v14): lease_deps_follow as step 12 made it, but
** returning at once when no job runs after the one that ended (no row of
** lease_deps names it as parent): one look at the index lease_deps_parent
** in place of the lock and the writes that find nothing.  The look is a
** statement of its own, so it sees what committed before it: an enqueue
** that lists the job holds its jobs row FOR SHARE until it commits
** (LPG_Q_SQL_DEP_STATE), and every statement of the engine that ends a
** job (and another client's write of jobs.done) locks that row first, so
** it waits for the enqueue and the look sees the edge.  A client writing
** lease_queue.state alone takes no such lock, and may miss an edge an
** enqueue is storing, with or without the look.
*/
#define LPG_STEP_DEPS_CHILDLESS                                                     \
  LPG_DEPS_FOLLOW_FN("IF NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \
                     " THEN RETURN NULL; END IF; ")

/*
** Step 15 (v14 -> v15): lease_queue_now (lpg_queue_sql.h) in PL/pgSQL.
** A function in SQL is parsed and planned again at every call; PL/pgSQL
** keeps its query's plan for the connection.  It stays VOLATILE: each of
** its queries takes a new snapshot, so the row it returns is the one the
** last holder of the job's row lock committed, as the statements that
** call it after that lock need (lpg_sql.h: LPG_SQL_QUEUE_OF_J).
*/
#define LPG_STEP_QUEUE_NOW_PLPGSQL                                                  \
  "CREATE OR REPLACE FUNCTION lease_queue_now(bytea) RETURNS SETOF lease_queue"    \
  " LANGUAGE plpgsql VOLATILE AS $f$ BEGIN"                                        \
  " RETURN QUERY SELECT * FROM lease_queue WHERE id = $1; END $f$"

/* Step 16 (v15 -> v16): nothing.  SQLite's completions write the queue
** row once, as PostgreSQL's have since step 13. */
#define LPG_STEP_SQLITE_COMPLETE_ONCE ""

/*
** Step 17 (v16 -> v17): lease_deps_follow as step 14 made it, but each of
** its statements finds the rows it reads or writes by their ids: the
** children's ids (and each child's parents') read from lease_deps into an
** array first, then jobs and lease_queue looked up by = ANY of it.  A
** PL/pgSQL query keeps a generic plan for the connection, made from the
** statistics of its first runs; written as joins, a plan made while the
** tables were tiny scans all of lease_queue or jobs once they have grown
** (spec 35, "plans as the tables grow"), where a key lookup reads only
** the rows named.
*/
/* The ids of the children of the trigger's row `row` (new or old), the
** condition on c, a lease_queue row, of one of them still waiting, and the
** statement that opens those of them whose parents are all completed
** (lease_deps_follow here, lease_deps_parent_gone in step 19). */
#define LPG_DEP_CHILDREN_OF(row) "ARRAY(SELECT d.child FROM lease_deps d WHERE d.parent = " row ".id)"
#define LPG_DEP_WAITING_CHILD_OF(row)                                               \
  " WHERE c.id = ANY(" LPG_DEP_CHILDREN_OF(row) ") AND " LPG_SQL_UNKEYED("c.state") \
  " = " LEASE__Q_WAITING_S
#define LPG_DEP_OPEN_WAITING_OF(row)                                                \
  " UPDATE lease_queue c SET state = " LEASE__Q_OPEN_S ","                        \
  " due_at = coalesce(c.run_at, " LPG_Q_SQL_DUE_NOW ")"                           \
  LPG_DEP_WAITING_CHILD_OF(row)                                                   \
  " AND NOT " LPG_Q_SQL_DEP_PENDING("c") ";"
#define LPG_DEP_CHILDREN LPG_DEP_CHILDREN_OF("new")
#define LPG_DEP_WAITING_CHILD LPG_DEP_WAITING_CHILD_OF("new")
#define LPG_STEP_DEPS_KEYED                                                         \
  "CREATE OR REPLACE FUNCTION lease_deps_follow() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN IF NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \
  " THEN RETURN NULL; END IF;"                                                     \
  " PERFORM 1 FROM jobs WHERE id = ANY(" LPG_DEP_CHILDREN ") ORDER BY id FOR UPDATE;" \
  " IF new.state = " LEASE__Q_COMPLETED_S " THEN"                                 \
  LPG_DEP_OPEN_WAITING_OF("new")                                                  \
  " ELSE IF current_setting('lease.events', true) = 'on' THEN"                   \
  " INSERT INTO lease_events(at, op, id, queue, owner, fence, outcome, reason)"   \
  " SELECT coalesce(new.finished_at, " LPG_Q_SQL_DUE_NOW "), " LEASE__EV_CANCEL_S "," \
  " c.id, c.queue, NULL, NULL, 0, NULL FROM lease_queue c"                        \
  LPG_DEP_WAITING_CHILD                                                           \
  " ORDER BY c.id; END IF;"                                                       \
  " INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"             \
  " SELECT c.id, 0, new.finished_at, NULL, NULL,"                                 \
  " convert_to('dependency \"', 'UTF8') || new.id || convert_to('\" was ' ||"    \
  " CASE WHEN new.state = " LEASE__Q_DISCARDED_S " THEN 'discarded' ELSE 'cancelled' END, 'UTF8')" \
  " FROM lease_queue c"                                                           \
  LPG_DEP_WAITING_CHILD ";"                                                       \
  " UPDATE lease_queue c SET state = " LEASE__Q_CANCELLED_S ", finished_at = new.finished_at" \
  LPG_DEP_WAITING_CHILD ";"                                                       \
  " END IF; RETURN NULL; END $f$"

/*
** Step 18 (v17 -> v18): the trigger lease_jobs_added reads the fence floor
** (LPG_SQL_FLOOR) again, after the insert, and raises each job the
** statement inserted below it to the floor, its queue row's base_fence by
** as much (its attempts stay 0).  An enqueue reads the floor in its
** statement's snapshot; when its insert waited for another transaction
** that inserted the same id and then deleted it (a job enqueued, run and
** pruned by other clients meanwhile), the row it inserts would start at
** the floor read before that prune raised it, and hand out again a fence
** the pruned job had.  The trigger's statements take a snapshot of their
** own under READ COMMITTED, after the wait, so they see that floor.  It
** covers rows other clients insert too.  One read of lease_meta per
** inserting statement; the UPDATE runs only for a row below the floor.
*/
#define LPG_STEP_ADDED_FLOOR LPG_JOBS_ADDED_FN("", "", "")

/* lease_jobs_added as step 18 made it, its queue rows given the columns
** cols (", name...", or "") with the values vals (", expr...", of a, the
** inserted row), and then (" statement;", or "") run after their insert. */
#define LPG_JOBS_ADDED_FN(cols, vals, then)                                         \
  "CREATE OR REPLACE FUNCTION lease_jobs_added() RETURNS trigger LANGUAGE plpgsql"  \
  " AS $f$ DECLARE fl int8; BEGIN"                                                  \
  " INSERT INTO lease_queue(id, seq, state, finished_at, due_at, base_fence" cols ")" \
  " SELECT a.id, a.seq, CASE WHEN a.done <> 0 THEN " LEASE__Q_COMPLETED_S           \
  " ELSE " LEASE__Q_OPEN_S " END,"                                                  \
  " CASE WHEN a.done <> 0 THEN a.until END, " LPG_Q_SQL_DUE_NOW ", a.fence" vals " FROM lease_added a" \
  " ON CONFLICT (id) DO NOTHING;" then                                              \
  " fl := " LPG_SQL_FLOOR ";"                                                       \
  " IF fl > 0 AND EXISTS (SELECT 1 FROM lease_added a WHERE a.fence < fl) THEN"     \
  " WITH r AS (UPDATE jobs j SET fence = fl FROM lease_added a"                     \
  " WHERE j.id = a.id AND a.fence < fl AND j.fence < fl RETURNING j.id, fl - a.fence AS d)" \
  " UPDATE lease_queue q SET base_fence = q.base_fence + r.d FROM r WHERE q.id = r.id;" \
  " END IF; RETURN NULL; END $f$"

/*
** Step 19 (v18 -> v19): the trigger lease_deps_parent_gone on lease_queue,
** after a row that is not completed is deleted (another client's DELETE
** of the job, which the key's ON DELETE CASCADE carries to its queue row;
** prune of a cancelled or discarded job whose child was retried): it
** locks the jobs rows of the job's waiting children, as lease_deps_follow
** does, and opens those whose parents still there are all completed: a
** listed job no longer there counts as done.  A completed job's deletion
** cannot open anything (it counted as done already), so it fires only for
** the others, and prune's usual rows cost nothing.  A done = 1 another
** client stores is followed already (lease_jobs_changed, then
** lease_deps_follow); on SQLite this step makes that so too.
*/
#define LPG_STEP_DEPS_ANY_CLIENT                                                    \
  "CREATE OR REPLACE FUNCTION lease_deps_parent_gone() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN IF NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = old.id)" \
  " THEN RETURN NULL; END IF;"                                                     \
  " PERFORM 1 FROM jobs WHERE id = ANY(" LPG_DEP_CHILDREN_OF("old") ") ORDER BY id FOR UPDATE;" \
  LPG_DEP_OPEN_WAITING_OF("old")                                                  \
  " RETURN NULL; END $f$;"                                                         \
  " DROP TRIGGER IF EXISTS lease_deps_parent_gone ON lease_queue;"                 \
  " CREATE TRIGGER lease_deps_parent_gone AFTER DELETE ON lease_queue"            \
  " FOR EACH ROW WHEN (old.state <> " LEASE__Q_COMPLETED_S ")"                     \
  " EXECUTE FUNCTION lease_deps_parent_gone()"

/*
** Step 20 (v19 -> v20): the index lease_queue_aside on lease_queue(queue)
** over the rows neither open nor completed (discarded, cancelled,
** waiting).  A concurrency limit counts every job of its queue held with
** a live lease, whatever its queue state (a job cancelled while a worker
** holds it keeps its slot until that lease ends); without lease_jobs_live
** the count reads the queue's open jobs through lease_queue_due and the
** others through this index (LPG_Q_SQL_LIVE), never the completed ones.
** Only the writes that move a row into or out of those states, and their
** prune, touch it.
*/
#define LPG_STEP_HELD_SLOTS                                                         \
  "CREATE INDEX IF NOT EXISTS lease_queue_aside ON lease_queue(queue)"             \
  " WHERE state >= " LEASE__Q_DISCARDED_S

/*
** Step 21 (v20 -> v21): the engine's completions fire no trigger.
**  - jobs gets the column lease_completions (int8, 0), which the engine's
**    complete and complete_many count up when they store done = 1 on a
**    job whose queue row their own statement makes completed (the row in
**    their snapshot: LPG_SQL_COMPLETE, LPG_SQL_COMPLETE_MANY);
**    lease_jobs_changed fires only when done changes and that count does
**    not, so another client's done = 1 and every reopen are followed as
**    before, and the engine's completion, which wrote its queue row
**    already (step 13 made the trigger write nothing then), no longer
**    calls it.
**  - lease_queue gets the column waited_on (false), set on a job's row
**    when a job is enqueued after it (by the enqueue, under the job's
**    jobs row lock that its end waits for; by triggers since step 22)
**    and on every job lease_deps
**    names as a parent now, and by lease_jobs_added on a job inserted
**    under an id lease_deps names as a parent (a listed job pruned and
**    enqueued again, as step 19 follows it); lease_deps_follow fires only
**    for such a job, so the end of a job no other lists calls nothing
**    (step 14 made it return at once then).  The flag is never cleared:
**    one set for a child since deleted costs the trigger's look, no more.
*/
#define LPG_STEP_QUIET_COMPLETE                                                     \
  "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS lease_completions int8 NOT NULL DEFAULT 0;" \
  " ALTER TABLE lease_queue ADD COLUMN IF NOT EXISTS waited_on boolean NOT NULL DEFAULT false;" \
  " " LPG_SQL_FLAG_PARENTS ";"                                                     \
  " " LPG_JOBS_CHANGED_TRIGGER(" AND new.lease_completions = old.lease_completions") ";" \
  " " LPG_DEPS_FOLLOW_TRIGGER("new.waited_on AND ") ";"                             \
  " " LPG_JOBS_ADDED_FN(", waited_on", ", " LPG_Q_SQL_WAITED_ON("a.id"), "")

/* A new queue row's waited_on as step 21's lease_jobs_added sets it:
** whether lease_deps names the job id as a parent. */
#define LPG_Q_SQL_WAITED_ON(id) "EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = " id ")"


/* Every job lease_deps names as a parent flagged waited_on (steps 21
** and 22). */
#define LPG_SQL_FLAG_PARENTS                                                        \
  "UPDATE lease_queue SET waited_on = true WHERE id IN (SELECT parent FROM lease_deps)" \
  " AND NOT waited_on"

/*
** Step 22 (v21 -> v22): waited_on kept by triggers, whoever writes the
** rows it follows, so that a job another is enqueued after is flagged
** even when the enqueue came from a handle of an earlier build (one open
** across step 21, on another host of a rolling upgrade) or from another
** client:
**  - lease_deps_added, after each row of lease_deps inserted or given
**    another parent, flags that parent (the engine's enqueue inserts the
**    edge under the parent's jobs row lock, which the parent's end waits
**    for, so the end finds the flag set);
**  - lease_jobs_added flags the jobs it sees inserted (lease_added) that
**    lease_deps names as parents, their queue rows written by the
**    trigger or by the inserting statement itself (a listed job pruned
**    and enqueued again);
**  - lease_queue_renamed flags a job renamed (jobs.id, carried to its
**    queue row by ON UPDATE CASCADE) to an id lease_deps names;
**  - the step flags every job lease_deps names as a parent now, as step
**    21 did, for the edges written since without the flag.
** The engine's enqueue statements leave the flag to these triggers.  A
** parent that ended unflagged before this step (its waiting jobs left
** waiting) is not followed again: db:retry of such a waiting job looks at
** its parents anew.
*/
#define LPG_STEP_WAITED_ON_ANY_CLIENT                                               \
  "CREATE OR REPLACE FUNCTION lease_deps_added() RETURNS trigger LANGUAGE plpgsql"  \
  " AS $f$ BEGIN " LPG_SQL_FLAG_JOB("new.parent") ";"                               \
  " RETURN NULL; END $f$;"                                                          \
  " DROP TRIGGER IF EXISTS lease_deps_added ON lease_deps;"                         \
  " CREATE TRIGGER lease_deps_added AFTER INSERT OR UPDATE OF parent ON lease_deps" \
  " FOR EACH ROW EXECUTE FUNCTION lease_deps_added();"                              \
  " CREATE OR REPLACE FUNCTION lease_queue_renamed() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN " LPG_SQL_FLAG_JOB("new.id")                                        \
  " AND EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id);"               \
  " RETURN NULL; END $f$;"                                                          \
  " DROP TRIGGER IF EXISTS lease_queue_renamed ON lease_queue;"                     \
  " CREATE TRIGGER lease_queue_renamed AFTER UPDATE OF id ON lease_queue"           \
  " FOR EACH ROW WHEN (new.id IS DISTINCT FROM old.id)"                             \
  " EXECUTE FUNCTION lease_queue_renamed();"                                        \
  " " LPG_JOBS_ADDED_FN("", "", LPG_SQL_FLAG_ADDED) ";"                             \
  " " LPG_SQL_FLAG_PARENTS

/* The jobs an inserting statement added (lease_added, in lease_jobs_added)
** that lease_deps names as parents, flagged waited_on.  Each added job is
** looked up alone, by a subquery that LIMIT keeps from becoming a join,
** in lease_deps_parent, and the parents found are flagged by their keys
** (= ANY of an array, as step 17's statements): a plan the session keeps,
** made while lease_deps was tiny or when a first statement added many
** jobs, reads no more than those rows however the tables grow (spec 35,
** "plans as the tables grow"). */
#define LPG_SQL_FLAG_ADDED                                                          \
  " UPDATE lease_queue SET waited_on = true WHERE id = ANY(ARRAY(SELECT a.id"       \
  " FROM lease_added a WHERE (SELECT true FROM lease_deps d WHERE d.parent = a.id LIMIT 1)))" \
  " AND NOT waited_on;"

/*
** Step 23 (v22 -> v23): the writes that make a job claimable wake its
** queue's waiters whoever stores them, not only the engine's (which also
** sends NOTIFY after its commit, lpg_wake.c).  Each trigger sends NOTIFY
** on the channel lease_wake, its payload the job's queue in hex or empty
** (any queue), as the engine's wakes; the server delivers it at the
** commit of the transaction that sent it and drops it at a rollback, so a
** waiter wakes when the job is there to claim.  A claim, and a complete
** that opens no waiting job, fire none of them.
**  - lease_jobs_added as step 22 made it, and a NOTIFY (any queue) when
**    it made queue rows for the jobs the statement inserted (another
**    program's INSERT INTO jobs).
**  - the trigger lease_queue_reopened on lease_queue, after an UPDATE
**    that makes a queue row open again (a retry, a job done = 0 by
**    another program, the waiting jobs a parent's end opens through
**    lease_deps_follow or lease_deps_parent_gone).
**  - the trigger lease_jobs_sooner on jobs, after an UPDATE of until that
**    moves a job's lease end earlier (a renew with a shorter ttl, a
**    release, a fail, another program ending a lease): a waiter sleeping
**    until the old end looks again.  Its NOTIFY is for any queue (an
**    empty payload, as the engine's release sends), so it reads no other
**    table: a program that may write jobs alone can still renew.
*/
#define LPG_STEP_WAKE_ANY_CLIENT                                                    \
  LPG_JOBS_ADDED_FN("", "", LPG_SQL_WAKE_ADDED LPG_SQL_FLAG_ADDED) ";"              \
  " CREATE OR REPLACE FUNCTION lease_queue_reopened() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN PERFORM pg_notify('" LPG_WAKE_CHANNEL "', " LPG_SQL_WAKE_PAYLOAD("new.queue") ");" \
  " RETURN NULL; END $f$;"                                                          \
  " DROP TRIGGER IF EXISTS lease_queue_reopened ON lease_queue;"                    \
  " CREATE TRIGGER lease_queue_reopened AFTER UPDATE OF state ON lease_queue"       \
  " FOR EACH ROW WHEN (new.state = " LEASE__Q_OPEN_S " AND old.state <> " LEASE__Q_OPEN_S ")" \
  " EXECUTE FUNCTION lease_queue_reopened();"                                       \
  " CREATE OR REPLACE FUNCTION lease_jobs_sooner() RETURNS trigger LANGUAGE plpgsql" \
  " AS $f$ BEGIN PERFORM pg_notify('" LPG_WAKE_CHANNEL "', ''); RETURN NULL; END $f$;" \
  " DROP TRIGGER IF EXISTS lease_jobs_sooner ON jobs;"                              \
  " CREATE TRIGGER lease_jobs_sooner AFTER UPDATE OF until ON jobs"                 \
  " FOR EACH ROW WHEN (new.until < old.until)"                                      \
  " EXECUTE FUNCTION lease_jobs_sooner()"

/* The payload of a trigger's NOTIFY for queue q (SQL, bytea): its name in
** hex, as the engine's wake sends it (lpg_wake.c), or empty (any queue)
** for a name longer than the engine's limit (LEASE_QUEUE_MAX bytes),
** which another program may have stored: PostgreSQL refuses a payload of
** 8000 bytes or more, and the write that fired the trigger with it. */
#define LPG_SQL_WAKE_PAYLOAD(q)                                                     \
  "CASE WHEN octet_length(" q ") <= " LPG_STR(LEASE_QUEUE_MAX) " THEN encode(" q ", 'hex') ELSE '' END"

/* lease_jobs_added's NOTIFY on lease_wake, any queue (empty payload),
** when its INSERT made queue rows: the jobs another program inserted
** into jobs alone.  The engine's enqueues that write their queue rows in
** their own statement make none here, and wake their queue after the
** commit (lpg_wake.c); those that leave the rows to this trigger send
** both.  Read right after that INSERT, before LPG_SQL_FLAG_ADDED's
** UPDATE resets FOUND. */
#define LPG_SQL_WAKE_ADDED " IF FOUND THEN PERFORM pg_notify('" LPG_WAKE_CHANNEL "', ''); END IF;"

/* Step 24 (v23 -> v24): nothing.  SQLite's trigger lease_jobs_done stops
** running its body for the engine's completions, as step 21 made
** PostgreSQL's triggers skip them. */
#define LPG_STEP_SQLITE_QUIET_COMPLETE ""

/* The version a database without a version row has: 11 when lease_queue
** has the column key (step 11's to 16's layout, whose row another
** client deleted: its steps must not run again; steps 12 to 15, 17 and
** 18 only replace a function, 19 a function and its trigger, 20 makes
** an index if it is missing, 21 adds columns if they are missing and
** makes two triggers anew, 22 makes two functions and their triggers
** anew and replaces a third, 21 and 22 then flag each job listed and not
** yet flagged, as their triggers would have, 23 replaces a function and
** makes two functions and their triggers anew, and 16 does nothing here, so
** running them again changes nothing), 10 when it
** has the table lease_deps (step 10's layout, likewise), 9 when
** lease_queue has the column timeout (step 9's layout; step 8's table is
** made again if missing, CREATE TABLE IF NOT EXISTS), 7 when it has
** base_fence (step 7's or 8's layout: step 8 runs again harmlessly), 6
** when it has due_at (step 6's layout), 3 when the queue's trigger
** lease_jobs_added is on jobs (every
** layout the engine made with it before versions existed is version 3 on
** PostgreSQL), else 0 (a jobs table alone). */
#define LPG_SQL_CLASSIFY                                                          \
  "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="          \
  " to_regclass('lease_queue') AND attname = 'key' AND NOT attisdropped) THEN 11"  \
  " WHEN to_regclass('lease_deps') IS NOT NULL THEN 10"                           \
  " WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="                     \
  " to_regclass('lease_queue') AND attname = 'timeout' AND NOT attisdropped) THEN 9" \
  " WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="                     \
  " to_regclass('lease_queue') AND attname = 'base_fence' AND NOT attisdropped) THEN 7" \
  " WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="                     \
  " to_regclass('lease_queue') AND attname = 'due_at' AND NOT attisdropped) THEN 6" \
  " WHEN EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass('jobs')"    \
  " AND tgname = 'lease_jobs_added') THEN 3 ELSE 0 END"

/* The version row: whether its table is there, the row (whether it is a
** version number, and the value), and writing it. */
#define LPG_SQL_META_FOUND "SELECT to_regclass('" LEASE_SCHEMA_META "') IS NOT NULL"
#define LPG_SQL_VERSION_GET                                                       \
  "SELECT value ~ '^[0-9]{1,9}$', value FROM " LEASE_SCHEMA_META                 \
  " WHERE key = '" LEASE_SCHEMA_KEY "'"
#define LPG_SQL_META_CREATE                                                       \
  "CREATE TABLE IF NOT EXISTS " LEASE_SCHEMA_META "(key text PRIMARY KEY, value text)"
#define LPG_STR_(x) #x
#define LPG_STR(x) LPG_STR_(x)
#define LPG_SQL_VERSION_SET                                                       \
  "INSERT INTO " LEASE_SCHEMA_META "(key, value) VALUES ('" LEASE_SCHEMA_KEY "', '" \
  LPG_STR(LEASE_SCHEMA_VERSION) "') ON CONFLICT (key) DO UPDATE SET value = excluded.value"

/* The first version whose queue tables this build's reads understand: a
** read-only handle on an older database reads empty temporary ones. */
#define LPG_QUEUE_READABLE 1

/* The first version with the table lease_schedules (the version step
** SCHEDULES makes): a read-only handle on an older database reads an
** empty temporary one (LPG_S_SQL_TEMP). */
#define LPG_SCHEDULES_READABLE (LEASE__STEP_SCHEDULES + 1)

/* The first version with queue control's tables: a read-only handle on an
** older database reads empty temporary ones (LPG_Q_SQL_CONTROL_TEMP): no
** queue paused or limited. */
#define LPG_CONTROL_READABLE (LEASE__STEP_CONTROL + 1)

/* The first version whose attempts are counted from base_fence (the
** version step ATTEMPTS makes): a read-only handle on an older database
** reads them from lease_queue.attempt (the *_OLD statements, lpg_queue.c). */
#define LPG_ATTEMPTS_READABLE (LEASE__STEP_ATTEMPTS + 1)

/* The first version with lease_queue's column key: a read-only handle on
** an older database reads its queue rows through a temporary view adding
** key NULL (or, below LPG_QUEUE_READABLE, its empty temporary table gets
** the column): LPG_Q_SQL_KEY_TEMP. */
#define LPG_KEY_READABLE (LEASE__STEP_UNIQUE + 1)

#endif
