/*
** lease_int.h: the core's internal header, what the core (src/core/lease.c,
** src/core/lease_many.c) and its storage backends (src/sqlite/) share beyond
** lease.h.  Not installed, not part of the API: every name carries the
** prefix lease__ (libuv's uv__ convention), so none looks public.
**
** The backend seam: a handle carries a table of functions (lease__backend)
** that runs each operation on one storage engine.  The core checks every
** argument first (so a backend receives only valid, resolved arguments:
** lengths never LEASE_NTS, times finite), keeps the error state, and calls
** through the table; a backend runs its statements and records failures
** with lease__fail.  The binding, the pool and the threads see lease.h only.
*/
#ifndef LEASE_INT_H
#define LEASE_INT_H

#include "lease.h"
#include "lease_schema.h"
#include "lease_statements.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* How many result codes and reasons lease.h's lists hold. */
#define LEASE__PLUS_ONE_(name, word) +1
enum {
  LEASE__RC_COUNT = 0 LEASE_RC_MAP(LEASE__PLUS_ONE_),
  LEASE__REASON_COUNT = 0 LEASE_REASON_MAP(LEASE__PLUS_ONE_)
};

/*
** Why a job not done can never be handed out (lease_row.blocked), one list:
** XX(NAME, code, rc, message).  code is what the backend's check yields (0:
** not blocked); rc is the result code a claim or write of such a job
** returns: LEASE_RANGE for a fence that cannot grow, LEASE_MISMATCH for a
** value of the wrong type.  The SQLite backend's LSQ_SQL_BLOCKED yields
** these codes (src/sqlite/lsq_sql.h).
*/
#define LEASE__BLOCKED_MAP(XX)                                                      \
  XX(BAD_ID, 1, LEASE_MISMATCH, "its id is not a non-empty text")                   \
  XX(BAD_FENCE, 2, LEASE_MISMATCH, "its stored fence is not a non-negative integer") \
  XX(FENCE_MAX, 3, LEASE_RANGE,                                                     \
     "its fence is at its maximum, 9223372036854775807, and cannot grow")           \
  XX(BAD_UNTIL, 4, LEASE_MISMATCH, "its stored until is not a number")

enum {
#define LEASE__BLOCKED_ENUM_(name, code, rc, msg) LEASE__BLOCKED_##name = code,
  LEASE__BLOCKED_MAP(LEASE__BLOCKED_ENUM_)
#undef LEASE__BLOCKED_ENUM_
  LEASE__BLOCKED_END   /* one past the last code */
};

/* lease__blocked_msg: the message of a blocked code, NULL for 0 (not
** blocked) and for a code outside the list. */
const char *lease__blocked_msg(int code);

/* lease__blocked_fail: record on db that the job cannot be written because
** of blocked code `code` ("cannot <verb> this job: <message>"); returns the
** code's result code (LEASE_RANGE or LEASE_MISMATCH). */
int lease__blocked_fail(lease_db *db, int code, const char *verb);

/* The guarded writes (contract steps 4-7): which one a lease__write is. */
typedef enum lease__op { LEASE__CLAIM, LEASE__RENEW, LEASE__COMPLETE, LEASE__RELEASE } lease__op;

/*
** The queue's state of a job (lease_queue.state; a job without a queue row
** counts as OPEN).  OPEN: not done, handed out by claim_next when ready;
** COMPLETED: done (a trigger keeps it in step with jobs.done); DISCARDED:
** its attempts are used up; CANCELLED: lease_cancel ended it.  The last
** two are the queue's ends: no write but release touches such a job.
** WAITING: enqueued after jobs not all completed (lease_deps); the
** completion of its last one opens it, the discard or cancel of one
** cancels it.  No write but release and cancel takes it either (its SQL
** guards read "state >= DISCARDED" as "not open to a lease", which holds
** it too).  The backends' SQL text takes each number from the same digit
** (the _S strings), so the C and the SQL cannot disagree.
*/
#define LEASE__Q_OPEN_N 0
#define LEASE__Q_COMPLETED_N 1
#define LEASE__Q_DISCARDED_N 2
#define LEASE__Q_CANCELLED_N 3
#define LEASE__Q_WAITING_N 4
typedef enum lease__qstate {
  LEASE__Q_OPEN = LEASE__Q_OPEN_N,
  LEASE__Q_COMPLETED = LEASE__Q_COMPLETED_N,
  LEASE__Q_DISCARDED = LEASE__Q_DISCARDED_N,
  LEASE__Q_CANCELLED = LEASE__Q_CANCELLED_N,
  LEASE__Q_WAITING = LEASE__Q_WAITING_N
} lease__qstate;
#define LEASE__STR_(x) #x
#define LEASE__STR(x) LEASE__STR_(x)
#define LEASE__Q_OPEN_S LEASE__STR(LEASE__Q_OPEN_N)
#define LEASE__Q_COMPLETED_S LEASE__STR(LEASE__Q_COMPLETED_N)
#define LEASE__Q_DISCARDED_S LEASE__STR(LEASE__Q_DISCARDED_N)
#define LEASE__Q_CANCELLED_S LEASE__STR(LEASE__Q_CANCELLED_N)
#define LEASE__Q_WAITING_S LEASE__STR(LEASE__Q_WAITING_N)
/* The ledger's op "cancel" (lease.h: LEASE_EV_CANCEL) in SQL: the cascade
** that cancels the jobs waiting below a discarded or cancelled one records
** it in SQL of its own (SQLite's Q_DEP_EVENTS, PostgreSQL's trigger). */
#define LEASE__EV_CANCEL_N 7
#define LEASE__EV_CANCEL_S LEASE__STR(LEASE__EV_CANCEL_N)
_Static_assert(LEASE_EV_CANCEL == LEASE__EV_CANCEL_N, "LEASE__EV_CANCEL_N is lease.h's LEASE_EV_CANCEL");
/* The SQL condition "the queue has not finished the job" over its queue
** row's state column: not completed, discarded or cancelled (any other
** state, waiting and a later one too, holds a unique key: lease_new_job's
** key). */
#define LEASE__Q_UNFINISHED_SQL(col)                                     \
  col " NOT IN (" LEASE__Q_COMPLETED_S ", " LEASE__Q_DISCARDED_S ", " LEASE__Q_CANCELLED_S ")"
