/*
** lpg_int.h: what the files of the PostgreSQL backend share (lpg.c: the
** connection, the contract's operations; lpg_queue.c: the job queue;
** lpg_tx.c: the fenced side effects, on the same session rules).
** Private to src/pg/.  Every name carries the prefix lpg_ (or is a static
** inline helper of one file's reach).
*/
#ifndef LPG_INT_H
#define LPG_INT_H

#include "lease_int.h"

#include <libpq-fe.h>

#include <stdint.h>
#include <string.h>

/* PostgreSQL's type oids (pg_type.dat) of the parameters sent. */
enum { T_BYTEA = 17, T_INT8 = 20, T_INT4 = 23, T_FLOAT8 = 701, T_BYTEA_ARRAY = 1001,
       T_INT8_ARRAY = 1016, T_FLOAT8_ARRAY = 1022 };

/* The most parameters one statement takes. */
#define LPG_MAX_PARAMS 9

/*
** The statements only this backend runs, after the shared list's
** (lease_statements.h): ENQUEUE_MANY (many ids in one INSERT; SQLite runs
** ENQUEUE per id in one transaction; ENQUEUE_DATA the same for jobs with
** data, without keys or dependencies), JOBS_MISSING (whether an enqueue's
** INSERT that added fewer jobs than it was given skipped an id not there:
** SQLite looks up the id in the same transaction), UNQUEUED (the first
** job a batch enqueue inserted without its queue row), COMPLETE_MANY (a batch's completes in
** one UPDATE; SQLite runs COMPLETE per job in one transaction), NOW (the server's clock), and the
** queue operations that are one statement here where SQLite runs several
** in a transaction: Q_CLAIM_NEXT (SQLite: CANDIDATES, CLAIM_FREE, ...),
** Q_COMPLETE_LOCKING and Q_CLAIM_NEXT_KEEPING (complete_claim_next's
** complete, which takes the queue's lock, and its claim round with its
** check, when it commits in one round trip: lpg_queue.c, ccn_committed;
** SQLite's writes are local calls), Q_RETRY and Q_CANCEL
** (SQLite: INFO, REOPEN, RESET, END; Q_RETRY also
** reads a unique key's holder, SQLite's RETRY_HOLDER), and
** Q_SETTINGS_LOCKED (a queue's settings with its row locked: SQLite's
** write transaction already excludes every other writer); Q_STATE_OLD,
** Q_LIST_OLD, TALLY_OLD: those reads on a database before schema step
** ATTEMPTS, for a read-only handle (SQLite's attempts have been counted
** from base_fence since its step 2, before any read-only handle reads a
** queue); Q_DEP_FLAG (an enqueue flags the jobs it lists, in id order:
** SQLite's write transaction already excludes every other writer); WAKE:
** the wake signal (lpg_wake.c: NOTIFY; SQLite signals
** waiters in the process and by its files); Q_CLAIM_NEXT_FREE (a claim
** round that claims nothing from a queue with settings, in the pipeline
** that reads them), Q_CLAIM_LOCK and Q_CONTROL_LOCK (a queue's advisory
** lock, shared by its claims, exclusive for pause, resume and limit:
** SQLite's write transaction already orders them); Q_CLAIM_ONE,
** Q_CLAIM_ONE_FREE, Q_CLAIM_ONE_KEEPING (those claim rounds for one job,
** its LIMIT in the text, so the plan a connection keeps is made for it:
** lpg_queue_sql.h); CLOCK_DROP (a mark another client stored that is no
** number, removed: SQLite's reads take such a mark for none).
*/
#define LPG_OWN_STATEMENTS(XX)                                                \
  XX(ENQUEUE_MANY)                                                            \
  XX(ENQUEUE_DATA)                                                            \
  XX(JOBS_MISSING)                                                            \
  XX(UNQUEUED)                                                                \
  XX(COMPLETE_MANY)                                                           \
  XX(NOW)                                                                     \
  XX(Q_CLAIM_NEXT)                                                            \
  XX(Q_RETRY)                                                                 \
  XX(Q_CANCEL)                                                                \
  XX(Q_SETTINGS_LOCKED)                                                       \
  XX(Q_CLAIM_NEXT_KEEPING)                                                    \
  XX(Q_COMPLETE_LOCKING)                                                      \
  XX(Q_STATE_OLD)                                                             \
  XX(Q_LIST_OLD)                                                              \
  XX(TALLY_OLD)                                                               \
  XX(Q_DEP_FLAG)                                                              \
  XX(WAKE)                                                                    \
  XX(Q_CLAIM_NEXT_FREE)                                                       \
  XX(Q_CLAIM_LOCK)                                                            \
  XX(Q_CONTROL_LOCK)                                                          \
  XX(Q_CLAIM_ONE)                                                             \
  XX(Q_CLAIM_ONE_FREE)                                                        \
  XX(Q_CLAIM_ONE_KEEPING)                                                     \
  XX(CLOCK_DROP)

