/*
** lease.c: the lease engine over SQLite.  No Lua here.
**
** Every write is one guarded UPDATE whose WHERE clause carries the whole
** check of the contract (owner, fence, done, until), run inside a
** BEGIN IMMEDIATE transaction.  When the UPDATE changes nothing, a SELECT in
** the same transaction says why, so the reason reported is the state that
** refused the write, not a later one.
*/
#include "lease.h"
#include "lease_int.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

/* ===================================================================== */
/* The SQL                                                                */
/* ===================================================================== */

/* Contract step 1: the table, exactly as the seed declares it. */
#define SQL_CREATE_JOBS                                                   \
  "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "    \
  "until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, "    \
  "result TEXT, done INTEGER NOT NULL DEFAULT 0)"

/* The engine's one index beside the table: the jobs not done, in rowid
** (enqueue) order, so claim_next never walks over done jobs. */
#define SQL_CREATE_PENDING_INDEX                                          \
  "CREATE INDEX IF NOT EXISTS lease_jobs_pending ON jobs(done) WHERE done = 0"

/*
** Why a job not done can never be handed out, as a code: 0 when it can.
** Another client may store what the engine cannot honour: an id that is
** not a non-empty text (no call can name it), a fence that is not a
** non-negative integer (fence + 1 would not be a new token), a fence at
** 2^63-1 (it cannot grow), an until that is not a number (text compares
** greater than every number, so it would never expire).  Such a job is
** "blocked": every guard below requires this to be 0, so it is never
** claimed, renewed or completed, and never counted ready or held.  One
** definition for all of them; the codes index blocked_msg.
*/
#define SQL_BLOCKED                                                       \
  "(CASE WHEN typeof(id) <> 'text' OR id = '' THEN 1"                    \
  " WHEN typeof(fence) <> 'integer' OR fence < 0 THEN 2"                 \
  " WHEN fence >= 9223372036854775807 THEN 3"                           \
  " WHEN typeof(until) NOT IN ('integer', 'real') THEN 4 ELSE 0 END)"

/* Cached statements, prepared on first use and kept for the handle's life. */
enum {
  ST_BEGIN, ST_COMMIT, ST_ROLLBACK,
  ST_ENQUEUE, ST_STATE,
  ST_CLAIM, ST_CLAIM_WHY,
  ST_RENEW, ST_COMPLETE, ST_RELEASE, ST_WRITE_WHY,
  ST_CLAIM_NEXT, ST_LIST, ST_TALLY,
  ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
  /* ST_BEGIN: take the write lock before reading, so the check and the
  ** update see one state (contract step 4). */
  "BEGIN IMMEDIATE",
  "COMMIT",
  "ROLLBACK",
  /* ST_ENQUEUE: contract step 2; never OR REPLACE (it would reset a lease). */
  "INSERT OR IGNORE INTO jobs(id) VALUES (?1)",
  /* ST_STATE: contract step 3, plus the blocked code of a job not done. */
  "SELECT id, owner, until, fence, result, done,"
  " CASE WHEN done <> 0 THEN 0 ELSE " SQL_BLOCKED " END FROM jobs WHERE id = ?1",
  /* ST_CLAIM: contract step 4.  ?1 id, ?2 owner, ?3 now, ?4 now + ttl.
  ** Held means until > now, so until <= now is free: the boundary
  ** now == until can be claimed again.  A blocked job is never claimed. */
  "UPDATE jobs SET owner = ?2, until = ?4, fence = fence + 1"
  " WHERE id = ?1 AND done = 0 AND until <= ?3"
  " AND " SQL_BLOCKED " = 0"
  " RETURNING fence",
  /* ST_CLAIM_WHY: why ST_CLAIM changed nothing.  ?1 id, ?2 now. */
  "SELECT done <> 0, until > ?2, " SQL_BLOCKED " FROM jobs WHERE id = ?1",
  /* ST_RENEW: contract step 5.  ?1 id, ?2 owner, ?3 fence, ?4 now, ?5 now + ttl.
  ** until > now: an expired lease is never revived. */
  "UPDATE jobs SET until = ?5"
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"
  " AND " SQL_BLOCKED " = 0",
  /* ST_COMPLETE: contract step 6.  ?1 id, ?2 owner, ?3 fence, ?4 now, ?5 result. */
  "UPDATE jobs SET result = ?5, done = 1"
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"
  " AND " SQL_BLOCKED " = 0",
  /* ST_RELEASE: contract step 7.  ?1 id, ?2 owner, ?3 fence.  The fence is
  ** kept.  (A blocked job may be released: that writes a sound until.) */
  "UPDATE jobs SET owner = NULL, until = 0"
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
  /* ST_WRITE_WHY: why ST_RENEW, ST_COMPLETE or ST_RELEASE changed nothing;
  ** the negation of their WHERE clauses, one column per check. */
  "SELECT done <> 0, owner IS NOT ?2, fence IS NOT ?3, until <= ?4, " SQL_BLOCKED
  " FROM jobs WHERE id = ?1",
  /* ST_CLAIM_NEXT: claim's rule applied to the oldest ready jobs.  ?1 owner,
  ** ?2 now, ?3 now + ttl, ?4 how many.  Enqueue order is rowid order; the
  ** partial index lease_jobs_pending yields the jobs not done in that order,
  ** so the scan skips only jobs still held (or blocked). */
  "UPDATE jobs SET owner = ?1, until = ?3, fence = fence + 1"
  " WHERE rowid IN (SELECT rowid FROM jobs WHERE done = 0 AND until <= ?2"
  " AND " SQL_BLOCKED " = 0"
  " ORDER BY rowid LIMIT ?4)"
  " RETURNING rowid, id, fence",
  /* ST_LIST: a page of jobs of one kind.  ?1 after (rowid), ?2 now,
  ** ?3 limit, ?4 which (LEASE_LIST_*). */
  "SELECT rowid, id, owner, until, fence, result, done,"
  " CASE WHEN done <> 0 THEN 0 ELSE " SQL_BLOCKED " END AS b FROM jobs"
  " WHERE rowid > ?1 AND CASE ?4 WHEN 0 THEN 1"
  " WHEN 1 THEN done = 0 AND b = 0 AND until <= ?2"
  " WHEN 2 THEN done = 0 AND b = 0 AND until > ?2"
  " WHEN 3 THEN done <> 0"
  " ELSE done = 0 AND b <> 0 END"
  " ORDER BY rowid LIMIT ?3",
  /* ST_TALLY: counts by state.  ?1 now. */
  "SELECT count(*), total(done <> 0), total(done = 0 AND b = 0 AND until <= ?1),"
  " total(done = 0 AND b = 0 AND until > ?1), total(done = 0 AND b <> 0)"
  " FROM (SELECT done, until, " SQL_BLOCKED " AS b FROM jobs)",
};

/* Messages for SQL_BLOCKED's codes, and the result code each one gives a
** claim: LEASE_RANGE for a fence that cannot grow, LEASE_MISMATCH for a
** value of the wrong type. */
static const char *const blocked_msg[] = {
  NULL,
  "its id is not a non-empty text",
  "its stored fence is not a non-negative integer",
  "its fence is at its maximum, 9223372036854775807, and cannot grow",
  "its stored until is not a number",
};
#define BLOCKED_RC(code) ((code) == 3 ? LEASE_RANGE : LEASE_MISMATCH)

/* ===================================================================== */
/* The handle                                                             */
/* ===================================================================== */

#define ERRMSG_MAX 512

struct lease_db {
  sqlite3 *conn;                    /* NULL once closed or when open failed */
  char *path;                       /* as given to lease_open */
  sqlite3_stmt *stmt[ST_COUNT];     /* prepared on first use */
  int busy_timeout_ms;              /* how long busy_wait keeps waiting */
  int indexed;                      /* lease_jobs_pending exists (set by check_schema) */
  double busy_since;                /* monotonic ms when the current wait began */
  int rc;                           /* last result code */
  int xrc;                          /* SQLite's extended code behind rc, or 0 */
  char errmsg[ERRMSG_MAX];          /* message of the last failure */
  char *buf;                        /* storage for lease_row strings */
  size_t bufcap;
  lease_options opt;                /* as opened, for lease__options (claim_many) */
};

