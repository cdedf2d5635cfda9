/*
** lsq.h: the SQLite backend's internal header, shared by its files
** (lsq_conn.c: errors, waiting, statements; lsq_open.c: opening and the
** file and schema checks; lsq_ops.c: the operations).  Every name carries
** the prefix lsq_.  The core reaches the backend only through
** lease__sqlite (lease_int.h).
*/
#ifndef LSQ_H
#define LSQ_H

#include "lease_int.h"
#include "lsq_schema_sql.h"
#include "lsq_sql.h"

#include <sqlite3.h>

/* The cached statements, from lsq_sql.h's list: the shared ones first,
** numbered as lease__stmt numbers them. */
enum {
#define LSQ_ST_ENUM_(name) LSQ_ST_##name,
  LSQ_STATEMENT_MAP(LSQ_ST_ENUM_)
#undef LSQ_ST_ENUM_
  LSQ_ST_COUNT
};

/* lsq_statement: lease__sqlite's statement: the SQL of shared statement
** `which` (lease_statements.h), NULL for a number outside the list. */
const char *lsq_statement(lease__stmt which);

/* A connection: db->conn of a handle whose backend is SQLite's. */
typedef struct lsq_conn {
  sqlite3 *sql;                     /* NULL until opened */
  sqlite3_stmt *stmt[LSQ_ST_COUNT]; /* prepared on first use */
  int busy_timeout_ms;              /* how long a wait for a lock lasts */
  double busy_since;                /* monotonic ms when the current wait began */
  int waiting;                      /* 1 while lsq_step's own wait owns busy_since */
  int handler_calls;                /* busy handler calls during the current step */
  int gave_up;                      /* the busy handler gave up during the current step */
  int version;                      /* the file's schema version (lsq_schema_read) */
  int versioned;                    /* the file holds its version row */
  long expiry_discards;             /* jobs lsq_q_expired discarded on this connection */
  int no_deps;                      /* set by a body that found lease_deps empty, for its run */
  int triggers_known;               /* triggers_foreign was read (lsq_queue.c: foreign_triggers) */
  int triggers_cookie;              /* ... under this schema cookie */
  int triggers_foreign;             /* ... and found a trigger not the engine's (or one missing) */
  int wal_given;                    /* the file came with a -wal holding frames */
  void *tx;                         /* lsq_tx.c's state (its statements), or NULL */
  struct lsq_group *group;          /* the file's writers in this process (lsq_group.c), or NULL */
  struct lsq_waiters *waiters;      /* the file's waiters in this process (lsq_wake.c), or NULL */
  uint64_t files_stamp;             /* the files' sizes and times at the last wait mark (lsq_wake.c) */
  sqlite3_stmt *savepoint[3];       /* lsq_group.c's SAVEPOINT, RELEASE, ROLLBACK TO */
} lsq_conn;

/* The writers of one database file in this process: lsq_group.c. */
typedef struct lsq_group lsq_group;

/* The waiters (lease_wait) of one database file in this process: lsq_wake.c. */
typedef struct lsq_waiters lsq_waiters;

/* The connection of db. */
#define LSQ(db) ((lsq_conn *)(db)->conn)

/*
** lsq_fail: record on db a failure that SQLite reported on connection
** `sql` (may be NULL) with code src: the engine's code (LEASE_FULL for an
** I/O error whose errno says the storage would not grow), SQLite's message
** and extended code.  Must run before anything else touches `sql`.
** Returns the recorded code.
*/
int lsq_fail(lease_db *db, sqlite3 *sql, int src);

/* lsq_busy_handler: SQLite's busy handler for db's connection (arg is db). */
int lsq_busy_handler(void *arg, int count);

/*
** lsq_step: sqlite3_step(st), waiting out locks SQLite reports without
** calling the busy handler (see lsq_conn.c), up to the busy timeout.
** Returns SQLite's code of the last step.
*/
int lsq_step(lease_db *db, sqlite3 *sql, sqlite3_stmt *st);

/* lsq_stmt: db's cached statement `which`, prepared on first use; NULL on
** failure (recorded on db). */
sqlite3_stmt *lsq_stmt(lease_db *db, int which);

/* lsq_run: step the cached statement `which`, which returns no row
** (BEGIN, COMMIT...), and reset it.  LEASE_OK or the failure recorded. */
int lsq_run(lease_db *db, int which);

/* lsq_found_row: step st, a check the caller bound, inside its write
** transaction (no lock is waited out), and reset it; *found: 1 when the
** check found a row, else 0.  LEASE_OK, or the failure recorded on db
** (lsq_fail; *found 0). */
int lsq_found_row(lease_db *db, sqlite3_stmt *st, int *found);