/* The statements, numbered: the shared ones first, as lease__stmt numbers
** them.  Each statement's number is its prepared statement's slot in a
** session (lpg_run), one bit each in lpg_conn.prepared.  LPG_STMT_<name>
** (lpg_sql.h, lpg_queue_sql.h, lpg_schedule_sql.h) is its SQL, parameter
** count and types: a name without it fails to build (lpg.c's table). */
enum {
#define LPG_ST_ENUM_(name) LPG_ST_##name,
  LEASE_STATEMENTS(LPG_ST_ENUM_)
  LPG_OWN_STATEMENTS(LPG_ST_ENUM_)
#undef LPG_ST_ENUM_
  LPG_ST_COUNT
};
#define LPG_SLOTS 64

/* A connection: db->conn of a handle whose backend is PostgreSQL's. */
typedef struct lpg_conn {
  PGconn *pg;
  uint64_t prepared;   /* bit i: statement slot i is prepared on this session */
  void *tx;            /* lpg_tx.c's state of this connection */
  int version;         /* the database's schema version (lpg_schema_read) */
  int versioned;       /* the database holds its version row */
  int listening;       /* this session LISTENs for wake signals (lpg_wake.c) */
  char constraint[64]; /* the constraint the last failure (lpg_fail) broke, or "" */
} lpg_conn;

#define LPG(db) ((lpg_conn *)(db)->conn)

/* The statement lpg.c prepares on each session that sets the session's
** settings again (keep_settings; lpg_tx.c runs it after a caller's
** statement). */
#define LPG_SETTINGS_STMT "lease_settings"

/* The parameters of one statement, binary. */
typedef struct params {
  const char *v[LPG_MAX_PARAMS];
  int len[LPG_MAX_PARAMS];
  int fmt[LPG_MAX_PARAMS];
  char num[LPG_MAX_PARAMS][8];
  int n;
} params;

/* Write v big-endian into bytes bytes at out. */
static inline void put_be(char *out, uint64_t v, int bytes) {
  int i;
  for (i = bytes - 1; i >= 0; i--) {
    out[i] = (char)(v & 0xff);
    v >>= 8;
  }
}

/* Read a big-endian number of bytes bytes at p. */
static inline uint64_t get_be(const char *p, int bytes) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < bytes; i++) v = v << 8 | (unsigned char)p[i];
  return v;
}

/* Append a byte string (NULL for SQL NULL).  The core checked its length
** against max_length, which fits an int. */
static inline void p_bytes(params *p, const char *s, size_t len) {
  p->v[p->n] = s ? (len ? s : "") : NULL;
  p->len[p->n] = (int)len;
  p->fmt[p->n++] = 1;
}

/* Append an integer of `bytes` bytes (4 or 8), binary. */
static inline void p_int(params *p, uint64_t v, int bytes) {
  put_be(p->num[p->n], v, bytes);
  p->v[p->n] = p->num[p->n];
  p->len[p->n] = bytes;
  p->fmt[p->n++] = 1;
}

static inline void p_i8(params *p, int64_t v) { p_int(p, (uint64_t)v, 8); }
static inline void p_i4(params *p, int32_t v) { p_int(p, (uint64_t)(uint32_t)v, 4); }