/* The SQL's "not open to a lease" is state >= DISCARDED: the ends, then
** WAITING, come last.  SQLite's triggers store done <> 0 (0 or 1) as a
** new row's state. */
_Static_assert(LEASE__Q_CANCELLED == LEASE__Q_DISCARDED + 1 &&
               LEASE__Q_WAITING == LEASE__Q_CANCELLED + 1 &&
               LEASE__Q_DISCARDED > LEASE__Q_COMPLETED, "the queue's ends are its last states");
_Static_assert(LEASE__Q_OPEN == 0 && LEASE__Q_COMPLETED == 1, "done <> 0 is the state");

/*
** What a backend reads about a job, in a write's transaction, for the
** rules (src/core/lease_rules.c) to decide the write's reason.  Each is 0
** or 1 but qstate and blocked; a fact a write does not ask is ignored.
*/
typedef struct lease__facts {
  int found;         /* the job's row exists (else nothing else is read) */
  int done;          /* jobs.done <> 0 */
  int qstate;        /* lease__qstate of the job */
  int other_owner;   /* the stored owner is not the write's (renew, complete, release) */
  int other_fence;   /* the stored fence is not the write's (renew, complete, release) */
  int blocked;       /* LEASE__BLOCKED_* code of the job, 0 when not blocked */
  int live;          /* until > now: a lease runs (claim) */
  int expired;       /* until <= now (renew, complete) */
} lease__facts;

/*
** One guarded write, its arguments checked and resolved by the core.
** Fields a write does not use are 0 / NULL.
*/
typedef struct lease__write {
  lease__op op;
  const char *id;      size_t id_len;      /* non-empty */
  const char *owner;   size_t owner_len;   /* non-empty */
  int64_t fence;                           /* renew, complete, release */
  double now;                              /* claim, renew, complete: finite */
  double until;                            /* claim, renew: now + ttl, > now */
  const char *result;  size_t result_len;  /* complete: result NULL for SQL NULL */
  const char *queue;   size_t queue_len;   /* claim_next: non-empty */
  const char *message; size_t message_len; /* fail: NULL for none */
} lease__write;

/*
** lease__judge: the reason of op on the job f describes, in the contract's
** order: missing; done; but for release, discarded or cancelled by the
** queue, then waiting for its dependencies; but for claim, not_owner, then stale_fence; but for release, a
** blocked job (a failure: lease__blocked_fail, claim's verb "claim", the
** others' "write to"); then claim's held (f->live) or renew's and
** complete's expired.  *reason gets the first that applies, or
** LEASE_GRANTED.  Returns LEASE_OK, or the blocked job's failure.
*/
int lease__judge(lease_db *db, lease__op op, const lease__facts *f, int *reason);

/*
** lease__refusal: lease__judge of w's op for a guarded write whose guard
** changed nothing: every check passing then means something outside the
** engine skipped the write (a trigger another client defined), a failure:
** LEASE_MISMATCH, "the guarded claim/update of ID changed no row, yet the
** job passes every check".  Returns LEASE_OK with *reason set, or the
** failure recorded.
*/
int lease__refusal(lease_db *db, const lease__write *w, const lease__facts *f, int *reason);

/*
** lease__skipped: a write of the engine's that changed no row where it
** must change one: something outside the engine skipped it (a BEFORE
** trigger another client defined: RAISE(IGNORE) on SQLite, RETURN NULL on
** PostgreSQL).  what: the write and its object up to the name, e.g.
** "enqueue of", "the settings of queue"; name (name_len bytes): the job,
** queue or schedule, or NULL when `what` names it whole.  Records
** LEASE_MISMATCH, "WHAT NAME changed no row (a trigger?): nothing stored",
** and returns it; the caller's transaction rolls back, so the call stores
** nothing.
*/
int lease__skipped(lease_db *db, const char *what, const char *name, size_t name_len);

/* lease__cancel_reason: lease_cancel's reason for the job f describes
** (found, done, qstate): missing, done, discarded, cancelled, or
** LEASE_GRANTED. */
int lease__cancel_reason(const lease__facts *f);

/* lease__prune_state: the queue state (lease__qstate) prune deletes for
** status, a LEASE_STATUS_* of an ended job (completed, discarded,
** cancelled), or 0 for any ended state (status 0). */
int lease__prune_state(int status);

