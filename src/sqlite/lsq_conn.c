/*
** lsq_conn.c: the SQLite backend's connection basics: SQLite's codes
** mapped onto the engine's, waiting for locks, the statement cache and the
** one prepare/step/finalize helper every one-off statement runs through.
*/
#include "lsq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ===================================================================== */
/* Errors                                                                 */
/* ===================================================================== */

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

/* SQLite's primary result codes and the engine's, one list. */
#define LSQ_RC_MAP(XX)                                                    \
  XX(SQLITE_OK, LEASE_OK)                                                 \
  XX(SQLITE_BUSY, LEASE_BUSY)                                             \
  XX(SQLITE_LOCKED, LEASE_LOCKED)                                         \
  XX(SQLITE_READONLY, LEASE_READONLY)                                     \
  XX(SQLITE_NOTADB, LEASE_NOTADB)                                         \
  XX(SQLITE_CORRUPT, LEASE_CORRUPT)                                       \
  XX(SQLITE_FULL, LEASE_FULL)                                             \
  XX(SQLITE_TOOBIG, LEASE_FULL)                                           \
  XX(SQLITE_IOERR, LEASE_IOERR)                                           \
  XX(SQLITE_CANTOPEN, LEASE_CANTOPEN)                                     \
  XX(SQLITE_NOMEM, LEASE_NOMEM)                                           \
  XX(SQLITE_PERM, LEASE_PERM)                                             \
  XX(SQLITE_AUTH, LEASE_PERM)                                             \
  XX(SQLITE_INTERRUPT, LEASE_INTERRUPT)                                   \
  XX(SQLITE_CONSTRAINT, LEASE_CONSTRAINT)                                 \
  XX(SQLITE_PROTOCOL, LEASE_PROTOCOL)                                     \
  XX(SQLITE_MISUSE, LEASE_MISUSE)                                         \
  XX(SQLITE_RANGE, LEASE_MISUSE)