/* lsq_step_failed: after a failed step of st (SQLite's code src) inside a
** write body: record the failure on db (lsq_fail), reset st, and return
** the code recorded, for the body to return (lsq_write_txn then rolls the
** transaction back). */
int lsq_step_failed(lease_db *db, sqlite3_stmt *st, int src);

/* lsq_bind_bytes: bind the len bytes at s to parameter i of st as text,
** not copied (SQLITE_STATIC: s stays alive while st uses it).  len fits
** an int: the core checked it against max_length, at most INT_MAX. */
void lsq_bind_bytes(sqlite3_stmt *st, int i, const char *s, size_t len);

/* lsq_rollback: roll back whatever transaction is open, keeping the
** recorded error. */
void lsq_rollback(lease_db *db);

/*
** The body of a write transaction: runs with the transaction open and
** db's cached statements at hand.  Returns LEASE_OK, or a failure it
** recorded on db; it never begins, commits or rolls back itself.
*/
typedef int lsq_body(lease_db *db, void *ctx);

/*
** lsq_write_txn: run body(db, ctx) inside one BEGIN IMMEDIATE transaction
** (the write lock taken before the first read, contract step 4), then
** commit.  When the body fails or the commit fails, everything the body
** wrote is rolled back and that failure returned; the handle stays
** usable.  The one way every write of the backend reaches the file.
** With group commit (lsq_group.c) the transaction may be shared with
** other handles' writes to the same file, each body in a savepoint of its
** own and on the connection of the handle that leads the batch (LSQ(db)
** is that connection while the body runs); the outcome is returned only
** once that transaction has ended.
*/
int lsq_write_txn(lease_db *db, lsq_body *body, void *ctx);

/*
** lsq_savepoint: body(db, ctx) inside a savepoint of the open transaction
** (lsq_group.c): on success the savepoint is released (its writes join the
** transaction); on failure everything the body wrote is undone (ROLLBACK
** TO) and the failure, on db, returned.  The transaction stays open unless
** SQLite ended it.
*/
int lsq_savepoint(lease_db *db, lsq_body *body, void *ctx);

/*
** lsq_group_join: after a successful open, enter db in the registry of its
** file's writers (lsq_group.c), unless it is read-only, private, not a
** regular file, or opened with LEASE_OPEN_NO_GROUP_COMMIT.  Never fails:
** a handle that cannot join writes alone.
*/
void lsq_group_join(lease_db *db);

/* lsq_wake_join: after a successful open, enter db in the registry of its
** file's waiters (lsq_wake.c), unless the database is not a regular file.
** Never fails: a handle that cannot join sees other handles' writes by
** the files' stamp only.  lsq_wake_leave: drop it (at close; a no-op
** when it has none), freeing the entry with the file's last handle. */
void lsq_wake_join(lease_db *db);
void lsq_wake_leave(lease_db *db);

/* lease__sqlite's wait members (lease_int.h): lsq_wake.c. */
void lsq_wake(lease_db *db, const char *queue, size_t queue_len);
int lsq_wait_mark(lease_db *db, uint64_t *mark);
int lsq_due(lease_db *db, const char *queue, size_t queue_len, double *delay);
int lsq_wait_signal(lease_db *db, const char *queue, size_t queue_len, uint64_t mark,
                    double seconds, int *signalled);

/* lsq_group_leave: drop db from its group (at close; a no-op when it has
** none), freeing the group with its last member. */
void lsq_group_leave(lease_db *db);

/* A row callback of lsq_query: LEASE_OK to go on, LSQ_STOP to stop with
** success, or a failure already recorded on db (stops, and is returned). */
typedef int lsq_row_fn(lease_db *db, sqlite3_stmt *st, void *ctx);
#define LSQ_STOP (-1)

/*
** lsq_query: prepare sql on connection `sql`, step through its rows calling
** row(db, st, ctx) on each (row may be NULL: rows are skipped), finalize.
** The statement is prepared and run again when SQLite reports a lock it
** did not wait out itself, before the first row, up to the busy timeout
** (lsq_step).  Returns LEASE_OK or the recorded failure.
*/
int lsq_query(lease_db *db, sqlite3 *sql, const char *text, lsq_row_fn *row, void *ctx);

/* lsq_found: the row callback of a lookup that asks only whether a row
** exists; ctx is an int * set to 1 at the first row. */
int lsq_found(lease_db *db, sqlite3_stmt *st, void *ctx);

/* lsq_exec: lsq_query on db's own connection, rows skipped. */
int lsq_exec(lease_db *db, const char *text);

/* lsq_open: the backend's open (lease__backend.open): lsq_open.c. */
int lsq_open(lease_db *db);

