/*
** lease.h: the public C API of the lease engine.
**
** A job carries an owner, a lease deadline ("until") and a fencing token
** ("fence") that only ever grows.  Every write checks all three at the
** moment it is stored, so a worker that stalled, lost its lease and came
** back late can never overwrite the result of the worker that took over.
** The contract is docs/contract/CONTRACT.md (steps 1-8); each function below
** names the step it implements.
**
** Conventions (SQLite's):
**   - every function returns a result code, LEASE_OK on success;
**   - protocol outcomes are not errors: a refused claim returns LEASE_OK and
**     reports why through a lease_reason out-parameter;
**   - on failure the handle keeps the message (lease_errmsg) and the code
**     (lease_errcode) until the next call on it; there is no global state;
**   - strings are byte strings given as (pointer, length): they may hold zero
**     bytes.  Pass LEASE_NTS as the length for a NUL-terminated string.
**   - time ("now", "ttl", "until") is a double in the caller's unit; the
**     engine never reads a clock.
**   - a handle is used by one thread at a time; open one handle per thread.
**     A call on a handle while another thread's call on it runs returns
**     LEASE_MISUSE at once (a flag each call takes and lets go of, an
**     atomic exchange), writing nothing: not the caller's out-parameters,
**     nor the handle's error state, which belongs to the call running, so
**     lease_errmsg tells nothing of it.  A thread inside lease_with_lease's
**     callback lets other threads' calls in only to be refused the same
**     way.  lease_close is not covered: closing a handle while another
**     thread uses it is undefined, as is any use after lease_close.
*/
#ifndef LEASE_H
#define LEASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LEASE_API __attribute__((visibility("default")))
#else
#define LEASE_API
#endif

#define LEASE_VERSION "0.1.0"

/* Length value meaning "the string ends at its first zero byte". */
#define LEASE_NTS ((size_t)-1)

/* The longest id, owner or result (bytes): SQLite's default SQLITE_MAX_LENGTH.
** A connection whose SQLite has a lower limit refuses longer ones itself. */
#define LEASE_MAX_LENGTH 1000000000

/* The largest fence the engine hands out; a claim past it is LEASE_RANGE. */
#define LEASE_FENCE_MAX INT64_MAX

typedef struct lease_db lease_db;

/*
** Result codes, one list: LEASE_RC_MAP(XX) calls XX(NAME, "word") for each
** in order, from LEASE_OK (0) up (libuv's UV_ERRNO_MAP idiom).  The word
** is stable and lower-case (lease_errname); the Lua binding puts it into
** its error messages.  Most mirror SQLite's primary result code of the same
** name; LEASE_SCHEMA, LEASE_RANGE and LEASE_MISMATCH are the engine's own.
**   OK          the call ran; see its outcome
**   ERROR       SQL error or other failure
**   MISUSE      an invalid argument; nothing was touched
**   BUSY        a lock stayed taken past the busy timeout; on PostgreSQL
**               also a statement timeout, or a deadlock or serialization
**               failure that ended each of an operation's 8 runs (the
**               engine runs such an operation again: nothing of it stored)
**   LOCKED      a conflict inside this process (shared cache)
**   READONLY    the database cannot be written
**   NOTADB      the file is not an SQLite database
**   CORRUPT     the database file is malformed or cut short
**   FULL        a write did not fit: disk full (ENOSPC), quota (EDQUOT),
**               file-size limit (EFBIG), or the database's own size limits
**               (SQLite's; PostgreSQL's program_limit_exceeded, such as an
**               id over an index entry's 2704 bytes)
**   IOERR       the operating system reported another I/O error
**   CANTOPEN    the file could not be opened, or is not a regular file
**   NOMEM       out of memory
**   PERM        access permission denied
**   INTERRUPT   the operation was interrupted
**   CONSTRAINT  a constraint set by another client failed
**   PROTOCOL    SQLite's locking protocol failed
**   SCHEMA      the jobs table differs from the contract's
**   RANGE       the job's fence cannot grow any further (lease_cron_next:
**               a time outside the calendar's years)
**   MISMATCH    another client stored a value of the wrong type (a fence
**               not a non-negative integer, an until not a number), or
**               changed a job within a call that writes it (a trigger
**               another client defined)
*/
#define LEASE_RC_MAP(XX)                                                  \
  XX(OK, "ok")                                                            \
  XX(ERROR, "error")                                                      \
  XX(MISUSE, "misuse")                                                    \
  XX(BUSY, "busy")                                                        \
  XX(LOCKED, "locked")                                                    \
  XX(READONLY, "readonly")                                                \
  XX(NOTADB, "notadb")                                                    \
  XX(CORRUPT, "corrupt")                                                  \
  XX(FULL, "full")                                                        \
  XX(IOERR, "ioerr")                                                      \
  XX(CANTOPEN, "cantopen")                                                \
  XX(NOMEM, "nomem")                                                      \
  XX(PERM, "perm")                                                        \
  XX(INTERRUPT, "interrupt")                                              \
  XX(CONSTRAINT, "constraint")                                            \
  XX(PROTOCOL, "protocol")                                                \
  XX(SCHEMA, "schema")                                                    \
  XX(RANGE, "range")                                                      \
  XX(MISMATCH, "mismatch")

typedef enum lease_rc {
#define LEASE_RC_ENUM_(name, word) LEASE_##name,
  LEASE_RC_MAP(LEASE_RC_ENUM_)
#undef LEASE_RC_ENUM_
} lease_rc;

/*
** Why an operation did not do what was asked, one list as above:
** LEASE_REASON_MAP(XX) calls XX(NAME, "word").  LEASE_GRANTED (0) means it
** did.  The words (lease_reason_name) are CONTRACT.md's Lua reason words.
**   GRANTED      "ok"
**   MISSING      no job with that id
**   EXISTS       enqueue found the id already there
**   DONE         the job is completed
**   HELD         another lease is still valid (until > now)
**   NOT_OWNER    the job is not held by this owner
**   STALE_FENCE  same owner, but an older generation
**   EXPIRED      owner and fence match, but until <= now
**   EMPTY        no job is ready (claim_next)
**   DISCARDED    the job's attempts are used up (the queue ended it)
**   CANCELLED    the job was cancelled (lease_cancel)
**   PAUSED       the queue is paused (lease_pause): claim_next hands out nothing
**   LIMITED      the queue is at its concurrency or rate limit (lease_limit)
**   WAITING      the job waits for the jobs it was enqueued after (lease_new_job's
**                after): no claim takes it before they are completed
**   DUPLICATE    another unfinished job of the queue holds the job's unique
**                key (lease_enqueue, lease_retry; lease_duplicate_id names it)
*/
#define LEASE_REASON_MAP(XX)                                              \
  XX(GRANTED, "ok")                                                       \
  XX(MISSING, "missing")                                                  \
  XX(EXISTS, "exists")                                                    \
  XX(DONE, "done")                                                        \
  XX(HELD, "held")                                                        \
  XX(NOT_OWNER, "not_owner")                                              \
  XX(STALE_FENCE, "stale_fence")                                          \
  XX(EXPIRED, "expired")                                                  \
  XX(EMPTY, "empty")                                                      \
  XX(DISCARDED, "discarded")                                              \
  XX(CANCELLED, "cancelled")                                              \
  XX(PAUSED, "paused")                                                    \
  XX(LIMITED, "limited")                                                  \
  XX(WAITING, "waiting")                                                  \
  XX(DUPLICATE, "duplicate")

typedef enum lease_reason {
#define LEASE_REASON_ENUM_(name, word) LEASE_##name,
  LEASE_REASON_MAP(LEASE_REASON_ENUM_)
#undef LEASE_REASON_ENUM_
} lease_reason;

/* synchronous settings: FULL is the default (see lease_options). */
enum { LEASE_SYNC_FULL = 0, LEASE_SYNC_NORMAL = 1 };

/* Open flags. */
enum {
  LEASE_OPEN_READONLY = 1,  /* open read-only: reads work, writes fail LEASE_READONLY */
  LEASE_OPEN_NOCREATE = 2,  /* fail with LEASE_CANTOPEN instead of creating the file */
  LEASE_OPEN_NO_GROUP_COMMIT = 4  /* every write in a transaction of its own: no group commit
                                     (by default, handles of this process that write the
                                     same file share commits; see docs/internals.md) */
};

/*
** Options for lease_open.  Fill with lease_options_default, then change
** fields.  A NULL options pointer means the defaults.
*/
typedef struct lease_options {
  int busy_timeout_ms;  /* milliseconds to wait for the write lock; default 10000; 0 = fail at once */
  int synchronous;      /* LEASE_SYNC_FULL (default) or LEASE_SYNC_NORMAL: NORMAL is faster, but in WAL
                           mode a committed claim may roll back after power loss, so the same fence
                           could be handed out twice */
  int flags;            /* LEASE_OPEN_* bits; default 0 (read-write, create) */
  double clock_factor;  /* the clock check: a call whose now is off by this factor or more
                           (either way) from the database's clock mark, the highest now it
                           has seen, fails with LEASE_MISUSE and changes nothing, as when
                           one caller counts seconds and another milliseconds; so does a
                           run_at or prune's before off by this factor or 500, whichever
                           is larger (a date as far as 9999-12-31 passes).  Compared
                           only when both are at least 1e6 (small clocks are never
                           refused).  Writes read the mark inside their transaction (a
                           run_at or before alone is judged by the mark this handle last
                           read when that settles it); reads (state, lists, counts)
                           compare with the mark this handle last read.  Default
                           LEASE_CLOCK_FACTOR; 0 turns the check off; else a finite
                           number > 1.  The mark is kept whatever this is */
  int64_t events_keep;  /* the events ledger (lease_events): 0 (default): this handle's
                           writes record no event; else record them and keep the newest
                           events_keep (LEASE_EVENTS_KEEP is the binding's default when
                           turned on).  Off by default: it costs a batch of jobs about a
                           sixth of its throughput (docs/benchmarks.md) */
  double events_max_age;  /* also drop events whose at is more than this before the now of
                           the write that prunes (caller's unit); 0 (default): no age bound;
                           else finite and > 0 */
} lease_options;