/* Clear the error state at the start of a call. */
static void clear_error(lease_db *db) {
  db->rc = LEASE_OK;
  db->xrc = 0;
  db->errmsg[0] = '\0';
}

/* Record a failure of the engine's own (misuse, schema, range...). */
static int fail(lease_db *db, int rc, const char *fmt, ...) {
  va_list ap;
  db->rc = rc;
  db->xrc = 0;
  va_start(ap, fmt);
  vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
  va_end(ap);
  return rc;
}

/* True when a system error number means "the storage would not grow": the
** disk is full (ENOSPC), the user's quota is used up (EDQUOT), or the file
** reached the process's file-size limit (EFBIG, RLIMIT_FSIZE). */
static int errno_is_full(int e) {
  return e == ENOSPC || e == EFBIG
#ifdef EDQUOT
         || e == EDQUOT
#endif
      ;
}

/* True for SQLite's I/O errors of a write that could have run out of room:
** a write, a sync, a truncate (extending a file) or growing the -shm. */
static int is_write_ioerr(int src) {
  return src == SQLITE_IOERR_WRITE || src == SQLITE_IOERR_FSYNC ||
         src == SQLITE_IOERR_TRUNCATE || src == SQLITE_IOERR_SHMSIZE;
}

/*
** Map SQLite's result code onto the engine's code.  sys_errno is the errno
** behind an I/O failure (io_errno), 0 when unknown.
**
** One mapping is the engine's own: SQLite reports a write that the file
** system refused for lack of room as SQLITE_FULL only for ENOSPC on a
** write; for EDQUOT and EFBIG its unix VFS gives SQLITE_IOERR_WRITE (or
** another write-side I/O error, is_write_ioerr).  To a caller all three mean the same thing, and not what
** "ioerr" means: nothing is broken, the write did not fit, and it can be
** retried once space returns.  So an I/O error whose errno is one of them
** is LEASE_FULL, and the message says which (see fail_sqlite).
*/
static int map_sqlite_rc(int src, int sys_errno) {
  if (is_write_ioerr(src) && errno_is_full(sys_errno)) return LEASE_FULL;
  switch (src & 0xff) {
    case SQLITE_OK: return LEASE_OK;
    case SQLITE_BUSY: return LEASE_BUSY;
    case SQLITE_LOCKED: return LEASE_LOCKED;
    case SQLITE_READONLY: return LEASE_READONLY;
    case SQLITE_NOTADB: return LEASE_NOTADB;
    case SQLITE_CORRUPT: return LEASE_CORRUPT;
    case SQLITE_FULL: return LEASE_FULL;
    case SQLITE_IOERR: return LEASE_IOERR;
    case SQLITE_CANTOPEN: return LEASE_CANTOPEN;
    case SQLITE_NOMEM: return LEASE_NOMEM;
    case SQLITE_PERM: case SQLITE_AUTH: return LEASE_PERM;
    case SQLITE_INTERRUPT: return LEASE_INTERRUPT;
    case SQLITE_CONSTRAINT: return LEASE_CONSTRAINT;
    case SQLITE_PROTOCOL: return LEASE_PROTOCOL;
    case SQLITE_MISUSE: case SQLITE_RANGE: return LEASE_MISUSE;
    case SQLITE_TOOBIG: return LEASE_FULL;
    default: return LEASE_ERROR;
  }
}

/* The words for an errno that errno_is_full accepts (strerror is not
** thread-safe, and these are the only ones a message needs). */
static const char *full_errno_words(int e) {
  if (e == ENOSPC) return "no space left on device";
  if (e == EFBIG) return "file too large";
  return "disk quota exceeded";
}

/*
** The errno behind an I/O failure on conn.  SQLite's own record
** (sqlite3_system_errno) is often 0 by the time a failed COMMIT returns, so
** fall back to what the unix VFS stored on the file that failed: the WAL or
** rollback journal (written at commit), then the database file (written at
** checkpoint).  0 when none is known.
*/
static int io_errno(sqlite3 *conn) {
  sqlite3_file *f = NULL;
  int e = sqlite3_system_errno(conn);
  if (e) return e;
  if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) == SQLITE_OK &&
      f && f->pMethods && f->pMethods->xFileControl(f, SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK &&
      e)
    return e;
  e = 0;
  if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_LAST_ERRNO, &e) != SQLITE_OK) e = 0;
  return e;
}

/* Record a failure SQLite reported with code src, keeping SQLite's message
** (plus the cause, when an I/O error is mapped to LEASE_FULL).  Must run
** before anything else touches the connection. */
static int fail_sqlite(lease_db *db, int src) {
  const char *msg = db->conn ? sqlite3_errmsg(db->conn) : sqlite3_errstr(src);
  int sys = 0;
  /* sqlite3_errmsg may describe a newer call than src; prefer the text of
  ** src itself when the connection's code does not match. */
  if (db->conn && (sqlite3_extended_errcode(db->conn) & 0xff) != (src & 0xff))
    msg = sqlite3_errstr(src);
  if (db->conn && is_write_ioerr(src)) sys = io_errno(db->conn);
  db->rc = map_sqlite_rc(src, sys);
  if (db->rc == LEASE_OK) db->rc = LEASE_ERROR;
  db->xrc = src;
  if (db->rc == LEASE_FULL && is_write_ioerr(src))
    snprintf(db->errmsg, sizeof db->errmsg, "%s (%s)", msg, full_errno_words(sys));
  else
    snprintf(db->errmsg, sizeof db->errmsg, "%s", msg);
  return db->rc;
}

/* Milliseconds on the monotonic clock, for the busy timeout. */
static double monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
** The busy handler: wait for the write lock with growing sleeps (500 us,
** 1 ms, then 2 ms each) until busy_timeout_ms has passed.
**
** Why these: when threads share a file, every time the write lock passes
** to another connection, that connection finds the WAL changed, drops its
** whole page cache and reads its pages again; and each waiter that polls
** takes a WAL read mark for a moment, which can keep the automatic
** checkpoint from finishing, so it runs again (with its fsyncs) after the
** next commit.  Waking after 50 us, as this handler first did, handed the
** lock over after nearly every transaction.  With 8 threads on 2 cores
** running enqueue+claim+complete cycles (perf stat over bench/bench.lua's
** thread workload), synchronous=FULL: 5.8 page reads and 3.8 fdatasyncs
** per cycle, against 1.3 and 3.0 (one thread: 3.0) with this schedule;
** NORMAL: 3.0 reads and 0.16 fdatasyncs, against 1.1 and 0.06.  A first
** sleep of 500 us, some twenty short transactions, lets the holder run a
** few of its own before a waiter comes back; the 2 ms cap keeps a waiter
** polling often enough to get its turn well within the busy timeout.
** SQLite's own handler (1 ms rising to 100 ms) hands over least but
** leaves a waiter starving for a second or more.
** Returns non-zero to retry, 0 to give up (the call then fails LEASE_BUSY).
*/
static int busy_wait(void *arg, int count) {
  lease_db *db = arg;
  double now = monotonic_ms(), left;
  long us;
  struct timespec ts;
  if (db->busy_timeout_ms <= 0) return 0;
  if (count == 0) db->busy_since = now;
  left = db->busy_since + db->busy_timeout_ms - now;
  if (left <= 0) return 0;
  us = count < 2 ? 500L << count : 2000L;
  if ((double)us > left * 1e3) us = (long)(left * 1e3) + 1;
  ts.tv_sec = us / 1000000L;
  ts.tv_nsec = (us % 1000000L) * 1000L;
  nanosleep(&ts, NULL);
  return 1;
}

/* The cached statement `which`, preparing it on first use; NULL on failure. */
static sqlite3_stmt *stmt(lease_db *db, int which) {
  if (!db->stmt[which]) {
    int src = sqlite3_prepare_v3(db->conn, stmt_sql[which], -1,
                                 SQLITE_PREPARE_PERSISTENT, &db->stmt[which], NULL);
    if (src != SQLITE_OK) {
      fail_sqlite(db, src);
      sqlite3_finalize(db->stmt[which]);
      db->stmt[which] = NULL;
    }
  }
  return db->stmt[which];
}

