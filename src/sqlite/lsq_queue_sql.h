/*
** lsq_queue_sql.h: the SQL of the job queue in the SQLite backend (see
** lease.h, "The job queue"), one definition of each statement; included
** by lsq_sql.h, whose statement list takes LSQ_QUEUE_OWN_STATEMENTS.
**
** The contract's jobs table stays as the seed declares it.  The queue's
** data lives beside it, keyed by job id:
**   lease_queue   one row per job: seq (the job's rowid at insert: the
**                 enqueue order), queue, priority, run_at (NULL: at once),
**                 base_fence (the job's fence when its attempts were last
**                 counted from zero: the attempts made are its fence
**                 minus base_fence, LSQ_SQL_ATTEMPT), max_attempts,
**                 payload, state (0 open, 1 completed, 2 discarded,
**                 3 cancelled), finished_at and due_at (the claim order:
**                 run_at, or for a job without, the clock mark when its
**                 row was made or reopened), timeout (seconds a handler
**                 may run on the job; NULL: none), key (the job's unique
**                 key, NULL for none: the index lease_queue_key makes a
**                 key unique among its queue's unfinished jobs);
**   lease_errors  the errors of failed attempts, the last 20 per job.
** Triggers on jobs keep lease_queue complete for every client, the engine
** or raw SQL: a row for each job inserted (defaults; not for an id that is
** not text, which no call can name and claim_next never hands out), removed
** with it, completed when done becomes 1 (reopened with a fresh attempt
** budget when it goes back to 0).  A claim writes nothing here: the fence
** it grows counts the attempt.  The statements that make them are the
** schema's steps (lsq_schema_sql.h), which a writable open runs.
*/
#ifndef LSQ_QUEUE_SQL_H
#define LSQ_QUEUE_SQL_H

/* The side tables of the newest layout; kw is "TEMP " (a read-only handle
** on a file without them gets empty temporary ones, so reads see the
** defaults: lsq_q_temp). */
#define LSQ_SQL_QUEUE_TABLE(kw)                                           \
  "CREATE " kw "TABLE IF NOT EXISTS lease_queue(id TEXT PRIMARY KEY NOT NULL," \
  " seq INTEGER NOT NULL, queue TEXT NOT NULL DEFAULT 'default',"        \
  " priority INTEGER NOT NULL DEFAULT 0, run_at REAL,"                   \
  " base_fence INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL DEFAULT 25," \
  " payload BLOB, state INTEGER NOT NULL DEFAULT " LEASE__Q_OPEN_S ","    \
  " finished_at REAL, due_at REAL NOT NULL DEFAULT 0, timeout REAL,"    \
  " key TEXT) WITHOUT ROWID"
/* The queue rows of a file without the column key (versions before step
** UNIQUE), as a read-only handle reads them: a temporary view, which names
** before the file's table, adding key NULL. */
#define LSQ_SQL_QUEUE_KEY_VIEW                                            \
  "CREATE TEMP VIEW IF NOT EXISTS lease_queue AS SELECT *, NULL AS key FROM main.lease_queue"
#define LSQ_SQL_ERRORS_TABLE(kw)                                          \
  "CREATE " kw "TABLE IF NOT EXISTS lease_errors(id TEXT NOT NULL, attempt INTEGER," \
  " at REAL, owner TEXT, fence INTEGER, message BLOB)"

/*
** The clock mark (lease_int.h: lease__clock): the highest now the database
** has seen, coarsely, in the engine's table of its own facts (lease_meta,
** lease_schema.h; made with the schema version's row, LSQ_SQL_META_CREATE)
** under the key 'clock_mark'.
*/
#define LSQ_SQL_MARK "(SELECT value FROM " LEASE_SCHEMA_META " WHERE key = 'clock_mark')"

/* The time a job without run_at became due on the database's clock: the
** mark when it was enqueued or reopened, 0 while there is none. */
#define LSQ_SQL_DUE_NOW "coalesce(" LSQ_SQL_MARK ", 0)"

/* A fence as the queue counts from it: the fence when it is an integer,
** else 0 (a job whose fence is not an integer is blocked: never claimed). */
#define LSQ_SQL_FENCE_INT(f) "(CASE WHEN typeof(" f ") = 'integer' THEN " f " ELSE 0 END)"

/* The attempts a job has made: its fence's growth since base_fence, never
** below 0 (another client may lower a fence, which the contract forbids).
** j is its jobs row, q its lease_queue row (NULL when it has none). */
#define LSQ_SQL_ATTEMPT(j, q)                                             \
  "max(0, coalesce(" LSQ_SQL_FENCE_INT(j ".fence") " - " q ".base_fence, 0))"

/* A jobs row's queue row as a trigger on jobs makes it from `new`: the
** values for LSQ_SQL_QUEUE_ROW_COLS (seq is the rowid; a done job is
** completed, at its until; due at the clock mark).  This and the two
** macros below are the layout of step 6 (CLOCK, lsq_schema_sql.h), which
** makes the triggers with them; the earlier steps keep their own texts. */
#define LSQ_SQL_QUEUE_ROW_COLS "lease_queue(id, seq, state, finished_at, base_fence, due_at)"
#define LSQ_SQL_QUEUE_ROW_OF_NEW                                          \
  "new.id, new.rowid, new.done <> 0, CASE WHEN new.done <> 0 THEN new.until END, " \
  LSQ_SQL_FENCE_INT("new.fence") ", " LSQ_SQL_DUE_NOW

/* The UPDATE of a queue row when done of its jobs row `new` changes: state
** completed or back to open, finished_at, and a fresh attempt budget
** (base_fence = the fence), due at the clock mark, when reopened.  The
** caller adds the WHERE. */
#define LSQ_SQL_DONE_SET                                                  \
  " UPDATE lease_queue SET state = CASE WHEN new.done <> 0"               \
  " THEN " LEASE__Q_COMPLETED_S " ELSE " LEASE__Q_OPEN_S " END,"          \
  " finished_at = CASE WHEN new.done <> 0 THEN new.until END,"            \
  " base_fence = CASE WHEN new.done <> 0 THEN base_fence ELSE "           \
  LSQ_SQL_FENCE_INT("new.fence") " END,"                                 \
  " due_at = CASE WHEN new.done <> 0 THEN due_at ELSE " LSQ_SQL_DUE_NOW " END"