/* The events kept when the ledger is turned on without a bound (Lua's
** events = true). */
#define LEASE_EVENTS_KEEP 100000

/* The default clock_factor of lease_options: a ratio of 100 between now
** and the mark, far beyond any drift of clocks in one unit and well short
** of a unit's factor (1000). */
#define LEASE_CLOCK_FACTOR 100.0

/*
** One job as stored.  The strings point into memory owned by the handle:
** valid until the next call on the same handle.  owner and result are NULL
** when the column is NULL.
*/
typedef struct lease_row {
  const char *id;      size_t id_len;
  const char *owner;   size_t owner_len;
  double until;        /* lease deadline, caller's time unit; 0 when never claimed or released */
  int64_t fence;       /* the last fencing token handed out; 0 when never claimed */
  const char *result;  size_t result_len;
  int done;            /* 1 when completed, else 0 */
  const char *blocked; /* NULL, or why this job (not done) can never be handed out:
                          another client stored an id, fence or until the engine
                          cannot honour (then until may be NaN: not a number) */
  /* The job-queue fields (see "The job queue" below).  A job another
  ** client inserted has the defaults. */
  const char *payload; size_t payload_len;  /* NULL when none */
  const char *queue;   size_t queue_len;    /* "default" unless enqueued elsewhere */
  int64_t priority;    /* smaller runs first */
  double run_at;       /* not claimed by claim_next before it; NaN when claimable at once */
  int64_t attempt;     /* claims since enqueue or the last retry */
  int64_t max_attempts;
  double finished_at;  /* when it was completed, discarded or cancelled; NaN when not */
  int status;          /* LEASE_STATUS_*, at the now of the read (UNKNOWN for a NaN now) */
  int64_t seq;         /* enqueue order */
  int64_t result_size; /* bytes of result, 0 when NULL (set whether loaded or not) */
  double timeout;      /* seconds a handler may run on the job (the worker pool stops it
                          then: lease.pool); 0 when it has none.  Read by lease_state only
                          (0 in lease_list's rows) */
  const char *key;     size_t key_len;      /* its unique key (lease_new_job); NULL when none */
} lease_row;

/* A handle's settings as the database reports them (lease_read_settings). */
typedef struct lease_settings {
  char journal_mode[16];  /* "wal" normally; "memory" for ":memory:" */
  int synchronous;        /* SQLite's PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA */
  int busy_timeout_ms;    /* milliseconds */
  int schema_version;     /* the database's schema version as this handle opened it: the
                             engine's (lease_schema.h) after a writable open, which brings
                             an older database up to it; an older one on a read-only handle */
} lease_settings;

/* One job handed out by lease_claim_next.  id points into memory owned by
** the handle: valid until the next call on the same handle. */
typedef struct lease_job {
  const char *id;  size_t id_len;
  int64_t fence;   /* the new fence of this job */
  /* The job-queue fields, as in lease_row; strings live as id does. */
  const char *payload; size_t payload_len;   /* NULL when none */
  const char *queue;   size_t queue_len;
  int64_t priority, attempt, max_attempts;  /* attempt counts this claim */
  double timeout;  /* seconds a handler may run on it (lease_new_job.timeout); 0: none */
} lease_job;

/* Which jobs lease_list looks at (lease_filter.which), by the contract's
** columns; lease_count counts each of them. */
enum {
  LEASE_LIST_ALL = 0,   /* every job */
  LEASE_LIST_READY,     /* not done, until <= now: claimable */
  LEASE_LIST_HELD,      /* not done, until > now: under a lease */
  LEASE_LIST_DONE,      /* completed */
  LEASE_LIST_BLOCKED    /* not done, but never claimable: see lease_row.blocked */
};

/* Job counts by state at a given now (lease_count). */
typedef struct lease_counts {
  int64_t total, ready, held, done, blocked;   /* total = ready + held + done + blocked */
  /* By status: they add up to total too. */
  int64_t available, scheduled, running, retryable, completed, discarded, cancelled;
  int64_t waiting;   /* by status too: waiting for the jobs it runs after */
} lease_counts;

/* Argument positions reported by lease_check_time. */
enum { LEASE_ARG_NOW = 1, LEASE_ARG_TTL = 2 };

/*
** lease_options_default: fill *opt with the defaults (busy timeout 10000 ms,
** synchronous FULL, read-write, create).  Returns nothing; never fails.
*/
LEASE_API void lease_options_default(lease_options *opt);

/*
** lease_open: open (creating if allowed) the database file at path, set WAL
** journal mode, synchronous and the busy timeout, check that an existing
** jobs table has the contract's columns, and create the table when it is
** missing (contract step 1; never re-creates or alters an existing one).
**   path: file name, passed to SQLite as is (":memory:" works per handle).
**   opt:  options, or NULL for the defaults.
**   out:  receives the handle.  As with sqlite3_open, on failure *out is
**         still a handle carrying the error (read lease_errmsg) unless
**         memory ran out (then NULL); always lease_close it.
** Returns LEASE_OK, LEASE_MISUSE (NULL path or out, bad options),
** LEASE_CANTOPEN (also for a directory, a FIFO, a device or a file with a
** second hard link), LEASE_NOTADB,
** LEASE_CORRUPT (also a database cut short: shorter than its header, or
** not a whole number of pages, with no -wal to complete it), LEASE_SCHEMA
** (the jobs table differs, the message naming the difference; or the
** database's schema version is newer than this build knows, changed in
** nothing: upgrade lease), LEASE_BUSY
** (a lock another connection held stayed taken past the busy timeout: each
** step of opening waits, as every operation does, also where SQLite itself
** would fail at once), LEASE_READONLY, LEASE_FULL, ... .  A file refused
** for what it holds is left byte-for-byte as it was, with no -wal, -shm or
** -journal created beside it.  The -wal is kept to 4 MiB whenever no
** reader holds an older snapshot (PRAGMA journal_size_limit); a read-only
** handle opens the file read-write where it may and refuses writes itself,
** so that it leaves no -wal or -shm behind when it closes last.
** A PostgreSQL connection string ("postgresql://...", "postgres://..." or
** libpq's keyword form "host=... dbname=...") opens a connection to that
** server instead (built with libpq): the jobs table in the connection's
** current schema, created when missing; options map onto lock_timeout,
** synchronous_commit and default_transaction_read_only; a server that
** cannot be reached, or a build without libpq, is LEASE_CANTOPEN.
*/
LEASE_API int lease_open(const char *path, const lease_options *opt, lease_db **out);

/*
** lease_close: finalize the cached statements and close the connection.
** db may be NULL.  Returns LEASE_OK (the handle is freed in any case).
*/
LEASE_API int lease_close(lease_db *db);

/*
** lease_init: CREATE TABLE IF NOT EXISTS jobs(...) (contract step 1).
** Calling it again changes nothing.  Returns LEASE_OK or an error code.
*/
LEASE_API int lease_init(lease_db *db);

/* The longest queue name, bytes. */
#define LEASE_QUEUE_MAX 255

/* The longest unique key of a job (lease_new_job's key), bytes. */
#define LEASE_KEY_MAX 1024

/* The default max_attempts of a job. */
#define LEASE_MAX_ATTEMPTS_DEFAULT 25

/*
** A job to enqueue, with its data (lease_enqueue, lease_enqueue_many).
** Fill with lease_new_job_default, then set fields: id, at least.
*/
typedef struct lease_new_job {
  const char *id;       size_t id_len;       /* non-empty; LEASE_NTS allowed */
  const char *payload;  size_t payload_len;  /* any bytes, or NULL for none; LEASE_NTS allowed */
  const char *queue;    size_t queue_len;    /* 1 to LEASE_QUEUE_MAX bytes; NULL: "default" */
  int64_t priority;     /* smaller runs first; default 0 */
  int has_run_at;       /* 1: run_at is set */
  double run_at;        /* finite, caller's unit: claim_next does not hand it out before */
  int64_t max_attempts; /* >= 1; default LEASE_MAX_ATTEMPTS_DEFAULT */
  double timeout;       /* seconds a handler may run on the job, finite and > 0, kept with
                           it and handed out by lease_claim_next; the engine only stores
                           it (the worker pool, lease.pool, stops a handler that runs
                           longer); 0 (default): none */
  /* Dependencies: the ids of the jobs this one runs after (n_after of
  ** them; after NULL when 0).  Each non-empty and not the job's own id;
  ** after_lens NULL for NUL-terminated ids, or LEASE_NTS entries.  The job
  ** waits (LEASE_STATUS_WAITING) until every one is completed; one already
  ** completed counts as done at enqueue.  Each must exist (earlier in the
  ** same lease_enqueue_many counts) and not be discarded or cancelled,
  ** else nothing is stored (lease_enqueue_refused says which). */
  const char *const *after;
  const size_t *after_lens;
  int n_after;
  const char *key;      size_t key_len;      /* unique key: 1 to LEASE_KEY_MAX bytes, LEASE_NTS
                                                allowed; NULL (the default): none.  While a job
                                                of the same queue with this key is unfinished
                                                (not completed, discarded or cancelled), the
                                                enqueue stores nothing: LEASE_DUPLICATE */
} lease_new_job;