/* lease__prune_held: the time a job's lease must end after for prune to
** leave the job alone as still held (not done, until past it): the earlier
** of before and the database's clock mark (db->clock_mark, the highest now
** it has seen, as this write's clock step read it, lease_prune setting
** db->clock_read: on SQLite in the write's transaction, on PostgreSQL in a
** statement just before, an older mark that spares more), so that a before
** ahead of the clock (a day ahead, or math.huge for every ended job)
** spares a lease that runs on; with no mark, before.  The mark moves in
** steps (LEASE__CLOCK_STEP), so a lease that ended less than a step ago
** counts as held too. */
double lease__prune_held(const lease_db *db, double before);

/*
** What a backend reads about a queue's settings (lease_queues row), in
** claim_next's transaction, for lease__claim_room.  live is read only when
** concurrency > 0, at and recent only when rate > 0.
**
** A rate is kept over the claims' times, one row of lease_queue_claims per
** job at the time of the claim that took it.  Claimers read now before
** they wait for the write lock, so claims commit in an order their nows
** need not follow.  A claim's time is its now, or the latest claim
** recorded for the queue less per when that is later (a claimer's clock
** more than a window behind is moved up to it).  Its count is of the
** claims within per of that time either way, (at - per, at + per): every
** window of length per that holds at, whichever side of it the others
** fell, so no such window holds more than the rate whatever order the
** claims arrive in.  The rows at or before the latest time less twice per
** are pruned: no later claim's count reaches them.
*/
typedef struct lease__queue_facts {
  int found;             /* the queue has a settings row (else nothing else is read) */
  int paused;            /* lease_queues.paused <> 0 */
  int64_t concurrency;   /* 0: no limit */
  int64_t live;          /* the queue's jobs held: not done, until > now */
  int64_t rate;          /* 0: no limit */
  double per;            /* the rate's window */
  double at;             /* the claim's time for the rate: now, or the latest claim's
                            time less per when that is later; its claims are recorded at it */
  int64_t recent;        /* jobs claim_next handed out in (at - per, at + per) */
} lease__queue_facts;

/*
** lease__claim_room: how many of max jobs claim_next may take from the
** queue q describes (*room), and the reason when none: LEASE_PAUSED,
** LEASE_LIMITED (no room left under a limit), or LEASE_GRANTED (then
** *room >= 1).
*/
int lease__claim_room(const lease__queue_facts *q, int max, int *room);

/* lease__gate_reason: the fence gate's reason: LEASE_GRANTED when its
** upsert stored the fence (stored 1), else LEASE_STALE_FENCE (a larger
** fence passed the gate before). */
int lease__gate_reason(int stored);

/*
** What a backend reads about a job whose attempt ended without a
** completion, for the rules to decide what follows (lease__after_fail,
** lease__after_expiry).  The options are fail's (lease_fail_opts); an
** expiry leaves them 0.
*/
typedef struct lease__fail_facts {
  int64_t attempt;       /* the attempts made, the one ending included (>= 0) */
  int64_t max_attempts;  /* the job's budget */
  double now;            /* when it failed, or when its expired lease was found */
  int no_attempt;        /* 1: the attempt is given back (not counted) */
  int has_run_at;        /* 1: the job may run again at run_at, not after the backoff */
  double run_at;
} lease__fail_facts;

/* What follows: the job's queue state and fail's status, the attempts to
** count as made from now on, when it may be handed out again, and when
** the queue ended it.  A backend stores these as they are. */
typedef struct lease__next {
  int qstate;            /* LEASE__Q_OPEN or LEASE__Q_DISCARDED */
  int status;            /* LEASE_STATUS_RETRYABLE or LEASE_STATUS_DISCARDED */
  int64_t attempt;       /* never below 0 */
  double run_at;         /* open: when claim_next may hand it out again; NaN when discarded */
  double finished_at;    /* discarded: now; NaN when open */
} lease__next;

/*
** lease__after_fail: what follows a failed attempt.  Given back
** (no_attempt): open, the attempt uncounted (never below 0), again at
** run_at or at once, whatever the budget.  Else on the last attempt
** (attempt >= max_attempts): discarded at now.  Else open, again at
** run_at or after lease_backoff(attempt).
*/
void lease__after_fail(const lease__fail_facts *f, lease__next *out);

/*
** lease__after_expiry: what follows a lease that expired unreported, found
** by the job's next claim (its error recorded by the backend): on the
** last attempt (attempt >= max_attempts) discarded at now, else open and
** claimable at once (run_at now), the attempt counted.  The options of f
** are ignored.  The PostgreSQL backend's claim statements make the same
** comparison in SQL (lpg_sql.h LPG_SQL_CLAIM, lpg_queue_sql.h
** LPG_Q_SQL_CLAIM_NEXT).
*/
void lease__after_expiry(const lease__fail_facts *f, lease__next *out);

/* lease__retry_reason: lease_retry's reason for the job f describes
** (found, done, qstate, live): missing; held when it is open, not done,
** and its lease runs; else LEASE_GRANTED (a done, discarded, cancelled or
** idle open job is reopened with a fresh budget). */
int lease__retry_reason(const lease__facts *f);

/*
** A storage backend: one function per operation, each called by the
** public function of the same name after the core checked the arguments
** (see lease.h for what each does and returns).  Each records its failures
** on db (lease__fail, lease__set_error) and returns the result code.
*/
struct lease__event;