/*
** A job whose id another client changes (UPDATE jobs SET id) keeps its
** queue row and its errors under the new id, as PostgreSQL's ON UPDATE
** CASCADE keeps them.  A row already under the new id belongs to no job
** (ids are unique in jobs; only a write that fired no trigger leaves one):
** it goes first.  A job whose new id is not text leaves the queue and its
** errors go, as one inserted so never enters it; one whose old id had no
** queue row gets a new one, as at insert.  When done changes in the same statement, the
** queue row's state follows it here too, whichever of this trigger and
** lease_jobs_done SQLite fires first.
*/
#define LSQ_SQL_RENAMED_MARK "lease_jobs_renamed"
#define LSQ_SQL_RENAMED_TRIGGER                                            \
  "CREATE TRIGGER IF NOT EXISTS " LSQ_SQL_RENAMED_MARK                     \
  " AFTER UPDATE OF id ON jobs WHEN new.id IS NOT old.id BEGIN"            \
  " DELETE FROM lease_errors WHERE id = new.id;"                           \
  " UPDATE lease_errors SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';" \
  " DELETE FROM lease_errors WHERE id = old.id AND typeof(new.id) <> 'text';" \
  " DELETE FROM lease_queue WHERE id = new.id;"                            \
  " UPDATE lease_queue SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';" \
  " DELETE FROM lease_queue WHERE id = old.id AND typeof(new.id) <> 'text';" \
  " INSERT OR IGNORE INTO " LSQ_SQL_QUEUE_ROW_COLS                        \
  " SELECT " LSQ_SQL_QUEUE_ROW_OF_NEW " WHERE typeof(new.id) = 'text';"   \
  LSQ_SQL_DONE_SET " WHERE id = new.id AND (new.done <> 0) <> (old.done <> 0); END"

/*
** A job's status at now (the parameter `now`; NULL gives 0, unknown), over
** j (the jobs row) and q (its lease_queue row, NULL columns when none):
** lease.h's LEASE_STATUS_* numbers, in its order of precedence.
*/
#define LSQ_SQL_STATUS(now)                                               \
  "(CASE WHEN " now " IS NULL THEN 0 WHEN j.done <> 0 THEN 5"            \
  " WHEN q.state = " LEASE__Q_DISCARDED_S " THEN 6 WHEN q.state = " LEASE__Q_CANCELLED_S " THEN 7" \
  " WHEN q.state = " LEASE__Q_WAITING_S " THEN 8"                         \
  " WHEN j.until > " now " THEN 3"                                       \
  " WHEN q.run_at > " now " THEN (CASE WHEN " LSQ_SQL_ATTEMPT("j", "q") " > 0 THEN 4 ELSE 2 END)" \
  " ELSE 1 END)"

/* A job row with its queue data, lease_row's order: id, owner, until,
** fence, result (NULL unless `res`), done, blocked code, payload, queue,
** priority, run_at, attempt, max_attempts, finished_at, status (at `now`),
** seq, result size, key.  From j, the jobs rows `where` selects.  done is
** read as `done <> 0`, 0 or 1, as every statement decides on it: a value
** another client stored (0.5, a text, a blob) reads as the status and the
** guards treat it, not as C's conversion to an integer would. */
#define LSQ_SQL_FULL_ROW(now, res, where)                                 \
  "SELECT j.id, j.owner, j.until, j.fence, CASE WHEN " res " THEN j.result END," \
  " j.done <> 0, j.b, q.payload, coalesce(q.queue, 'default'), coalesce(q.priority, 0)," \
  " q.run_at, " LSQ_SQL_ATTEMPT("j", "q") ", coalesce(q.max_attempts, 25), q.finished_at, " \
  LSQ_SQL_STATUS(now) ", j.rid, coalesce(length(CAST(j.result AS BLOB)), 0), q.key" \
  " FROM (SELECT rowid AS rid, id, owner, until, fence, result, done,"   \
  " CASE WHEN done <> 0 THEN 0 ELSE " LSQ_SQL_BLOCKED " END AS b FROM jobs" \
  " WHERE " where ") AS j LEFT JOIN lease_queue AS q ON q.id = j.id"

/* One job (contract step 3, with its queue data).  ?1 id, ?2 now (NULL:
** status unknown). */
#define LSQ_SQL_Q_STATE LSQ_SQL_FULL_ROW("?2", "1", "id = ?1")

/* A page of jobs.  ?1 after (seq), ?2 now, ?3 limit, ?4 status (0: all),
** ?5 queue (NULL: all), ?6 load results (0 or 1), ?7 which (LEASE_LIST_*:
** the contract's view at now; 0: all). */
#define LSQ_SQL_Q_LIST                                                    \
  LSQ_SQL_FULL_ROW("?2", "?6", "rowid > ?1")                             \
  " WHERE CASE ?7 WHEN 0 THEN 1"                                         \
  " WHEN 1 THEN j.done = 0 AND j.b = 0 AND j.until <= ?2"                \
  " WHEN 2 THEN j.done = 0 AND j.b = 0 AND j.until > ?2"                 \
  " WHEN 3 THEN j.done <> 0"                                             \
  " ELSE j.done = 0 AND j.b <> 0 END"                                    \
  " AND (?4 = 0 OR " LSQ_SQL_STATUS("?2") " = ?4)"                      \
  " AND (?5 IS NULL OR coalesce(q.queue, 'default') = ?5)"              \
  " ORDER BY j.rid LIMIT ?3"

/* The jobs columns a tally reads, with b the blocked code (0: none). */
#define LSQ_SQL_TALLY_JOBS                                                \
  "(SELECT id, done, until, fence,"                                      \
  " CASE WHEN done <> 0 THEN 0 ELSE " LSQ_SQL_BLOCKED " END AS b FROM jobs)"

/* Whether every job is in the queue counted (?2), whatever its queue row:
** all queues are counted, or the default queue while lease_queue names no
** other (a job without a queue row counts in the default queue). */
#define LSQ_SQL_TALLY_ALL                                                 \
  "(?2 IS NULL OR (?2 = 'default' AND NOT EXISTS"                        \
  " (SELECT 1 FROM lease_queue WHERE queue <> 'default')))"