/* lease_new_job_default: fill *job with the defaults (no id, no payload,
** queue "default", priority 0, no run_at, 25 attempts, no timeout, no key).
** Never fails. */
LEASE_API void lease_new_job_default(lease_new_job *job);

/*
** lease_enqueue: insert one job with its data (contract step 2, INSERT OR
** IGNORE: an existing job, its lease, fence and data, stay as they are).
** A new job starts at the database's fence floor (lease_prune), its
** attempts at 0: its first claim hands out the floor + 1.
**   job:    the job (see lease_new_job); its id non-empty bytes.  A job
**           with every field but the id at its default is the contract's
**           plain insert.
**   reason: LEASE_GRANTED when inserted, LEASE_EXISTS when the id was
**           already there, LEASE_DUPLICATE when another unfinished job of
**           the queue holds job->key (lease_duplicate_id then gives its
**           id; nothing is written) (may be NULL); for a job with after,
**           nothing stored and LEASE_MISSING (a listed job does not
**           exist), LEASE_DISCARDED or LEASE_CANCELLED (a listed job the
**           queue ended: it would never complete); lease_enqueue_refused
**           names the listed job.  The dependencies are checked first: a
**           refused one refuses the enqueue before its key is looked at.
** The key is enforced by the database (a unique index over the unfinished
** jobs' (queue, key)): of concurrent enqueues of one key, from any threads
** or processes, exactly one is inserted.
** Returns LEASE_OK, LEASE_MISUSE (job NULL, or a bad field: the message
** names it, "after[2] is the job's own id", or a run_at off from the
** database's clock mark: lease_options.clock_factor; nothing written),
** LEASE_MISMATCH (a trigger another client defined skipped the job's
** insert, its queue row, its data, a dependency or its wait: nothing is
** stored) or a database error.
*/
LEASE_API int lease_enqueue(lease_db *db, const lease_new_job *job, int *reason);

/*
** lease_duplicate_id: after a call on db that reported LEASE_DUPLICATE
** (lease_enqueue, lease_retry), the id of the unfinished job holding the
** key, its length in *len (len may be NULL); NULL (and *len 0) after any
** other outcome.  The bytes live until the next call on db.
*/
LEASE_API const char *lease_duplicate_id(const lease_db *db, size_t *len);

/*
** lease_enqueue_refused: whether the last call on db was a lease_enqueue
** or lease_enqueue_many refused for a dependency (see lease_new_job's
** after), and which: *job gets the job's 0-based position in the call's
** jobs (0 for lease_enqueue), *after the position of the refused id in
** its after, *reason the reason (LEASE_MISSING, LEASE_DISCARDED,
** LEASE_CANCELLED).  job, after and reason may be NULL.  Returns 1 when
** refused so (then the call stored nothing), else 0 (and sets nothing).
*/
LEASE_API int lease_enqueue_refused(lease_db *db, int *job, int *after, int *reason);

/* One job another was enqueued after (lease_after). */
typedef struct lease_dep {
  const char *id;  size_t id_len;
  int status;      /* its LEASE_STATUS_* at the read's now; 0 when it is no longer there */
} lease_dep;

/*
** lease_after: the jobs that job id was enqueued after (every one listed
** at enqueue, completed or not), in id order, at most max, with their
** status at now (finite).  Strings live until the next call on db.  count:
** how many were read (0 for a job without dependencies, or missing).
** Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out,
                          int max, int *count);

/*
** lease_enqueue_many: enqueue n jobs in one transaction, as lease_enqueue
** each (existing ids are left as they are; a job whose key an unfinished
** job holds, or an earlier job of the same batch took, is skipped as an
** existing id is: not inserted, not counted, the others go on).
**   jobs:     n jobs (n >= 0; jobs may be NULL when n is 0).  Every job is
**             checked before anything is written (the message names its
**             1-based position: "job 3: id must not be empty").
**   inserted: receives how many were new (may be NULL).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another
** client defined skipped the insert of an id not there) or a database
** error (then none is inserted).  A job whose after lists a job that does not exist, or was
** discarded or cancelled, stores none: LEASE_OK with *inserted 0 and
** lease_enqueue_refused set.
*/
LEASE_API int lease_enqueue_many(lease_db *db, const lease_new_job *jobs, int n, int *inserted);

/*
** lease_state: read job id through this handle's connection (contract
** step 3), with its queue data and its status at now.  On LEASE_OK, *found
** is 1 and *row filled, or *found is 0 when there is no such job.  Row
** strings live until the next call on db.
**   id, id_len: the job, non-empty bytes (LEASE_NTS allowed).
**   now:  caller's unit, finite: the time row->status is for; or NaN for
**         no status (row->status LEASE_STATUS_UNKNOWN).
** Returns LEASE_OK, LEASE_MISUSE (row or found NULL, a bad id, an infinite
** now) or a database error.
*/
LEASE_API int lease_state(lease_db *db, const char *id, size_t id_len, double now,
                          lease_row *row, int *found);

/*
** lease_claim: take the lease on job id for owner until now + ttl (contract
** step 4).  One BEGIN IMMEDIATE transaction covers the check and the
** update: the job must exist, not be done, and have until <= now (the
** boundary now == until is claimable).  On success the fence grows by 1.
**   now, ttl: caller's time unit; ttl > 0, both finite, now + ttl > now.
**   fence:  receives the new fence, or 0 when not granted; not NULL.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_DISCARDED,
**           LEASE_CANCELLED (the job queue ended the job) or LEASE_HELD;
**           may be NULL.
** A job whose lease expired without complete, fail or release gets the
** error "lease expired" recorded first (lease_errors), and is discarded
** instead when that used up its attempts; each claim granted counts an
** attempt (see "The job queue").
** Returns LEASE_OK, LEASE_MISUSE (bad argument, fence NULL among them,
** nothing touched), LEASE_RANGE (fence at LEASE_FENCE_MAX), LEASE_MISMATCH
** (another client stored a fence or until of the wrong type: see
** lease_row.blocked; or a trigger another client defined skipped the claim
** or the discard: nothing is stored), or a database error (LEASE_BUSY once
** the busy timeout ran out).
*/
LEASE_API int lease_claim(lease_db *db, const char *id, size_t id_len,
                          const char *owner, size_t owner_len,
                          double now, double ttl, int64_t *fence, int *reason);

/*
** lease_renew: extend the lease to now + ttl (contract step 5) only when
** owner and fence match, the job is not done and until > now: an expired
** lease is never revived.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_DISCARDED,
**           LEASE_CANCELLED, LEASE_NOT_OWNER, LEASE_STALE_FENCE or
**           LEASE_EXPIRED.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_RANGE or LEASE_MISMATCH (the job is
** blocked: see lease_row.blocked; or a trigger another client defined
** skipped the write: nothing is stored) or a database error.
*/
LEASE_API int lease_renew(lease_db *db, const char *id, size_t id_len,
                          const char *owner, size_t owner_len, int64_t fence,
                          double now, double ttl, int *reason);

/*
** lease_complete: store result and done = 1 (contract step 6) only under
** the current lease: owner and fence match, done = 0, until > now.
** Otherwise the stored result stays as it was.
**   result, result_len: the result bytes, or result NULL for SQL NULL.
**   reason: as for lease_renew.
** Returns LEASE_OK, LEASE_MISUSE (also for a result longer than SQLite's
** length limit), LEASE_RANGE or LEASE_MISMATCH (as for lease_renew; also
** when a trigger another client defined skipped the write of the job's
** queue row, or on SQLite changed the job between that write and the
** UPDATE of its jobs row: nothing is stored) or a database error.
*/
LEASE_API int lease_complete(lease_db *db, const char *id, size_t id_len,
                             const char *owner, size_t owner_len, int64_t fence,
                             double now, const char *result, size_t result_len,
                             int *reason);

/* One completion for lease_complete_many. */
typedef struct lease_result {
  const char *id;      size_t id_len;      /* the job, non-empty bytes; LEASE_NTS allowed */
  int64_t fence;                           /* the fence the owner was handed for it */
  const char *result;  size_t result_len;  /* the result bytes, or result NULL for SQL NULL;
                                              LEASE_NTS allowed */
} lease_result;

/*
** lease_complete_many: complete n jobs held by one owner in one
** BEGIN IMMEDIATE transaction, one commit for all (contract step 6 for each
** job).  Each job is stored exactly as lease_complete would store it: its
** guarded UPDATE checks owner, fence, done = 0 and until > now at the
** moment it is stored, and a refused job keeps its stored result.  A
** refused job does not stop the others.  For a batch from lease_claim_next.
**   owner, owner_len: the owner holding the jobs, non-empty bytes.
**   now:     caller's time unit, finite.
**   items:   n completions (n >= 0; items may be NULL when n is 0).  Every
**            item is checked before anything is written.
**   reasons: n slots (may be NULL), in input order: LEASE_GRANTED, or why
**            that job was refused (LEASE_MISSING, LEASE_DONE,
**            LEASE_NOT_OWNER, LEASE_STALE_FENCE, LEASE_EXPIRED; an id
**            given twice is LEASE_DONE the second time).
**   stored:  receives how many were stored (may be NULL); 0 on any error.
** Returns LEASE_OK, LEASE_MISUSE (empty or NULL owner or id, an id or
** result longer than SQLite's length limit, non-finite now, n < 0; the
** message names the item's 1-based position; nothing is touched),
** LEASE_RANGE or LEASE_MISMATCH (as for lease_complete) or a database
** error (in both cases the transaction is rolled back: none is stored, and
** reasons are not meaningful).
*/
LEASE_API int lease_complete_many(lease_db *db, const char *owner, size_t owner_len, double now,
                                  const lease_result *items, int n, int *reasons, int *stored);