/* Append a float8 (NaN stands for nothing only where a caller says so). */
static inline void p_f8(params *p, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  p_int(p, v, 8);
}

/* Append SQL NULL. */
static inline void p_null(params *p) { p_bytes(p, NULL, 0); }

/* Compare two ids as bytea compares: the bytes, then the length.  The
** statements that lock several jobs lock them in this order, so that two
** of them never wait for each other. */
static inline int lpg_id_cmp(const char *a, size_t alen, const char *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return (alen > blen) - (alen < blen);
}

/* A binary result field of `bytes` bytes read as a big-endian number: 0
** for SQL NULL, a field of another size, or a row or column the result
** does not have (PQgetvalue's NULL), so a result of an unexpected shape
** never reads outside libpq's memory. */
static inline uint64_t r_be(const PGresult *r, int row, int col, int bytes) {
  if (PQgetlength(r, row, col) != bytes || PQgetisnull(r, row, col)) return 0;
  return get_be(PQgetvalue(r, row, col), bytes);
}

/* Binary result fields (0 as r_be says). */
static inline int64_t r_i8(const PGresult *r, int row, int col) {
  return (int64_t)r_be(r, row, col, 8);
}
static inline int32_t r_i4(const PGresult *r, int row, int col) {
  return (int32_t)(uint32_t)r_be(r, row, col, 4);
}
static inline double r_f8(const PGresult *r, int row, int col) {
  uint64_t v = r_be(r, row, col, 8);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}
static inline int r_bool(const PGresult *r, int row, int col) {
  return !PQgetisnull(r, row, col) && PQgetvalue(r, row, col)[0] != 0;
}

/* ---- lpg.c ------------------------------------------------------------ */

/* Record the failure of a statement (res may be NULL): the server's
** message and SQLSTATE, or libpq's.  Returns the recorded code. */
int lpg_fail(lease_db *db, const PGresult *res);

/* Run a statement with no parameters (text protocol).  LEASE_OK or the
** failure recorded. */
int lpg_exec(lease_db *db, const char *sql);

/* Roll back whatever transaction is open, keeping the recorded error. */
void lpg_rollback(lease_db *db);

/* Make the connection ready for a call (reset a broken one once, roll back
** a transaction a failed call left open), then, for a write carrying a
** now, its clock step (lpg_q_clock).  LEASE_OK, LEASE_IOERR, or the clock
** step's failure. */
int lpg_ready(lease_db *db);

/* lpg_ready_conn: lpg_ready without the clock step, for a call that reads
** the mark with its first statements (lpg_pipeline_clocked). */
int lpg_ready_conn(lease_db *db);

/*
** Run statement `sql` prepared as slot `slot` (prepared on first use in
** this session, with n parameters of `types`), parameters p (NULL: none),
** binary results.  Returns the result, or NULL with the failure recorded.
*/
PGresult *lpg_run(lease_db *db, int slot, const char *sql, int n, const unsigned *types,
                  const params *p);

/* Run statement `which` (LPG_ST_*) with parameters p (NULL: none), as
** lpg_run. */
PGresult *lpg_stmt_run(lease_db *db, int which, const params *p);

/* lpg_pipeline's entries that are not statements of the table. */
#define LPG_PIPE_BEGIN (-1)
#define LPG_PIPE_COMMIT (-2)

/*
** Send n statements in one round trip (libpq's pipeline mode): which[i] an
** LPG_ST_* with parameters p[i] (NULL: none), or LPG_PIPE_BEGIN or
** LPG_PIPE_COMMIT.  out[i]:
** each one's result, the caller's to PQclear.  LEASE_OK, or the first
** failure recorded (every out[i] NULL; a transaction they opened is left
** for the caller to roll back).
*/
int lpg_pipeline(lease_db *db, int n, const int *which, const params *const *p,
                 PGresult **out);