/* Counts: total, done, ready, held, blocked, then one per status 1..8.  ?1 now, ?2 queue
** (NULL: all).  Every jobs row is read, and with it its lease_queue row,
** except a done job's when every job is counted (LSQ_SQL_TALLY_ALL): its
** status is completed (5) whatever that row says, and those jobs are only
** counted (d), so a count of a queue of finished jobs reads no queue row.
** w holds LSQ_SQL_TALLY_ALL, read once for both parts. */
#define LSQ_SQL_Q_TALLY                                                   \
  "WITH w(a) AS (SELECT " LSQ_SQL_TALLY_ALL ")"                           \
  " SELECT t.n + d.n, t.done + d.n, t.ready, t.held, t.blocked, t.s1, t.s2, t.s3, t.s4," \
  " t.s5 + CASE WHEN ?1 IS NULL THEN 0 ELSE d.n END, t.s6, t.s7, t.s8"  \
  " FROM (SELECT count(*) AS n, total(done <> 0) AS done,"               \
  " total(done = 0 AND b = 0 AND until <= ?1) AS ready,"                  \
  " total(done = 0 AND b = 0 AND until > ?1) AS held, total(done = 0 AND b <> 0) AS blocked," \
  " total(s = 1) AS s1, total(s = 2) AS s2, total(s = 3) AS s3, total(s = 4) AS s4," \
  " total(s = 5) AS s5, total(s = 6) AS s6, total(s = 7) AS s7,"        \
  " total(s = 8) AS s8 FROM ("                                           \
  "SELECT j.done, j.until, j.b, " LSQ_SQL_STATUS("?1") " AS s"           \
  " FROM " LSQ_SQL_TALLY_JOBS " AS j LEFT JOIN lease_queue AS q ON q.id = j.id" \
  " WHERE ((j.done <> 0) IS NOT 1 OR NOT (SELECT a FROM w))"             \
  " AND (?2 IS NULL OR coalesce(q.queue, 'default') = ?2))) AS t,"       \
  " (SELECT count(*) AS n FROM jobs WHERE (done <> 0) IS 1 AND (SELECT a FROM w)) AS d"

/* The data of a job just inserted.  ?1 id, ?2 payload, ?3 queue,
** ?4 priority, ?5 run_at, ?6 max_attempts, ?7 timeout (NULL: none),
** ?8 key (NULL: none). */
#define LSQ_SQL_Q_DATA                                                    \
  "UPDATE lease_queue SET payload = ?2, queue = ?3, priority = ?4, run_at = ?5," \
  " due_at = coalesce(?5, " LSQ_SQL_DUE_NOW "), max_attempts = ?6, timeout = ?7, key = ?8" \
  " WHERE id = ?1"

/* A job's timeout (NULL: none), for lease_state on a file of step
** TIMEOUT's layout or newer.  ?1 id. */
#define LSQ_SQL_Q_TIMEOUT "SELECT timeout FROM lease_queue WHERE id = ?1"

/* The job holding a unique key, for an enqueue of id ?3 (none when ?3
** exists: that enqueue finds its id, LEASE_EXISTS): the unfinished job of
** queue ?1 with key ?2.  Read in the enqueue's write transaction; the
** index lease_queue_key answers it, and refuses a second holder. */
#define LSQ_SQL_Q_KEY_HOLDER                                              \
  "SELECT id FROM lease_queue WHERE queue = ?1 AND key = ?2 AND "         \
  LEASE__Q_UNFINISHED_SQL("state")                                        \
  " AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?3) LIMIT 1"

/* retry's check of job ?1's key: another unfinished job of its queue
** holding it.  Column: that job's id. */
#define LSQ_SQL_Q_RETRY_HOLDER                                            \
  "SELECT o.id FROM lease_queue AS me JOIN lease_queue AS o"              \
  " ON o.queue = me.queue AND o.key = me.key AND o.id <> me.id"           \
  " WHERE me.id = ?1 AND " LEASE__Q_UNFINISHED_SQL("o.state") " LIMIT 1"

/* A lease that expired without complete, fail or release, found by the
** next claim of its job: the job still names an owner, until <= now.
** ?1 id, ?2 now.  Columns: owner, fence, until, attempt, max_attempts. */
#define LSQ_SQL_Q_EXPIRED                                                 \
  "SELECT j.owner, j.fence, j.until, " LSQ_SQL_ATTEMPT("j", "q") ", q.max_attempts" \
  " FROM jobs AS j JOIN lease_queue AS q ON q.id = j.id"                 \
  " WHERE j.id = ?1 AND j.done = 0 AND q.state = " LEASE__Q_OPEN_S " AND j.owner IS NOT NULL" \
  " AND j.until <= ?2"

/* Record an error.  ?1 id, ?2 attempt, ?3 at, ?4 owner, ?5 fence, ?6 message. */
#define LSQ_SQL_Q_ERROR_ADD                                               \
  "INSERT INTO lease_errors(id, attempt, at, owner, fence, message)"     \
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"

/* End a job, open or waiting: ?1 id, ?2 state (discarded, cancelled),
** ?3 finished_at. */
#define LSQ_SQL_Q_END                                                     \
  "UPDATE lease_queue SET state = ?2, finished_at = ?3 WHERE id = ?1"     \
  " AND state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S ")"

/*
** A completion's queue row, written in complete's transaction just before
** its guarded UPDATE of jobs (LSQ_SQL_COMPLETE): completed, finished at
** now, when that UPDATE's guard holds on the job and the queue has not
** ended it.  ?1 id, ?2 owner, ?3 fence, ?4 now.  lease_jobs_done then
** finds the row completed and leaves it (schema step 16): one write of
** the row and of its index entries per completion.
*/
#define LSQ_SQL_Q_COMPLETE                                                \
  "UPDATE lease_queue SET state = " LEASE__Q_COMPLETED_S ", finished_at = ?4" \
  " WHERE id = ?1 AND NOT (state >= " LEASE__Q_DISCARDED_S ")"           \
  " AND EXISTS (SELECT 1 FROM jobs WHERE " LSQ_SQL_COMPLETE_GUARD ")"

/* After a write of job ?1's queue row that changed no row: a row when
** the job has one, which another client's trigger kept from being written
** (a job without a queue row has none to write). */
#define LSQ_SQL_Q_ROW_THERE "SELECT 1 FROM lease_queue WHERE id = ?1"

/* The engine's triggers (lsq_schema_sql.h), each with its table, as the
** engine spells them: the rows of a VALUES list. */
#define LSQ_SQL_OWN_TRIGGERS                                              \
  "('lease_jobs_enqueued', 'jobs'), ('lease_jobs_done', 'jobs'),"        \
  " ('lease_jobs_deleted', 'jobs'), ('" LSQ_SQL_RENAMED_MARK "', 'jobs')," \
  " ('lease_deps_gone', 'jobs'), ('lease_deps_parent_gone', 'lease_queue')," \
  " ('lease_errors_kept', 'lease_errors')"