/*
** lease_release: give the lease back (contract step 7) when owner and fence
** match and done = 0: owner = NULL, until = 0, the fence is kept.  In the
** same transaction the job's attempt is given back: the claim it ends does
** not count against max_attempts (attempts never go below 0).
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_NOT_OWNER or
**           LEASE_STALE_FENCE.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another client
** defined skipped the write: nothing is stored) or a database error.
*/
LEASE_API int lease_release(lease_db *db, const char *id, size_t id_len,
                            const char *owner, size_t owner_len, int64_t fence,
                            int *reason);

/* The most threads lease_claim_many runs at once; more owners queue to them. */
#define LEASE_MANY_THREADS 64

/*
** lease_claim_many: claim job id for every owner at the same time, on
** native threads (contract step 8).  Starts min(n, LEASE_MANY_THREADS)
** threads; each opens its own connection to db's file with db's options
** (its own lease_open), all wait at one barrier so the claims start
** together, then each takes the next owner from a shared queue and runs
** lease_claim for it, until the queue is empty.  One BEGIN IMMEDIATE
** transaction per claim covers its check and its update, so on a fresh
** job exactly one owner gets a fence.
**   db:      an open handle; only its path and options are used, its own
**            connection stays idle.  Its file must be shareable between
**            connections: ":memory:" and "" are refused (LEASE_MISUSE).
**   owners, owner_lens: n owners (byte strings) and their lengths
**            (LEASE_NTS allowed); owner_lens NULL means all are
**            NUL-terminated.  n >= 1, none NULL or empty.
**   now, ttl: as for lease_claim.
**   fences:  n slots, in input order: the new fence, or 0 when not granted.
**   reasons: n slots (may be NULL): LEASE_GRANTED or why not, as for
**            lease_claim.
** Every argument is checked before any thread starts (LEASE_MISUSE, the
** message names the bad owner's index from 0).  A failure of any worker
** (open or claim; LEASE_BUSY once the busy timeout ran out) is returned
** and recorded on db (lease_errmsg), the lowest owner index first; once one
** failed, queued owners are not claimed (their slot stays 0).  Note that an
** owner may have been granted before another failed: read its slot.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_NOMEM (no thread could start) or a
** database error.  Blocks until every thread has ended.
*/
LEASE_API int lease_claim_many(lease_db *db, const char *id, size_t id_len,
                               const char *const *owners, const size_t *owner_lens,
                               size_t n, double now, double ttl,
                               int64_t *fences, int *reasons);

/*
** lease_read_settings: read the handle's journal mode and synchronous level from
** SQLite itself (PRAGMA journal_mode, PRAGMA synchronous; on PostgreSQL from
** synchronous_commit), its busy timeout, and the database's schema version
** as the handle opened it, into *out.  Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_read_settings(lease_db *db, lease_settings *out);

/*
** lease_claim_next: claim the ready jobs of one queue for owner, in one
** BEGIN IMMEDIATE transaction, with claim's rule (not done, until <= now;
** fence + 1, owner, until = now + ttl), smallest (priority, due time,
** enqueue order) first: the due time is a job's run_at, or for one
** without, the database's clock mark (see lease_options.clock_factor)
** when it was enqueued or retried, 0 while there is none; jobs with the
** defaults come in enqueue order (SQLite's rowid order at insert).  Skipped: jobs completed, discarded,
** cancelled or held (until > now), those whose run_at is after now, and
** those whose fence cannot grow (see lease_claim).  Each job taken counts
** an attempt.  A job found with a lease that expired without complete,
** fail or release gets the error "lease expired" recorded first; when that
** used up its attempts it is discarded instead of being handed out.
**   queue, queue_len: the queue, 1 to LEASE_QUEUE_MAX bytes (LEASE_NTS
**          allowed); queue NULL for "default".
**   owner, owner_len: who takes them, non-empty bytes.
**   now, ttl: as for lease_claim.
**   max:   how many jobs at most, >= 1; jobs must hold max entries.
**   jobs:  receives the jobs taken, in that order; ids live until the next
**          call on db.
**   count: receives how many were taken; 0 when none was ready or the
**          queue is paused or limited (see reason).
**   reason: may be NULL; LEASE_GRANTED when jobs were taken, else
**           LEASE_EMPTY (none ready), LEASE_PAUSED or LEASE_LIMITED.
** The queue's settings (lease_pause, lease_limit) are read in the claim's
** own transaction: a paused queue hands out nothing; a concurrency limit
** hands out at most the room left (the limit minus the queue's jobs held
** with until > now, whoever holds them); a rate limit at most the rate
** minus the jobs claim_next handed out within per of the claim's time,
** on either side (see lease_queue_limits).
** Cost: the partial index lease_queue_due holds only jobs the queue has
** not ended, in that order; jobs held, and scheduled jobs of a smaller
** priority than the first ready one, are stepped over.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another client
** defined skipped the claim or the discard of a job it would take, or the
** count of the claims for its queue's rate: nothing is stored), LEASE_NOMEM
** or a database error.
*/
LEASE_API int lease_claim_next(lease_db *db, const char *queue, size_t queue_len,
                               const char *owner, size_t owner_len, double now, double ttl,
                               int max, lease_job *jobs, int *count, int *reason);

/* What lease_list reads.  Fill with lease_filter_default, then set fields. */
typedef struct lease_filter {
  int which;                /* LEASE_LIST_*: the contract's view (ready, held, done,
                               blocked at now); LEASE_LIST_ALL (0) for all */
  int status;               /* LEASE_STATUS_*, 0 (UNKNOWN) for all */
  const char *queue;        size_t queue_len;   /* NULL for every queue */
  double now;               /* caller's unit, not NaN: decides the status and which */
  int64_t after;            /* seq to start after; 0 for the start */
  int results;              /* 1: load results; 0: result left NULL (result_size still set) */
} lease_filter;

/* lease_filter_default: every job (LEASE_LIST_ALL, all statuses, every
** queue), now 0, from the start, results loaded.  Never fails. */
LEASE_API void lease_filter_default(lease_filter *f);

/*
** lease_list: read up to max jobs matching every field of f, in enqueue
** (seq) order, starting after the job whose seq is f->after: a page of a
** listing; rows[i].seq is the next page's after.  No write, no lock beyond
** a read snapshot.
**   rows:  room for max entries (max >= 1); row strings live until the
**          next call on db.
**   count: receives how many were read; fewer than max means the end.
** Returns LEASE_OK, LEASE_MISUSE (f, rows or count NULL, max < 1, unknown
** which or status, a bad queue, NaN now) or a database error.
*/
LEASE_API int lease_list(lease_db *db, const lease_filter *f, int max, lease_row *rows,
                         int *count);

/*
** lease_count: count jobs at now (caller's unit, not NaN) into *out: by
** the contract's state (total, ready, held, done, blocked) and by status
** (available ... cancelled), each set adding up to total.
**   queue, queue_len: only this queue's jobs (LEASE_NTS allowed); queue
**          NULL for every queue.
** Returns LEASE_OK, LEASE_MISUSE (out NULL, NaN now, a bad queue) or a
** database error.
*/
LEASE_API int lease_count(lease_db *db, double now, const char *queue, size_t queue_len,
                          lease_counts *out);

/*
** lease_check_time: validate a (now, ttl) pair as claim and renew do.
** Returns 0 when both are acceptable, else LEASE_ARG_NOW or LEASE_ARG_TTL,
** and points *why (if not NULL) at a static message.  Pure; never fails.
*/
LEASE_API int lease_check_time(double now, double ttl, const char **why);

/*
** lease_server_now: the database's clock, in seconds since the Unix epoch
** (a float), into *out: on PostgreSQL the server's clock_timestamp(), one
** clock for workers on many hosts; on SQLite the local wall clock
** (CLOCK_REALTIME), as lease.now() reads it.  The operations never read it:
** pass it as their now.
** Returns LEASE_OK, LEASE_MISUSE (out NULL, db closed) or a database error.
*/
LEASE_API int lease_server_now(lease_db *db, double *out);

/* lease_errcode: the result code of the last failed call on db (LEASE_OK after a success). */
LEASE_API int lease_errcode(const lease_db *db);

/* lease_extended_errcode: SQLite's extended result code behind the last failure, or 0.
** On PostgreSQL: the SQLSTATE packed as PostgreSQL packs it (six bits per
** character, first character lowest), or 0; the message ends with
** "(SQLSTATE xxxxx)". */
LEASE_API int lease_extended_errcode(const lease_db *db);

/* lease_errmsg: the message of the last failure on db ("not an error" after a success). */
LEASE_API const char *lease_errmsg(const lease_db *db);

/* lease_path: the path db was opened with (as given to lease_open), to open
** the same database again.  A PostgreSQL connection string may hold a
** password: show lease_name instead. */
LEASE_API const char *lease_path(const lease_db *db);

