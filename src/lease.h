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
**   BUSY        a lock stayed taken past the busy timeout
**   LOCKED      a conflict inside this process (shared cache)
**   READONLY    the database cannot be written
**   NOTADB      the file is not an SQLite database
**   CORRUPT     the database file is malformed or cut short
**   FULL        a write did not fit: disk full (ENOSPC), quota (EDQUOT),
**               file-size limit (EFBIG), or SQLite's own size limits
**   IOERR       the operating system reported another I/O error
**   CANTOPEN    the file could not be opened, or is not a regular file
**   NOMEM       out of memory
**   PERM        access permission denied
**   INTERRUPT   the operation was interrupted
**   CONSTRAINT  a constraint set by another client failed
**   PROTOCOL    SQLite's locking protocol failed
**   SCHEMA      the jobs table differs from the contract's
**   RANGE       the job's fence cannot grow any further
**   MISMATCH    another client stored a value of the wrong type (a fence
**               not a non-negative integer, an until not a number)
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
  XX(EMPTY, "empty")

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
  LEASE_OPEN_NOCREATE = 2   /* fail with LEASE_CANTOPEN instead of creating the file */
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
} lease_options;

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
} lease_row;

/* A handle's settings as SQLite reports them (lease_read_settings). */
typedef struct lease_settings {
  char journal_mode[16];  /* "wal" normally; "memory" for ":memory:" */
  int synchronous;        /* SQLite's PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA */
  int busy_timeout_ms;    /* milliseconds */
} lease_settings;

/* One job handed out by lease_claim_next.  id points into memory owned by
** the handle: valid until the next call on the same handle. */
typedef struct lease_job {
  const char *id;  size_t id_len;
  int64_t fence;   /* the new fence of this job */
} lease_job;

/* Which jobs lease_list and lease_count look at. */
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
** LEASE_CANTOPEN (also for a directory, a FIFO or a device), LEASE_NOTADB,
** LEASE_CORRUPT (also a database cut short: shorter than its header, or
** not a whole number of pages, with no -wal to complete it), LEASE_SCHEMA
** (the jobs table differs; the message names the difference), LEASE_BUSY
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

/*
** lease_enqueue: insert job id in the default state (contract step 2,
** INSERT OR IGNORE: an existing job, its lease and fence, stay as they are).
**   id, id_len: the job id, non-empty bytes.
**   reason: set to LEASE_GRANTED when inserted, LEASE_EXISTS when the id
**           was already there.
** Returns LEASE_OK, LEASE_MISUSE (empty or NULL id) or a database error.
*/
LEASE_API int lease_enqueue(lease_db *db, const char *id, size_t id_len, int *reason);

/*
** lease_state: read job id through this handle's connection (contract
** step 3).  On LEASE_OK, *found is 1 and *row filled, or *found is 0 when
** there is no such job.  Row strings live until the next call on db.
** Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_state(lease_db *db, const char *id, size_t id_len, lease_row *row, int *found);

/*
** lease_claim: take the lease on job id for owner until now + ttl (contract
** step 4).  One BEGIN IMMEDIATE transaction covers the check and the
** update: the job must exist, not be done, and have until <= now (the
** boundary now == until is claimable).  On success the fence grows by 1.
**   now, ttl: caller's time unit; ttl > 0, both finite, now + ttl > now.
**   fence:  receives the new fence, or 0 when not granted.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE or LEASE_HELD.
** Returns LEASE_OK, LEASE_MISUSE (bad argument, nothing touched),
** LEASE_RANGE (fence at LEASE_FENCE_MAX), LEASE_MISMATCH (another client
** stored a fence or until of the wrong type: see lease_row.blocked), or a
** database error (LEASE_BUSY once the busy timeout ran out).
*/
LEASE_API int lease_claim(lease_db *db, const char *id, size_t id_len,
                          const char *owner, size_t owner_len,
                          double now, double ttl, int64_t *fence, int *reason);