typedef struct lease__backend {
  const char *name;
  /* The SQL text of shared statement `which` (lease_statements.h) as this
  ** backend runs it; NULL for a backend not built (lpg_none.c). */
  const char *(*statement)(lease__stmt which);
  /* Open db->path with db->opt; set db->conn.  On failure db->conn may be
  ** left NULL; close is called in any case. */
  int (*open)(lease_db *db);
  void (*close)(lease_db *db);
  int (*init)(lease_db *db);
  /* n >= 1 jobs, checked (lengths resolved, queue never NULL, key NULL
  ** or 1 to LEASE_KEY_MAX bytes, after entries checked, after_lens set),
  ** in one transaction; *inserted: how many were new (may be NULL).  A
  ** job's after naming no job, or a discarded or cancelled one, stores
  ** nothing: db->refused set (lease__refuse_dep), LEASE_OK; that check
  ** comes first.  Then a job whose key an unfinished job of its queue
  ** holds is not inserted: the holder's id is recorded (lease__duplicate),
  ** and the others go on. */
  int (*enqueue)(lease_db *db, const lease_new_job *jobs, int n, int *inserted);
  /* The jobs id was enqueued after, at now (lease_after); NULL: none kept. */
  int (*after)(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
               int *count);
  /* now finite, or NaN for no status (LEASE_STATUS_UNKNOWN). */
  int (*state)(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
               int *found);
  /* claim, renew, complete or release (w->op), each in its own transaction;
  ** *fence: claim's new fence (may be NULL for the others). */
  int (*write)(lease_db *db, const lease__write *w, int64_t *fence, int *reason);
  /* n completions by w->owner at w->now, one transaction; reasons has n slots. */
  int (*complete_many)(lease_db *db, const lease__write *w, const lease_result *items, int n,
                       int *reasons, int *stored);
  /* w: a claim whose queue is set.  *why: LEASE_GRANTED, or LEASE_PAUSED
  ** or LEASE_LIMITED as lease__claim_room decided (then *count is 0). */
  int (*claim_next)(lease_db *db, const lease__write *w, int max, lease_job *jobs, int *count,
                    int *why);
  /* f checked: which and status known, queue NULL or resolved, now not NaN. */
  int (*list)(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count);
  /* queue NULL for every queue; out zeroed. */
  int (*count)(lease_db *db, double now, const char *queue, size_t queue_len, lease_counts *out);
  int (*settings)(lease_db *db, lease_settings *out);
  /* The job queue's operator actions (lease.h, "The job queue").  A
  ** backend may leave these NULL: the core then fails with "not supported
  ** by the <name> backend" (errors reads none). */
  int (*errors)(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                int *count);
  /* wc: a complete; wn: a claim whose queue is set; both in one
  ** transaction (lease.h: lease_complete_claim_next); *why as above. */
  int (*complete_claim_next)(lease_db *db, const lease__write *wc, const lease__write *wn,
                             int max, lease_job *jobs, int *count, int *reason, int *why);
  /* wc: complete_many's w of the n items (n >= 0; reasons has n slots or
  ** is NULL); wn: a claim whose queue is set; both in one transaction
  ** (lease.h: lease_complete_many_claim_next); *why as above. */
  int (*complete_many_claim_next)(lease_db *db, const lease__write *wc,
                                  const lease_result *items, int n, int *reasons, int *stored,
                                  const lease__write *wn, int max, lease_job *jobs, int *count,
                                  int *why);
  /* Queue control (lease.h): set_queue writes queue's settings row: its
  ** paused flag (what 0) or its limits (what 1, l checked); queues reads
  ** every queue with jobs or settings at now.  NULL: not supported. */
  int (*set_queue)(lease_db *db, const char *queue, size_t queue_len, int what, int paused,
                   const lease_queue_limits *l);
  int (*queues)(lease_db *db, double now, lease_queue_info *out, int max, int *count);
  /* w: a complete-like write (op LEASE__COMPLETE) with message; opts never NULL. */
  int (*fail)(lease_db *db, const lease__write *w, const lease_fail_opts *opts, int *status,
              double *run_at, int *reason);
  /* retry: LEASE_DUPLICATE (holder recorded, lease__duplicate) when the
  ** job's key is held by another unfinished job of its queue. */
  int (*retry)(lease_db *db, const char *id, size_t id_len, double now, int *reason);
  int (*cancel)(lease_db *db, const char *id, size_t id_len, double now, int *reason);
  int (*prune)(lease_db *db, double before, const char *queue, size_t queue_len, int status,
               int64_t *deleted);
  /* 1 when another connection to db->path would see another database. */
  int (*is_private)(const lease_db *db);
  /* The longest string (id, owner, result) the connection stores, bytes. */
  size_t (*max_length)(const lease_db *db);
  /* Fenced side effects (src/core/lease_tx.c).  A backend without them leaves
  ** these NULL and the core returns "not supported by the <name> backend".
  ** with_lease: run the clock step at tx->w.now (db->clock_now) as every
  ** write does (before or inside tx's transaction), check tx->w's lease
  ** inside it as complete does (*reason), call tx->fn only when granted,
  ** then commit, or roll back when fn fails.  tx_run: one statement of the caller's inside tx, rows
  ** to row (may be NULL).  tx_write: renew or complete of tx->w's job in
  ** tx.  fence_gate: the gate, in its own transaction or in tx (NULL). */
  int (*with_lease)(lease_db *db, lease_tx *tx, int *reason);
  int (*tx_run)(lease_tx *tx, const char *sql, const lease_value *params, int n,
                lease_row_fn *row, void *ctx, int64_t *changes);
  int (*tx_write)(lease_tx *tx, const lease__write *w, int *reason);
  int (*fence_gate)(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                    int64_t fence, int *reason);
  /* Schedules (lease.h, "Schedules"; src/core/lease_schedule.c).  A backend
  ** may leave these NULL: the writes then fail as not supported, and
  ** schedules reads none.  schedule: s checked, lengths resolved, queue
  ** never NULL, created_at and next_at set; it inserts or replaces the row.
  ** tick: read the schedules with next_at <= now (at most max, in next_at
  ** order; *more = 1 when max were read), then in one write transaction,
  ** for each, lease__schedule_due's tick and next, an UPDATE guarded by
  ** next_at still being the value read, and only when it moved the row
  ** the job's enqueue; ids of the jobs inserted into ids (strings in
  ** db->buf). */
  int (*schedule)(lease_db *db, const lease_schedule_spec *s);
  int (*unschedule)(lease_db *db, const char *name, size_t name_len, int *found);
  int (*schedules)(lease_db *db, const char *after, size_t after_len, int max,
                   lease_schedule_spec *out, int *count);
  int (*tick)(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
              int *more);
  /* The device and inode of the file the connection holds (lease_file_id). */
  int (*file_id)(lease_db *db, uint64_t *dev, uint64_t *ino);
  /* The database's clock, seconds since the epoch, into *out. */
  int (*server_now)(lease_db *db, double *out);
  /* Waiting for jobs (lease_wait, src/core/lease_queue.c).  A backend may
  ** leave these NULL: lease_wait then sleeps until the due time or the
  ** timeout without a signal.  wake: tell the database's waiters that a
  ** job of queue (NULL: of any queue) may have become claimable or due
  ** sooner; called after the write committed, never fails (a lost signal
  ** costs a waiter its timeout).  wait_mark: what the waiter has seen so
  ** far, read before it looks at the due time (so a signal after the look
  ** is never missed).  due: seconds from the database's clock until the
  ** earliest job of queue becomes claimable (<= 0: one is; +inf: none),
  ** and, while its concurrency or rate limit leaves no room, no sooner
  ** than the limit may leave some (a live lease's end, a claim leaving
  ** the rate's window).
  ** wait_signal: sleep at most seconds (> 0) or until a signal for queue
  ** (or any queue) after mark; *signalled 1 when one came. */
  void (*wake)(lease_db *db, const char *queue, size_t queue_len);
  int (*wait_mark)(lease_db *db, uint64_t *mark);
  int (*due)(lease_db *db, const char *queue, size_t queue_len, double *delay);
  int (*wait_signal)(lease_db *db, const char *queue, size_t queue_len, uint64_t mark,
                     double seconds, int *signalled);
  /* The events ledger (lease_events; src/core/lease_events.c).  event:
  ** insert e into lease_events inside the transaction of the write
  ** running (e->at NaN: the engine's clock), its seq into *seq.
  ** event_prune: delete the events with seq <= upto, and those before the
  ** first whose at >= cutoff (cutoff -HUGE_VAL: none by age).  events:
  ** read as lease_events does (f checked, max >= 1).  NULL: no ledger. */
  int (*event)(lease_db *db, const struct lease__event *e, int64_t *seq);
  int (*event_prune)(lease_db *db, int64_t upto, double cutoff);
  int (*events)(lease_db *db, const lease_event_filter *f, int max, lease_event *out,
                int *count);
} lease__backend;