/*
** lpg_pipeline_end: leave pipeline mode after a pipeline whose outcome is
** rc.  libpq refuses to leave while results it has not handed out are
** pending (a session the server ended before the pipeline's sync); the
** connection then takes no other statement until lpg_ready_conn opens it
** again, so that is a lost connection: LEASE_IOERR, recorded with
** libpq's message when rc was LEASE_OK, else rc's message kept under that
** code.  Otherwise rc.
*/
int lpg_pipeline_end(lease_db *db, int rc);

/* lpg_failed_with: 1 when the failure last recorded on db is the server's
** SQLSTATE sqlstate (five characters). */
int lpg_failed_with(const lease_db *db, const char *sqlstate);

/* lpg_skipped_as: after a statement of job id (id_len bytes) failed, when
** it failed by dividing by zero (SQLSTATE 22012: the statements' way to
** fail a write another client's trigger skipped, so that it stores
** nothing) the failure becomes LEASE_MISMATCH for the write `what` of
** that job (lease__skipped).  Returns db->rc. */
int lpg_skipped_as(lease_db *db, const char *what, const char *id, size_t id_len);

/* The most statements lpg_pipeline_clocked sends in one round trip. */
#define LPG_PIPE_MAX 5

/*
** lpg_pipeline after lpg_ready_conn: the n (at most LPG_PIPE_MAX)
** statements with, when the call's clock step is due (lease__clock_due),
** the mark's read in front, judged once they have run (lpg_q_clock_judge).
** A now the mark refuses: what they did is rolled back, the refusal
** returned.  A mark to move: rolled back, the mark moved on its own, and
** the statements sent again.  So they run only under a mark that needs no
** move, as after lpg_ready.  out[i]: their results; LEASE_OK or the
** failure recorded (every out[i] NULL; the caller rolls back).
*/
int lpg_pipeline_clocked(lease_db *db, int n, const int *which, const params *const *p,
                         PGresult **out);

/* lpg_write_params: the parameters of the guarded write w into p; returns
** its statement (LPG_ST_CLAIM, RENEW, COMPLETE or RELEASE). */
int lpg_write_params(const lease__write *w, params *p);

/* lpg_write_read: the outcome of the guarded write w from its result res
** (freed here): *reason, a claim's *fence (may be NULL), and its events
** in the ledger.  LEASE_OK or the failure recorded. */
int lpg_write_read(lease_db *db, const lease__write *w, PGresult *res, int64_t *fence,
                   int *reason);

/* lpg_statement: lease__pg's statement: the SQL of shared statement
** `which` (lease_statements.h), NULL for a number outside the list. */
const char *lpg_statement(lease__stmt which);

/*
** Read the outcome of a guarded write w from its one report row
** (lpg_sql.h: LPG_SQL_REPORT): *reason, and a claim's *fence.  Records why
** no reason fits (a blocked job) and returns that failure.
*/
int lpg_outcome(lease_db *db, const lease__write *w, const PGresult *r, int64_t *fence,
                int *reason);

/* lpg_outcome_row: lpg_outcome's reading of row `row` of a result of
** report rows (complete_many's, one per job). */
int lpg_outcome_row(lease_db *db, const lease__write *w, const PGresult *r, int row,
                    int64_t *fence, int *reason);

/* lpg_enqueue_ids: enqueue's plain form, for n checked jobs that carry
** nothing but their ids: one INSERT of them all (LPG_SQL_ENQUEUE_MANY),
** its own transaction, or the caller's (lpg_enqueue_run); *inserted: how
** many were new (may be NULL). */
int lpg_enqueue_ids(lease_db *db, const lease_new_job *jobs, int n, int *inserted);

/* ---- lpg_many.c --------------------------------------------------------- */

/* A one-dimensional array in PostgreSQL's binary format being built, of
** elements of type `type` (an oid): lpg_array_init, then lpg_array_add or
** lpg_array_i8 for each element, then lpg_array_end appends it to a
** statement's parameters; lpg_array_free once the statement has run. */
typedef struct lpg_array {
  char *b;
  size_t len, cap;
  unsigned type;
  int n, nulls, failed;
} lpg_array;