/* Step a statement that returns no row (BEGIN, COMMIT, INSERT...). */
static int run(lease_db *db, int which) {
  sqlite3_stmt *st = stmt(db, which);
  int src;
  if (!st) return db->rc;
  src = sqlite3_step(st);
  if (src != SQLITE_DONE && src != SQLITE_ROW) {
    fail_sqlite(db, src);
    sqlite3_reset(st);
    return db->rc;
  }
  sqlite3_reset(st);
  return LEASE_OK;
}

/* Run one statement of DDL or PRAGMA, reading and ignoring any rows. */
static int exec1(lease_db *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int src = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
  if (src == SQLITE_OK) {
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {}
    if (src == SQLITE_DONE) src = SQLITE_OK;
  }
  if (src != SQLITE_OK) fail_sqlite(db, src);
  sqlite3_finalize(st);
  return src == SQLITE_OK ? LEASE_OK : db->rc;
}

/* Roll back whatever transaction is open, keeping the recorded error. */
static void rollback(lease_db *db) {
  if (!sqlite3_get_autocommit(db->conn)) {
    sqlite3_stmt *st = stmt(db, ST_ROLLBACK);
    if (st) {
      sqlite3_step(st);
      sqlite3_reset(st);
    }
  }
}

/* Commit; on failure roll back, so the handle stays usable. */
static int commit(lease_db *db) {
  int rc = run(db, ST_COMMIT);
  if (rc != LEASE_OK) rollback(db);
  return rc;
}

/* End a read outside any transaction: reset the statement and, when the
** last step was not SQLITE_DONE, record that step's error (before the
** reset, which could change the connection's message). */
static int finish_read(lease_db *db, sqlite3_stmt *st, int src) {
  if (src != SQLITE_DONE) fail_sqlite(db, src);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? LEASE_OK : db->rc;
}

/* Finish a failed step: record the error, reset, roll back. */
static int abort_step(lease_db *db, sqlite3_stmt *st, int src) {
  fail_sqlite(db, src);
  sqlite3_reset(st);
  rollback(db);
  return db->rc;
}

/* ===================================================================== */
/* Argument checks                                                        */
/* ===================================================================== */

/*
** Refuse a string longer than this connection's SQLite can hold
** (SQLITE_LIMIT_LENGTH, 10^9 bytes in Debian's build).  Checked before
** binding, because sqlite3_bind_text refuses such a string with
** SQLITE_TOOBIG and leaves the parameter NULL: unchecked, a result would be
** stored as NULL and reported stored.
*/
static int check_length(lease_db *db, const char *what, size_t len) {
  int limit = sqlite3_limit(db->conn, SQLITE_LIMIT_LENGTH, -1);
  if (len > (size_t)limit)
    return fail(db, LEASE_MISUSE, "%s is %zu bytes, more than SQLite's limit of %d", what, len, limit);
  return LEASE_OK;
}

/* Resolve LEASE_NTS and refuse NULL or empty byte strings, or too long ones. */
static int check_bytes(lease_db *db, const char *what, const char *s, size_t *len) {
  if (!s) return fail(db, LEASE_MISUSE, "%s must not be NULL", what);
  if (*len == LEASE_NTS) *len = strlen(s);
  if (*len == 0) return fail(db, LEASE_MISUSE, "%s must not be empty", what);
  return check_length(db, what, *len);
}

/* See lease.h.  The sum check catches a ttl too small to change a huge now
** (and an overflow to infinity), so a lease always ends after it starts. */
int lease_check_time(double now, double ttl, const char **why) {
  const char *msg = NULL;
  int arg = 0;
  if (!isfinite(now)) { arg = LEASE_ARG_NOW; msg = "now must be a finite number"; }
  else if (isnan(ttl) || !(ttl > 0)) { arg = LEASE_ARG_TTL; msg = "ttl must be a number > 0"; }
  else if (!isfinite(ttl)) { arg = LEASE_ARG_TTL; msg = "ttl must be finite"; }
  else if (!isfinite(now + ttl) || !(now + ttl > now)) {
    arg = LEASE_ARG_TTL;
    msg = "now + ttl must be a finite number greater than now";
  }
  if (why) *why = msg;
  return arg;
}

/* Refuse a NULL or closed handle.  Evaluates to the code to return. */
#define CHECK_DB(db)                                   \
  do {                                                 \
    if (!(db)) return LEASE_MISUSE;                    \
    clear_error(db);                                   \
    if (!(db)->conn)                                   \
      return fail((db), LEASE_MISUSE, "the database is closed"); \
  } while (0)

/* Validate id and owner, as most operations need both. */
static int check_id_owner(lease_db *db, const char *id, size_t *id_len,
                          const char *owner, size_t *owner_len) {
  int rc = check_bytes(db, "id", id, id_len);
  if (rc == LEASE_OK) rc = check_bytes(db, "owner", owner, owner_len);
  return rc;
}

/* ===================================================================== */
/* Opening: pragmas and the schema check                                  */
/* ===================================================================== */

/* One column of the contract's jobs table. */
typedef struct column_spec {
  const char *name;
  const char *type;
  int notnull_zero;   /* 1: must be NOT NULL DEFAULT 0 */
  int pk;             /* 1: the primary key */
} column_spec;

static const column_spec jobs_columns[] = {
  {"id", "TEXT", 0, 1},
  {"owner", "TEXT", 0, 0},
  {"until", "REAL", 1, 0},
  {"fence", "INTEGER", 1, 0},
  {"result", "TEXT", 0, 0},
  {"done", "INTEGER", 1, 0},
};
#define NCOLUMNS (sizeof jobs_columns / sizeof jobs_columns[0])

/* True when a column default (as PRAGMA table_info prints it) is zero:
** "0", "0.0", "'0'", "(0)" all count. */
static int default_is_zero(const char *d) {
  char tmp[64];
  size_t n, i = 0, j;
  char *end;
  double v;
  if (!d) return 0;
  n = strlen(d);
  if (n >= sizeof tmp) return 0;
  j = n;
  while (i < j && (d[i] == '(' || d[i] == '\'' || d[i] == '"')) i++;
  while (j > i && (d[j - 1] == ')' || d[j - 1] == '\'' || d[j - 1] == '"')) j--;
  memcpy(tmp, d + i, j - i);
  tmp[j - i] = '\0';
  if (!tmp[0]) return 0;
  v = strtod(tmp, &end);
  return *end == '\0' && v == 0.0;
}