/* lease__wake: after a write of db committed that may make a job of queue
** (NULL: of any queue) claimable or due sooner, signal the waiters
** (lease_wait) through db's backend.  src/core/lease_queue.c. */
void lease__wake(lease_db *db, const char *queue, size_t queue_len);

/* lease__claimed_from: after a claim_next of db on queue succeeded, keep
** the queue as db's limited queue when the backend found limits on it
** (db->claim_limited; a second such queue sets db->limited_several), or
** forget it when it was that queue, the only one, and the limits are
** gone.  src/core/lease_queue.c. */
void lease__claimed_from(lease_db *db, const char *queue, size_t queue_len);

/* lease__wake_limited: after a write of db committed that ended a lease
** (complete, complete_many, a fail that discarded, a with_lease whose tx
** completed, the completes of complete_claim_next and
** complete_many_claim_next unless their claim took as many jobs of db's
** one limited queue), signal the waiters of db's limited queue, when it
** has one (of every queue when it had several): the slot the lease held
** under a concurrency limit is free.  A lease ended on another handle
** than the one that claimed it wakes nobody: its waiters look again at
** the earliest end of the queue's leases or their timeout.
** src/core/lease_queue.c. */
void lease__wake_limited(lease_db *db);

/*
** One event for the ledger (lease.h: lease_event), as a backend stores it:
** op a LEASE_EV_*, reason LEASE_GRANTED or the refusal's (its outcome);
** strings NULL for SQL NULL; at NaN for the engine's clock.
*/
typedef struct lease__event {
  int op;
  const char *id;     size_t id_len;
  const char *queue;  size_t queue_len;
  const char *owner;  size_t owner_len;
  int has_fence;
  int64_t fence;
  double at;
  int reason;
} lease__event;