void lpg_array_init(lpg_array *a, unsigned type);
/* Append a byte string of len bytes (s NULL: SQL NULL). */
void lpg_array_add(lpg_array *a, const char *s, size_t len);
/* Append an int8. */
void lpg_array_i8(lpg_array *a, int64_t v);
/* Append a float8, SQL NULL for NaN. */
void lpg_array_f8(lpg_array *a, double d);
/* Append the array to p.  LEASE_OK; LEASE_NOMEM, or LEASE_MISUSE when it
** outgrew one parameter (`what`, e.g. "complete_many: the ids", names it),
** recorded. */
int lpg_array_end(lease_db *db, lpg_array *a, params *p, const char *what);
void lpg_array_free(lpg_array *a);

/* lpg_enqueue_missing: after an enqueue of the n jobs whose INSERT added
** fewer than it was given, in its transaction: LEASE_OK when each id is
** there (added, or another client's job), else LEASE_MISMATCH recorded,
** naming the first id missing (another client's trigger skipped its
** insert); the caller rolls back. */
int lpg_enqueue_missing(lease_db *db, const lease_new_job *jobs, int n);

/* lpg_enqueue_run: run the enqueue statement which (ENQUEUE_MANY or
** ENQUEUE_DATA, one row per job added) with p for the n jobs, in a
** transaction: with none open, BEGIN goes in the same round trip and
** *began is set (the caller commits or rolls back: lpg_ev_end); then,
** when it added fewer than n, lpg_enqueue_missing, and when it added
** any, whether each has its queue row (LPG_SQL_UNQUEUED: one another
** client's trigger skipped is LEASE_MISMATCH).  The result, the caller's
** to PQclear, or NULL with the failure recorded. */
PGresult *lpg_enqueue_run(lease_db *db, int which, const params *p, const lease_new_job *jobs,
                          int n, int *began);

/* lpg_enqueue_data: enqueue of n > 1 checked jobs with data, none with a
** key or dependencies: one statement (LPG_Q_SQL_ENQUEUE_DATA), its own
** transaction, or the caller's (lpg_enqueue_run), with the ledger's events
** when on; *inserted: how many were new (may be NULL). */
int lpg_enqueue_data(lease_db *db, const lease_new_job *jobs, int n, int *inserted);

/* lpg_complete_begun: after lpg_ready_conn, BEGIN and the n completions
** of lpg_complete_many (one statement, its clock step in the same round
** trip; or, when an id is named twice, one statement each after the clock
** step), leaving the transaction open for the caller to go on and commit,
** or to roll back on a failure (recorded).  *stored: how many were stored
** (0 on a failure).  wq: a claim to follow in the transaction, whose
** queue's lock (lpg_q_claim_begin) is taken right after BEGIN, before
** the completions; NULL: none. */
int lpg_complete_begun(lease_db *db, const lease__write *w, const lease_result *items, int n,
                       int *reasons, int *stored, const lease__write *wq);

/* lpg_q_claim_begin: BEGIN and the advisory lock of w's queue taken
** shared (LPG_Q_SQL_CLAIM_LOCK), in one round trip: how every transaction
** that claims from a queue begins, so that pause, resume and limit
** (which take it exclusive) wait for it, and it for them.  LEASE_OK or
** the failure recorded (the caller rolls back). */
int lpg_q_claim_begin(lease_db *db, const lease__write *w);

/* lpg_complete_many: lease__backend's complete_many (lease.h:
** lease_complete_many): one transaction, the jobs locked in id order, one
** statement for the batch (LPG_SQL_COMPLETE_MANY), reasons in input order
** (reasons and stored may be NULL). */
int lpg_complete_many(lease_db *db, const lease__write *w, const lease_result *items, int n,
                      int *reasons, int *stored);

/* ---- lpg_wake.c --------------------------------------------------------- */