/*
** Compare the jobs table with the contract.  Sets *missing when there is no
** table.  Extra columns are allowed when an INSERT of the id alone can fill
** them (nullable or with a default); the six columns must keep their names,
** types, primary key and NOT NULL DEFAULT 0.  Never changes the table.
*/
static int check_schema(lease_db *db, int *missing) {
  sqlite3_stmt *st = NULL;
  int seen[NCOLUMNS] = {0};
  int src, rows = 0, rc = LEASE_OK;
  size_t k;
  *missing = 0;
  db->indexed = 0;
  src = sqlite3_prepare_v2(db->conn,
      "SELECT type FROM sqlite_master WHERE name = 'jobs' COLLATE NOCASE", -1, &st, NULL);
  if (src != SQLITE_OK) return fail_sqlite(db, src);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(st, 0);
    if (!type || strcmp(type, "table") != 0)
      rc = fail(db, LEASE_SCHEMA, "jobs is a %s, not a table", type ? type : "?");
  } else if (src == SQLITE_DONE) {
    *missing = 1;
  } else {
    rc = fail_sqlite(db, src);
  }
  sqlite3_finalize(st);
  if (rc != LEASE_OK || *missing) return rc;

  src = sqlite3_prepare_v2(db->conn, "PRAGMA table_info(jobs)", -1, &st, NULL);
  if (src != SQLITE_OK) return fail_sqlite(db, src);
  while ((src = sqlite3_step(st)) == SQLITE_ROW && rc == LEASE_OK) {
    const char *name = (const char *)sqlite3_column_text(st, 1);
    const char *type = (const char *)sqlite3_column_text(st, 2);
    int notnull = sqlite3_column_int(st, 3);
    const char *dflt = (const char *)sqlite3_column_text(st, 4);
    int pk = sqlite3_column_int(st, 5);
    rows++;
    for (k = 0; k < NCOLUMNS; k++)
      if (name && strcasecmp(name, jobs_columns[k].name) == 0) break;
    if (k == NCOLUMNS) {   /* a column of another client's */
      if (name && (strcasecmp(name, "rowid") == 0 || strcasecmp(name, "oid") == 0 ||
                   strcasecmp(name, "_rowid_") == 0))
        rc = fail(db, LEASE_SCHEMA,
                  "jobs has a column named %s, which hides the rowid the engine keeps "
                  "enqueue order in", name);
      else if (pk)
        rc = fail(db, LEASE_SCHEMA, "jobs has column %s in its primary key; only id may be", name);
      else if (notnull && !dflt)
        rc = fail(db, LEASE_SCHEMA,
                  "jobs has column %s NOT NULL without a default, so enqueue could not insert",
                  name);
      continue;
    }
    seen[k] = 1;
    if (!type || strcasecmp(type, jobs_columns[k].type) != 0)
      rc = fail(db, LEASE_SCHEMA, "jobs.%s is %s, expected %s", jobs_columns[k].name,
                type && *type ? type : "untyped", jobs_columns[k].type);
    else if ((pk != 0) != jobs_columns[k].pk)
      rc = fail(db, LEASE_SCHEMA, jobs_columns[k].pk ? "jobs.%s is not the primary key"
                                                     : "jobs.%s is part of the primary key",
                jobs_columns[k].name);
    else if (jobs_columns[k].notnull_zero && !(notnull && default_is_zero(dflt)))
      rc = fail(db, LEASE_SCHEMA, "jobs.%s must be NOT NULL DEFAULT 0", jobs_columns[k].name);
  }
  if (src != SQLITE_DONE && src != SQLITE_ROW && rc == LEASE_OK) rc = fail_sqlite(db, src);
  sqlite3_finalize(st);
  if (rc != LEASE_OK) return rc;
  if (rows == 0) return fail(db, LEASE_SCHEMA, "jobs has no columns");
  /* Every contract column must be there before anything asks about one
  ** (sqlite3_table_column_metadata fails on a missing column). */
  for (k = 0; k < NCOLUMNS; k++)
    if (!seen[k])
      return fail(db, LEASE_SCHEMA, "jobs has no column %s %s", jobs_columns[k].name,
                  jobs_columns[k].type);
  /* Ids and owners are byte strings, compared byte for byte: a NOCASE or
  ** RTRIM collation would make "a " the same job as "a", "W" the owner "w". */
  for (k = 0; k < 2; k++) {
    const char *coll = NULL;
    if (sqlite3_table_column_metadata(db->conn, "main", "jobs", jobs_columns[k].name, NULL,
                                      &coll, NULL, NULL, NULL) != SQLITE_OK)
      return fail_sqlite(db, sqlite3_errcode(db->conn));
    if (coll && strcasecmp(coll, "BINARY") != 0)
      return fail(db, LEASE_SCHEMA, "jobs.%s has collation %s; ids and owners must compare "
                  "byte for byte (BINARY)", jobs_columns[k].name, coll);
  }
  /* Another unique index would make enqueue refuse ids the primary key
  ** allows (INSERT OR IGNORE says "exists" instead of failing). */
  src = sqlite3_prepare_v2(db->conn, "PRAGMA index_list(jobs)", -1, &st, NULL);
  if (src != SQLITE_OK) return fail_sqlite(db, src);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *origin = (const char *)sqlite3_column_text(st, 3);
    if (sqlite3_column_int(st, 2) && (!origin || strcmp(origin, "pk") != 0)) {
      rc = fail(db, LEASE_SCHEMA, "jobs has the unique index %s besides its primary key",
                (const char *)sqlite3_column_text(st, 1));
      break;
    }
  }
  if (rc == LEASE_OK && src != SQLITE_DONE) rc = fail_sqlite(db, src);
  sqlite3_finalize(st);
  if (rc != LEASE_OK) return rc;
  /* Enqueue order is rowid order: a WITHOUT ROWID or virtual table has none. */
  src = sqlite3_prepare_v2(db->conn, "SELECT rowid FROM jobs LIMIT 0", -1, &st, NULL);
  sqlite3_finalize(st);
  if (src != SQLITE_OK)
    return fail(db, LEASE_SCHEMA,
                "jobs has no rowid (a WITHOUT ROWID table?), which the engine keeps enqueue "
                "order in");
  src = sqlite3_prepare_v2(db->conn,
      "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'lease_jobs_pending'",
      -1, &st, NULL);
  if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) db->indexed = 1;
  if (src != SQLITE_OK && src != SQLITE_ROW && src != SQLITE_DONE) rc = fail_sqlite(db, src);
  sqlite3_finalize(st);
  return rc;
}

/* ===================================================================== */
/* Opening: the file as found, before SQLite writes anything beside it     */
/* ===================================================================== */

