/*
** lsq_schema_sql.h: the SQLite backend's schema steps (src/core/
** lease_schema.h) and its version row.  Each LSQ_STEP_<NAME> lists the
** statements of one step, in order; lsq_schema.c runs them at a writable
** open, every pending step in the open's one write transaction.  A step's
** text stays as released: a later change to the layout is a new step.
*/
#ifndef LSQ_SCHEMA_SQL_H
#define LSQ_SCHEMA_SQL_H

#include "lease_schema.h"
#include "lsq_queue_sql.h"

/* Step 1 (v0 -> v1): the job queue's tables, lease_queue counting its
** attempts in a column a trigger counts up at each claim, and the triggers
** on jobs that keep them; the last statements fill lease_queue for jobs
** inserted before the triggers existed. */
#define LSQ_STEP_QUEUE(XX)                                                \
  XX("CREATE TABLE IF NOT EXISTS lease_queue(id TEXT PRIMARY KEY NOT NULL," \
     " seq INTEGER NOT NULL, queue TEXT NOT NULL DEFAULT 'default',"     \
     " priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"                \
     " attempt INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 25," \
     " payload BLOB, state INTEGER NOT NULL DEFAULT 0, finished_at REAL)") \
  XX("CREATE INDEX IF NOT EXISTS lease_queue_ready"                       \
     " ON lease_queue(queue, priority, run_at, seq) WHERE state = " LEASE__Q_OPEN_S)     \
  XX("CREATE INDEX IF NOT EXISTS lease_queue_ended"                       \
     " ON lease_queue(finished_at) WHERE state <> " LEASE__Q_OPEN_S)                     \
  XX("CREATE TABLE IF NOT EXISTS lease_errors(id TEXT NOT NULL, attempt INTEGER," \
     " at REAL, owner TEXT, fence INTEGER, message BLOB)")                \
  XX("CREATE INDEX IF NOT EXISTS lease_errors_job ON lease_errors(id)")  \
  XX("CREATE TRIGGER IF NOT EXISTS lease_errors_kept AFTER INSERT ON lease_errors BEGIN" \
     " DELETE FROM lease_errors WHERE id = new.id AND rowid <= (SELECT rowid" \
     " FROM lease_errors WHERE id = new.id ORDER BY rowid DESC LIMIT 1 OFFSET 20); END") \
  XX("CREATE TRIGGER IF NOT EXISTS lease_jobs_deleted AFTER DELETE ON jobs BEGIN" \
     " DELETE FROM lease_queue WHERE id = old.id;"                        \
     " DELETE FROM lease_errors WHERE id = old.id; END")                  \
  XX("CREATE TRIGGER IF NOT EXISTS lease_jobs_done AFTER UPDATE OF done ON jobs" \
     " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN"                     \
     " UPDATE lease_queue SET state = CASE WHEN new.done <> 0 THEN 1 ELSE 0 END," \
     " finished_at = CASE WHEN new.done <> 0 THEN new.until END,"         \
     " attempt = CASE WHEN new.done <> 0 THEN attempt ELSE 0 END WHERE id = new.id; END") \
  XX("CREATE TRIGGER IF NOT EXISTS lease_jobs_claimed AFTER UPDATE OF fence ON jobs" \
     " WHEN new.fence > old.fence BEGIN"                                  \
     " UPDATE lease_queue SET attempt = attempt + 1 WHERE id = new.id; END") \
  XX("CREATE TRIGGER IF NOT EXISTS lease_jobs_added AFTER INSERT ON jobs"  \
     " WHEN typeof(new.id) = 'text' BEGIN"                                \
     " INSERT OR REPLACE INTO lease_queue(id, seq, state, finished_at)"   \
     " VALUES (new.id, new.rowid, new.done <> 0,"                         \
     " CASE WHEN new.done <> 0 THEN new.until END); END")                 \
  XX("DELETE FROM lease_queue WHERE id NOT IN (SELECT id FROM jobs)")     \
  XX("INSERT OR IGNORE INTO lease_queue(id, seq, state, finished_at)"     \
     " SELECT id, rowid, done <> 0, CASE WHEN done <> 0 THEN until END FROM jobs" \
     " WHERE typeof(id) = 'text'")