/*
** lease__event_add: record e in the ledger inside the transaction of the write
** running on db, when db records events (lease__events_on), then prune
** the ledger when its seq comes to a multiple of the prune step (a tenth
** of events_keep, 1 to LEASE__EVENTS_STEP): the events before the newest
** events_keep - step + 1 deleted by one seq range, so the ledger never
** holds more than events_keep; with events_max_age also those older than
** e->at - events_max_age.  LEASE_OK, or the backend's failure recorded
** (the caller's transaction then rolls back with the operation).
*/
#define LEASE__EVENTS_STEP 1000
int lease__event_add(lease_db *db, const lease__event *e);

/* lease__events_on: 1 when writes on db record events: events_keep > 0,
** the backend has a ledger, the database's schema has the EVENTS step. */
int lease__events_on(const lease_db *db);

/* lease__event_write: lease__event_add of guarded write w (op LEASE__CLAIM
** ... or fail) as op (LEASE_EV_*), its id, owner, now, fence (a claim's
** new fence when granted), and reason. */
int lease__event_write(lease_db *db, int op, const lease__write *w, int64_t fence, int reason);

/* lease__event_id: lease__event_add of op on job id (no owner, no fence) at
** `at` (NaN: the engine's clock) with reason. */
int lease__event_id(lease_db *db, int op, const char *id, size_t id_len, double at, int reason);

/* A with_lease transaction (lease.h: lease_tx), on the caller's stack for
** the length of lease_with_lease. */
struct lease_tx {
  lease_db *db;
  lease__write w;      /* the lease held: id, owner, fence, now (op LEASE__COMPLETE) */
  lease_tx_fn *fn;     /* the caller's callback and its argument */
  void *ctx;
  int open;            /* 1 while fn runs: only then may tx be used */
  pthread_t thread;    /* the thread running lease_with_lease */
  int ended;           /* the backend's code when SQLite ended the transaction
                          under fn (an I/O error...), else 0 */
  int completed;       /* 1 once lease_tx_complete stored the completion */
};

#define LEASE__ERRMSG_MAX 512

/* A handle: what the core keeps, and the backend's connection. */
struct lease_db {
  const lease__backend *be;         /* the storage engine */
  void *conn;                       /* the backend's connection; NULL once closed */
  char *path;                       /* as given to lease_open (may hold a password) */
  char *name;                       /* path without secrets, for messages (lease_name);
                                       db->path itself on SQLite */
  char *secrets;                    /* the secrets in path, each NUL-terminated, an empty
                                       string last; scrubbed from every message; or NULL */
  lease_options opt;                /* as opened, defaults applied */
  int rc;                           /* last result code */
  int xrc;                          /* the backend's code behind rc, or 0 */
  char errmsg[LEASE__ERRMSG_MAX];   /* message of the last failure */
  char *buf;                        /* storage for row strings and ids handed out */
  size_t bufcap;
  lease_tx *tx;                     /* the with_lease running on db, else NULL */
  atomic_int busy;                  /* 1 while a public call runs on db (LEASE__HOLD) */
  int schema_version;               /* the database's, as this handle opened it (lease_schema.h) */
  double clock_now;                 /* the now of the write running, for its backend's
                                       clock step (lease__clock); NAN when it has none */
  double clock_mark;                /* the database's clock mark as last read (NAN: none
                                       read, or the database has none) */
  double clock_lo, clock_hi;        /* the least and greatest time the write running
                                       takes besides its now (lease__clock_also), for
                                       its clock step to check; NAN when it has none */
  const char *clock_what;           /* the name of that time's argument ("run_at") */
  int clock_read;                   /* 1: the write running reads the mark in its clock
                                       step whatever times it takes (prune, which
                                       bounds the held leases by it:
                                       lease__prune_held) */
  char *dup;                        /* the id lease_duplicate_id gives (NUL-terminated) */
  size_t dup_len, dup_cap;
  int has_dup;                      /* 1 when the call running or last run found a key
                                       held (lease__duplicate); cleared as each call starts */
  int refused, refused_job, refused_after;   /* the last enqueue's refused dependency
                                       (lease_enqueue_refused): reason (0: none),
                                       the job's and the id's positions */
  int claim_limited;                /* set by a backend's claim_next: the queue it read has
                                       a concurrency or rate limit (lease__claimed_from) */
  char limited_queue[LEASE_QUEUE_MAX];   /* the last queue this handle's claim_next found
                                       limits on; its leases' ends wake that queue's
                                       waiters (lease__wake_limited) */
  size_t limited_queue_len;         /* 0: none */
  int limited_several;              /* 1 once claim_next found limits on two queues: its
                                       leases' ends then wake the waiters of every queue */
};

/* lease__duplicate: record on db that the job id holds the key the call
** running wanted (lease_duplicate_id then gives it).  LEASE_OK, or
** LEASE_NOMEM recorded. */
int lease__duplicate(lease_db *db, const char *id, size_t id_len);

/* lease__dep_reason: whether a job may be listed in another's after, from
** whether it was found and its queue state as read: LEASE_GRANTED, or the
** refusal LEASE_MISSING, LEASE_DISCARDED or LEASE_CANCELLED. */
int lease__dep_reason(int found, int qstate);

/* lease__refuse_dep: inside a backend's enqueue, before it writes: record
** that job i's after[k] refused the enqueue for reason (lease__dep_reason
** of found and qstate).  Returns 1 when refused (the backend then stores
** nothing), 0 for a state that does not refuse. */
int lease__refuse_dep(lease_db *db, int i, int k, int found, int qstate);