/* lease_name: db's database named without secrets, for messages and logs.
** SQLite: the path as given.  PostgreSQL: "host=... port=... dbname=...
** user=..." (those of host, hostaddr, port, dbname, user and service the
** connection string sets, as libpq reads it, percent-decoding done), never
** a password, sslpassword or passfile; "PostgreSQL (invalid connection
** string)" when libpq cannot parse it.  Every error message of a handle
** opened on a connection string has those secrets replaced by "***", in
** whichever form the string or libpq writes them.  Returns "" for NULL. */
LEASE_API const char *lease_name(const lease_db *db);

/*
** lease_file_id: the identity of the file db's connection holds open: its
** device and inode numbers (st_dev, st_ino) into *dev and *ino.  They are
** read with stat() on the name the connection opened the file by (SQLite's
** absolute name, symbolic links resolved), and only once SQLite confirms
** that this name still names the file it holds (SQLITE_FCNTL_HAS_MOVED, an
** inode comparison); no descriptor is opened on the file.  A caller keeping
** a connection per path compares them with stat() of that path to tell a
** file replaced, renamed or deleted since it was opened.
** Returns LEASE_OK; LEASE_MISUSE (db NULL or closed, dev or ino NULL);
** LEASE_CANTOPEN when the database is no file (in-memory or temporary) or
** its name no longer names the file held (renamed away, deleted, replaced)
** or cannot be stat()ed; the message says which.  *dev and *ino are 0 on
** failure.
*/
LEASE_API int lease_file_id(lease_db *db, uint64_t *dev, uint64_t *ino);

/* lease_errname: the stable word of a result code ("busy", "full", ...); "unknown" for others. */
LEASE_API const char *lease_errname(int rc);

/* lease_reason_name: the stable word of a reason ("held", "stale_fence", ...); "unknown" for others. */
LEASE_API const char *lease_reason_name(int reason);

/* ===================================================================== */
/* The job queue: job data, claiming by queue and priority, failing with  */
/* backoff, operator actions.  The jobs table stays the contract's; the   */
/* queue's data lives beside it (docs/internals.md).                      */
/* ===================================================================== */

/*
** A job's status at a given now, one list: LEASE_STATUS_MAP(XX) calls
** XX(NAME, "word").  Derived at read time, in this order:
**   COMPLETED   done = 1
**   DISCARDED   its attempts are used up (lease_fail, or leases that expired)
**   CANCELLED   lease_cancel ended it (or a job it was enqueued after was
**               discarded or cancelled)
**   WAITING     enqueued after jobs not all completed yet (lease_new_job's after)
**   RUNNING     held: until > now
**   RETRYABLE   failed at least once (attempt > 0), waiting for run_at > now
**   SCHEDULED   run_at > now, not attempted yet
**   AVAILABLE   claimable now
** UNKNOWN (0) is the status of a row read without a now (lease_state with
** a NaN now).
*/
#define LEASE_STATUS_MAP(XX)                                              \
  XX(UNKNOWN, "unknown")                                                  \
  XX(AVAILABLE, "available")                                              \
  XX(SCHEDULED, "scheduled")                                              \
  XX(RUNNING, "running")                                                  \
  XX(RETRYABLE, "retryable")                                              \
  XX(COMPLETED, "completed")                                              \
  XX(DISCARDED, "discarded")                                              \
  XX(CANCELLED, "cancelled")                                              \
  XX(WAITING, "waiting")

typedef enum lease_status {
#define LEASE_STATUS_ENUM_(name, word) LEASE_STATUS_##name,
  LEASE_STATUS_MAP(LEASE_STATUS_ENUM_)
#undef LEASE_STATUS_ENUM_
} lease_status;

/* The most errors kept per job (the newest ones; lease_errors). */
#define LEASE_ERRORS_KEPT 20

/* One error recorded against a job (lease_fail, an expired lease). */
typedef struct lease_job_error {
  int64_t attempt;        /* the attempt that failed */
  double at;              /* when, caller's unit (for an expired lease: its until) */
  const char *owner;      size_t owner_len;
  int64_t fence;
  const char *message;    size_t message_len;
} lease_job_error;

/*
** lease_errors: the errors kept for job id, oldest first, at most max
** (the last LEASE_ERRORS_KEPT are kept).  Strings live until the next call
** on db.  count: how many were read (0 also for a missing job).
** Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out,
                           int max, int *count);

/*
** lease_complete_claim_next: lease_complete of id by owner, then
** lease_claim_next for the same owner at the same now, in one write
** transaction, so that a worker's "this one is done, give me the next"
** costs one commit instead of two (BullMQ's moveToCompleted with
** fetchNext).  Each step is exactly the call it is named after (contract
** step 6, then claim's rule for each job taken): a refused completion
** (*reason) stores nothing and the claim still runs.  A failure of either
** step rolls back both, so nothing is stored and no job is taken; the one
** exception is LEASE_NOMEM on PostgreSQL, where the transaction may commit
** in the round trip that runs it, before the results are copied: running
** out of memory then leaves both steps stored, the jobs taken held until
** their leases expire.
**   id, id_len, owner, owner_len, fence, now, result, result_len, reason:
**          as for lease_complete.
**   queue, queue_len, ttl, max, jobs, count: as for lease_claim_next.
**   claim_reason: the claim's reason, as lease_claim_next's (may be NULL).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_RANGE or LEASE_MISMATCH (as for
** lease_complete), LEASE_NOMEM or a database error; on a failure *count
** is 0.
*/
LEASE_API int lease_complete_claim_next(lease_db *db, const char *id, size_t id_len,
                                        const char *owner, size_t owner_len, int64_t fence,
                                        double now, const char *result, size_t result_len,
                                        const char *queue, size_t queue_len, double ttl,
                                        int max, lease_job *jobs, int *count, int *reason,
                                        int *claim_reason);

/*
** lease_complete_many_claim_next: lease_complete_many of items by owner,
** then lease_claim_next for the same owner at the same now, in one write
** transaction: a worker's "this batch is done, give me the next" costs one
** commit instead of two.  Each step is exactly the call it is named after
** (contract step 6 for each item, then claim's rule for each job taken): a
** refused completion stores nothing for that job, and neither it nor the
** others stop the claim.  A failure of either step rolls back both, so
** nothing is stored and no job is taken.
**   owner, owner_len, now, items, n, reasons, stored: as for
**          lease_complete_many (n may be 0: the claim alone).  The ids may
**          point into the jobs the last claim on db handed out: every
**          completion is stored before the claim reuses that memory.
**   queue, queue_len, ttl, max, jobs, count: as for lease_claim_next.
**   claim_reason: the claim's reason, as lease_claim_next's (may be NULL).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_RANGE or LEASE_MISMATCH (as for
** lease_complete_many), LEASE_NOMEM or a database error; on a failure
** *count and *stored are 0.
*/
LEASE_API int lease_complete_many_claim_next(lease_db *db, const char *owner, size_t owner_len,
                                             double now, const lease_result *items, int n,
                                             int *reasons, int *stored, const char *queue,
                                             size_t queue_len, double ttl, int max,
                                             lease_job *jobs, int *count, int *claim_reason);

/*
** Queue control: per-queue settings, kept in the table lease_queues (one
** row per queue that has any), read by every claim_next of the queue in its
** own transaction, so a change is seen at once by every handle and process
** on the database.  Leases already held are not touched: they still renew,
** complete and fail.
*/

/*
** lease_pause: stop claim_next on queue (it returns no job, reason
** LEASE_PAUSED) until lease_resume.  Other queues go on.
**   queue, queue_len: 1 to LEASE_QUEUE_MAX bytes (LEASE_NTS allowed); NULL
**                     for "default".
** Returns LEASE_OK, LEASE_MISUSE (bad queue; nothing written),
** LEASE_MISMATCH (a trigger another client defined skipped the write of
** the settings row: nothing is stored) or a database error.
*/
LEASE_API int lease_pause(lease_db *db, const char *queue, size_t queue_len);

/* lease_resume: let claim_next hand out queue's jobs again.  Arguments and
** returns as lease_pause; resuming a queue not paused changes nothing. */
LEASE_API int lease_resume(lease_db *db, const char *queue, size_t queue_len);

/*
** A queue's limits (lease_limit); 0 in a field: no such limit.  The rate
** is kept over the claims' times.  A claim's time is the claimer's now,
** but claimers read now before they wait for the write lock, so claims
** commit in an order their nows need not follow: each claim counts the
** claims within per of its time on either side, those committed before
** it with a later now included, so that no window of length per holds
** more than rate whatever order they commit in.  A claimer whose now is
** more than per behind the latest claim of the queue is counted, and
** recorded, at that claim's time less per.  So a claimer whose clock runs
** ahead holds the others to it: until their clocks reach its now, the
** queue hands out at most rate more jobs.  The clock check (lease_options'
** clock_factor) refuses a now of another unit; lease_limit with no rate
** drops the claims recorded.
*/
typedef struct lease_queue_limits {
  int64_t concurrency;  /* at most this many of the queue's jobs held (until > now) at once,
                           a job cancelled while held counting until its lease ends */
  int64_t rate;         /* at most this many handed out by claim_next... */
  double per;           /* ...in any window of per (caller's unit: now's), > 0 with rate */
} lease_queue_limits;