/*
** The queue row's texts of the base_fence layout (versions 2 and 3), as
** steps 2 and 3 were released with them: the columns a trigger on jobs
** fills and their values from `new`, the UPDATE when done changes, and
** the trigger that follows a renamed id.  lsq_queue_sql.h's macros of the
** same names without _V3 are the layout of step 6 (with due_at).
*/
#define LSQ_V3_QUEUE_ROW_COLS "lease_queue(id, seq, state, finished_at, base_fence)"
#define LSQ_V3_QUEUE_ROW_OF_NEW                                           \
  "new.id, new.rowid, new.done <> 0, CASE WHEN new.done <> 0 THEN new.until END, " \
  LSQ_SQL_FENCE_INT("new.fence")
#define LSQ_V3_DONE_SET                                                   \
  " UPDATE lease_queue SET state = CASE WHEN new.done <> 0"               \
  " THEN " LEASE__Q_COMPLETED_S " ELSE " LEASE__Q_OPEN_S " END,"          \
  " finished_at = CASE WHEN new.done <> 0 THEN new.until END,"            \
  " base_fence = CASE WHEN new.done <> 0 THEN base_fence ELSE "           \
  LSQ_SQL_FENCE_INT("new.fence") " END"
#define LSQ_V3_RENAMED_TRIGGER                                             \
  "CREATE TRIGGER IF NOT EXISTS " LSQ_SQL_RENAMED_MARK                     \
  " AFTER UPDATE OF id ON jobs WHEN new.id IS NOT old.id BEGIN"            \
  " DELETE FROM lease_errors WHERE id = new.id;"                           \
  " UPDATE lease_errors SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';" \
  " DELETE FROM lease_errors WHERE id = old.id AND typeof(new.id) <> 'text';" \
  " DELETE FROM lease_queue WHERE id = new.id;"                            \
  " UPDATE lease_queue SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';" \
  " DELETE FROM lease_queue WHERE id = old.id AND typeof(new.id) <> 'text';" \
  " INSERT OR IGNORE INTO " LSQ_V3_QUEUE_ROW_COLS                         \
  " SELECT " LSQ_V3_QUEUE_ROW_OF_NEW " WHERE typeof(new.id) = 'text';"    \
  LSQ_V3_DONE_SET " WHERE id = new.id AND (new.done <> 0) <> (old.done <> 0); END"

/* Fill lease_queue (base_fence layout) for the jobs without a row, and
** drop the rows of no job: the end of steps 2 and 3. */
#define LSQ_STEP_FILL(XX)                                                 \
  XX("DELETE FROM lease_queue WHERE id NOT IN (SELECT id FROM jobs)")     \
  XX("INSERT OR IGNORE INTO " LSQ_V3_QUEUE_ROW_COLS                       \
     " SELECT id, rowid, done <> 0, CASE WHEN done <> 0 THEN until END, " \
     LSQ_SQL_FENCE_INT("fence") " FROM jobs WHERE typeof(id) = 'text'")