/* lsq_close: finalize the statements and close the connection. */
void lsq_close(lease_db *db);

/* ---- shared by lsq_ops.c and lsq_queue.c ---------------------------- */

/* lsq_copy_row, lsq_fix_row: copy a row's columns into *row with its
** strings in db->buf, then point them there (lsq_ops.c). */
int lsq_copy_row(lease_db *db, sqlite3_stmt *st, int c0, lease_row *row, size_t *used);
void lsq_fix_row(lease_db *db, lease_row *row);

/* lsq_guarded_step: one guarded write (claim, renew, complete, release)
** inside an open transaction; lsq_why_refused: why one changed nothing
** (lsq_ops.c). */
int lsq_guarded_step(lease_db *db, const lease__write *w, int64_t *fence, int *reason);
int lsq_why_refused(lease_db *db, const lease__write *w, int *reason);

/* lsq_count: lease__sqlite's count: counts at now, of one queue or all
** (queue NULL). */
int lsq_count(lease_db *db, double now, const char *queue, size_t queue_len, lease_counts *out);

/* lsq_q_expired: inside a claim's transaction, before its guarded write:
** when job w->id holds a lease that expired unreported, record the error
** "lease expired" and, when that used up its attempts, discard it (the
** claim is then refused as discarded).  LEASE_OK or the failure
** recorded: LEASE_MISMATCH when the discard changed no row (another
** client's trigger skipped it) (lsq_queue.c). */
int lsq_q_expired(lease_db *db, const lease__write *w);

/* lsq_q_release: inside complete's transaction, once stored (never
** before: it counts w->id as completed): open the waiting jobs enqueued
** after w->id whose other parents are all completed (lsq_queue.c). */
int lsq_q_release(lease_db *db, const lease__write *w);

/* lsq_q_give_back: inside release's transaction, once stored: the job's
** attempt given back (LSQ_SQL_Q_GIVE_BACK).  LEASE_OK or the failure. */
int lsq_q_give_back(lease_db *db, const lease__write *w);

/* lsq_complete_each: inside a write transaction, complete each of the n
** items as lease_complete would (w: the owner and now; lsq_guarded_step
** for each), looking once whether any job waits for another
** (lsq_q_deps_none) when n > 1; a refusal does not stop the others, its
** reason in reasons[i] (reasons may be NULL); *stored: how many were
** stored.  LEASE_OK, or the failure recorded (the caller rolls back: none
** is stored). */
int lsq_complete_each(lease_db *db, const lease__write *w, const lease_result *items, int n,
                      int *reasons, int *stored);

/* lsq_q_deps_none: inside a write transaction: *none 1 when no job waits
** for another (lease_deps is empty), so no completion in this body has a
** child to open: lsq_complete_each sets LSQ(db)->no_deps to that for its
** run and clears it before it returns (lsq_q_release then skips its UPDATE).
** LEASE_OK or the failure recorded. */
int lsq_q_deps_none(lease_db *db, int *none);

/* lsq_q_cascade: inside the transaction that discarded or cancelled job
** id (qstate), at now: cancel the jobs waiting below it, each with its
** error naming the parent (lsq_queue.c). */
int lsq_q_cascade(lease_db *db, const char *id, size_t id_len, int qstate, double now);

/* lsq_q_after: lease__sqlite's after (lease_after). */
int lsq_q_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
                int *count);

/* lsq_q_claim_next: lease__sqlite's claim_next (w->queue set). */
int lsq_q_claim_next(lease_db *db, const lease__write *w, int max, lease_job *jobs, int *count,
                     int *why);

/* lsq_q_complete_claim_next: lease_complete_claim_next (wn->queue set): the
** complete wc, then claim_next's body, as one write (lsq_write_txn). */
int lsq_q_complete_claim_next(lease_db *db, const lease__write *wc, const lease__write *wn,
                              int max, lease_job *jobs, int *count, int *reason, int *why);

/* lsq_q_complete_many_claim_next: lease_complete_many_claim_next (wn->queue
** set): the n completions (lsq_complete_each), then the claim, in one
** write transaction (lsq_queue.c). */
int lsq_q_complete_many_claim_next(lease_db *db, const lease__write *wc,
                                   const lease_result *items, int n, int *reasons, int *stored,
                                   const lease__write *wn, int max, lease_job *jobs, int *count,
                                   int *why);

/*
** lsq_schema_read: the schema version of the file on connection sql (the
** handle's own or the open's immutable one) into LSQ(db)->version and
** ->versioned: its version row, or for a file without one the version
** its layout is (LSQ_SQL_CLASSIFY).  Writes nothing.  LEASE_SCHEMA when
** the row is not a version number, or names a version newer than
** LEASE_SCHEMA_VERSION (the file is not this build's to read or change);
** else LEASE_OK or the failure (lsq_schema.c).
*/
int lsq_schema_read(lease_db *db, sqlite3 *sql);