/*
** lease_limit: replace queue's limits with *limits (NULL or all 0: none).
** At a limit claim_next returns no job with reason LEASE_LIMITED; below it
** at most the room left.
**   limits: concurrency >= 0, rate >= 0; per finite and > 0 when rate > 0,
**           0 when rate is 0.
** Returns LEASE_OK, LEASE_MISUSE (a bad field: the message names it;
** nothing written) or a database error.  The index lease_jobs_live, which
** the count of a concurrency limit reads, is made while some queue has
** one and dropped with the last (docs/queue.md): on SQLite in the same
** transaction; on PostgreSQL after the limits commit, CONCURRENTLY, and
** at best effort: it may wait up to the busy timeout for the transactions
** in progress in the database; when it cannot finish (that wait runs out,
** or the role does not own jobs) the limits stay stored and enforced and
** the call still returns LEASE_OK, the count reads the queue's jobs not
** completed (lease_queue_due and lease_queue_aside),
** and a later lease_limit by a role that owns jobs puts the index right
** (another handle found at it does the work instead of this one).
*/
LEASE_API int lease_limit(lease_db *db, const char *queue, size_t queue_len,
                          const lease_queue_limits *limits);

/* One queue as lease_queues reads it.  Strings live until the next call
** on the handle. */
typedef struct lease_queue_info {
  const char *name;  size_t name_len;
  int paused;                  /* 1 when paused */
  lease_queue_limits limits;   /* 0: none */
  lease_counts counts;         /* its jobs by status at now (lease_count_queue's) */
} lease_queue_info;

/*
** lease_queues: every queue that has jobs or settings, by name (bytewise),
** at most max of them into out.
**   now:   caller's unit, not NaN: decides the counts by status.
**   count: how many were written to out.
** Returns LEASE_OK, LEASE_MISUSE (NULL out or count, max < 1, NaN now) or a
** database error.
*/
LEASE_API int lease_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count);

/*
** lease_wait: block until a job of queue may be ready for claim_next, or
** until timeout seconds have passed, whichever comes first.  Nothing is
** claimed: the caller claims after it returns.  It returns at once when a
** job of the queue is due (open, not held, its run_at passed); else it
** sleeps until the earliest time one of the queue's jobs becomes due (a
** job scheduled with run_at, a retry after its backoff, a lease that
** expires) or a wake signal, whichever comes first, and looks again.  The
** writes that make a job claimable or move a due time (lease_enqueue,
** lease_enqueue_many, lease_release, lease_fail, lease_retry, lease_resume,
** lease_limit, a lease_tick that enqueued) signal the waiters of their
** database: on SQLite every handle on the same file in this process at
** once, other processes' handles at once on Linux (one waiter per file
** and process sleeps on inotify watches of the database file and its
** -wal, and looks at their size and time when one changes), else within
** LEASE_WAKE_CHECK_MS while the database is busy and 100 ms after a quiet
** spell; on PostgreSQL through
** LISTEN/NOTIFY on the channel "lease_wake" (the payload is the queue, or
** empty for any queue), so waiters on every host.  A paused queue has no
** job due until lease_resume, which wakes its waiters.  A queue at a
** limit (lease_limit) has no job due until the limit leaves room: the
** earliest end of the queue's live leases under a concurrency limit, the
** time the earliest claim counted leaves the window under a rate (times
** of the database's clock: claimers that wait pass lease_server_now as
** their now); and a handle whose lease_claim_next found limits on a queue
** signals that queue's waiters (every queue's, once it found them on two)
** when it ends a lease (lease_complete, lease_complete_many, a lease_fail,
** lease_release, a lease_with_lease that completed, the fused calls unless
** their claim took as many jobs of that queue), so a slot freed wakes them
** at once.  A lease another handle ends, or a renew that shortens it,
** wakes them only as any of its writes does (on SQLite the file's change;
** on PostgreSQL nothing until the next due time).
**   queue, queue_len: 1 to LEASE_QUEUE_MAX bytes (LEASE_NTS allowed); NULL
**                     for "default".
**   timeout:  seconds, finite and >= 0 (0: only look).
**   woken:    1 when a job may be ready (due, or a signal whose look found
**             one due), 0 when the timeout passed first.  May be NULL.
** The due times are compared with the database's clock (lease_server_now),
** so jobs must carry times in seconds since the epoch, as the pool's do.
** Returns LEASE_OK, LEASE_MISUSE (bad queue or timeout; nothing read) or a
** database error.  The handle is busy for the whole wait (one thread).
*/
LEASE_API int lease_wait(lease_db *db, const char *queue, size_t queue_len, double timeout,
                         int *woken);

/* How often, in milliseconds, a waiting SQLite handle looks for the writes
** of other processes (the size and time of the database's files) while the
** database is busy; while nothing changes the interval grows to 100 ms (or
** to this, when longer), and any write seen brings it back.  The
** environment variable LEASE_WAKE_CHECK_MS (1 to 3600000), read once per
** process, replaces it.  On Linux a write to the files also ends the wait
** at once (inotify); LEASE_WAKE_NOTIFY=0 in the environment turns that
** off, for a file system whose changes inotify does not report. */
#define LEASE_WAKE_CHECK_MS 10

/* Options of lease_fail.  NULL options: the defaults (all 0). */
typedef struct lease_fail_opts {
  int has_run_at;   /* 1: retry at run_at instead of now + lease_backoff(attempt) */
  double run_at;    /* finite, caller's unit */
  int no_attempt;   /* 1: this attempt is given back (not counted against
                       max_attempts): retryable at run_at, default now */
} lease_fail_opts;

/*
** lease_fail: record that the holder's attempt failed, under the same guard
** as lease_complete (owner and fence match, not done, until > now, not
** cancelled or discarded): records {attempt, now, owner, fence, message}
** (the last LEASE_ERRORS_KEPT kept), ends the lease (owner NULL, until 0,
** the fence kept), then either discards the job (attempt >= max_attempts)
** or makes it retryable at now + lease_backoff(attempt) (seconds: pass
** opts->run_at when now is in another unit).  When refused nothing is
** stored.
**   message, message_len: the error text (any bytes; NULL for none).
**   status: LEASE_STATUS_RETRYABLE or LEASE_STATUS_DISCARDED when granted.
**   run_at: the retry time when retryable (may be NULL).
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_DISCARDED,
**           LEASE_CANCELLED, LEASE_NOT_OWNER, LEASE_STALE_FENCE, LEASE_EXPIRED.
** Returns LEASE_OK, LEASE_MISUSE (a bad argument, or a now or run_at off
** from the database's clock mark: lease_options.clock_factor), LEASE_RANGE or
** LEASE_MISMATCH (as for lease_complete; also when a trigger another
** client defined skipped the error's record or the job's next queue
** state: nothing is stored) or a database error.
*/
LEASE_API int lease_fail(lease_db *db, const char *id, size_t id_len, const char *owner,
                         size_t owner_len, int64_t fence, double now, const char *message,
                         size_t message_len, const lease_fail_opts *opts, int *status,
                         double *run_at, int *reason);

/*
** lease_retry: make a job the queue ended (completed, discarded,
** cancelled), or one waiting (scheduled, retryable), available at once
** with a fresh attempt budget (attempt 0); its fence is kept and its
** errors stay.  A completed job gets done = 0 (its result stays until the
** next complete).  A job enqueued after others (lease_new_job's after)
** waits again (LEASE_STATUS_WAITING) while one of them is not completed.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_HELD (running: until > now),
**           or LEASE_DUPLICATE: the job has a unique key that another
**           unfinished job of its queue took meanwhile (lease_duplicate_id
**           gives that job's id); then nothing changes.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another client
** defined skipped a write: nothing is stored) or a database error.
*/
LEASE_API int lease_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason);

/*
** lease_cancel: end a job that is not completed (a waiting one too): never
** handed out again (until lease_retry); a holder's renew, complete and fail
** are refused with LEASE_CANCELLED; its fence is kept.  The jobs waiting for
** it (lease_new_job's after), and theirs, are cancelled with it, each with
** the error 'dependency "<id>" was cancelled'; so are those waiting for a
** job lease_fail or an expired lease discards ("was discarded").
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_DISCARDED or
**           LEASE_CANCELLED (already cancelled).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another client
** defined skipped a write: nothing is stored) or a database error.
*/
LEASE_API int lease_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason);

/*
** lease_prune: delete the jobs the queue ended (completed, discarded,
** cancelled) that finished before `before` (finished_at < before), with
** their data and errors; never one still held (not done and its until
** past `before` or past the database's clock mark, the highest now it has
** seen, when it has one, as a job cancelled while held).  In the same transaction the
** fence floor (lease_meta, key 'fence_floor') is raised to the highest
** fence deleted, never lowered; every job enqueued after starts at it, so
** no fence handed out before is handed out again, not even for an id
** enqueued again.  Rows another client deletes from jobs raise nothing.
**   queue: NULL for every queue.  status: 0 for every ended status, or
**          LEASE_STATUS_COMPLETED, _DISCARDED or _CANCELLED.
**   deleted: how many jobs were deleted.
** Returns LEASE_OK, LEASE_MISUSE (a bad argument, or a before off from
** the database's clock mark: lease_options.clock_factor), LEASE_MISMATCH
** (a trigger another client defined skipped a write: nothing is stored) or
** a database error.
*/
LEASE_API int lease_prune(lease_db *db, double before, const char *queue, size_t queue_len,
                          int status, int64_t *deleted);

/* ===================================================================== */
/* The events ledger: every operation on a job, as the engine saw it.     */
/* ===================================================================== */