/* After an enqueue's inserts, the first of them at rowid ?1 (each later
** one above it): a job it inserted that has no queue row, which the
** trigger lease_jobs_enqueued gives every job with a text id unless
** another client's trigger skipped that insert or deleted the row (one
** on any table the enqueue writes: jobs, lease_queue, lease_deps,
** lease_events...).  Run only when LSQ_SQL_Q_FOREIGN_TRIGGERS finds a
** row. */
#define LSQ_SQL_Q_UNQUEUED                                                \
  "SELECT jobs.id FROM jobs"                                              \
  " WHERE jobs.rowid >= ?1 AND typeof(jobs.id) = 'text' AND NOT EXISTS"   \
  " (SELECT 1 FROM lease_queue AS q WHERE q.id = jobs.id) LIMIT 1"

/* A row when the file has a trigger that is not one of the engine's
** (another name, or one of its names spelled otherwise or on another
** table), or no lease_jobs_enqueued: only then can an enqueue leave a
** job without its queue row (the engine's connection has no temporary
** trigger: with_lease refuses to make one on its tables; a trigger
** another client put in place of one of the engine's under its name is
** taken for the engine's).  Its answer holds while the schema cookie
** (LSQ_SQL_Q_SCHEMA_COOKIE) stays as it was read with it. */
#define LSQ_SQL_Q_FOREIGN_TRIGGERS                                        \
  "SELECT 1 WHERE EXISTS (SELECT 1 FROM sqlite_master"                    \
  " WHERE type = 'trigger' AND (name, tbl_name)"                         \
  " NOT IN (VALUES " LSQ_SQL_OWN_TRIGGERS "))"                            \
  " OR NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger'"    \
  " AND name = 'lease_jobs_enqueued')"

/* The schema cookie, which SQLite moves at every change of the schema
** that any connection commits (or this one makes), and by which it knows
** that its own prepared statements are out of date. */
#define LSQ_SQL_Q_SCHEMA_COOKIE "PRAGMA schema_version"

/*
** The ready jobs of a queue, in claim order, columns `cols` of lease_queue
** AS q and jobs AS j.  ?1 queue, ?2 now, ?3 how many.  lease_queue_due
** yields the jobs the queue has not ended in (priority, due_at, seq) order
** within the queue: due_at is a job's run_at, or for one without, the
** clock mark when it was enqueued or reopened, so a job due longer goes
** first whichever way it became due.  The jobs row must be claimable
** (claim's rule).  CROSS JOIN keeps the tables in the order written, so
** that index drives and each job's row is looked up once, by its id.
*/
#define LSQ_SQL_Q_READY(cols)                                             \
  "SELECT " cols                                                          \
  " FROM lease_queue AS q CROSS JOIN jobs AS j ON j.id = q.id"           \
  " WHERE q.state = " LEASE__Q_OPEN_S " AND q.queue = ?1"                 \
  " AND (q.run_at IS NULL OR q.run_at <= ?2)"                            \
  " AND j.done = 0 AND j.until <= ?2 AND " LSQ_SQL_BLOCKED_OF("j.") " = 0" \
  " ORDER BY q.priority, q.due_at, q.seq LIMIT ?3"

/*
** lease_wait's look: seconds from ?2 (now) until the earliest job of queue
** ?1 becomes claimable (claim's rule, as LSQ_SQL_Q_READY): the later of
** its run_at and its lease's until, over the jobs the queue has not ended,
** not done and not blocked; NULL when there is none, and while the queue
** is paused (its resume wakes the waiters).  A done or blocked job's until
** reads NULL, which the two-argument max() passes on and the aggregate
** min() skips.  Then the queue's concurrency limit, rate and per, as
** LSQ_SQL_Q_SETTINGS gives them (0: none), for LSQ_SQL_Q_LIMIT_DUE.
*/
#define LSQ_SQL_Q_DUE_SETTING(col)                                        \
  "coalesce((SELECT " col " FROM lease_queues WHERE name = ?1), 0)"
#define LSQ_SQL_Q_DUE                                                     \
  "SELECT min(max(coalesce(q.run_at, 0), (SELECT until FROM jobs"         \
  " WHERE id = q.id AND done = 0 AND " LSQ_SQL_BLOCKED " = 0))) - ?2, "  \
  LSQ_SQL_Q_DUE_SETTING("concurrency") ", " LSQ_SQL_Q_DUE_SETTING("rate") ", " \
  LSQ_SQL_Q_DUE_SETTING("per")                                            \
  " FROM lease_queue AS q WHERE q.queue = ?1 AND q.state = " LEASE__Q_OPEN_S \
  " AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = ?1 AND paused <> 0)"

/*
** lease_wait's look at a queue's limits (claim's rule, lease__claim_room,
** over the facts read as read_queue_facts does): seconds from ?2 (now)
** until each limit may leave room, NULL when it leaves room now.  ?1
** queue, ?3 its concurrency limit, ?4 and ?5 its rate (0: none).  First
** column: while ?3 of its leases are live, the earliest of their ends
** (LSQ_SQL_Q_LIVE's jobs).  Second: while the claims counted at the
** claim's time (LSQ_SQL_Q_RECENT's) reach ?4, the time the earliest of
** them leaves the window (its time plus ?5: later than the claim's time,
** which is now or later).  Both are later than now; a lease or claim
** this look did not see is seen at the next one.
*/
#define LSQ_SQL_Q_LIMIT_DUE                                               \
  "WITH m(m) AS (SELECT max(at) FROM lease_queue_claims WHERE queue = ?1)," \
  " t(t) AS (SELECT max(?2, coalesce(m - ?5, ?2)) FROM m)"                \
  " SELECT (SELECT CASE WHEN ?3 > 0 AND count(*) >= ?3 THEN min(j.until) - ?2 END" \
  " FROM jobs AS j CROSS JOIN lease_queue AS q ON q.id = j.id"            \
  " WHERE j.done = 0 AND j.until > ?2 AND q.queue = ?1),"                 \
  " (SELECT CASE WHEN ?4 > 0 AND count(*) >= ?4"                          \
  " THEN min(at) + ?5 - ?2 END FROM lease_queue_claims"                  \
  " WHERE queue = ?1 AND at > t.t - ?5 AND at < t.t + ?5) FROM t"

/* claim_next's candidates.  Parameters as LSQ_SQL_Q_READY.  Columns: id,
** payload, queue, priority, base_fence, max_attempts (the claim's fence
** minus base_fence is the attempt it starts), timeout (NULL: none), the
** job's fence now, and its jobs row's rowid. */
#define LSQ_SQL_Q_CANDIDATES                                              \
  LSQ_SQL_Q_READY("q.id, q.payload, q.queue, q.priority, q.base_fence, q.max_attempts," \
                  " q.timeout, j.fence, j.rowid")