/* lease__pg's wait members (lease_int.h): LISTEN/NOTIFY on "lease_wake". */
void lpg_wake(lease_db *db, const char *queue, size_t queue_len);
int lpg_wait_mark(lease_db *db, uint64_t *mark);
int lpg_due(lease_db *db, const char *queue, size_t queue_len, double *delay);
int lpg_wait_signal(lease_db *db, const char *queue, size_t queue_len, uint64_t mark,
                    double seconds, int *signalled);

/* ---- lpg_events.c ------------------------------------------------------ */

/* lpg_ev_begin: before a write that is one statement on its own and
** records an event: BEGIN when db records events (lease__events_on) and
** no transaction is open (*began = 1).  lpg_ev_end: after it, with its
** result rc: COMMIT what lpg_ev_begin began, or roll it back when rc or
** the commit failed.  Returns rc or the commit's failure. */
int lpg_ev_begin(lease_db *db, int *began);
int lpg_ev_end(lease_db *db, int rc, int began);

/* lpg_keep: append field (row, col) of r to db->buf at *used
** (NUL-terminated); returns its offset + 1 (0 for SQL NULL) and its length
** in *len, or 0 with LEASE_NOMEM recorded (*failed = 1).  Offsets, not
** pointers, because a later append may move db->buf. */
size_t lpg_keep(lease_db *db, const PGresult *r, int row, int col, size_t *len, size_t *used,
                int *failed);

/* lease__pg's event, event_prune and events (lease_int.h). */
int lpg_event(lease_db *db, const lease__event *e, int64_t *seq);
int lpg_event_prune(lease_db *db, int64_t upto, double cutoff);
int lpg_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out, int *count);

/* ---- lpg_schema.c ------------------------------------------------------- */

/*
** lpg_schema_read: the database's schema version into LPG(db)->version and
** ->versioned: its version row, or for a database without one the version
** its layout is (LPG_SQL_CLASSIFY).  Writes nothing.  LEASE_SCHEMA when
** the row is not a version number, or names a version newer than
** LEASE_SCHEMA_VERSION; else LEASE_OK or the failure.
*/
int lpg_schema_read(lease_db *db);

/*
** lpg_schema_upgrade: in one transaction under LPG_SQL_LOCK (READ
** COMMITTED, named: it runs before the session is set): the jobs table
** when missing, the version read again (another client may have brought
** the database up to date meanwhile), every step past it, the version row,
** and the with_lease guard on every lease_ table.  A failure rolls it all
** back.  LEASE_OK or the failure.
*/
int lpg_schema_upgrade(lease_db *db);

/* ---- lpg_queue.c -------------------------------------------------------- */

/* The clock step (lease_int.h: lease__clock) of the write about to run
** on db: the mark read in a statement of its own, the write's now checked
** against it, the mark moved up when now passed it by a step.  LEASE_OK at
** once for a call without a clock step (lease__clock_due), on a read-only
** handle, or on a database older than the clock step (lease_schema.h:
** LEASE_SCHEMA_HAS).  Called by lpg_ready. */
int lpg_q_clock(lease_db *db);

/* lpg_q_clock's parts, after lease__clock_due: the mark read (res,
** LPG_ST_CLOCK_READ's result) judged against the call's now, *move 1 when
** the mark must move up (LEASE_OK, or the refusal recorded); the move. */
int lpg_q_clock_judge(lease_db *db, const PGresult *res, int *move);
int lpg_q_clock_move(lease_db *db);

/*
** lpg_q_mark_dropped: after an operation failed with the failure recorded
** on db (its transaction rolled back here), 1 when PostgreSQL refused a
** text as a float8 (SQLSTATE 22P02 or 22003) and the clock mark was a
** text that is no number, now dropped (LPG_Q_SQL_CLOCK_DROP: the mark
** counts as none from then on, and the operation may run again); else 0.
** The failure stays recorded either way.
*/
int lpg_q_mark_dropped(lease_db *db);

/* lpg_key_conflict: 1 when the failure just recorded on db (rc) is the
** unique index lease_queue_key refusing a second unfinished holder of a
** key: a writer that read no holder lost to one not yet committed when it
** read; the statement (or transaction) run again reads the holder. */
int lpg_key_conflict(lease_db *db, int rc);