/*
** Map SQLite's result code onto the engine's code (LEASE_ERROR for the
** rest).  sys_errno is the errno behind an I/O failure (io_errno), 0 when
** unknown.
**
** One mapping is the engine's own: SQLite reports a write that the file
** system refused for lack of room as SQLITE_FULL only for ENOSPC on a
** write; for EDQUOT and EFBIG its unix VFS gives SQLITE_IOERR_WRITE (or
** another write-side I/O error, is_write_ioerr).  To a caller all three
** mean the same thing, and not what "ioerr" means: nothing is broken, the
** write did not fit, and it can be retried once space returns.  So an I/O
** error whose errno is one of them is LEASE_FULL, and the message says
** which (see lsq_fail).
*/
static int map_sqlite_rc(int src, int sys_errno) {
  if (is_write_ioerr(src) && errno_is_full(sys_errno)) return LEASE_FULL;
  switch (src & 0xff) {
#define LSQ_RC_CASE_(s, l) case s: return l;
    LSQ_RC_MAP(LSQ_RC_CASE_)
#undef LSQ_RC_CASE_
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

/* See lsq.h. */
int lsq_fail(lease_db *db, sqlite3 *sql, int src) {
  const char *msg = sql ? sqlite3_errmsg(sql) : sqlite3_errstr(src);
  int sys = 0, rc;
  /* sqlite3_errmsg may describe a newer call than src; prefer the text of
  ** src itself when the connection's code does not match. */
  if (sql && (sqlite3_extended_errcode(sql) & 0xff) != (src & 0xff)) msg = sqlite3_errstr(src);
  if (sql && is_write_ioerr(src)) sys = io_errno(sql);
  rc = map_sqlite_rc(src, sys);
  if (rc == LEASE_OK) rc = LEASE_ERROR;
  if (rc == LEASE_FULL && is_write_ioerr(src))
    lease__fail(db, rc, "%s (%s)", msg, full_errno_words(sys));
  else
    lease__fail(db, rc, "%s", msg);
  db->xrc = src;
  return rc;
}

/* ===================================================================== */
/* Waiting for locks                                                      */
/* ===================================================================== */

/* Milliseconds on the monotonic clock, for the busy timeout. */
static double monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
** Wait one turn for a lock: sleep 500 us, 1 ms, then 2 ms each (count is
** the turn, from 0) until busy_timeout_ms has passed since c->busy_since.
** Returns 1 to try again, 0 to give up.
**
** Why these: every time the write lock passes to another connection, that
** connection finds the WAL changed and reads its pages again, and each
** waiter that polls takes a WAL read mark for a moment, which can keep the
** automatic checkpoint from finishing.  A first sleep of 500 us lets the
** holder run a few short transactions of its own before a waiter comes
** back; the 2 ms cap keeps a waiter polling often enough to get its turn
** well within the busy timeout.  SQLite's own handler (1 ms rising to
** 100 ms) hands over least but leaves a waiter starving for a second or
** more.  Measurements: docs/sqlite-backend.md.
*/
static int wait_turn(lsq_conn *c, int count) {
  double left = c->busy_since + c->busy_timeout_ms - monotonic_ms();
  long us;
  struct timespec ts;
  if (left <= 0) return 0;
  us = count < 2 ? 500L << count : 2000L;
  if ((double)us > left * 1e3) us = (long)(left * 1e3) + 1;
  ts.tv_sec = us / 1000000L;
  ts.tv_nsec = (us % 1000000L) * 1000L;
  nanosleep(&ts, NULL);
  return 1;
}

/* See lsq.h.  A wait lsq_step started keeps its start time, so the two
** together never wait longer than the busy timeout.  Notes a refusal in
** c->gave_up: the timeout ran out, lsq_step must not wait again. */
int lsq_busy_handler(void *arg, int count) {
  lsq_conn *c = LSQ((lease_db *)arg);
  c->handler_calls++;
  if (count == 0 && !c->waiting) c->busy_since = monotonic_ms();
  if (c->busy_timeout_ms > 0 && wait_turn(c, count)) return 1;
  c->gave_up = 1;
  return 0;
}

/* True for a code that means "another connection holds a lock". */
static int is_lock_conflict(int src) {
  return (src & 0xff) == SQLITE_BUSY || src == SQLITE_LOCKED_SHAREDCACHE;
}

/*
** SQLite calls the busy handler when it cannot take a lock at the start of
** a transaction, but not in every case: changing the journal mode (the
** pragma upgrades its own read transaction to write), SQLITE_BUSY_SNAPSHOT
** and SQLITE_BUSY_RECOVERY in some paths, and reading the schema of a file
** another connection is switching to WAL all come back SQLITE_BUSY at
** once, also after the handler waited for another lock in the same step.
** Outside a transaction such a statement can simply run again once the
** lock is gone.  So after a step or prepare that failed on a lock, unless
** the busy handler gave up (the timeout ran out), wait a turn (wait_turn),
** up to the busy timeout counted from the first wait of this step (the
** handler's, when it waited).  Returns 1 to try again, 0 to give up.
*/
static int wait_again(lsq_conn *c, int *count) {
  if (c->gave_up || c->busy_timeout_ms <= 0) return 0;
  if (!c->waiting) {
    c->waiting = 1;
    if (c->handler_calls == 0) c->busy_since = monotonic_ms();
  }
  return wait_turn(c, (*count)++);
}

/* Start a step or prepare: no wait yet. */
static void begin_wait(lsq_conn *c) {
  c->handler_calls = 0;
  c->gave_up = 0;
}

/* See lsq.h: wait_again for a step outside a transaction. */
int lsq_step(lease_db *db, sqlite3 *sql, sqlite3_stmt *st) {
  lsq_conn *c = LSQ(db);
  int src, count = 0;
  begin_wait(c);
  while (is_lock_conflict(src = sqlite3_step(st)) && sqlite3_get_autocommit(sql) &&
         wait_again(c, &count))
    sqlite3_reset(st);
  c->waiting = 0;
  return src;
}

/* ===================================================================== */
/* Statements                                                             */
/* ===================================================================== */

/* Each statement's SQL, LSQ_SQL_<name>: a name in the list without its
** SQL here fails to build. */
static const char *const stmt_sql[LSQ_ST_COUNT] = {
#define LSQ_ST_SQL_(name) LSQ_SQL_##name,
  LSQ_STATEMENT_MAP(LSQ_ST_SQL_)
#undef LSQ_ST_SQL_
};

/* The shared statements come first, in the shared list's order. */
#define LSQ_ST_SAME_(name)                                                  \
  _Static_assert((int)LSQ_ST_##name == (int)LEASE__ST_##name, "lsq.h numbers " #name " as lease__stmt");
LEASE_STATEMENTS(LSQ_ST_SAME_)
#undef LSQ_ST_SAME_

/* See lsq.h. */
const char *lsq_statement(lease__stmt which) {
  return (unsigned)which < LEASE__ST_COUNT ? stmt_sql[which] : NULL;
}

/* See lsq.h. */
sqlite3_stmt *lsq_stmt(lease_db *db, int which) {
  lsq_conn *c = LSQ(db);
  if (!c->stmt[which]) {
    int src = sqlite3_prepare_v3(c->sql, stmt_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                 &c->stmt[which], NULL);
    if (src != SQLITE_OK) {
      lsq_fail(db, c->sql, src);
      sqlite3_finalize(c->stmt[which]);
      c->stmt[which] = NULL;
    }
  }
  return c->stmt[which];
}

/* See lsq.h. */
int lsq_run(lease_db *db, int which) {
  sqlite3_stmt *st = lsq_stmt(db, which);
  int src;
  if (!st) return db->rc;
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src != SQLITE_DONE && src != SQLITE_ROW) {
    lsq_fail(db, LSQ(db)->sql, src);
    sqlite3_reset(st);
    return db->rc;
  }
  sqlite3_reset(st);
  return LEASE_OK;
}

/* See lsq.h. */
int lsq_found_row(lease_db *db, sqlite3_stmt *st, int *found) {
  int src = sqlite3_step(st), rc = LEASE_OK;
  *found = src == SQLITE_ROW;
  if (!*found && src != SQLITE_DONE) rc = lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  return rc;
}

/* See lsq.h. */
int lsq_step_failed(lease_db *db, sqlite3_stmt *st, int src) {
  lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  return db->rc;
}

/* See lsq.h. */
void lsq_bind_bytes(sqlite3_stmt *st, int i, const char *s, size_t len) {
  sqlite3_bind_text(st, i, s, (int)len, SQLITE_STATIC);
}

/* See lsq.h.  What the connection learnt of the file's triggers is
** forgotten (lsq_queue.c: foreign_triggers): it may have been read under
** a schema change of the transaction given up, whose cookie another
** change may then bring back. */
void lsq_rollback(lease_db *db) {
  LSQ(db)->triggers_known = 0;
  if (!sqlite3_get_autocommit(LSQ(db)->sql)) {
    sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_ROLLBACK);
    if (st) {
      sqlite3_step(st);
      sqlite3_reset(st);
    }
  }
}