/*
** claim_next's claim of a candidate that holds no lease: claim's guarded
** write (LSQ_SQL_CLAIM: not done, until <= now, not blocked, not ended,
** checked in this statement) on a job without an owner whose fence is
** still the one its candidate's row read (so the new one is that + 1); a
** job whose lease ended unreported (owner IS NOT NULL) is left to claim's
** own step, which records that lease first.  ?1 id, ?2 owner, ?3 now,
** ?4 now + ttl, ?5 the fence read, ?6 the rowid read: the row is found by
** it, with no search of jobs' index on id (the candidates were read in
** this transaction, so the row still has it), and must still be ?1's.
*/
#define LSQ_SQL_Q_CLAIM_FREE                                              \
  "UPDATE jobs SET owner = ?2, until = ?4, fence = fence + 1"            \
  " WHERE rowid = ?6 AND id = ?1 AND fence = ?5 AND owner IS NULL AND done = 0 AND until <= ?3" \
  " AND " LSQ_SQL_NOT_ENDED                                               \
  " AND " LSQ_SQL_BLOCKED " = 0"

/* fail's guarded write: complete's guard, then the lease ends (owner
** NULL, until 0; the fence is kept).  ?1 id, ?2 owner, ?3 fence, ?4 now. */
#define LSQ_SQL_Q_FAIL                                                    \
  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \
  " AND " LSQ_SQL_NOT_ENDED                                               \
  " AND " LSQ_SQL_BLOCKED " = 0"

/* A release that stored gives its attempt back: the job's attempts (its
** fence's growth since base_fence, LSQ_SQL_ATTEMPT) drop by one, never
** below 0, so that claims a release ended never use up max_attempts.
** ?1 id. */
#define LSQ_SQL_Q_GIVE_BACK                                               \
  "UPDATE lease_queue SET base_fence = base_fence + 1 WHERE id = ?1"      \
  " AND base_fence < (SELECT " LSQ_SQL_FENCE_INT("fence") " FROM jobs WHERE id = ?1)"

/* A job's attempts made and max_attempts.  ?1 id. */
#define LSQ_SQL_Q_ATTEMPTS                                                \
  "SELECT " LSQ_SQL_ATTEMPT("j", "q") ", q.max_attempts"                  \
  " FROM lease_queue AS q JOIN jobs AS j ON j.id = q.id WHERE q.id = ?1"

/* After a failure: ?1 id, ?2 the attempts to count as made, ?3 state,
** ?4 run_at, ?5 finished_at. */
#define LSQ_SQL_Q_AFTER_FAIL                                              \
  "UPDATE lease_queue SET base_fence = coalesce((SELECT "                 \
  LSQ_SQL_FENCE_INT("fence") " FROM jobs WHERE jobs.id = ?1), 0) - ?2,"  \
  " state = ?3, run_at = ?4, due_at = coalesce(?4, due_at), finished_at = ?5 WHERE id = ?1"

/* What retry and cancel decide on.  ?1 id, ?2 now.  Columns: done,
** held (until > now), end state. */
#define LSQ_SQL_Q_INFO                                                    \
  "SELECT done <> 0, until > ?2,"                                        \
  " coalesce((SELECT state FROM lease_queue AS q WHERE q.id = jobs.id), " LEASE__Q_OPEN_S ")" \
  " FROM jobs WHERE id = ?1"

/* retry: the job open and not held (the fence kept), then its queue row
** open with a fresh attempt budget, due at once: since ?2 (now). */
#define LSQ_SQL_Q_REOPEN "UPDATE jobs SET done = 0, owner = NULL, until = 0 WHERE id = ?1"
#define LSQ_SQL_Q_RESET                                                   \
  "UPDATE lease_queue SET state = " LEASE__Q_OPEN_S ", base_fence = coalesce((SELECT " \
  LSQ_SQL_FENCE_INT("fence") " FROM jobs WHERE jobs.id = ?1), 0),"       \
  " run_at = NULL, due_at = ?2, finished_at = NULL WHERE id = ?1"

/*
** prune: the jobs the queue ended before ?1 (finished_at < ?1), of queue
** ?2 (NULL: all) and state ?3 (0: any ended), never one still held (not
** done, until > ?4: lease__prune_held): their ids and the rowids of their jobs rows, each
** row then deleted by its rowid (LSQ_SQL_Q_PRUNE_ONE; the triggers remove
** its queue row and errors), and their fences, of which the highest
** deleted raises the fence floor (LSQ_SQL_Q_FLOOR_RAISE).  The jobs rows are read with their queue rows
** (CROSS JOIN: lease_queue_ended drives) and deleted by rowid, lookups
** whatever statistics the file holds: one DELETE of the ids IN this list,
** planned from the statistics of a small file, scans all of jobs
** (specs/c/test_plans.c).  The rowid, not the id, names the row: an id
** another client stored as a blob would not match its text.
*/
#define LSQ_SQL_Q_PRUNE                                                   \
  "SELECT q.id, j.rowid, " LSQ_SQL_FENCE_INT("j.fence")                   \
  " FROM lease_queue AS q CROSS JOIN jobs AS j ON j.id = q.id"            \
  " WHERE q.state <> " LEASE__Q_OPEN_S " AND q.finished_at < ?1"          \
  " AND (?2 IS NULL OR q.queue = ?2) AND (?3 = 0 OR q.state = ?3)"        \
  " AND NOT (j.done = 0 AND j.until > ?4)"
#define LSQ_SQL_Q_PRUNE_ONE "DELETE FROM jobs WHERE rowid = ?1"

/*
** The fence floor: the highest fence of a job prune deleted, in lease_meta
** under the key 'fence_floor' (an integer; no row: 0).  Every job enqueue
** inserts starts at the floor (LSQ_SQL_ENQUEUE), so a fence handed out
** before a prune is never handed out again, not even to a job enqueued
** again under the same id (docs/contract/CONTRACT.md).  Read once per
** enqueue, inside its write transaction; raised to ?1 in prune's, never
** lowered.  LSQ_SQL_FLOOR_INT(v): v as a floor, an integer, or a text of
** 1 to 19 digits another client stored (at most LEASE_FENCE_MAX, as a
** CAST clamps it), as PostgreSQL reads its text (LPG_SQL_FLOOR_OF); any
** other value reads as 0.  A job at the floor LEASE_FENCE_MAX starts
** blocked, as a job whose fence reached it is.
*/
#define LSQ_SQL_FLOOR_INT(v)                                                      \
  "(CASE WHEN typeof(" v ") = 'integer' AND " v " > 0 THEN " v                     \
  " WHEN typeof(" v ") = 'text' AND length(" v ") BETWEEN 1 AND 19"                \
  " AND " v " NOT GLOB '*[^0-9]*' THEN CAST(" v " AS INTEGER) ELSE 0 END)"