/*
** Refuse a path that names something other than a regular file, before
** SQLite opens it: a directory (SQLite's read-only open of one succeeds,
** then fails as a "disk I/O error"), a FIFO (a read-only open blocks for
** ever), a device (/dev/null swallows every write, and SQLite creates
** /dev/null-journal beside it).  A missing path is left to SQLite (it
** creates the file, or refuses); so are ":memory:", "" and "file:" URIs,
** which name no file directly.  Only stat(): no descriptor of ours is ever
** opened on a database file (closing one would drop the POSIX locks that
** the process's SQLite connections hold on it).
*/
static int check_path(lease_db *db, const char *path) {
  struct stat st;
  if (!path[0] || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
    return LEASE_OK;
  if (stat(path, &st) != 0) return LEASE_OK;
  if (S_ISDIR(st.st_mode))
    return fail(db, LEASE_CANTOPEN, "unable to open database file: it is a directory");
  if (!S_ISREG(st.st_mode))
    return fail(db, LEASE_CANTOPEN, "unable to open database file: not a regular file");
  return LEASE_OK;
}

/*
** Look at the database file before SQLite reads it: its size (stat) and its
** first 100 bytes, read through the connection's own file handle
** (SQLITE_FCNTL_FILE_POINTER; SQLite opens the file at sqlite3_open_v2 but
** reads nothing until the first statement).
**
** A file of one byte other than "S" is not a database: SQLite reports a
** one-byte file as empty (a work-around of its own for OS X's msdos file
** system, where it writes that "S"), then initialises it over the byte.
**
** A file that starts like a database ("SQLite format 3") but is shorter
** than the 100-byte header, or is not a whole number of its pages, has been
** cut short.  SQLite itself opens the second kind, reads the missing tail
** as zeros and writes to it; refuse both as corrupt.  A -wal file holding
** frames may complete the file (a checkpoint rewrites it), so then the
** check is SQLite's.  The size is read before the -wal is looked at: a
** checkpoint extending the file runs only while the -wal holds frames.
**
** Sets *precheck when the file is in WAL mode (header bytes 18-19) and has
** no -wal: SQLite would create -wal and -shm beside it at the first read
** and leave them behind when the file then turns out corrupt or someone
** else's (check_schema_immutable avoids that).
*/
static int check_file(lease_db *db, int *precheck) {
  sqlite3_file *f = NULL;
  long long size;
  unsigned char hdr[100];
  const char *name = sqlite3_db_filename(db->conn, "main"), *wal;
  struct stat st;
  int src, walfile = 0, page;
  *precheck = 0;
  if (!name || !name[0] || stat(name, &st) != 0 || st.st_size <= 0) return LEASE_OK;
  size = (long long)st.st_size;
  if (sqlite3_file_control(db->conn, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
      !f || !f->pMethods)
    return LEASE_OK;
  memset(hdr, 0, sizeof hdr);
  src = f->pMethods->xRead(f, hdr, size < 100 ? (int)size : 100, 0);
  if (src != SQLITE_OK && src != SQLITE_IOERR_SHORT_READ) return LEASE_OK;   /* SQLite will say */
  if (size == 1 && hdr[0] != 'S')
    return fail(db, LEASE_NOTADB, "file is not a database: one byte");
  /* Not a database at all: SQLite refuses it (notadb) before creating anything. */
  if (memcmp(hdr, "SQLite format 3", 16) != 0) return LEASE_OK;
  wal = sqlite3_filename_wal(name);
  if (wal && stat(wal, &st) == 0) {
    walfile = 1;
    if (st.st_size > 0) return LEASE_OK;
  }
  if (size < 100)
    return fail(db, LEASE_CORRUPT, "database disk image is malformed: the file is %lld bytes,"
                " shorter than the 100-byte header (truncated)", size);
  page = hdr[16] << 8 | hdr[17];
  if (page == 1) page = 65536;
  if (page >= 512 && page <= 65536 && (page & (page - 1)) == 0 && size % page != 0)
    return fail(db, LEASE_CORRUPT, "database disk image is malformed: the file is %lld bytes,"
                " not a whole number of its %d-byte pages (truncated)", size, page);
  *precheck = !walfile && (hdr[18] == 2 || hdr[19] == 2);
  return LEASE_OK;
}

/*
** check_schema, run on a second connection that opens the file read-only
** with immutable=1: it takes no locks and opens no -wal or -shm, it reads
** the main file as it is.  For a WAL-mode file without a -wal (check_file),
** so that a file that is corrupt, not ours, or whose jobs table differs is
** refused with nothing created beside it; when it passes, its result (and
** *missing, and db->indexed) stands for the check on db's own connection,
** which then needs no second schema read.  Sound there: without a -wal no
** connection has the file open in WAL mode, and only a checkpoint (which
** needs a -wal holding frames) writes to the main file.  Costs one more
** open per opening of an idle WAL file (about 60 us here).
*/
static int check_schema_immutable(lease_db *db, int *missing) {
  static const char hex[] = "0123456789ABCDEF";
  const char *name = sqlite3_db_filename(db->conn, "main");
  sqlite3 *real = db->conn, *c = NULL;
  char *uri;
  size_t n, i, k = 0;
  int src, rc;
  *missing = 0;
  if (!name || !name[0]) return check_schema(db, missing);
  n = strlen(name);
  if (!(uri = malloc(3 * n + 32))) return fail(db, LEASE_NOMEM, "out of memory");
  memcpy(uri, "file:", 5);
  k = 5;
  for (i = 0; i < n; i++) {   /* percent-encode all but unreserved bytes and '/' */
    unsigned char ch = (unsigned char)name[i];
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '/' || ch == '.' || ch == '_' || ch == '-' || ch == '~') {
      uri[k++] = (char)ch;
    } else {
      uri[k++] = '%';
      uri[k++] = hex[ch >> 4];
      uri[k++] = hex[ch & 15];
    }
  }
  memcpy(uri + k, "?immutable=1", sizeof "?immutable=1");
  src = sqlite3_open_v2(uri, &c, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                        NULL);
  free(uri);
  db->conn = c;   /* so that check_schema and fail_sqlite speak of c */
  if (src != SQLITE_OK) {
    rc = fail_sqlite(db, src);
  } else {
    sqlite3_extended_result_codes(c, 1);
    rc = check_schema(db, missing);
  }
  db->conn = real;
  sqlite3_close_v2(c);
  return rc;
}

void lease_options_default(lease_options *opt) {
  if (!opt) return;
  opt->busy_timeout_ms = 10000;
  opt->synchronous = LEASE_SYNC_FULL;
  opt->flags = 0;
}

/* See lease.h. */
int lease_open(const char *path, const lease_options *opt, lease_db **out) {
  lease_options defaults;
  lease_db *db;
  int flags, src, rc, missing, precheck;
  size_t n;
  if (!out) return LEASE_MISUSE;
  *out = NULL;
  db = calloc(1, sizeof *db);
  if (!db) return LEASE_NOMEM;
  *out = db;
  if (!path) return fail(db, LEASE_MISUSE, "path must not be NULL");
  n = strlen(path);
  db->path = malloc(n + 1);
  if (!db->path) return fail(db, LEASE_NOMEM, "out of memory");
  memcpy(db->path, path, n + 1);
  if (!opt) {
    lease_options_default(&defaults);
    opt = &defaults;
  }
  if (opt->busy_timeout_ms < 0)
    return fail(db, LEASE_MISUSE, "busy_timeout_ms must be >= 0");
  if (opt->synchronous != LEASE_SYNC_FULL && opt->synchronous != LEASE_SYNC_NORMAL)
    return fail(db, LEASE_MISUSE, "synchronous must be LEASE_SYNC_FULL or LEASE_SYNC_NORMAL");
  if (opt->flags & ~(LEASE_OPEN_READONLY | LEASE_OPEN_NOCREATE))
    return fail(db, LEASE_MISUSE, "unknown open flags");
  db->busy_timeout_ms = opt->busy_timeout_ms;
  db->opt = *opt;
  if ((rc = check_path(db, path)) != LEASE_OK) return rc;

  /* One handle is used by one thread at a time, so SQLite's per-connection
  ** mutex is not needed (SQLITE_OPEN_NOMUTEX). */
  flags = SQLITE_OPEN_NOMUTEX;
  if (opt->flags & LEASE_OPEN_READONLY) flags |= SQLITE_OPEN_READONLY;
  else flags |= SQLITE_OPEN_READWRITE | ((opt->flags & LEASE_OPEN_NOCREATE) ? 0 : SQLITE_OPEN_CREATE);
  src = sqlite3_open_v2(path, &db->conn, flags, NULL);
  if (src != SQLITE_OK) {
    rc = fail_sqlite(db, src);
    sqlite3_close_v2(db->conn);
    db->conn = NULL;
    return rc;
  }
  sqlite3_extended_result_codes(db->conn, 1);
  sqlite3_busy_handler(db->conn, busy_wait, db);

  /* Check the file before writing anything to it: a file that is not a
  ** database, cut short, corrupt, or whose jobs table is another's, stays
  ** byte-for-byte as it was, with no -wal or -shm left beside it (a WAL
  ** file without a -wal is checked through an immutable connection, which
  ** then stands for this one's check).  Then WAL, which lets readers run
  ** beside the one writer (a read-only handle leaves the mode as it finds
  ** it). */
  rc = check_file(db, &precheck);
  if (rc == LEASE_OK && precheck) rc = check_schema_immutable(db, &missing);
  else if (rc == LEASE_OK) rc = check_schema(db, &missing);
  if (rc == LEASE_OK && !(opt->flags & LEASE_OPEN_READONLY))
    rc = exec1(db, "PRAGMA journal_mode=WAL");
  if (rc == LEASE_OK)
    rc = exec1(db, opt->synchronous == LEASE_SYNC_FULL ? "PRAGMA synchronous=FULL"
                                                       : "PRAGMA synchronous=NORMAL");
  if (rc == LEASE_OK && missing) {
    if (opt->flags & LEASE_OPEN_READONLY)
      rc = fail(db, LEASE_SCHEMA, "the database has no jobs table (opened read-only)");
    else if ((rc = lease_init(db)) == LEASE_OK)
      rc = check_schema(db, &missing);   /* another client may have raced us */
  }
  /* A table made by another client, or by an older engine, gets the index
  ** claim_next relies on for its speed; a file we may not write goes
  ** without (claim_next still works, scanning). */
  if (rc == LEASE_OK && !db->indexed && !(opt->flags & LEASE_OPEN_READONLY) &&
      !sqlite3_db_readonly(db->conn, "main"))
    rc = exec1(db, SQL_CREATE_PENDING_INDEX);
  if (rc != LEASE_OK) {
    sqlite3_close_v2(db->conn);
    db->conn = NULL;
    return rc;
  }
  clear_error(db);
  return LEASE_OK;
}

/* See lease.h. */
int lease_close(lease_db *db) {
  int i;
  if (!db) return LEASE_OK;
  for (i = 0; i < ST_COUNT; i++) sqlite3_finalize(db->stmt[i]);
  if (db->conn) sqlite3_close_v2(db->conn);
  free(db->path);
  free(db->buf);
  free(db);
  return LEASE_OK;
}

/* ===================================================================== */
/* The operations                                                         */
/* ===================================================================== */

/* See lease.h (contract step 1).  The index only speeds up claim_next. */
int lease_init(lease_db *db) {
  int rc;
  CHECK_DB(db);
  rc = exec1(db, SQL_CREATE_JOBS);
  if (rc == LEASE_OK) rc = exec1(db, SQL_CREATE_PENDING_INDEX);
  return rc;
}

/* See lease.h (contract step 2). */
int lease_enqueue(lease_db *db, const char *id, size_t id_len, int *reason) {
  sqlite3_stmt *st;
  int src;
  CHECK_DB(db);
  if (check_bytes(db, "id", id, &id_len)) return db->rc;
  if (!(st = stmt(db, ST_ENQUEUE))) return db->rc;
  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);
  src = sqlite3_step(st);
  if (src != SQLITE_DONE) return abort_step(db, st, src);
  sqlite3_reset(st);
  if (reason) *reason = sqlite3_changes(db->conn) == 1 ? LEASE_GRANTED : LEASE_EXISTS;
  return LEASE_OK;
}