/* lsq_schema_upgrade: run every step past LSQ(db)->version, in order, then
** write the version row (LEASE_SCHEMA_VERSION).  Runs inside the caller's
** write transaction (the open's, which a failure rolls back). */
int lsq_schema_upgrade(lease_db *db);

/* lsq_clock: the clock step (lease__clock) of the write running on db,
** at the start of its body inside its transaction: the mark read, the
** write's now checked against it, the mark moved up when now passed it by
** a step (a run_at or before of lease__clock_also checked too).  LEASE_OK
** at once for a call without a clock step (lease__clock_due), or on a
** handle that may not write or whose file's schema is older than the clock
** step's (lease_schema.h: LEASE_SCHEMA_HAS).
** LEASE_OK or the failure recorded (lsq_queue.c). */
int lsq_clock(lease_db *db);

/* lsq_clock_checked: lsq_clock's read and check, for a call that takes a
** now and found nothing to write (it opens no transaction): the mark is
** read in a statement of its own and never moved.  LEASE_OK or the
** failure recorded (LEASE_MISUSE for a now off from the mark). */
int lsq_clock_checked(lease_db *db);

/* lsq_q_temp: on a handle that may not write to a file without the
** queue's schema, empty temporary tables of the same names, so reads see
** the queue's defaults. */
int lsq_q_temp(lease_db *db);

/* lsq_q_key_view: on a handle that may not write to a file older than
** LSQ_KEY_READABLE (with the queue's tables), a temporary view of its
** queue rows with key NULL (LSQ_SQL_QUEUE_KEY_VIEW). */
int lsq_q_key_view(lease_db *db);

/* lsq_q_control_temp: empty temporary tables of queue control's layout,
** for a handle that may not write to a file older than
** LSQ_CONTROL_READABLE: no queue is paused or limited. */
int lsq_q_control_temp(lease_db *db);

/* The queue's members of lease__sqlite (lease_int.h; lsq_queue.c). */
int lsq_q_enqueue(lease_db *db, const lease_new_job *jobs, int n, int *inserted);
int lsq_q_state(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
                int *found);
int lsq_q_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                 int *count);
int lsq_q_set_queue(lease_db *db, const char *queue, size_t queue_len, int what, int paused,
                    const lease_queue_limits *l);
int lsq_q_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count);
int lsq_q_fail(lease_db *db, const lease__write *w, const lease_fail_opts *o, int *status,
               double *run_at, int *reason);
int lsq_q_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason);
int lsq_q_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason);
int lsq_q_prune(lease_db *db, double before, const char *queue, size_t queue_len, int status,
                int64_t *deleted);
int lsq_q_list(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count);

/* lsq_q_enqueue_in: lease_enqueue_many's inserts inside the caller's
** write transaction; *added: how many were new (lsq_queue.c). */
int lsq_q_enqueue_in(lease_db *db, const lease_new_job *jobs, int n, int *added);

/* Schedules (lsq_schedule.c), lease__backend's members of the same names. */
int lsq_s_schedule(lease_db *db, const lease_schedule_spec *s);
int lsq_s_unschedule(lease_db *db, const char *name, size_t name_len, int *found);
int lsq_s_schedules(lease_db *db, const char *after, size_t after_len, int max,
                    lease_schedule_spec *out, int *count);
int lsq_s_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
               int *more);

/* The fenced side effects (lsq_tx.c), lease__backend's members of the
** same names. */
int lsq_with_lease(lease_db *db, lease_tx *tx, int *reason);
int lsq_tx_run(lease_tx *tx, const char *sql, const lease_value *params, int n,
               lease_row_fn *row, void *ctx, int64_t *changes);
int lsq_tx_write(lease_tx *tx, const lease__write *w, int *reason);
int lsq_fence_gate(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                   int64_t fence, int *reason);

/* lsq_tx_close: finalize lsq_tx.c's statements and free its state. */
void lsq_tx_close(lease_db *db);
/* The events ledger (lsq_events.c), lease__backend's event, event_prune
** and events. */
int lsq_event(lease_db *db, const lease__event *e, int64_t *seq);
int lsq_event_prune(lease_db *db, int64_t upto, double cutoff);
int lsq_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out,
               int *count);

/* lsq_file_id: the backend's file_id (lease_file_id): lsq_open.c. */
int lsq_file_id(lease_db *db, uint64_t *dev, uint64_t *ino);

#endif