#define LSQ_SQL_Q_FLOOR                                                   \
  "SELECT " LSQ_SQL_FLOOR_INT("value") " FROM " LEASE_SCHEMA_META " WHERE key = 'fence_floor'"
#define LSQ_SQL_Q_FLOOR_RAISE                                             \
  "INSERT INTO " LEASE_SCHEMA_META "(key, value) VALUES ('fence_floor', ?1)" \
  " ON CONFLICT(key) DO UPDATE SET value = max(" LSQ_SQL_FLOOR_INT("value") ", excluded.value)"

/* The clock mark, and its move up to ?1. */
#define LSQ_SQL_CLOCK_READ "SELECT " LSQ_SQL_MARK
#define LSQ_SQL_CLOCK_MOVE                                                \
  "INSERT INTO " LEASE_SCHEMA_META "(key, value) VALUES ('clock_mark', ?1)" \
  " ON CONFLICT(key) DO UPDATE SET value = excluded.value"

/* The errors of a job, oldest first.  ?1 id, ?2 limit. */
#define LSQ_SQL_Q_ERRORS                                                  \
  "SELECT attempt, at, owner, fence, message FROM lease_errors WHERE id = ?1" \
  " ORDER BY rowid LIMIT ?2"

/*
** Queue control (lease.h: lease_pause, lease_limit), in tables of their own:
**   lease_queues        one row per queue with settings: paused, and its
**                       limits (NULL: none); a row left with none goes;
**   lease_queue_claims  when claim_next handed out each job of a queue
**                       with a rate limit (one row per job, at the claim's
**                       time: lease__queue_facts), pruned at each claim to
**                       those a later claim may count.
** lease_jobs_live, on jobs(until) of the jobs not done, makes the count of
** a queue's live leases (LSQ_SQL_Q_LIVE) a range read of the live leases
** only; it exists while some queue has a concurrency limit (lease_limit
** makes it and drops it), so a database without one pays nothing for it
** on every write of until.  The tables are schema step 5 (LSQ_STEP_CONTROL
** in lsq_schema_sql.h); LSQ_SQL_QUEUES_TABLE and LSQ_SQL_CLAIMS_TABLE make
** empty temporary ones of the same layout (kw "TEMP ", as in
** LSQ_SQL_QUEUE_TABLE) for a handle that may not write to an older file.
*/
#define LSQ_SQL_QUEUES_TABLE(kw)                                           \
  "CREATE " kw "TABLE IF NOT EXISTS lease_queues(name TEXT PRIMARY KEY NOT NULL," \
  " paused INTEGER NOT NULL DEFAULT 0, concurrency INTEGER, rate INTEGER, per REAL)" \
  " WITHOUT ROWID"
#define LSQ_SQL_CLAIMS_TABLE(kw)                                           \
  "CREATE " kw "TABLE IF NOT EXISTS lease_queue_claims(queue TEXT NOT NULL, at REAL NOT NULL)"
#define LSQ_SQL_LIVE_INDEX                                                 \
  "CREATE INDEX IF NOT EXISTS lease_jobs_live ON jobs(until) WHERE done = 0"

/* A queue's settings.  ?1 queue.  Columns: paused (as `paused <> 0`, as
** LSQ_SQL_Q_DUE reads it), concurrency, rate, per (0 for none). */
#define LSQ_SQL_Q_SETTINGS                                                \
  "SELECT paused <> 0, coalesce(concurrency, 0), coalesce(rate, 0), coalesce(per, 0)" \
  " FROM lease_queues WHERE name = ?1"

/* The live leases of a queue: its jobs not done held (until > ?2), in
** any queue state: a job cancelled while a worker holds it keeps its
** slot until that lease ends, as the worker may still be running it.  ?1 queue.  CROSS JOIN keeps jobs outer, so lease_jobs_live
** is read for the range until > ?2, then each job's queue row by its key. */
#define LSQ_SQL_Q_LIVE                                                    \
  "SELECT count(*) FROM jobs AS j CROSS JOIN lease_queue AS q ON q.id = j.id" \
  " WHERE j.done = 0 AND j.until > ?2 AND q.queue = ?1"

/* The rate's window (lease__queue_facts): ?1 queue, ?2 now, ?3 per.
** Columns: the claim's time (at: now, or the latest claim less per when
** that is later), the claims in (at - per, at + per), and the time at or
** before which claims are pruned (the later of at and the latest claim,
** less twice per).  Prune: ?1 queue, ?2 that time.  Record: ?1 queue,
** ?3 claims at ?4 (the claim's time). */
#define LSQ_SQL_Q_RECENT                                                  \
  "WITH m(m) AS (SELECT max(at) FROM lease_queue_claims WHERE queue = ?1)," \
  " t(t, m) AS (SELECT max(?2, coalesce(m - ?3, ?2)), m FROM m)"          \
  " SELECT t, (SELECT count(*) FROM lease_queue_claims WHERE queue = ?1"  \
  " AND at > t - ?3 AND at < t + ?3), max(t, coalesce(m, t)) - 2 * ?3 FROM t"
#define LSQ_SQL_Q_PRUNE_CLAIMS                                            \
  "DELETE FROM lease_queue_claims WHERE queue = ?1 AND at <= ?2"
#define LSQ_SQL_Q_RECORD_CLAIMS                                           \
  "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?3)" \
  " INSERT INTO lease_queue_claims(queue, at) SELECT ?1, ?4 FROM k"

/* Write settings: ?1 queue, ?2 paused; or ?2 concurrency, ?3 rate, ?4
** per (NULL: none).  Then a row left with no setting goes, and with it the
** claims of a queue without a rate. */
#define LSQ_SQL_Q_SET_PAUSED                                              \
  "INSERT INTO lease_queues(name, paused) VALUES (?1, ?2)"                \
  " ON CONFLICT(name) DO UPDATE SET paused = excluded.paused"
#define LSQ_SQL_Q_SET_LIMITS                                              \
  "INSERT INTO lease_queues(name, concurrency, rate, per) VALUES (?1, ?2, ?3, ?4)" \
  " ON CONFLICT(name) DO UPDATE SET concurrency = excluded.concurrency,"  \
  " rate = excluded.rate, per = excluded.per"