/* lease__dep_in_batch: the index m < i of the entry of the same enqueue
** whose id is jobs[i].after[k] (it is enqueued before jobs[i]), else -1.
** A listed id that no job has yet may be such an entry: it is not missing.
** What jobs[i] then waits for is what that entry became: the job it
** inserted, the job of that id already there (checked as any listed job),
** or, when it was skipped because its key is held, the key's holder (the
** job lease_enqueue's caller is told of: SQLite's Q_DEP_ADD finds it by the
** entry's queue and key, PostgreSQL keeps the holder its enqueue read). */
int lease__dep_in_batch(const lease_new_job *jobs, int i, int k);

/*
** The clock mark: the highest `now` the database has seen, coarsely (key
** 'clock_mark' of the table lease_meta).  A write carrying a now reads it
** inside its transaction (lease__clock); reads are checked against the
** value last read (lease__clock_cached).  A now and a mark both at least
** LEASE__CLOCK_FLOOR whose ratio is at least the handle's clock_factor, in
** either direction, is refused: another time unit (seconds against
** milliseconds).  The mark moves up to now only when now exceeds it by
** more than LEASE__CLOCK_STEP times its size (at least 1), so most writes
** only read it.
*/
#define LEASE__CLOCK_FLOOR 1e6
#define LEASE__CLOCK_STEP 1e-7

/*
** lease__clock: the clock step of the write running on db, inside its
** transaction, once the backend read the mark (NAN when the database has
** none).  Keeps mark in db->clock_mark; LEASE_OK with *move set when the
** backend is to store db->clock_now as the new mark (it never is when
** db->clock_now is NAN), or LEASE_MISUSE recorded when the now, or a time
** noted by lease__clock_also, is off from the mark by the clock factor.
*/
int lease__clock(lease_db *db, double mark, int *move);

/* lease__clock_also: note t (finite, at least LEASE__CLOCK_FLOOR: else
** ignored; nothing either when the handle's check is off), a time the
** write running takes besides its now, argument `what` (a string literal:
** "run_at", "before"), for its clock step to check against the mark as it
** checks now, by the factor LEASE__CLOCK_ALSO_FACTOR when the handle's is
** smaller: a time in another unit is refused, a date far ahead (up to the
** year 9999) is not; it never moves the mark.  lease__clock_due: 1 when the
** write running has a clock step: the database has a clock mark (version,
** the backend's schema version, past LEASE__STEP_CLOCK), the handle may
** write, and the call brought a now, or asked for the mark (db->clock_read),
** or brought such a time that the mark db last read does not settle (there
** is none, or the time is off from it, so that the step reads the mark
** again). */
#define LEASE__CLOCK_ALSO_FACTOR 500.0
void lease__clock_also(lease_db *db, const char *what, double t);
int lease__clock_due(const lease_db *db, int version);

/* lease__clock_settled: 1 when lease__clock, given the mark db last read
** (db->clock_mark), would neither refuse db->clock_now nor move the mark
** (always when db->clock_now is NAN and no time of lease__clock_also is
** off from it); 0 when there is none yet.  A backend that confirms that
** mark inside the write's transaction may skip reading it first.  Records
** nothing. */
int lease__clock_settled(const lease_db *db);

/* lease__random: a number in [0, 1) from a per-thread xorshift64*
** generator seeded from the clock (lease_queue.c), for jitters and pauses
** that must not line up across threads and processes. */
double lease__random(void);

/* lease__clear_error: forget the failure last recorded on db (a backend
** whose first try ended in a failure it expected, and that tries again
** another way). */
void lease__clear_error(lease_db *db);

/* lease__clock_cached: refuse (LEASE_MISUSE, recorded) a now that is off
** from the mark db last read; LEASE_OK when it is not, or when either is
** unknown or small.  For calls that do not write. */
int lease__clock_cached(lease_db *db, double now);

/* lease__clock_in_tx: refuse (LEASE_MISUSE, recorded) the now of a tx
** call inside a with_lease whose clock step ran at `stepped` when it is off
** from the mark that step left (the mark it read, or stepped when that was
** none or lower).  LEASE_OK otherwise. */
int lease__clock_in_tx(lease_db *db, double now, double stepped);

/*
** lease__hold: take db's busy flag for a public call; db when it was free,
** NULL when db is NULL or another call holds it (another thread, as lease.h
** forbids; or the thread inside its own with_lease callback, which
** lease_with_lease lets go of the flag for).  lease__unhold: the cleanup
** of LEASE__HOLD's variable, letting go of the flag it took.
*/
lease_db *lease__hold(lease_db *db);
void lease__unhold(lease_db **held);

/* LEASE__HOLD(db): the first line of every public function on a handle.
** Takes db's busy flag until the function returns (whatever return it
** takes: the variable's cleanup lets go of it), or returns LEASE_MISUSE at
** once, touching nothing of db (its error state belongs to the call
** running), when another thread's call holds it. */
#define LEASE__HOLD(db)                                                         \
  lease_db *lease__held_ __attribute__((cleanup(lease__unhold))) = lease__hold(db); \
  if ((db) && !lease__held_) return LEASE_MISUSE