/* Make room for n bytes of row strings in the handle's buffer. */
static int reserve(lease_db *db, size_t n) {
  if (n > db->bufcap) {
    char *p = realloc(db->buf, n);
    if (!p) return fail(db, LEASE_NOMEM, "out of memory");
    db->buf = p;
    db->bufcap = n;
  }
  return LEASE_OK;
}

/*
** Copy the row at the statement's columns (first column `c0`: id, owner,
** until, fence, result, done, blocked code) into *row, its strings appended to the
** handle's buffer at *used.  Pointers are fixed up by fix_row once the
** buffer stops moving.  Returns LEASE_OK or LEASE_NOMEM.
*/
static int copy_row(lease_db *db, sqlite3_stmt *st, int c0, lease_row *row, size_t *used) {
  const int cols[3] = {c0, c0 + 1, c0 + 4};
  size_t *lens[3] = {&row->id_len, &row->owner_len, &row->result_len};
  const char **ptrs[3] = {&row->id, &row->owner, &row->result};
  int i;
  for (i = 0; i < 3; i++) {
    const void *p = sqlite3_column_type(st, cols[i]) == SQLITE_NULL ? NULL
                                                                   : sqlite3_column_text(st, cols[i]);
    size_t n = p ? (size_t)sqlite3_column_bytes(st, cols[i]) : 0;
    if (!p) {
      *ptrs[i] = NULL;
      *lens[i] = 0;
      continue;
    }
    if (reserve(db, *used + n + 1) != LEASE_OK) return db->rc;
    if (n) memcpy(db->buf + *used, p, n);
    db->buf[*used + n] = '\0';
    /* an offset for now: the buffer may still move */
    *ptrs[i] = (const char *)(uintptr_t)(*used + 1);
    *lens[i] = n;
    *used += n + 1;
  }
  /* an until that is not a number reads as NaN, not as a made-up number */
  i = sqlite3_column_type(st, c0 + 2);
  row->until = (i == SQLITE_INTEGER || i == SQLITE_FLOAT) ? sqlite3_column_double(st, c0 + 2) : NAN;
  row->fence = sqlite3_column_int64(st, c0 + 3);
  row->done = sqlite3_column_int64(st, c0 + 5) != 0;
  i = sqlite3_column_int(st, c0 + 6);
  row->blocked = i > 0 && i <= 4 ? blocked_msg[i] : NULL;
  return LEASE_OK;
}

/* Turn the offsets copy_row stored (plus one, so NULL stays NULL) into
** pointers into the handle's buffer. */
static void fix_row(lease_db *db, lease_row *row) {
  if (row->id) row->id = db->buf + ((uintptr_t)row->id - 1);
  if (row->owner) row->owner = db->buf + ((uintptr_t)row->owner - 1);
  if (row->result) row->result = db->buf + ((uintptr_t)row->result - 1);
}

/* See lease.h (contract step 3). */
int lease_state(lease_db *db, const char *id, size_t id_len, lease_row *row, int *found) {
  sqlite3_stmt *st;
  size_t used = 0;
  int src;
  CHECK_DB(db);
  if (!row || !found) return fail(db, LEASE_MISUSE, "row and found must not be NULL");
  *found = 0;
  if (check_bytes(db, "id", id, &id_len)) return db->rc;
  if (!(st = stmt(db, ST_STATE))) return db->rc;
  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    /* Copy the strings out before the statement is reset. */
    if (copy_row(db, st, 0, row, &used) != LEASE_OK) {
      sqlite3_reset(st);
      return db->rc;
    }
    fix_row(db, row);
    *found = 1;
    src = sqlite3_step(st);   /* id is the primary key: at most one row */
  }
  if (src != SQLITE_DONE) *found = 0;
  return finish_read(db, st, src);
}

/* See lease.h. */
int lease_list(lease_db *db, int which, double now, int64_t after, int max,
               lease_row *rows, int64_t *seqs, int *count) {
  sqlite3_stmt *st;
  size_t used = 0;
  int src, n = 0, i;
  CHECK_DB(db);
  if (count) *count = 0;
  if (!rows || !seqs || !count) return fail(db, LEASE_MISUSE, "rows, seqs and count must not be NULL");
  if (which < LEASE_LIST_ALL || which > LEASE_LIST_BLOCKED) return fail(db, LEASE_MISUSE, "unknown list kind");
  if (max < 1) return fail(db, LEASE_MISUSE, "max must be at least 1");
  if (isnan(now)) return fail(db, LEASE_MISUSE, "now must be a number");
  if (!(st = stmt(db, ST_LIST))) return db->rc;
  sqlite3_bind_int64(st, 1, after);
  sqlite3_bind_double(st, 2, now);
  sqlite3_bind_int(st, 3, max);
  sqlite3_bind_int(st, 4, which);
  while (n < max && (src = sqlite3_step(st)) == SQLITE_ROW) {
    seqs[n] = sqlite3_column_int64(st, 0);
    if (copy_row(db, st, 1, &rows[n], &used) != LEASE_OK) {
      sqlite3_reset(st);
      return db->rc;
    }
    n++;
  }
  if (finish_read(db, st, n < max ? src : SQLITE_DONE) != LEASE_OK) return db->rc;
  for (i = 0; i < n; i++) fix_row(db, &rows[i]);
  *count = n;
  return LEASE_OK;
}

/* See lease.h. */
int lease_count(lease_db *db, double now, lease_counts *out) {
  sqlite3_stmt *st;
  int src;
  CHECK_DB(db);
  if (!out) return fail(db, LEASE_MISUSE, "out must not be NULL");
  if (isnan(now)) return fail(db, LEASE_MISUSE, "now must be a number");
  memset(out, 0, sizeof *out);
  if (!(st = stmt(db, ST_TALLY))) return db->rc;
  sqlite3_bind_double(st, 1, now);
  src = sqlite3_step(st);
  if (src == SQLITE_ROW) {
    out->total = sqlite3_column_int64(st, 0);
    out->done = (int64_t)sqlite3_column_double(st, 1);
    out->ready = (int64_t)sqlite3_column_double(st, 2);
    out->held = (int64_t)sqlite3_column_double(st, 3);
    out->blocked = (int64_t)sqlite3_column_double(st, 4);
    src = SQLITE_DONE;
  }
  return finish_read(db, st, src);
}

/* See lease.h (contract step 4). */
int lease_claim(lease_db *db, const char *id, size_t id_len, const char *owner,
                size_t owner_len, double now, double ttl, int64_t *fence, int *reason) {
  sqlite3_stmt *st, *why;
  const char *msg;
  int src, rc, granted = 0;
  int64_t got = 0;
  CHECK_DB(db);
  if (fence) *fence = 0;
  if (check_id_owner(db, id, &id_len, owner, &owner_len)) return db->rc;
  if (lease_check_time(now, ttl, &msg)) return fail(db, LEASE_MISUSE, "%s", msg);
  if (!(st = stmt(db, ST_CLAIM)) || !(why = stmt(db, ST_CLAIM_WHY))) return db->rc;
  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;
  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, owner, (int)owner_len, SQLITE_STATIC);
  sqlite3_bind_double(st, 3, now);
  sqlite3_bind_double(st, 4, now + ttl);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    got = sqlite3_column_int64(st, 0);
    granted = 1;
  }
  if (src != SQLITE_DONE) return abort_step(db, st, src);
  sqlite3_reset(st);
  if (granted) {
    if ((rc = commit(db)) != LEASE_OK) return rc;
    if (fence) *fence = got;
    if (reason) *reason = LEASE_GRANTED;
    return LEASE_OK;
  }
  /* Refused: say why, from the state that refused it. */
  sqlite3_bind_text(why, 1, id, (int)id_len, SQLITE_STATIC);
  sqlite3_bind_double(why, 2, now);
  src = sqlite3_step(why);
  if (src == SQLITE_DONE) {
    if (reason) *reason = LEASE_MISSING;
  } else if (src == SQLITE_ROW) {
    int blocked = sqlite3_column_int(why, 2);
    if (sqlite3_column_int(why, 0)) { if (reason) *reason = LEASE_DONE; }
    else if (blocked > 0 && blocked <= 4) rc = blocked;
    else if (sqlite3_column_int(why, 1)) { if (reason) *reason = LEASE_HELD; }
    else rc = -1;   /* every check passes, yet the update refused */
    src = SQLITE_DONE;
  }
  if (src != SQLITE_DONE) return abort_step(db, why, src);
  sqlite3_reset(why);
  if (rc != LEASE_OK) {
    rollback(db);
    if (rc < 0)
      return fail(db, LEASE_ERROR, "internal error: the guarded claim refused a free job");
    return fail(db, BLOCKED_RC(rc), "cannot claim this job: %s", blocked_msg[rc]);
  }
  return commit(db);
}