#define LSQ_SQL_Q_TIDY                                                    \
  "DELETE FROM lease_queues WHERE name = ?1 AND paused = 0 AND concurrency IS NULL" \
  " AND rate IS NULL"
#define LSQ_SQL_Q_TIDY_CLAIMS                                             \
  "DELETE FROM lease_queue_claims WHERE queue = ?1"                       \
  " AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = ?1 AND rate IS NOT NULL)"

/* Every queue with jobs or settings, by name, with its settings (paused
** as LSQ_SQL_Q_SETTINGS reads it). */
#define LSQ_SQL_Q_QUEUES                                                  \
  "SELECT n.name, coalesce(s.paused <> 0, 0), coalesce(s.concurrency, 0), coalesce(s.rate, 0)," \
  " coalesce(s.per, 0) FROM (SELECT queue AS name FROM lease_queue UNION"  \
  " SELECT name FROM lease_queues) AS n LEFT JOIN lease_queues AS s ON s.name = n.name" \
  " ORDER BY n.name"

/*
** The events ledger (lsq_events.c).  Add: ?1 at (NULL: the engine's
** clock, seconds since the epoch), ?2 op, ?3 id, ?4 queue, ?5 owner,
** ?6 fence, ?7 reason (0: ok, stored as outcome 0 and reason NULL).
** Prune: the events with seq <= ?1, and those before the first whose
** at >= ?2, one seq range.  Read: after seq ?1, of id ?2 (NULL: all),
** at most ?3, in seq order.
*/
#define LSQ_SQL_EVENT_ADD                                                 \
  "INSERT INTO lease_events(at, op, id, queue, owner, fence, outcome, reason)" \
  " VALUES (coalesce(?1, (julianday('now') - 2440587.5) * 86400.0), ?2, ?3, ?4, ?5, ?6," \
  " ?7 <> 0, nullif(?7, 0))"
#define LSQ_SQL_EVENT_PRUNE                                               \
  "DELETE FROM lease_events WHERE seq <= max(?1, coalesce((SELECT seq FROM lease_events" \
  " WHERE at >= ?2 ORDER BY seq LIMIT 1), 0) - 1)"
#define LSQ_SQL_EVENT_READ                                                \
  "SELECT seq, at, op, id, queue, owner, fence, coalesce(reason, 0) FROM lease_events" \
  " WHERE seq > ?1 AND (?2 IS NULL OR id = ?2) ORDER BY seq LIMIT ?3"

/*
** Dependencies (lease.h: lease_new_job's after), in lease_deps(child,
** parent): one row per job a job was enqueued after, kept while the child
** is (schema step DEPS; lease_deps_parent finds a parent's children).  A
** child waits (state LEASE__Q_WAITING) while one of its parents is not
** completed; a parent no longer there counts as done.
*/

/* A listed job's queue state at enqueue: ?1 its id.  No row: missing. */
#define LSQ_SQL_Q_DEP_STATE                                               \
  "SELECT coalesce((SELECT state FROM lease_queue WHERE id = ?1), " LEASE__Q_OPEN_S ")" \
  " FROM jobs WHERE id = ?1"

/* Store that ?1 runs after ?2: the job of that id, else (an entry of the
** same batch skipped because its key was held) the unfinished job of
** queue ?3 holding key ?4. */
#define LSQ_SQL_DEP_PARENT                                                \
  "coalesce((SELECT id FROM jobs WHERE id = ?2), (SELECT id FROM lease_queue WHERE " \
  "queue = ?3 AND key = ?4 AND id <> ?1 AND " LEASE__Q_UNFINISHED_SQL("state") \
  " LIMIT 1), ?2)"
#define LSQ_SQL_Q_DEP_ADD                                                 \
  "INSERT OR IGNORE INTO lease_deps(child, parent) SELECT ?1, " LSQ_SQL_DEP_PARENT

/* After a DEP_ADD that changed no row, its arguments: a row when the edge
** is there (the same edge listed twice), none when a trigger skipped it. */
#define LSQ_SQL_Q_DEP_THERE                                               \
  "SELECT 1 FROM lease_deps WHERE child = ?1 AND parent = " LSQ_SQL_DEP_PARENT

/* A job with a parent not completed, of those `but` leaves in.  q: its
** lease_queue row. */
#define LSQ_SQL_DEP_PENDING(q, but)                                       \
  "EXISTS (SELECT 1 FROM lease_deps AS d JOIN lease_queue AS p ON p.id = d.parent" \
  " WHERE d.child = " q ".id" but " AND p.state <> " LEASE__Q_COMPLETED_S ")"

/* Whether any job waits for another: a write that finds none here has no
** child to open (DEP_RELEASE) while it holds the write lock. */
#define LSQ_SQL_Q_DEPS_ANY "SELECT 1 FROM lease_deps LIMIT 1"

/* Whether a job waits for ?1: a completion that finds none here has no
** child to open (DEP_RELEASE). */
#define LSQ_SQL_Q_DEP_CHILD "SELECT 1 FROM lease_deps WHERE parent = ?1 LIMIT 1"

/* Job ?1, open, waits while some parent is not completed (enqueue, retry). */
#define LSQ_SQL_Q_DEP_WAIT                                                \
  "UPDATE lease_queue SET state = " LEASE__Q_WAITING_S " WHERE id = ?1"   \
  " AND state = " LEASE__Q_OPEN_S " AND " LSQ_SQL_DEP_PENDING("lease_queue", "")

/* After a DEP_WAIT that changed no row: a row when job ?1 should have
** taken it (another client's trigger skipped the wait). */
#define LSQ_SQL_Q_DEP_UNWAITED                                            \
  "SELECT 1 FROM lease_queue WHERE id = ?1"                               \
  " AND state = " LEASE__Q_OPEN_S " AND " LSQ_SQL_DEP_PENDING("lease_queue", "")

/* The completion of ?1 opens its waiting children whose other parents are
** all completed, due at run_at or at the clock mark.  ?1 itself counts as
** completed: only complete's guarded step runs this, once it stored
** (lsq_q_release), so the fence decides whether a child opens. */
#define LSQ_SQL_Q_DEP_RELEASE LSQ_SQL_DEP_RELEASE_OF("?1", " AND d.parent <> ?1")