/* lease__fail: record a failure (rc, printf-style message) on db; the
** backend's code is 0.  Returns rc. */
int lease__fail(lease_db *db, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
** lease__set_error: record a failure on db as if the last call had failed
** with result code rc, the backend's code xrc (or 0) and message msg.
** Returns rc.  Also carries an error from another handle (a claim_many
** worker's) back to the caller's handle.
*/
int lease__set_error(lease_db *db, int rc, int xrc, const char *msg);

/* Resolve LEASE_NTS in *len and refuse a NULL or empty byte string, or one
** longer than the backend can store (LEASE_MISUSE, the message naming it by
** what).  Every id and owner goes through it before a backend sees it. */
int lease__check_bytes(lease_db *db, const char *what, const char *s, size_t *len);

/* lease_complete's argument checks: *w filled as the complete of id by
** owner at now with fence and result; LEASE_OK or the failure recorded. */
int lease__check_complete(lease_db *db, lease__write *w, const char *id, size_t id_len,
                          const char *owner, size_t owner_len, int64_t fence, double now,
                          const char *result, size_t result_len);

/* lease_complete_many's argument checks: *w filled as the complete by
** owner at now (each item's id, fence and result its own), the n items
** checked, *stored 0 (stored may be NULL); LEASE_OK or the failure
** recorded. */
int lease__check_complete_many(lease_db *db, lease__write *w, const char *owner,
                               size_t owner_len, double now, const lease_result *items, int n,
                               int *stored);

/* lease__check_new_job: lease_enqueue's checks of one job (errors
** named with prefix, as "job 3: "), into *out with lengths resolved and
** the queue's default set (out may be job). */
int lease__check_new_job(lease_db *db, const char *prefix, const lease_new_job *job,
                         lease_new_job *out);

/*
** Schedules (src/core/lease_schedule.c).  s: a schedule as stored (every,
** or cron with cron_len; next_at).
** lease__schedule_next: the first tick of s strictly after t into *next.
** lease__schedule_due: for s due at now (next_at <= now), the tick to
** enqueue (its latest tick <= now) and the next (the first tick > now).
** Both return 0, or -1 when s's cron does not parse or matches no time
** within ten years, or its every is no positive finite number;
** lease__schedule_due returns -2 when now is out of the range s's ticks
** are read in (past the years a cron reads, or so far from 0 for its every
** that the ticks around it are not distinct numbers).
** lease__schedule_due_failed: record on db lease__schedule_due's failure e
** (-1 or -2) for s at now: LEASE_MISUSE naming now for -2 (the caller's
** now is at fault), LEASE_MISMATCH for -1 (the stored schedule is).
** Returns the recorded code.
** lease__schedule_job_id: the job id of s's tick, "<name>@<tick>" (the
** name's bytes as they are, zero bytes included), into out (n bytes), as
** snprintf (the length it needs; at most n - 1 bytes and a terminating
** zero written).
*/
int lease__schedule_next(const lease_schedule_spec *s, double t, double *next);
int lease__schedule_due(const lease_schedule_spec *s, double now, double *tick, double *next);
int lease__schedule_due_failed(lease_db *db, const lease_schedule_spec *s, double now, int e);
int lease__schedule_job_id(const lease_schedule_spec *s, double tick, char *out, size_t n);

/* lease__reserve: make room for n bytes in db->buf.  LEASE_OK or LEASE_NOMEM. */
int lease__reserve(lease_db *db, size_t n);

/*
** lease__begin: start a call on db as every public function does: clear
** the error state, then refuse a closed handle.  Returns LEASE_OK, or
** LEASE_MISUSE (db NULL, or closed: the message says so).
*/
int lease__begin(lease_db *db);

/*
** lease__options: the options db was opened with (after defaults were
** applied), so another connection can be opened the same way.
*/
void lease__options(const lease_db *db, lease_options *out);

/*
** lease__private: 1 when db's database is private to its connection (an
** in-memory or temporary database, however it was named: ":memory:",
** "file::memory:", "file:x?mode=memory", ""), so another connection
** opened on the same path would see a different, empty one.  Else 0.
*/
int lease__private(const lease_db *db);

/* The SQLite backend (src/sqlite/lsq_ops.c). */
extern const lease__backend lease__sqlite;

/* The PostgreSQL backend (src/pg/lpg.c; src/pg/lpg_none.c when built
** without libpq: its open fails with LEASE_CANTOPEN). */
extern const lease__backend lease__pg;

/* lease__pg_path: 1 when path is a PostgreSQL connection string
** ("postgresql://...", "postgres://...", or libpq's keyword form such as
** "host=... dbname=..."), else 0 (an SQLite path).  src/pg/lpg_path.c. */
int lease__pg_path(const char *path);

/* lease__pg_raw_secrets: append to out (cap bytes, *used of them taken,
** out[*used] the list's closing empty string) the secret values of
** PostgreSQL connection string path as they are written in it: a URI's
** password and the values of the keywords password, sslpassword and
** passfile (URI query or keyword form), quotes taken off, escapes and
** percent-encoding left in.  Read without libpq, so a string libpq cannot
** parse is still scrubbed.  src/pg/lpg_path.c. */
void lease__pg_raw_secrets(const char *path, char *out, size_t cap, size_t *used);

/* lease__secret_add: append s[0..n) to the secrets list out (as above);
** an empty s, or one with no room left, is not added. */
void lease__secret_add(char *out, size_t cap, size_t *used, const char *s, size_t n);

/* lease__pg_redact: set db->name (the server by host or socket, port,
** database and user; never a secret) and db->secrets from db->path, a
** PostgreSQL connection string.  LEASE_OK or LEASE_NOMEM.  src/pg/lpg.c
** (libpq's parser) or src/pg/lpg_none.c. */
int lease__pg_redact(lease_db *db);

#endif