/*
** Step 2 (v1 -> v2): no index lease_jobs_pending on jobs (claim_next
** reads the queue's own index, and every enqueue and complete would keep
** writing it); lease_queue made anew WITHOUT ROWID, its attempts counted
** as the fence's growth since base_fence (so a claim writes no queue row):
** each job's attempts made are kept (base_fence = its fence - attempt).
** Through a temporary copy: the triggers on jobs that name lease_queue
** stay as they are while it is made anew.
*/
#define LSQ_STEP_REFENCE(XX)                                              \
  XX("DROP INDEX IF EXISTS lease_jobs_pending")                           \
  XX("DROP TRIGGER IF EXISTS lease_jobs_claimed")                         \
  XX("DROP TRIGGER IF EXISTS lease_jobs_added")                           \
  XX("DROP TRIGGER IF EXISTS lease_jobs_done")                            \
  XX("CREATE TEMP TABLE lease_queue_v1 AS SELECT * FROM main.lease_queue") \
  XX("DROP TABLE main.lease_queue")                                       \
  XX("CREATE TABLE main.lease_queue(id TEXT PRIMARY KEY NOT NULL,"        \
     " seq INTEGER NOT NULL, queue TEXT NOT NULL DEFAULT 'default',"     \
     " priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"                \
     " base_fence INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 25," \
     " payload BLOB, state INTEGER NOT NULL DEFAULT 0, finished_at REAL) WITHOUT ROWID") \
  XX("INSERT INTO main.lease_queue(id, seq, queue, priority, run_at, base_fence,"  \
     " max_attempts, payload, state, finished_at) SELECT o.id, o.seq, o.queue,"   \
     " o.priority, o.run_at, coalesce((SELECT " LSQ_SQL_FENCE_INT("fence")        \
     " FROM main.jobs WHERE jobs.id = o.id), 0) - o.attempt,"                     \
     " o.max_attempts, o.payload, o.state, o.finished_at FROM temp.lease_queue_v1 AS o") \
  XX("DROP TABLE temp.lease_queue_v1")                                    \
  XX("CREATE INDEX lease_queue_ready"                                     \
     " ON lease_queue(queue, priority, run_at, seq) WHERE state = " LEASE__Q_OPEN_S)     \
  XX("CREATE INDEX lease_queue_ended"                                     \
     " ON lease_queue(finished_at) WHERE state <> " LEASE__Q_OPEN_S)                     \
  XX("CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"        \
     " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN"                     \
     LSQ_V3_DONE_SET " WHERE id = new.id; END")                           \
  XX("CREATE TRIGGER lease_jobs_enqueued AFTER INSERT ON jobs"            \
     " WHEN typeof(new.id) = 'text' BEGIN"                                \
     " INSERT OR REPLACE INTO " LSQ_V3_QUEUE_ROW_COLS                     \
     " VALUES (" LSQ_V3_QUEUE_ROW_OF_NEW "); END")                        \
  LSQ_STEP_FILL(XX)

/* Step 3 (v2 -> v3): a job whose id another client changes keeps its
** queue row and errors (LSQ_V3_RENAMED_TRIGGER); a job renamed before
** gets its queue row. */
#define LSQ_STEP_RENAMED(XX)                                              \
  XX(LSQ_V3_RENAMED_TRIGGER)                                              \
  LSQ_STEP_FILL(XX)

/* Step 4 (v3 -> v4): the schedules' table lease_schedules (lease.h,
** "Schedules"; read and written by lsq_schedule.c), one row per schedule.
** Nothing else: the step holds whatever steps come before or after it. */
#define LSQ_STEP_SCHEDULES(XX)                                            \
  XX("CREATE TABLE IF NOT EXISTS lease_schedules(name TEXT PRIMARY KEY,"  \
     " every REAL, cron TEXT, queue TEXT NOT NULL DEFAULT 'default',"     \
     " payload BLOB, priority INTEGER NOT NULL DEFAULT 0,"                \
     " max_attempts INTEGER NOT NULL DEFAULT 25, created_at REAL NOT NULL," \
     " next_at REAL NOT NULL, last_at REAL)")

/* Step 5 (v4 -> v5): queue control's tables (lease.h: lease_pause,
** lease_limit; their reads: lsq_queue_sql.h). */
#define LSQ_STEP_CONTROL(XX)                                              \
  XX("CREATE TABLE IF NOT EXISTS lease_queues(name TEXT PRIMARY KEY NOT NULL," \
     " paused INTEGER NOT NULL DEFAULT 0, concurrency INTEGER, rate INTEGER, per REAL)" \
     " WITHOUT ROWID")                                                    \
  XX("CREATE TABLE IF NOT EXISTS lease_queue_claims(queue TEXT NOT NULL, at REAL NOT NULL)") \
  XX("CREATE INDEX IF NOT EXISTS lease_queue_claims_at ON lease_queue_claims(queue, at)")