/* The UPDATE that opens the waiting children of the job `parent` (an SQL
** expression: a parameter, or new.id / old.id in a trigger) whose parents
** are all completed, of those `but` leaves in (LSQ_SQL_DEP_PENDING):
** LSQ_SQL_Q_DEP_RELEASE, and the triggers of schema step 19
** (lsq_schema_sql.h). */
#define LSQ_SQL_DEP_RELEASE_OF(parent, but)                               \
  "UPDATE lease_queue SET state = " LEASE__Q_OPEN_S ","                   \
  " due_at = coalesce(run_at, " LSQ_SQL_DUE_NOW ")"                      \
  " WHERE state = " LEASE__Q_WAITING_S                                    \
  " AND id IN (SELECT child FROM lease_deps WHERE parent = " parent ")"  \
  " AND NOT " LSQ_SQL_DEP_PENDING("lease_queue", but)

/* The waiting jobs below ?1 (its children, theirs, ...), each with the
** parent that ends it (the least id of those on the way).  CROSS JOIN
** keeps each step's rows outer, so lease_deps is read by parent whatever
** statistics the file holds (specs/c/test_plans.c). */
#define LSQ_SQL_DEP_BELOW                                                 \
  "WITH RECURSIVE k(id, parent) AS (SELECT d.child, d.parent FROM lease_deps AS d" \
  " JOIN lease_queue AS c ON c.id = d.child WHERE d.parent = ?1"         \
  " AND c.state = " LEASE__Q_WAITING_S                                    \
  " UNION SELECT d.child, d.parent FROM k CROSS JOIN lease_deps AS d ON d.parent = k.id" \
  " CROSS JOIN lease_queue AS c ON c.id = d.child WHERE c.state = " LEASE__Q_WAITING_S ")"

/* The discard or cancel of ?1 (?2 "discarded" or "cancelled", at ?3)
** cancels the jobs waiting below it: first each one's error, 'dependency
** "<parent>" was <word>' (cancelled for those below a child), then their
** state. */
#define LSQ_SQL_Q_DEP_ERRORS                                              \
  LSQ_SQL_DEP_BELOW " INSERT INTO lease_errors(id, attempt, at, owner, fence, message)" \
  " SELECT id, 0, ?3, NULL, NULL, CAST('dependency \"' || min(parent) || '\" was '" \
  " || CASE WHEN min(parent) = ?1 THEN ?2 ELSE 'cancelled' END AS BLOB)" \
  " FROM k GROUP BY id"
/* The same cascade's ledger events, before the errors and states: op
** cancel, outcome ok, at ?3, for each job waiting below ?1 (when the
** handle records events). */
#define LSQ_SQL_Q_DEP_EVENTS                                              \
  LSQ_SQL_DEP_BELOW " INSERT INTO lease_events(at, op, id, queue, owner, fence, outcome," \
  " reason) SELECT ?3, " LEASE__EV_CANCEL_S ", c.id, c.queue, NULL, NULL, 0, NULL"        \
  " FROM lease_queue AS c WHERE c.id IN (SELECT id FROM k) ORDER BY c.id"
#define LSQ_SQL_Q_DEP_CANCEL                                              \
  LSQ_SQL_DEP_BELOW " UPDATE lease_queue SET state = " LEASE__Q_CANCELLED_S "," \
  " finished_at = ?3 WHERE id IN (SELECT id FROM k)"

/* The jobs ?1 runs after, by id: id, status at ?2 (0: no longer there). */
#define LSQ_SQL_Q_DEPS                                                    \
  "SELECT d.parent, coalesce((SELECT " LSQ_SQL_STATUS("?2")               \
  " FROM jobs AS j LEFT JOIN lease_queue AS q ON q.id = j.id WHERE j.id = d.parent), 0)" \
  " FROM lease_deps AS d WHERE d.child = ?1 ORDER BY d.parent LIMIT ?3"

/*
** The queue's statements only this backend runs (lsq_sql.h's list takes
** them after the shared ones): its queue operations are several statements
** in one transaction where PostgreSQL's are one (claim_next: CANDIDATES,
** CLAIM_FREE, EXPIRED, ERROR_ADD, END; fail: ATTEMPTS, ERROR_ADD; retry
** and cancel: INFO, REOPEN, RESET, END), the data of a job enqueued is
** written after its jobs row (DATA; PostgreSQL's ENQUEUE writes both), the
** holder of a unique key is read by a statement of its own (KEY_HOLDER
** before an enqueue, RETRY_HOLDER in retry; PostgreSQL's ENQUEUE and
** Q_RETRY read it themselves), a completion's time by itself (FINISHED),
** a complete or a retry whose queue row was not written looks for that
** row as it is left (ROW_THERE), an enqueue looks for a job it inserted
** without a queue row (UNQUEUED), an enqueue or retry whose wait changed
** no row whether the job needed it (DEP_UNWAITED; PostgreSQL's DEP_WAIT
** says), and a rate's old claims are
** pruned by a statement of their own (PRUNE_CLAIMS; PostgreSQL's RECENT
** prunes and counts).  TIDY_CLAIMS, the claims of a queue left without a
** rate (PostgreSQL's TIDY drops them too), runs by its text as TIDY does.
** A completion opens the jobs waiting for it, and a discard or cancel
** cancels them, by statements of their own (DEP_RELEASE, DEP_ERRORS,
** DEP_CANCEL; a completion runs DEP_RELEASE only when DEP_CHILD finds a
** child, a batch of them not at all when DEPS_ANY finds no edge), where PostgreSQL's trigger lease_deps_follow does both.
*/
#define LSQ_QUEUE_OWN_STATEMENTS(XX)     \
  XX(Q_DATA)                             \
  XX(Q_KEY_HOLDER)                       \
  XX(Q_RETRY_HOLDER)                     \
  XX(Q_EXPIRED)                          \
  XX(Q_ERROR_ADD)                        \
  XX(Q_END)                              \
  XX(Q_COMPLETE)                         \
  XX(Q_ROW_THERE)                        \
  XX(Q_UNQUEUED)                         \
  XX(Q_FOREIGN_TRIGGERS)                 \
  XX(Q_SCHEMA_COOKIE)                    \
  XX(Q_DEP_UNWAITED)                     \
  XX(Q_CANDIDATES)                       \
  XX(Q_CLAIM_FREE)                       \
  XX(Q_ATTEMPTS)                         \
  XX(Q_GIVE_BACK)                        \
  XX(Q_INFO)                             \
  XX(Q_REOPEN)                           \
  XX(Q_RESET)                            \
  XX(Q_PRUNE_CLAIMS)                     \
  XX(Q_PRUNE_ONE)                        \
  XX(Q_DEP_RELEASE)                      \
  XX(Q_DEPS_ANY)                         \
  XX(Q_DEP_CHILD)                        \
  XX(Q_DEP_ERRORS)                       \
  XX(Q_DEP_EVENTS)                       \
  XX(Q_DEP_CANCEL)

#endif