/* One job taken by claim_next, before sorting: where its id bytes sit in
** db->buf (offsets, as the buffer may move while growing). */
typedef struct taken {
  int64_t rowid, fence;
  size_t off, len;
} taken;

/* Order taken jobs by rowid, the enqueue order. */
static int by_rowid(const void *a, const void *b) {
  int64_t x = ((const taken *)a)->rowid, y = ((const taken *)b)->rowid;
  return (x > y) - (x < y);
}

/* See lease.h. */
int lease_claim_next(lease_db *db, const char *owner, size_t owner_len, double now,
                     double ttl, int max, lease_job *jobs, int *count) {
  sqlite3_stmt *st;
  const char *msg;
  taken *t = NULL;
  size_t used = 0;
  int src, rc, n = 0, i;
  CHECK_DB(db);
  if (count) *count = 0;
  if (!jobs || !count) return fail(db, LEASE_MISUSE, "jobs and count must not be NULL");
  if (max < 1) return fail(db, LEASE_MISUSE, "max must be at least 1");
  if (check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (lease_check_time(now, ttl, &msg)) return fail(db, LEASE_MISUSE, "%s", msg);
  if (!(t = malloc((size_t)max * sizeof *t))) return fail(db, LEASE_NOMEM, "out of memory");
  if (!(st = stmt(db, ST_CLAIM_NEXT)) || (rc = run(db, ST_BEGIN)) != LEASE_OK) {
    free(t);
    return db->rc;
  }
  sqlite3_bind_text(st, 1, owner, (int)owner_len, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, now);
  sqlite3_bind_double(st, 3, now + ttl);
  sqlite3_bind_int(st, 4, max);
  while ((src = sqlite3_step(st)) == SQLITE_ROW) {
    const void *id = sqlite3_column_text(st, 1);
    size_t len = (size_t)sqlite3_column_bytes(st, 1);
    if (n == max) continue;   /* cannot happen: LIMIT ?4 */
    if (reserve(db, used + len + 1) != LEASE_OK) {
      sqlite3_reset(st);
      rollback(db);
      free(t);
      return db->rc;
    }
    if (len) memcpy(db->buf + used, id, len);
    db->buf[used + len] = '\0';
    t[n].rowid = sqlite3_column_int64(st, 0);
    t[n].fence = sqlite3_column_int64(st, 2);
    t[n].off = used;
    t[n].len = len;
    used += len + 1;
    n++;
  }
  if (src != SQLITE_DONE) {
    free(t);
    return abort_step(db, st, src);
  }
  sqlite3_reset(st);
  if ((rc = commit(db)) != LEASE_OK) {
    free(t);
    return rc;
  }
  qsort(t, (size_t)n, sizeof *t, by_rowid);
  for (i = 0; i < n; i++) {
    jobs[i].id = db->buf + t[i].off;
    jobs[i].id_len = t[i].len;
    jobs[i].fence = t[i].fence;
  }
  *count = n;
  free(t);
  return LEASE_OK;
}

/* See lease.h. */
int lease_enqueue_many(lease_db *db, const char *const *ids, const size_t *id_lens, int n,
                       int *inserted) {
  sqlite3_stmt *st;
  int src, rc, i, added = 0;
  CHECK_DB(db);
  if (inserted) *inserted = 0;
  if (n < 0 || (n > 0 && (!ids || !id_lens)))
    return fail(db, LEASE_MISUSE, "ids and id_lens must hold n entries");
  for (i = 0; i < n; i++) {
    size_t len = id_lens[i];
    if (!ids[i]) return fail(db, LEASE_MISUSE, "id %d must not be NULL", i + 1);
    if (len == LEASE_NTS) len = strlen(ids[i]);
    if (len == 0) return fail(db, LEASE_MISUSE, "id %d must not be empty", i + 1);
    if (check_length(db, "an id", len)) return db->rc;
  }
  if (n == 0) return LEASE_OK;
  if (!(st = stmt(db, ST_ENQUEUE))) return db->rc;
  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;
  for (i = 0; i < n; i++) {
    size_t len = id_lens[i] == LEASE_NTS ? strlen(ids[i]) : id_lens[i];
    sqlite3_bind_text(st, 1, ids[i], (int)len, SQLITE_STATIC);
    src = sqlite3_step(st);
    if (src != SQLITE_DONE) return abort_step(db, st, src);
    sqlite3_reset(st);
    added += sqlite3_changes(db->conn);
  }
  if ((rc = commit(db)) != LEASE_OK) return rc;
  if (inserted) *inserted = added;
  return LEASE_OK;
}

/*
** One guarded write inside an open transaction, the shared body of renew,
** complete, release and complete_many (contract steps 5-7): run the guarded
** UPDATE `which`, whose WHERE clause checks owner, fence, done (and until,
** unless use_now is 0, as for release) at the moment it stores; when it
** changes nothing, read ST_WRITE_WHY in the same transaction into *r.  On
** a failure the transaction is rolled back and the error recorded.
*/
static int guarded_step(lease_db *db, int which, const char *id, size_t id_len,
                        const char *owner, size_t owner_len, int64_t fence,
                        int use_now, double now, double new_until,
                        const char *result, size_t result_len, int *r) {
  sqlite3_stmt *st, *why;
  int src, rc = LEASE_OK, blocked;
  *r = LEASE_GRANTED;
  if (!(st = stmt(db, which)) || !(why = stmt(db, ST_WRITE_WHY))) {
    rollback(db);
    return db->rc;
  }
  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, owner, (int)owner_len, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, fence);
  if (which == ST_RENEW) {
    sqlite3_bind_double(st, 4, now);
    sqlite3_bind_double(st, 5, new_until);
  } else if (which == ST_COMPLETE) {
    sqlite3_bind_double(st, 4, now);
    if (result) sqlite3_bind_text(st, 5, result, (int)result_len, SQLITE_STATIC);
    else sqlite3_bind_null(st, 5);
  }
  src = sqlite3_step(st);
  if (src != SQLITE_DONE) return abort_step(db, st, src);
  sqlite3_reset(st);
  if (which == ST_COMPLETE) sqlite3_clear_bindings(st);   /* drop the pointer to result */
  if (sqlite3_changes(db->conn) == 0) {
    sqlite3_bind_text(why, 1, id, (int)id_len, SQLITE_STATIC);
    sqlite3_bind_text(why, 2, owner, (int)owner_len, SQLITE_STATIC);
    sqlite3_bind_int64(why, 3, fence);
    if (use_now) sqlite3_bind_double(why, 4, now);
    else sqlite3_bind_null(why, 4);
    src = sqlite3_step(why);
    if (src == SQLITE_DONE) *r = LEASE_MISSING;
    else if (src == SQLITE_ROW) {
      if (sqlite3_column_int(why, 0)) *r = LEASE_DONE;
      else if (sqlite3_column_int(why, 1)) *r = LEASE_NOT_OWNER;
      else if (sqlite3_column_int(why, 2)) *r = LEASE_STALE_FENCE;
      else if (use_now && (blocked = sqlite3_column_int(why, 4)) > 0 && blocked <= 4) rc = blocked;
      else if (use_now && sqlite3_column_int(why, 3)) *r = LEASE_EXPIRED;
      else rc = -1;   /* every check passes, yet the update refused */
      src = SQLITE_DONE;
    }
    if (src != SQLITE_DONE) return abort_step(db, why, src);
    sqlite3_reset(why);
    if (rc != LEASE_OK) {
      rollback(db);
      if (rc < 0)
        return fail(db, LEASE_ERROR,
                    "internal error: the guarded update refused a write that passes every check");
      return fail(db, BLOCKED_RC(rc), "cannot write to this job: %s", blocked_msg[rc]);
    }
  }
  return LEASE_OK;
}