/*
** lease_renew: extend the lease to now + ttl (contract step 5) only when
** owner and fence match, the job is not done and until > now: an expired
** lease is never revived.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_NOT_OWNER,
**           LEASE_STALE_FENCE or LEASE_EXPIRED.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_RANGE or LEASE_MISMATCH (the job is
** blocked: see lease_row.blocked) or a database error.
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
** length limit), LEASE_RANGE or LEASE_MISMATCH (as for lease_renew) or a
** database error.
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
** LEASE_RANGE or LEASE_MISMATCH (a job is blocked, as for lease_renew) or a
** database error (in both cases the transaction is rolled back: none is
** stored, and reasons are not meaningful).
*/
LEASE_API int lease_complete_many(lease_db *db, const char *owner, size_t owner_len, double now,
                                  const lease_result *items, int n, int *reasons, int *stored);

/*
** lease_release: give the lease back (contract step 7) when owner and fence
** match and done = 0: owner = NULL, until = 0, the fence is kept.
**   reason: LEASE_GRANTED, LEASE_MISSING, LEASE_DONE, LEASE_NOT_OWNER or
**           LEASE_STALE_FENCE.
** Returns LEASE_OK, LEASE_MISUSE or a database error.
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
** SQLite itself (PRAGMA journal_mode, PRAGMA synchronous), and its busy
** timeout, into *out.  Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_read_settings(lease_db *db, lease_settings *out);

/*
** lease_claim_next: claim the oldest-enqueued ready jobs for owner, in one
** BEGIN IMMEDIATE transaction, with claim's rule (not done, until <= now;
** fence + 1, owner, until = now + ttl).  Enqueue order is SQLite's rowid
** order.  Jobs whose fence cannot grow (see lease_claim) are skipped.
**   now, ttl: as for lease_claim.
**   max:   how many jobs at most, >= 1; jobs must hold max entries.
**   jobs:  receives the jobs taken, oldest first; ids live until the next
**          call on db.
**   count: receives how many were taken; 0 means nothing was ready.
** Cost: the partial index lease_jobs_pending skips done jobs; held jobs
** enqueued before the first ready one are stepped over.
** Returns LEASE_OK, LEASE_MISUSE, LEASE_NOMEM or a database error.
*/
LEASE_API int lease_claim_next(lease_db *db, const char *owner, size_t owner_len,
                               double now, double ttl, int max, lease_job *jobs,
                               int *count);

/*
** lease_enqueue_many: enqueue n jobs in one transaction (contract step 2's
** rule for each: existing ids are left as they are).
**   ids, id_lens: n ids and their lengths (LEASE_NTS allowed); all are
**          checked (non-empty) before anything is written.
**   inserted: receives how many were new.
** Returns LEASE_OK, LEASE_MISUSE (an empty or NULL id; the message names its
** 1-based position) or a database error (then none is inserted).
*/
LEASE_API int lease_enqueue_many(lease_db *db, const char *const *ids, const size_t *id_lens,
                                 int n, int *inserted);

/*
** lease_list: read up to max jobs of one kind, in enqueue (rowid) order,
** starting after the job whose seq is `after` (0 for the start): a page of
** a listing.  No write, no lock beyond a read snapshot.
**   which: LEASE_LIST_ALL, _READY, _HELD or _DONE; now (caller's unit)
**          decides ready versus held.
**   rows, seqs: room for max entries; seqs[i] is the job's rowid, the
**          `after` of the next page.  Row strings live until the next
**          call on db.
**   count: receives how many were read; fewer than max means the end.
** Returns LEASE_OK, LEASE_MISUSE (bad which, max < 1, NaN now) or a
** database error.
*/
LEASE_API int lease_list(lease_db *db, int which, double now, int64_t after, int max,
                         lease_row *rows, int64_t *seqs, int *count);

/*
** lease_count: count jobs by state at now (caller's unit) into *out.
** Returns LEASE_OK, LEASE_MISUSE or a database error.
*/
LEASE_API int lease_count(lease_db *db, double now, lease_counts *out);

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

/* lease_path: the path db was opened with (as given to lease_open). */
LEASE_API const char *lease_path(const lease_db *db);

/* lease_errname: the stable word of a result code ("busy", "full", ...); "unknown" for others. */
LEASE_API const char *lease_errname(int rc);

/* lease_reason_name: the stable word of a reason ("held", "stale_fence", ...); "unknown" for others. */
LEASE_API const char *lease_reason_name(int reason);

#ifdef __cplusplus
}
#endif

#endif