/*
** The operations the ledger records, one list: LEASE_EVENT_MAP(XX) calls
** XX(NAME, "word") for each, from LEASE_EV_ENQUEUE (1) up.
**   ENQUEUE   lease_enqueue, one per job (refused: exists)
**   CLAIM     lease_claim, and each job lease_claim_next took
**   RENEW, COMPLETE, RELEASE, FAIL, CANCEL, RETRY   the call of that name
**             (complete_many and complete_claim_next: one complete per job)
**             and a CANCEL (no owner, no fence) for each job waiting below
**             a job discarded or cancelled, which that end cancels
**   DISCARD   the queue discarded the job, its attempts used up: after
**             the fail of its last attempt, or the expire that was its last
**   EXPIRE    a lease found ended by time, unreported, by a claim of the
**             job (lease_claim, lease_claim_next): owner and fence are the
**             expired lease's; the claim's own event follows, or a discard
**   PRUNE     lease_prune deleted the job
**   PAUSE, RESUME, LIMIT   queue control: no id, the queue in queue
*/
#define LEASE_EVENT_MAP(XX) \
  XX(ENQUEUE, "enqueue")    \
  XX(CLAIM, "claim")        \
  XX(RENEW, "renew")        \
  XX(COMPLETE, "complete")  \
  XX(FAIL, "fail")          \
  XX(RELEASE, "release")    \
  XX(CANCEL, "cancel")      \
  XX(RETRY, "retry")        \
  XX(DISCARD, "discard")    \
  XX(EXPIRE, "expire")      \
  XX(PRUNE, "prune")        \
  XX(PAUSE, "pause")        \
  XX(RESUME, "resume")      \
  XX(LIMIT, "limit")

typedef enum lease_event_op {
  LEASE_EV_NONE = 0,
#define LEASE_EV_ENUM_(name, word) LEASE_EV_##name,
  LEASE_EVENT_MAP(LEASE_EV_ENUM_)
#undef LEASE_EV_ENUM_
  LEASE_EV_END
} lease_event_op;

/* lease_event_name: the word of an event's op ("claim", ...); "unknown"
** for others.  Never fails. */
LEASE_API const char *lease_event_name(int op);

/*
** One event of the ledger.  Strings point into memory owned by the handle,
** valid until the next call on it.
*/
typedef struct lease_event {
  int64_t seq;          /* its place in the ledger, increasing */
  double at;            /* the caller's now of the call; for a call without one
                           (enqueue, release, prune, queue control) the engine's
                           clock, seconds since the epoch */
  int op;               /* LEASE_EV_* */
  const char *id;       size_t id_len;      /* the job; NULL for queue control */
  const char *queue;    size_t queue_len;   /* queue control's queue, else NULL */
  const char *owner;    size_t owner_len;   /* the caller's owner, NULL when the op has none */
  int has_fence;        /* 1 when fence is set */
  int64_t fence;        /* the caller's fence, or a claim's new fence when granted */
  int reason;           /* LEASE_GRANTED (outcome "ok") or the refusal's reason */
} lease_event;

/* What lease_events reads.  Zero it (or { NULL }), then set fields. */
typedef struct lease_event_filter {
  const char *id;       size_t id_len;      /* one job's events (LEASE_NTS allowed); NULL: all */
  int64_t since;        /* only events with seq > since; 0 for the start */
} lease_event_filter;

/*
** lease_events: read up to max events of the ledger matching f, in seq
** order: a page; out[count-1].seq is the next page's since.  The ledger is
** written in the same transaction as each operation, refused ones too (a
** refused write changes nothing else), by handles opened with events_keep
** above 0 (lease_options; off by default), and pruned to the newest
** events_keep.  A database
** older than the ledger's schema step reads as an empty ledger.
**   f:     the filter (NULL: every event from the start).
**   max:   >= 1; out has room for max events.
**   count: receives how many were read; fewer than max means the end.
** Cost: by seq, an index range; by id, a scan of the ledger (at most
** events_keep rows).
** Returns LEASE_OK, LEASE_MISUSE (out or count NULL, max < 1, an empty id,
** since < 0) or a database error.
*/
LEASE_API int lease_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out,
                           int *count);

/*
** lease_backoff: the default delay before retrying a job whose attempt
** `attempt` (>= 1) failed, in seconds: exponential, 2^(attempt-1), capped
** at LEASE_BACKOFF_CAP (from attempt 13 on), times a jitter drawn uniformly
** from [0.9, 1.1] at every attempt, the capped ones too: at most
** 1.1 * LEASE_BACKOFF_CAP.  attempt < 1 counts as 1.  Thread-safe; never
** fails.
*/
#define LEASE_BACKOFF_CAP 3600.0
LEASE_API double lease_backoff(int64_t attempt);

/* lease_status_name: the word of a status ("available", ...); "unknown" for others. */
LEASE_API const char *lease_status_name(int status);

/* ===================================================================== */
/* Schedules: recurring jobs.  A schedule enqueues one job per tick when */
/* lease_tick runs; the clock is seconds since the epoch (UTC).          */
/* ===================================================================== */

/* The longest schedule name, bytes (its job ids add "@" and the tick). */
#define LEASE_SCHEDULE_NAME_MAX 200

/*
** A schedule (lease_schedule, lease_schedules).  Its ticks are the times
** after its creation (created_at) that are multiples of every (k * every
** for an integer k), or, with cron, the minutes that the cron expression
** matches in UTC: five fields "minute hour day-of-month month
** day-of-week" with `*`, lists, ranges and steps, month and day names
** (JAN, MON), 0 and 7 both Sunday, and Vixie cron's rule that when both
** day fields are restricted a day matches if either does.  Fill with
** lease_schedule_spec_default, then set name and every or cron.
*/
typedef struct lease_schedule_spec {
  const char *name;     size_t name_len;     /* 1 to LEASE_SCHEDULE_NAME_MAX bytes; LEASE_NTS allowed */
  double every;         /* seconds, finite and > 0; 0 when cron is set */
  const char *cron;     size_t cron_len;     /* a cron expression, or NULL when every is set */
  /* The jobs it enqueues: as lease_new_job's fields. */
  const char *queue;    size_t queue_len;    /* NULL: "default" */
  const char *payload;  size_t payload_len;  /* NULL for none */
  int64_t priority;     /* default 0 */
  int64_t max_attempts; /* >= 1; default LEASE_MAX_ATTEMPTS_DEFAULT */
  /* Set by lease_schedules (ignored by lease_schedule): */
  double created_at;    /* when lease_schedule created it, or last replaced it with
                           other fields (a declaration as it is keeps it) */
  double next_at;       /* its first tick not enqueued yet */
  double last_at;       /* the tick enqueued last; NaN when none */
} lease_schedule_spec;

/* lease_schedule_spec_default: fill *s with the defaults (no name, neither
** every nor cron, queue "default", no payload, priority 0, 25 attempts,
** the times NaN).  Never fails. */
LEASE_API void lease_schedule_spec_default(lease_schedule_spec *s);

/*
** lease_schedule: create the schedule s->name at now (seconds since the
** epoch), or replace the one of that name (its ticks then count from now;
** jobs it enqueued stay).  Its first tick is the first one after now.  A
** declaration of the schedule as it is stored (the same every or cron and
** job options) changes nothing: its created_at, next_at and last_at stay,
** so a tick that came due before it is still enqueued by the next tick.
**   s:   name, exactly one of every and cron, and the jobs' options.
**   now: finite, seconds since the epoch.
** Returns LEASE_OK, LEASE_MISUSE (a bad field, a cron expression that does
** not parse or matches no time within ten years: the message names the
** field, as "cron: minute field: 61 is out of range 0-59"; nothing
** written), LEASE_READONLY on a read-only handle, LEASE_MISMATCH (a trigger
** another client defined skipped the write: nothing stored) or a database
** error.
*/
LEASE_API int lease_schedule(lease_db *db, const lease_schedule_spec *s, double now);

/*
** lease_unschedule: delete the schedule name (jobs it enqueued stay).
**   found: 1 when it existed, 0 when not (may be NULL).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_READONLY, LEASE_MISMATCH (a trigger
** another client defined skipped the delete: the schedule stays) or a
** database error.
*/
LEASE_API int lease_unschedule(lease_db *db, const char *name, size_t name_len, int *found);

/*
** lease_schedules: read up to max schedules in name order, after the name
** after (NULL: from the first): a page; pass the last name read as the
** next page's after.  Strings live until the next call on db.  A database
** without schedules (a read-only handle on a file no writer opened since
** schedules came) has none.
** Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_schedules(lease_db *db, const char *after, size_t after_len, int max,
                              lease_schedule_spec *out, int *count);

/*
** lease_cron_next: the first minute strictly after t (seconds since the
** epoch) that the cron expression expr (len bytes; LEASE_NTS allowed)
** matches in UTC, as lease_schedule reads it, into *out.
**   err, errlen: where the message goes on failure (always terminated).
** Returns LEASE_OK, LEASE_MISUSE when expr does not parse (the message
** names the field) or matches no time within ten years after t, or
** LEASE_RANGE when t is before the year 1 or ten years after it pass the
** end of 9999 (the range the clock's calendar covers).
** Thread-safe; touches no database.
*/
LEASE_API int lease_cron_next(const char *expr, size_t len, double t, double *out, char *err,
                              size_t errlen);