/*
** renew, complete and release (contract steps 5-7): one guarded_step in
** its own BEGIN IMMEDIATE transaction.
*/
static int guarded_write(lease_db *db, int which, const char *id, size_t id_len,
                         const char *owner, size_t owner_len, int64_t fence,
                         int use_now, double now, double new_until,
                         const char *result, size_t result_len, int *reason) {
  int rc, r;
  if (!stmt(db, which) || !stmt(db, ST_WRITE_WHY)) return db->rc;
  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;
  rc = guarded_step(db, which, id, id_len, owner, owner_len, fence, use_now, now, new_until,
                    result, result_len, &r);
  if (rc != LEASE_OK) return rc;
  if ((rc = commit(db)) != LEASE_OK) return rc;
  if (reason) *reason = r;
  return LEASE_OK;
}

/* See lease.h (contract step 5). */
int lease_renew(lease_db *db, const char *id, size_t id_len, const char *owner,
                size_t owner_len, int64_t fence, double now, double ttl, int *reason) {
  const char *msg;
  CHECK_DB(db);
  if (check_id_owner(db, id, &id_len, owner, &owner_len)) return db->rc;
  if (lease_check_time(now, ttl, &msg)) return fail(db, LEASE_MISUSE, "%s", msg);
  return guarded_write(db, ST_RENEW, id, id_len, owner, owner_len, fence, 1, now,
                       now + ttl, NULL, 0, reason);
}

/* See lease.h (contract step 6). */
int lease_complete(lease_db *db, const char *id, size_t id_len, const char *owner,
                   size_t owner_len, int64_t fence, double now, const char *result,
                   size_t result_len, int *reason) {
  CHECK_DB(db);
  if (check_id_owner(db, id, &id_len, owner, &owner_len)) return db->rc;
  if (!isfinite(now)) return fail(db, LEASE_MISUSE, "now must be a finite number");
  if (result && result_len == LEASE_NTS) result_len = strlen(result);
  if (result && check_length(db, "result", result_len)) return db->rc;
  return guarded_write(db, ST_COMPLETE, id, id_len, owner, owner_len, fence, 1, now, 0,
                       result, result_len, reason);
}

/* See lease.h (contract step 6, for many jobs in one transaction). */
int lease_complete_many(lease_db *db, const char *owner, size_t owner_len, double now,
                        const lease_result *items, int n, int *reasons, int *stored) {
  int rc, i, r, done = 0;
  CHECK_DB(db);
  if (stored) *stored = 0;
  if (n < 0 || (n > 0 && !items)) return fail(db, LEASE_MISUSE, "items must hold n entries");
  if (check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (!isfinite(now)) return fail(db, LEASE_MISUSE, "now must be a finite number");
  /* Check every item before anything is written. */
  for (i = 0; i < n; i++) {
    size_t len = items[i].id_len, rlen = items[i].result_len;
    char what[32];
    if (!items[i].id) return fail(db, LEASE_MISUSE, "id %d must not be NULL", i + 1);
    if (len == LEASE_NTS) len = strlen(items[i].id);
    if (len == 0) return fail(db, LEASE_MISUSE, "id %d must not be empty", i + 1);
    snprintf(what, sizeof what, "id %d", i + 1);
    if (check_length(db, what, len)) return db->rc;
    if (items[i].result && rlen == LEASE_NTS) rlen = strlen(items[i].result);
    snprintf(what, sizeof what, "result %d", i + 1);
    if (items[i].result && check_length(db, what, rlen)) return db->rc;
  }
  if (n == 0) return LEASE_OK;
  if (!stmt(db, ST_COMPLETE) || !stmt(db, ST_WRITE_WHY)) return db->rc;
  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;
  for (i = 0; i < n; i++) {
    const lease_result *it = &items[i];
    size_t len = it->id_len == LEASE_NTS ? strlen(it->id) : it->id_len;
    size_t rlen = it->result && it->result_len == LEASE_NTS ? strlen(it->result) : it->result_len;
    rc = guarded_step(db, ST_COMPLETE, it->id, len, owner, owner_len, it->fence, 1, now, 0,
                      it->result, rlen, &r);
    if (rc != LEASE_OK) return rc;   /* rolled back: none is stored */
    if (reasons) reasons[i] = r;
    if (r == LEASE_GRANTED) done++;
  }
  if ((rc = commit(db)) != LEASE_OK) return rc;
  if (stored) *stored = done;
  return LEASE_OK;
}

/* See lease.h (contract step 7). */
int lease_release(lease_db *db, const char *id, size_t id_len, const char *owner,
                  size_t owner_len, int64_t fence, int *reason) {
  CHECK_DB(db);
  if (check_id_owner(db, id, &id_len, owner, &owner_len)) return db->rc;
  return guarded_write(db, ST_RELEASE, id, id_len, owner, owner_len, fence, 0, 0, 0,
                       NULL, 0, reason);
}

/* See lease.h. */
int lease_read_settings(lease_db *db, lease_settings *out) {
  sqlite3_stmt *st = NULL;
  int src;
  CHECK_DB(db);
  if (!out) return fail(db, LEASE_MISUSE, "out must not be NULL");
  memset(out, 0, sizeof *out);
  out->busy_timeout_ms = db->busy_timeout_ms;
  src = sqlite3_prepare_v2(db->conn, "PRAGMA journal_mode", -1, &st, NULL);
  if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(st, 0);
    snprintf(out->journal_mode, sizeof out->journal_mode, "%s", m ? m : "");
    src = SQLITE_OK;
  }
  sqlite3_finalize(st);
  st = NULL;
  if (src == SQLITE_OK) src = sqlite3_prepare_v2(db->conn, "PRAGMA synchronous", -1, &st, NULL);
  if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
    out->synchronous = sqlite3_column_int(st, 0);
    src = SQLITE_OK;
  }
  if (src != SQLITE_OK) fail_sqlite(db, src);
  sqlite3_finalize(st);
  return db->rc;
}

/* ===================================================================== */
/* Errors and names                                                       */
/* ===================================================================== */

int lease_errcode(const lease_db *db) { return db ? db->rc : LEASE_NOMEM; }

int lease_extended_errcode(const lease_db *db) { return db ? db->xrc : 0; }

const char *lease_errmsg(const lease_db *db) {
  if (!db) return "out of memory";
  if (db->rc == LEASE_OK) return "not an error";
  return db->errmsg[0] ? db->errmsg : lease_errname(db->rc);
}

const char *lease_path(const lease_db *db) { return db && db->path ? db->path : ""; }

const char *lease_errname(int rc) {
  static const char *const names[] = {
    "ok", "error", "misuse", "busy", "locked", "readonly", "notadb", "corrupt",
    "full", "ioerr", "cantopen", "nomem", "perm", "interrupt", "constraint",
    "protocol", "schema", "range", "mismatch",
  };
  if (rc < 0 || (size_t)rc >= sizeof names / sizeof names[0]) return "unknown";
  return names[rc];
}

const char *lease_reason_name(int reason) {
  static const char *const names[] = {
    "ok", "missing", "exists", "done", "held", "not_owner", "stale_fence",
    "expired", "empty",
  };
  if (reason < 0 || (size_t)reason >= sizeof names / sizeof names[0]) return "unknown";
  return names[reason];
}

/* ===================================================================== */
/* Internal: shared with the core's other files (lease_int.h)             */
/* ===================================================================== */

/* See lease_int.h: CHECK_DB as a function, for lease_many.c. */
int lease__begin(lease_db *db) {
  CHECK_DB(db);
  return LEASE_OK;
}

/* See lease_int.h. */
/* See lease_int.h. */
int lease__private(const lease_db *db) {
  const char *f = db && db->conn ? sqlite3_db_filename(db->conn, "main") : NULL;
  return f == NULL || f[0] == '\0';
}

void lease__options(const lease_db *db, lease_options *out) {
  *out = db->opt;
}

/* See lease_int.h. */
int lease__set_error(lease_db *db, int rc, int xrc, const char *msg) {
  fail(db, rc, "%s", msg ? msg : lease_errname(rc));
  db->xrc = xrc;
  return rc;
}