/*
** Step 6 (v5 -> v6): the claim order by due time (lease_int.h:
** lease__clock).  lease_queue gets the column due_at, a row there now due
** at its run_at (0 without one: before every job enqueued later); the
** index lease_queue_due (queue, priority, due_at, seq) replaces
** lease_queue_ready; the triggers on jobs that make or reopen a queue row
** (lease_jobs_done, lease_jobs_enqueued, lease_jobs_renamed) are made anew
** with the texts of lsq_queue_sql.h, which give such a row due_at = the
** clock mark (LSQ_SQL_DUE_NOW).  lease_meta, which holds the mark, is
** made first (the open writes the version row there after the steps).
*/
#define LSQ_STEP_CLOCK(XX)                                                \
  XX(LSQ_SQL_META_CREATE)                                                 \
  XX("ALTER TABLE lease_queue ADD COLUMN due_at REAL NOT NULL DEFAULT 0") \
  XX("UPDATE lease_queue SET due_at = coalesce(run_at, 0)")               \
  XX("DROP INDEX IF EXISTS lease_queue_ready")                            \
  XX("CREATE INDEX lease_queue_due"                                       \
     " ON lease_queue(queue, priority, due_at, seq) WHERE state = " LEASE__Q_OPEN_S) \
  XX("DROP TRIGGER IF EXISTS lease_jobs_done")                            \
  XX("CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"        \
     " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN"                     \
     LSQ_SQL_DONE_SET " WHERE id = new.id; END")                          \
  XX("DROP TRIGGER IF EXISTS lease_jobs_enqueued")                        \
  XX("CREATE TRIGGER lease_jobs_enqueued AFTER INSERT ON jobs"            \
     " WHEN typeof(new.id) = 'text' BEGIN"                                \
     " INSERT OR REPLACE INTO " LSQ_SQL_QUEUE_ROW_COLS                    \
     " VALUES (" LSQ_SQL_QUEUE_ROW_OF_NEW "); END")                       \
  XX("DROP TRIGGER IF EXISTS " LSQ_SQL_RENAMED_MARK)                      \
  XX(LSQ_SQL_RENAMED_TRIGGER)

/* Step 7 (v6 -> v7): nothing.  PostgreSQL's attempts become the fence's
** growth since base_fence, which SQLite's have been since step 2. */
#define LSQ_STEP_ATTEMPTS(XX)

/*
** Step 8 (v7 -> v8): the events ledger (lease.h, "The events ledger"):
** the table lease_events, seq its rowid (pruned by seq ranges), op and
** reason as lease.h's numbers, outcome 0 (ok) or 1 (refused).  No index
** beside the rowid: every write inserts a row.
*/
#define LSQ_STEP_EVENTS(XX)                                               \
  XX("CREATE TABLE IF NOT EXISTS lease_events(seq INTEGER PRIMARY KEY,"   \
     " at REAL NOT NULL, op INTEGER NOT NULL, id TEXT, queue TEXT, owner TEXT," \
     " fence INTEGER, outcome INTEGER NOT NULL, reason INTEGER)")

/* Step 9 (v8 -> v9): lease_queue's column timeout (lease_new_job.timeout:
** seconds, NULL for none), written by enqueue, read by claim_next and
** lease_state. */
#define LSQ_STEP_TIMEOUT(XX) XX("ALTER TABLE lease_queue ADD COLUMN timeout REAL")

/*
** Step 10 (v9 -> v10): dependencies (lsq_queue_sql.h, lease_deps): the
** table of edges, child and parent job ids, its index by parent, and the
** trigger that drops a job's edges with it.  A job waiting for its
** parents is lease_queue state LEASE__Q_WAITING, which needs no change to
** the layout.
*/
#define LSQ_STEP_DEPS(XX)                                                 \
  XX("CREATE TABLE IF NOT EXISTS lease_deps(child TEXT NOT NULL, parent TEXT NOT NULL," \
     " PRIMARY KEY (child, parent)) WITHOUT ROWID")                       \
  XX("CREATE INDEX IF NOT EXISTS lease_deps_parent ON lease_deps(parent, child)") \
  XX("CREATE TRIGGER IF NOT EXISTS lease_deps_gone AFTER DELETE ON jobs BEGIN" \
     " DELETE FROM lease_deps WHERE child = old.id; END")