/* Prepare text on sql, waiting out a lock the schema read met
** (wait_again). */
static int prepare(lease_db *db, sqlite3 *sql, const char *text, sqlite3_stmt **st) {
  lsq_conn *c = LSQ(db);
  int src, count = 0;
  begin_wait(c);
  while (is_lock_conflict(src = sqlite3_prepare_v2(sql, text, -1, st, NULL)) &&
         wait_again(c, &count)) {}
  c->waiting = 0;
  return src;
}

/* See lsq.h. */
int lsq_found(lease_db *db, sqlite3_stmt *st, void *ctx) {
  (void)db;
  (void)st;
  *(int *)ctx = 1;
  return LSQ_STOP;
}

/* See lsq.h. */
int lsq_query(lease_db *db, sqlite3 *sql, const char *text, lsq_row_fn *row, void *ctx) {
  sqlite3_stmt *st = NULL;
  int src = prepare(db, sql, text, &st), rc = LEASE_OK;
  if (src != SQLITE_OK) {
    rc = lsq_fail(db, sql, src);
    sqlite3_finalize(st);
    return rc;
  }
  src = lsq_step(db, sql, st);
  while (src == SQLITE_ROW && rc == LEASE_OK) {
    if (row) rc = row(db, st, ctx);
    if (rc == LEASE_OK) src = sqlite3_step(st);
  }
  if (rc == LSQ_STOP) rc = LEASE_OK;
  else if (rc == LEASE_OK && src != SQLITE_DONE) rc = lsq_fail(db, sql, src);
  sqlite3_finalize(st);
  return rc;
}

/* See lsq.h. */
int lsq_exec(lease_db *db, const char *text) {
  return lsq_query(db, LSQ(db)->sql, text, NULL, NULL);
}