/*
** lease_tick: enqueue the jobs of schedules that are due at now (next_at
** <= now), at most max schedules per call, in next_at order.  For each, one
** job for its latest due tick (the largest tick <= now), with the
** schedule's options and the id "<name>@<tick>" (the tick as an integer,
** in seconds: "nightly@1700006400"); missed ticks are not replayed.  Its
** next_at moves to the first tick after now and last_at to the tick.
** Safe with any number of handles and processes ticking at once: each
** schedule's row is moved by a guarded UPDATE (next_at still the value
** read) in the write transaction of the enqueue, so a tick is enqueued
** once; a job id that exists already is left as it is.
**   now:     finite, seconds since the epoch.
**   ids, id_lens: max slots: the ids of the jobs enqueued (inserted),
**            valid until the next call on db.
**   count:   how many were enqueued.
**   more:    1 when max due schedules were taken, so more may be due:
**            call again (may be NULL).
** Returns LEASE_OK, LEASE_MISUSE, LEASE_READONLY, LEASE_MISMATCH (a
** trigger another client defined skipped a schedule's move, or as for
** lease_enqueue_many) or a database error (then nothing is enqueued and
** no schedule moves).
*/
LEASE_API int lease_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens,
                         int *count, int *more);

/* ===================================================================== */
/* Fenced side effects: the caller's writes inside the lease's transaction */
/* ===================================================================== */

/* A with_lease transaction, handed to the callback; valid only while the
** callback runs. */
typedef struct lease_tx lease_tx;

/* The type of a lease_value. */
enum {
  LEASE_TYPE_NULL = 0,
  LEASE_TYPE_INTEGER,   /* i */
  LEASE_TYPE_FLOAT,     /* f */
  LEASE_TYPE_TEXT,      /* s, len: bytes (zero bytes allowed), stored as TEXT */
  LEASE_TYPE_BLOB       /* s, len: bytes, stored as a BLOB */
};

/* One value: a `?` parameter of lease_tx_exec / lease_tx_query, or a
** column of a result row.  A column's s points into memory valid until
** the row callback returns. */
typedef struct lease_value {
  int type;            /* LEASE_TYPE_* */
  int64_t i;           /* LEASE_TYPE_INTEGER */
  double f;            /* LEASE_TYPE_FLOAT */
  const char *s;       /* LEASE_TYPE_TEXT, LEASE_TYPE_BLOB (may be NULL when len is 0) */
  size_t len;          /* bytes at s; LEASE_NTS allowed for a parameter */
} lease_value;

/*
** The callback of lease_with_lease: runs with the lease's transaction
** open.  Return LEASE_OK to commit everything it wrote, any other code to
** roll it all back (lease_with_lease then returns that code).
*/
typedef int lease_tx_fn(lease_tx *tx, void *ctx);

/*
** A row callback of lease_tx_query: ncols columns, their names and values
** (valid until it returns).  Return LEASE_OK for the next row, any other
** code to stop (lease_tx_query then returns that code).
*/
typedef int lease_row_fn(void *ctx, int ncols, const char *const *names,
                         const lease_value *values);

/*
** lease_with_lease: run fn(tx, ctx) inside one write transaction that
** holds the lease (contract step 6's check, kept while fn runs): now
** passes the clock check every write makes (a now off from the database's
** clock mark by the clock factor is refused; a now past it moves it), and
** after BEGIN IMMEDIATE the job must exist, be held by owner with this
** fence, not be done and have until > now, checked exactly as
** lease_complete checks it; only then fn runs.  When fn returns LEASE_OK,
** everything it wrote (lease_tx_exec, lease_tx_complete, ...) commits at
** once; otherwise all of it rolls back.  While fn runs, every other function on db returns
** LEASE_MISUSE: fn works through tx.
**   id, owner: non-empty byte strings (LEASE_NTS allowed).
**   fence:  the fencing token claim returned.
**   now:    caller's time unit, finite; tx's renew and complete use it.
**   fn:     the callback, not NULL; ctx is passed to it.
**   reason: receives LEASE_GRANTED when fn ran and its work committed, or
**           why the lease was refused (fn never ran, nothing changed):
**           LEASE_MISSING, LEASE_DONE, LEASE_NOT_OWNER, LEASE_STALE_FENCE
**           or LEASE_EXPIRED, as lease_complete reports it.
** Returns LEASE_OK (see reason), LEASE_MISUSE (bad argument, a now off
** from the clock mark, or db is already inside a with_lease callback;
** fn never ran), LEASE_RANGE or LEASE_MISMATCH (the job is blocked, as for
** lease_complete), fn's own code when it asked for a rollback (the message
** says so unless fn recorded a failure), or a database error (BEGIN, the
** check or COMMIT failed; rolled back).
** LEASE_ERROR "not supported by the <name> backend" on a backend without
** transactions of the caller's own.
*/
LEASE_API int lease_with_lease(lease_db *db, const char *id, size_t id_len,
                               const char *owner, size_t owner_len, int64_t fence,
                               double now, lease_tx_fn *fn, void *ctx, int *reason);

/*
** lease_tx_exec: run one SQL statement inside tx, its `?` parameters bound
** from params[0..n-1] (n >= 0; params may be NULL when n is 0).
**   changes: receives the rows it inserted, updated or deleted (may be NULL).
** Refused with LEASE_MISUSE, nothing run: a tx whose callback returned,
** more than one statement, a parameter count other than n, and statements
** that would end or widen the transaction or touch the engine's own
** tables: BEGIN, COMMIT, ROLLBACK, ATTACH, DETACH, pragmas that set a
** value, and writes or schema changes to `jobs` and `lease_fences` (use
** lease_tx_complete, lease_tx_renew and lease_tx_fence_gate for those).
** Returns LEASE_OK, LEASE_MISUSE, or the database's error (LEASE_CONSTRAINT,
** LEASE_ERROR for an SQL error...), recorded on the handle (lease_errmsg);
** the transaction stays open unless SQLite ended it (then the commit
** fails with that error).
** On PostgreSQL: `?` parameters are numbered $1, $2 ... (a statement
** written with $n is sent as it is), SET, RESET, DISCARD, DEALLOCATE,
** PREPARE of a lease_ name, COPY, LOAD, LISTEN, UNLISTEN, IMPORT FOREIGN
** SCHEMA, DDL naming `jobs` or a `lease_` object, and statements that
** create a temporary object or one named like those (SELECT ... INTO too)
** are refused too, writes to those
** tables by what the statement does (a trigger); a failed statement is
** rolled back to its own savepoint, so the transaction stays open.  The
** statement runs with enable_seqscan at the server's setting, and after
** it the settings the engine's statements rely on are set again
** (search_path as the connection started, synchronous_commit, isolation,
** read-only, lock_timeout, jit, enable_seqscan, client_min_messages): a
** set_config() of one of those in it lasts for that statement only;
** other settings it changes stay for the session.
*/
LEASE_API int lease_tx_exec(lease_tx *tx, const char *sql, const lease_value *params, int n,
                            int64_t *changes);

/*
** lease_tx_query: as lease_tx_exec, and call row(ctx, ...) for each result
** row (row may be NULL: rows are skipped).  A code other than LEASE_OK from
** row stops the query and is returned.
*/
LEASE_API int lease_tx_query(lease_tx *tx, const char *sql, const lease_value *params, int n,
                             lease_row_fn *row, void *ctx);

/*
** lease_tx_complete: lease_complete of the held job inside tx (contract
** step 6, the same guarded write), at the with_lease's now.  Stored only
** if the transaction commits.
**   result, result_len: the result bytes, or result NULL for SQL NULL.
**   reason: as for lease_complete.
** Returns LEASE_OK, LEASE_MISUSE (tx no longer open, result too long),
** LEASE_RANGE or LEASE_MISMATCH (as for lease_complete) or a database
** error; after a failure the complete has stored nothing and the
** transaction stays open unless SQLite ended it.
*/
LEASE_API int lease_tx_complete(lease_tx *tx, const char *result, size_t result_len,
                                int *reason);

/*
** lease_tx_renew: lease_renew of the held job inside tx (contract step 5),
** until = now + ttl, guarded as lease_renew.  Stored only if the
** transaction commits.
**   now, ttl: as for lease_renew (caller's unit); now passes the clock
**           check against the mark the with_lease's own check left.
**   reason: as for lease_renew.
** Returns LEASE_OK, LEASE_MISUSE (tx no longer open, a bad time, a now off
** from the clock mark) or a database error.
*/
LEASE_API int lease_tx_renew(lease_tx *tx, double now, double ttl, int *reason);

/* lease_tx_now: the `now` tx's with_lease was called with (caller's unit). */
LEASE_API double lease_tx_now(const lease_tx *tx);

/*
** lease_fence_gate: the fencing check of a resource outside the jobs
** table (a storage service receiving writes tagged with a fence).  Keeps,
** per resource name, the largest fence that passed, in the table
** lease_fences(resource TEXT PRIMARY KEY, fence INTEGER NOT NULL), created
** on first use.  One statement in one write transaction: a fence smaller
** than the stored one is refused and nothing is stored; an equal or larger
** one passes and is stored.  Works on any database the engine opens, also
** one without jobs.
**   resource, resource_len: non-empty bytes (LEASE_NTS allowed).
**   fence:  >= 0.
**   reason: LEASE_GRANTED when it passed, LEASE_STALE_FENCE when refused.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_MISMATCH (a trigger another client
** defined skipped the gate's write: nothing stored) or a database error
** (nothing stored).
*/
LEASE_API int lease_fence_gate(lease_db *db, const char *resource, size_t resource_len,
                               int64_t fence, int *reason);

/*
** lease_tx_fence_gate: lease_fence_gate inside tx: stored only if the
** transaction commits.  Returns as lease_fence_gate.
*/
LEASE_API int lease_tx_fence_gate(lease_tx *tx, const char *resource, size_t resource_len,
                                  int64_t fence, int *reason);

#ifdef __cplusplus
}
#endif

#endif