/*
** Step 11 (v10 -> v11): unique keys (lease.h: lease_new_job's key).
** lease_queue gets the column key (NULL: none, as every row there has);
** the unique index lease_queue_key on (queue, key) over the rows with a
** key the queue has not finished makes a key held by one unfinished job
** of a queue at a time, whoever writes.
*/
#define LSQ_STEP_UNIQUE(XX)                                               \
  XX("ALTER TABLE lease_queue ADD COLUMN key TEXT")                       \
  XX("CREATE UNIQUE INDEX lease_queue_key ON lease_queue(queue, key)"     \
     " WHERE key IS NOT NULL AND " LEASE__Q_UNFINISHED_SQL("state"))

/* Step 12 (v11 -> v12): nothing.  PostgreSQL's trigger that follows a
** parent's end locks its children first; SQLite's writers take turns. */
#define LSQ_STEP_DEPS_FOLLOW(XX)

/* Step 13 (v12 -> v13): nothing.  PostgreSQL's completions write the
** queue row once; SQLite's complete writes it in the same transaction as
** lease_jobs_done, and the page once at the commit. */
#define LSQ_STEP_COMPLETE_ONCE(XX)

/* Step 14 (v13 -> v14): nothing.  PostgreSQL's trigger that follows a
** job's end returns at once for a job no other waits for; SQLite follows
** an end in C, in the transaction that ends the job. */
#define LSQ_STEP_DEPS_CHILDLESS(XX)

/* Step 15 (v14 -> v15): nothing.  PostgreSQL's read of a job's queue row
** after its lock moves to PL/pgSQL; SQLite reads that row in the
** statement itself, its writers taking turns. */
#define LSQ_STEP_QUEUE_NOW_PLPGSQL(XX)

/*
** Step 16 (v15 -> v16): lease_jobs_done as step 6 made it, but when done
** becomes non-zero on a job whose queue row is already completed, it
** writes nothing.  The engine's complete makes that row completed and
** finished at its now just before it stores done = 1, in the same
** transaction (lsq_queue_sql.h: LSQ_SQL_Q_COMPLETE), so the row and its
** index entries are written once per completion, where the trigger's
** write (state, finished_at = until) needed a second one (finished_at =
** now).
** done set by another client (the row still open) and a job reopened are
** written as before.
*/
#define LSQ_STEP_SQLITE_COMPLETE_ONCE(XX)                                 \
  XX("DROP TRIGGER IF EXISTS lease_jobs_done")                            \
  XX("CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"        \
     " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN"                     \
     LSQ_SQL_DONE_SET " WHERE id = new.id"                                \
     " AND (new.done = 0 OR state <> " LEASE__Q_COMPLETED_S "); END")

/* Step 17 (v16 -> v17): nothing.  PostgreSQL's trigger that follows a
** job's end finds its rows by their ids, for the plans it keeps; SQLite
** follows an end in C. */
#define LSQ_STEP_DEPS_KEYED(XX)

/* Step 18 (v17 -> v18): nothing.  PostgreSQL's trigger reads the fence
** floor again after an insert that waited for another transaction;
** SQLite's enqueue reads it inside its write transaction, which no other
** writer shares. */
#define LSQ_STEP_ADDED_FLOOR(XX)

/* The body of lease_jobs_done as step 19 makes it, after its BEGIN: the
** waiting children of a job whose done becomes non-zero while its queue
** row is not completed are opened when their other parents are all
** completed (LSQ_SQL_DEP_RELEASE_OF), then the queue row follows done
** (LSQ_SQL_DONE_SET), unless done became non-zero on a row already
** completed. */
#define LSQ_SQL_JOBS_DONE_BODY                                            \
  LSQ_SQL_DEP_RELEASE_OF("new.id", " AND d.parent <> new.id")            \
  " AND new.done <> 0 AND EXISTS (SELECT 1 FROM lease_queue AS p"        \
  " WHERE p.id = new.id AND p.state <> " LEASE__Q_COMPLETED_S ");"       \
  LSQ_SQL_DONE_SET " WHERE id = new.id"                                  \
  " AND (new.done = 0 OR state <> " LEASE__Q_COMPLETED_S "); END"