/* lease__pg's members (lease_int.h) that read or take jobs with their
** queue data, and the queue's operator actions. */
int lpg_q_enqueue(lease_db *db, const lease_new_job *jobs, int n, int *inserted);
int lpg_q_state(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
                int *found);
int lpg_q_claim_next(lease_db *db, const lease__write *w, int max, lease_job *jobs, int *count,
                     int *why);
int lpg_q_list(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count);
int lpg_q_count(lease_db *db, double now, const char *queue, size_t queue_len,
                lease_counts *out);
/* lpg_q_after: lease__pg's after (lease_after). */
int lpg_q_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
                int *count);
int lpg_q_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                 int *count);
int lpg_q_set_queue(lease_db *db, const char *queue, size_t queue_len, int what, int paused,
                    const lease_queue_limits *l);
int lpg_q_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count);

/* lpg_q_complete_claim_next: lease_complete_claim_next (wn->queue set), in
** one transaction. */
int lpg_q_complete_claim_next(lease_db *db, const lease__write *wc, const lease__write *wn,
                              int max, lease_job *jobs, int *count, int *reason, int *why);

/* lpg_q_complete_many_claim_next: lease_complete_many_claim_next
** (wn->queue set), in one transaction. */
int lpg_q_complete_many_claim_next(lease_db *db, const lease__write *wc,
                                   const lease_result *items, int n, int *reasons, int *stored,
                                   const lease__write *wn, int max, lease_job *jobs, int *count,
                                   int *why);

int lpg_q_fail(lease_db *db, const lease__write *w, const lease_fail_opts *o, int *status,
               double *run_at, int *reason);
int lpg_q_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason);
int lpg_q_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason);
int lpg_q_prune(lease_db *db, double before, const char *queue, size_t queue_len, int status,
                int64_t *deleted);

/* lpg_q_enqueue_in: lease_enqueue_many's inserts inside the caller's
** transaction; *added: how many were new (lpg_queue.c). */
int lpg_q_enqueue_in(lease_db *db, const lease_new_job *jobs, int n, int *added);

/* ---- lpg_schedule.c ----------------------------------------------------- */

/* At a read-only handle's open, on a database older than
** LPG_SCHEDULES_READABLE: an empty temporary lease_schedules, so
** lease_schedules reads none.  LEASE_OK or the server's error. */
int lpg_s_temp(lease_db *db);

/* Schedules: lease__pg's members of the same names. */
int lpg_s_schedule(lease_db *db, const lease_schedule_spec *s);
int lpg_s_unschedule(lease_db *db, const char *name, size_t name_len, int *found);
int lpg_s_schedules(lease_db *db, const char *after, size_t after_len, int max,
                    lease_schedule_spec *out, int *count);
int lpg_s_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
               int *more);

/* ---- lpg.c, for lpg_tx.c ------------------------------------------------ */

/* The handle's libpq connection (db->conn's). */
PGconn *lpg_pq(lease_db *db);

/* Where lpg_tx.c keeps its state of the handle's connection (NULL when
** opened); lpg_tx_close frees it when the handle closes. */
void **lpg_txstate(lease_db *db);
void lpg_tx_close(lease_db *db);

/* Record on db the failure of a statement (res may be NULL): as lpg_fail. */
int lpg_fail_result(lease_db *db, const PGresult *res);

/* The guarded write w (renew or complete: lpg_sql.h's statements) in the
** open transaction; *reason as lease.h says. */
int lpg_guarded(lease_db *db, const lease__write *w, int *reason);

/* ---- lpg_tx.c: the backend's fenced side effects (lease_int.h) --------- */
int lpg_with_lease(lease_db *db, lease_tx *tx, int *reason);
int lpg_tx_run(lease_tx *tx, const char *sql, const lease_value *values, int n,
               lease_row_fn *row, void *ctx, int64_t *changes);
int lpg_tx_write(lease_tx *tx, const lease__write *w, int *reason);
int lpg_fence_gate(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                   int64_t fence, int *reason);

#endif