/*
** Step 19 (v18 -> v19): the jobs waiting for a job follow its end
** whoever writes it, as they follow the engine's.
**  - lease_jobs_done as step 16 made it, and first, when done becomes
**    non-zero on a job whose queue row is not completed (a done = 1 that
**    another client stored: the engine's complete makes that row
**    completed before, and opens the children itself, lsq_q_release),
**    it opens the job's waiting children whose other parents are all
**    completed (LSQ_SQL_DEP_RELEASE_OF).
**  - lease_deps_parent_gone, after a queue row that is not completed is
**    deleted (another client's DELETE of the job, prune of a cancelled
**    or discarded one whose child was retried), opens that job's waiting
**    children whose parents still there are all completed: a listed job
**    no longer there counts as done.  A completed job's deletion cannot
**    open anything (it counted as done already), so it fires only for the
**    others, and prune's usual rows cost nothing.  A queue row of the
**    same id inserted meanwhile (INSERT OR REPLACE under another
**    client's recursive_triggers) counts as the parent.
*/
#define LSQ_STEP_DEPS_ANY_CLIENT(XX)                                      \
  XX("DROP TRIGGER IF EXISTS lease_jobs_done")                            \
  XX("CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"        \
     " WHEN (new.done <> 0) <> (old.done <> 0) BEGIN " LSQ_SQL_JOBS_DONE_BODY) \
  XX("CREATE TRIGGER IF NOT EXISTS lease_deps_parent_gone AFTER DELETE ON lease_queue" \
     " WHEN old.state <> " LEASE__Q_COMPLETED_S " BEGIN "                 \
     LSQ_SQL_DEP_RELEASE_OF("old.id", "") "; END")

/* Step 20 (v19 -> v20): nothing.  A concurrency limit counts every held
** job of its queue, whatever its state (LSQ_SQL_Q_LIVE); SQLite counts
** them through lease_jobs_live alone, which lease_limit always makes,
** where PostgreSQL needs an index for a count without it. */
#define LSQ_STEP_HELD_SLOTS(XX)

/* Step 21 (v20 -> v21): nothing.  PostgreSQL's completions stop calling
** the triggers that follow them; SQLite's complete writes the queue row
** and follows the job's end in C, and its trigger lease_jobs_done finds
** the row completed. */
#define LSQ_STEP_QUIET_COMPLETE(XX)

/* Step 22 (v21 -> v22): nothing.  PostgreSQL's flag waited_on, which
** SQLite does not keep, is set by triggers whoever writes. */
#define LSQ_STEP_WAITED_ON_ANY_CLIENT(XX)

/* Step 23 (v22 -> v23): nothing.  PostgreSQL's writes that make a job
** claimable sooner send NOTIFY to wake their waiters, whoever stores them;
** on SQLite every commit changes the database's files, which wakes the
** waiters (lsq_wake.c). */
#define LSQ_STEP_WAKE_ANY_CLIENT(XX)

/*
** Step 24 (v23 -> v24): lease_jobs_done as step 19 made it, but its WHEN
** also asks for a change its body would write: done becoming 0, or
** becoming non-zero on a job whose queue row is there and not completed.
** The engine's complete makes the queue row completed before it stores
** done = 1 (step 16), so its completions no longer run the body, whose
** two statements found nothing to write for them; another client's
** done = 1 and every reopen run it as before.
*/
#define LSQ_STEP_SQLITE_QUIET_COMPLETE(XX)                                \
  XX("DROP TRIGGER IF EXISTS lease_jobs_done")                            \
  XX("CREATE TRIGGER lease_jobs_done AFTER UPDATE OF done ON jobs"        \
     " WHEN (new.done <> 0) <> (old.done <> 0) AND (new.done = 0"         \
     " OR EXISTS (SELECT 1 FROM lease_queue AS p WHERE p.id = new.id"     \
     " AND p.state <> " LEASE__Q_COMPLETED_S ")) BEGIN " LSQ_SQL_JOBS_DONE_BODY)

/*
** The version a file without a version row has, from what it holds: no
** lease_queue is version 0 (the contract's bare table, with or without
** the index lease_jobs_pending of the engine before its queue); one with
** a key column in lease_queue is 11 (steps 12 to 15, 17, 18, 20 to 23 change nothing
** here, steps 16 and 24 only make the trigger lease_jobs_done anew and step 19
** makes it anew and one trigger if it is missing), one with the
** table lease_deps (but no key) is 10 (a file of step 11's or 10's layout whose row another
** client deleted: its steps must not run again); a lease_queue
** with an attempt column is 1; one with a timeout column is 9 and one
** with a due_at column (but none named timeout) is 6 (a file of step
** 9's, 8's, 7's or 6's layout whose row another client deleted: its
** steps must not run again; step 7 does nothing on SQLite and step 8
** only makes a table if it is missing, so their layouts are read as
** 6's); one with neither is 3 when the triggers
** lease_jobs_enqueued and lease_jobs_renamed are there, else 2.
*/
#define LSQ_SQL_CLASSIFY                                                  \
  "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM sqlite_master"             \
  " WHERE type = 'table' AND name = 'lease_queue') THEN 0"               \
  " WHEN EXISTS (SELECT 1 FROM pragma_table_info('lease_queue')"         \
  " WHERE name = 'key') THEN 11"                                         \
  " WHEN EXISTS (SELECT 1 FROM sqlite_master"                            \
  " WHERE type = 'table' AND name = 'lease_deps') THEN 10"                \
  " WHEN EXISTS (SELECT 1 FROM pragma_table_info('lease_queue')"         \
  " WHERE name = 'attempt') THEN 1"                                      \
  " WHEN EXISTS (SELECT 1 FROM pragma_table_info('lease_queue')"         \
  " WHERE name = 'timeout') THEN 9"                                      \
  " WHEN EXISTS (SELECT 1 FROM pragma_table_info('lease_queue')"         \
  " WHERE name = 'due_at') THEN 6"                                       \
  " WHEN (SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"     \
  " AND name IN ('lease_jobs_enqueued', '" LSQ_SQL_RENAMED_MARK "')) = 2 THEN 3" \
  " ELSE 2 END"

/* The version row: whether its table is there, the row, and writing it
** (LEASE_SCHEMA_VERSION, as text of the number). */
#define LSQ_SQL_META_FOUND                                                \
  "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" LEASE_SCHEMA_META "'"
#define LSQ_SQL_VERSION_GET                                               \
  "SELECT value FROM " LEASE_SCHEMA_META " WHERE key = '" LEASE_SCHEMA_KEY "'"
#define LSQ_SQL_META_CREATE                                               \
  "CREATE TABLE IF NOT EXISTS " LEASE_SCHEMA_META "(key TEXT PRIMARY KEY NOT NULL, value)"
#define LSQ_STR_(x) #x
#define LSQ_STR(x) LSQ_STR_(x)
#define LSQ_SQL_VERSION_SET                                               \
  "INSERT OR REPLACE INTO " LEASE_SCHEMA_META "(key, value) VALUES ('"   \
  LEASE_SCHEMA_KEY "', " LSQ_STR(LEASE_SCHEMA_VERSION) ")"

/* The first version whose queue tables this build's reads understand: a
** handle that may not write reads a file of an older one through empty
** temporary tables (lsq_q_temp). */
#define LSQ_QUEUE_READABLE 2

/* The first version with queue control's tables: a handle that may not
** write reads an older file's settings through empty temporary ones
** (lsq_q_control_temp): no queue paused or limited. */
#define LSQ_CONTROL_READABLE (LEASE__STEP_CONTROL + 1)

/* The first version with lease_queue's column key: a handle that may not
** write reads an older file's queue rows through a temporary view of them
** with key NULL (lsq_q_key_view). */
#define LSQ_KEY_READABLE (LEASE__STEP_UNIQUE + 1)

#endif
