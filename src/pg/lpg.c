/*
** lpg.c: the PostgreSQL backend (libpq), its table of functions lease__pg.
** Arguments arrive checked and resolved by the core (src/core/lease.c).
**
** One connection per handle.  Every connection runs READ COMMITTED (set
** here whatever the server's default: under REPEATABLE READ the claim race
** would fail with serialization errors instead of reporting "held"), and
** every operation is one prepared statement with binary parameters and
** results, so each commits on its own; complete_many is one transaction
** (lpg_many.c).
** The SQL and why each statement keeps the contract: lpg_sql.h.  The job
** queue's operations: lpg_queue.c (what the two share: lpg_int.h).
**
** Options map onto the server's settings: the busy timeout onto
** lock_timeout (a lock not granted in time is LEASE_BUSY), synchronous
** FULL / NORMAL onto synchronous_commit on / off, read-only onto
** default_transaction_read_only.  A connection found broken at the start of
** a call (lost, or left in pipeline mode by a pipeline whose results a lost
** or ended session cut short) is reset once (PQreset) and its session set
** up again; a call that
** loses its connection midway fails with LEASE_IOERR, and whether the
** server committed it is then unknown, as for any client of a server.
*/
#include "lpg_int.h"
#include "lpg_schema_sql.h"
#include "lpg_sql.h"
#include "lpg_queue_sql.h"
#include "lpg_schedule_sql.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each statement: its SQL, parameter count and types in $n order, from
** LPG_STMT_<name>; a name in the lists without it fails to build. */
static const struct {
  const char *sql;
  int n;
  unsigned types[LPG_MAX_PARAMS];
} stmts[LPG_ST_COUNT] = {
#define LPG_ST_DEF_(name) [LPG_ST_##name] = {LPG_STMT_##name},
  LEASE_STATEMENTS(LPG_ST_DEF_)
  LPG_OWN_STATEMENTS(LPG_ST_DEF_)
#undef LPG_ST_DEF_
};

_Static_assert(LPG_ST_COUNT <= LPG_SLOTS, "one bit per statement in lpg_conn.prepared");

/* The shared statements come first, in the shared list's order. */
#define LPG_ST_SAME_(name)                                                  \
  _Static_assert((int)LPG_ST_##name == (int)LEASE__ST_##name, "lpg_int.h numbers " #name " as lease__stmt");
LEASE_STATEMENTS(LPG_ST_SAME_)
#undef LPG_ST_SAME_

/* ===================================================================== */
/* Errors                                                                 */
/* ===================================================================== */

/* The engine's code for a SQLSTATE (PostgreSQL's error codes appendix). */
static int map_sqlstate(const char *s) {
  static const struct { const char *state; int rc; } exact[] = {
    {"55P03", LEASE_BUSY},       /* lock_not_available: lock_timeout ran out */
    {"57014", LEASE_BUSY},       /* query_canceled (statement_timeout) */
    {"40001", LEASE_BUSY},       /* serialization_failure */
    {"40P01", LEASE_BUSY},       /* deadlock_detected */
    {"25006", LEASE_READONLY},   /* read_only_sql_transaction */
    {"53100", LEASE_FULL},       /* disk_full */
    {"54000", LEASE_FULL},       /* program_limit_exceeded */
    {"53200", LEASE_NOMEM},      /* out_of_memory */
    {"53300", LEASE_CANTOPEN},   /* too_many_connections */
    {"3D000", LEASE_CANTOPEN},   /* invalid_catalog_name: no such database */
    {"42501", LEASE_PERM},       /* insufficient_privilege */
    {"22003", LEASE_RANGE},      /* numeric_value_out_of_range */
    {"58030", LEASE_IOERR},      /* io_error */
  };
  size_t i;
  for (i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (strcmp(s, exact[i].state) == 0) return exact[i].rc;
  if (strncmp(s, "08", 2) == 0) return LEASE_IOERR;        /* connection exception */
  if (strncmp(s, "57P", 3) == 0) return LEASE_IOERR;       /* server shutting down */
  if (strncmp(s, "28", 2) == 0) return LEASE_PERM;         /* authorization */
  if (strncmp(s, "23", 2) == 0) return LEASE_CONSTRAINT;   /* integrity constraint */
  if (strncmp(s, "XX", 2) == 0) return LEASE_CORRUPT;      /* internal error, data corrupted */
  return LEASE_ERROR;
}

/* A SQLSTATE packed into an int as PostgreSQL packs it (MAKE_SQLSTATE: six
** bits per character, the first lowest), the handle's extended code. */
static int pack_sqlstate(const char *s) {
  int v = 0, i;
  for (i = 0; i < 5 && s[i]; i++) v |= ((s[i] - '0') & 0x3f) << (6 * i);
  return v;
}

/* See lpg_int.h. */
int lpg_failed_with(const lease_db *db, const char *sqlstate) {
  return db->rc != LEASE_OK && db->xrc == pack_sqlstate(sqlstate);
}

/* See lpg_int.h. */
int lpg_skipped_as(lease_db *db, const char *what, const char *id, size_t id_len) {
  if (!lpg_failed_with(db, "22012")) return db->rc;
  lease__clear_error(db);
  return lease__skipped(db, what, id, id_len);
}

/* Copy libpq's message without its trailing newlines. */
static void trim_copy(char *out, size_t cap, const char *msg) {
  size_t n;
  snprintf(out, cap, "%s", msg && msg[0] ? msg : "unknown error");
  n = strlen(out);
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = '\0';
}

/*
** Record on db the failure of a statement (res may be NULL: libpq could not
** even send it): the server's message and SQLSTATE when it answered,
** libpq's message otherwise.  A connection found broken is LEASE_IOERR:
** one libpq calls bad, or one whose socket reads no more.  A server stopped
** in immediate mode (or crashing) sends its backends' clients a warning and
** closes, and libpq then fails the statement with no SQLSTATE while still
** calling the connection good; PQconsumeInput fails on it (and libpq's
** next use of it finds it bad, so the next call resets it: lpg_ready_conn).
** Returns the recorded code.
*/
int lpg_fail(lease_db *db, const PGresult *res) {
  char msg[LEASE__ERRMSG_MAX - 64];
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  int rc;
  const char *cons = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : NULL;
  snprintf(LPG(db)->constraint, sizeof LPG(db)->constraint, "%s", cons ? cons : "");
  if (state) {
    trim_copy(msg, sizeof msg, PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
    rc = map_sqlstate(state);
    lease__fail(db, rc, "PostgreSQL: %s (SQLSTATE %s)", msg, state);
    db->xrc = pack_sqlstate(state);
    return rc;
  }
  trim_copy(msg, sizeof msg, PQerrorMessage(LPG(db)->pg));
  rc = PQstatus(LPG(db)->pg) == CONNECTION_OK && PQconsumeInput(LPG(db)->pg) ? LEASE_ERROR
                                                                              : LEASE_IOERR;
  return lease__fail(db, rc, "PostgreSQL: %s", msg);
}

/* ===================================================================== */
/* The session                                                            */
/* ===================================================================== */

/* Notices (CREATE ... IF NOT EXISTS says it skipped) are not errors and
** must not reach the caller's stderr. */
static void quiet(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

/* Run a statement with no parameters (text protocol); LEASE_OK or the
** failure recorded. */
int lpg_exec(lease_db *db, const char *sql) {
  PGresult *res = PQexec(LPG(db)->pg, sql);
  ExecStatusType st = PQresultStatus(res);
  int rc = LEASE_OK;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) rc = lpg_fail(db, res);
  PQclear(res);
  return rc;
}

/* Roll back whatever transaction is open, keeping the recorded error. */
void lpg_rollback(lease_db *db) {
  if (PQtransactionStatus(LPG(db)->pg) != PQTRANS_IDLE) PQclear(PQexec(LPG(db)->pg, "ROLLBACK"));
}

/*
** Prepare on the session, as LPG_SETTINGS_STMT, one SELECT that sets
** set_session's settings again at the session's level, with the
** search_path the session started with (read here): a statement of the
** caller's in with_lease runs in this session, and set_config() there
** could change what the engine's statements after it rely on (lpg_tx.c:
** send_wrapped runs it after each such statement).  ms and ro as
** set_session computed them.  LEASE_OK, or the failure recorded.
*/
static int keep_settings(lease_db *db, int ms, int ro) {
  static const char form[] =
      "SELECT set_config('search_path', %s, false),"
      " set_config('default_transaction_isolation', 'read committed', false),"
      " set_config('lock_timeout', '%d', false), set_config('synchronous_commit', '%s', false),"
      " set_config('default_transaction_read_only', '%s', false),"
      " set_config('client_min_messages', 'warning', false), set_config('jit', 'off', false),"
      " set_config('enable_seqscan', 'off', false), set_config('lease.events', '%s', false)";
  lpg_conn *c = LPG(db);
  PGresult *res = PQexec(c->pg, "SELECT current_setting('search_path')");
  char *path, *sql;
  size_t cap;
  int rc = LEASE_OK;
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    rc = lpg_fail(db, res);
    PQclear(res);
    return rc;
  }
  path = PQescapeLiteral(c->pg, PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0));
  PQclear(res);
  if (!path) return lpg_fail(db, NULL);
  cap = sizeof form + strlen(path) + 32;
  if (!(sql = malloc(cap))) {
    PQfreemem(path);
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  }
  snprintf(sql, cap, form, path, ms, db->opt.synchronous == LEASE_SYNC_FULL ? "on" : "off",
           ro ? "on" : "off", db->opt.events_keep > 0 && !ro ? "on" : "off");
  PQfreemem(path);
  res = PQprepare(c->pg, LPG_SETTINGS_STMT, sql, 0, NULL);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) rc = lpg_fail(db, res);
  PQclear(res);
  free(sql);
  return rc;
}

/* The session's settings from db's options.  A busy timeout of 0 means
** "fail at once"; lock_timeout = 0 would mean "wait for ever", so the
** shortest wait PostgreSQL knows stands for it.  lease.events tells the
** trigger lease_deps_follow whether this handle records events.  jit is
** off: the engine's statements touch a few rows each, but a batch's plan
** can be estimated dear enough (its functions' and CTEs' row counts are
** guesses) that compiling it would cost far more than running it.
** enable_seqscan is off: each statement is prepared once and, from its
** sixth run, may keep a generic plan made from the statistics of that
** moment; made while the tables were tiny (a new database, or a queue
** drained before it was analyzed), such a plan can read a whole table
** where a key would find the rows, and it stays until the tables are
** analyzed again.  With scans of whole tables priced out, the statements
** go by their keys at any table size (spec 35's "plans as the tables
** grow"). */
static int set_session(lease_db *db) {
  char sql[512];
  int ms = db->opt.busy_timeout_ms > 0 ? db->opt.busy_timeout_ms : 1;
  int ro = (db->opt.flags & LEASE_OPEN_READONLY) != 0;
  int rc;
  snprintf(sql, sizeof sql,
           "SET default_transaction_isolation = 'read committed';"
           " SET lock_timeout = %d; SET synchronous_commit = %s;"
           " SET default_transaction_read_only = %s; SET client_min_messages = warning;"
           " SET jit = off; SET enable_seqscan = off; SET lease.events = %s",
           ms, db->opt.synchronous == LEASE_SYNC_FULL ? "on" : "off", ro ? "on" : "off",
           db->opt.events_keep > 0 && !ro ? "on" : "off");
  LPG(db)->prepared = 0;
  LPG(db)->listening = 0;   /* a new session listens to nothing */
  if ((rc = lpg_exec(db, sql)) != LEASE_OK) return rc;
  return keep_settings(db, ms, ro);
}

/* 1 when pg takes a statement: connected and out of pipeline mode.  A
** pipeline whose session the server ended can leave libpq in pipeline mode
** with its results unread, where every synchronous statement fails; such a
** connection is as broken as a lost one. */
static int usable(PGconn *pg) {
  return PQstatus(pg) == CONNECTION_OK && PQpipelineStatus(pg) == PQ_PIPELINE_OFF;
}

/* See lpg_int.h. */
int lpg_ready_conn(lease_db *db) {
  lpg_conn *c = LPG(db);
  if (!usable(c->pg)) {
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK) return lpg_fail(db, NULL);   /* LEASE_IOERR */
    return set_session(db);
  }
  lpg_rollback(db);
  return LEASE_OK;
}

/* See lpg_int.h: lpg_ready_conn, then the clock step. */
int lpg_ready(lease_db *db) {
  int rc = lpg_ready_conn(db);
  return rc != LEASE_OK ? rc : lpg_q_clock(db);
}

/* ===================================================================== */
/* Statements                                                             */
/* ===================================================================== */

/* Prepare statement `sql` as slot `slot` (its name into name[16]) unless
** this session has.  LEASE_OK or the failure recorded. */
static int prepared(lease_db *db, int slot, const char *sql, int n, const unsigned *types,
                    char *name) {
  lpg_conn *c = LPG(db);
  PGresult *res;
  snprintf(name, 16, "lease_%d", slot);
  if (c->prepared & ((uint64_t)1 << slot)) return LEASE_OK;
  res = PQprepare(c->pg, name, sql, n, types);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) {
    int rc = lpg_fail(db, res);
    PQclear(res);
    return rc;
  }
  PQclear(res);
  c->prepared |= (uint64_t)1 << slot;
  return LEASE_OK;
}

/* See lpg_int.h. */
PGresult *lpg_run(lease_db *db, int slot, const char *sql, int n, const unsigned *types,
                  const params *p) {
  lpg_conn *c = LPG(db);
  char name[16];
  PGresult *res;
  ExecStatusType st;
  if (prepared(db, slot, sql, n, types, name) != LEASE_OK) return NULL;
  res = PQexecPrepared(c->pg, name, p ? p->n : 0, p ? p->v : NULL, p ? p->len : NULL,
                       p ? p->fmt : NULL, 1);
  st = PQresultStatus(res);
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    lpg_fail(db, res);
    PQclear(res);
    return NULL;
  }
  return res;
}

/* See lpg_int.h. */
PGresult *lpg_stmt_run(lease_db *db, int which, const params *p) {
  return lpg_run(db, which, stmts[which].sql, stmts[which].n, stmts[which].types, p);
}

/* Send statement `which` (LPG_ST_*, LPG_PIPE_BEGIN or LPG_PIPE_COMMIT) in
** pipeline mode. */
static int send_one(lease_db *db, int which, const params *p) {
  char name[24];
  if (which < 0)
    return PQsendQueryParams(LPG(db)->pg, which == LPG_PIPE_COMMIT ? "COMMIT" : "BEGIN", 0, NULL,
                             NULL, NULL, NULL, 0);
  snprintf(name, sizeof name, "lease_%d", which);
  return PQsendQueryPrepared(LPG(db)->pg, name, p ? p->n : 0, p ? p->v : NULL,
                             p ? p->len : NULL, p ? p->fmt : NULL, 1);
}

/* See lpg_int.h. */
int lpg_pipeline_end(lease_db *db, int rc) {
  PGconn *pg = LPG(db)->pg;
  char msg[LEASE__ERRMSG_MAX - 128];
  if (PQexitPipelineMode(pg)) return rc;
  if (rc != LEASE_OK) {
    db->rc = LEASE_IOERR;
    return LEASE_IOERR;
  }
  trim_copy(msg, sizeof msg, PQerrorMessage(pg));
  return lease__fail(db, LEASE_IOERR, "PostgreSQL: %s (the session ended mid-pipeline)", msg);
}

/* Read the results of n statements sent in pipeline mode, then its sync,
** into out (the first failure recorded, the rest NULL).  A statement that
** gave no result, or an error in place of the sync (the server ending
** the session: libpq then stops short of the sync), is a failure too.
** LEASE_OK or that failure. */
static int pipeline_read(lease_db *db, int n, PGresult **out) {
  PGconn *pg = LPG(db)->pg;
  PGresult *res;
  int i, rc = LEASE_OK;
  for (i = 0; i < n; i++) {
    while ((res = PQgetResult(pg)) != NULL) {
      ExecStatusType st = PQresultStatus(res);
      if (!out[i] && rc == LEASE_OK && (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)) {
        out[i] = res;
        continue;
      }
      if (rc == LEASE_OK) rc = lpg_fail(db, st == PGRES_PIPELINE_ABORTED ? NULL : res);
      PQclear(res);
    }
    if (PQstatus(pg) != CONNECTION_OK && rc == LEASE_OK) rc = lpg_fail(db, NULL);
    if (PQstatus(pg) != CONNECTION_OK) return rc;
    if (!out[i] && rc == LEASE_OK) rc = lpg_fail(db, NULL);
  }
  while ((res = PQgetResult(pg)) != NULL) {   /* the sync */
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_PIPELINE_SYNC && st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK &&
        rc == LEASE_OK)
      rc = lpg_fail(db, res);
    PQclear(res);
    if (st == PGRES_PIPELINE_SYNC) break;
  }
  return rc;
}

/* See lpg_int.h. */
int lpg_pipeline(lease_db *db, int n, const int *which, const params *const *p,
                 PGresult **out) {
  PGconn *pg = LPG(db)->pg;
  char name[16];
  int i, ok, rc;
  for (i = 0; i < n; i++) {
    out[i] = NULL;
    if (which[i] >= 0 && (rc = prepared(db, which[i], stmts[which[i]].sql, stmts[which[i]].n,
                                        stmts[which[i]].types, name)) != LEASE_OK)
      return rc;
  }
  if (!PQenterPipelineMode(pg)) return lpg_fail(db, NULL);
  for (ok = 1, i = 0; ok && i < n; i++) ok = send_one(db, which[i], p[i]);
  rc = ok && PQpipelineSync(pg) ? pipeline_read(db, n, out) : lpg_fail(db, NULL);
  rc = lpg_pipeline_end(db, rc);
  if (rc != LEASE_OK)
    for (i = 0; i < n; i++) PQclear(out[i]), out[i] = NULL;
  return rc;
}

/* See lpg_int.h. */
int lpg_pipeline_clocked(lease_db *db, int n, const int *which, const params *const *p,
                         PGresult **out) {
  int w[LPG_PIPE_MAX + 1], c = lease__clock_due(db, LPG(db)->version), i, move, rc;
  const params *q[LPG_PIPE_MAX + 1];
  PGresult *o[LPG_PIPE_MAX + 1];
  for (;;) {
    w[0] = LPG_ST_CLOCK_READ, q[0] = NULL;
    for (i = 0; i < n; i++) w[i + 1] = which[i], q[i + 1] = p[i];
    if ((rc = lpg_pipeline(db, n + c, w + 1 - c, q + 1 - c, o + 1 - c)) != LEASE_OK) return rc;
    move = 0;
    if (c) rc = lpg_q_clock_judge(db, o[0], &move), PQclear(o[0]);
    for (i = 0; i < n; i++) out[i] = o[i + 1];
    if (rc == LEASE_OK && !move) return LEASE_OK;
    for (i = 0; i < n; i++) PQclear(out[i]), out[i] = NULL;
    lpg_rollback(db);   /* the mark moves first, on its own */
    if (rc != LEASE_OK || (rc = lpg_q_clock_move(db)) != LEASE_OK) return rc;
    c = 0;
  }
}

/* Run statement `which` with parameters p. */
static PGresult *run(lease_db *db, int which, const params *p) {
  return lpg_stmt_run(db, which, p);
}

/* See lpg_int.h. */
const char *lpg_statement(lease__stmt which) {
  return (unsigned)which < LEASE__ST_COUNT ? stmts[which].sql : NULL;
}

/* ===================================================================== */
/* Opening, schema, settings                                              */
/* ===================================================================== */

/* The contract's columns on PostgreSQL, as format_type names them. */
static const struct {
  const char *name, *type;
  int notnull;
} jobs_columns[] = {
  {"id", "bytea", 1},   {"owner", "bytea", 0}, {"until", "double precision", 1},
  {"fence", "bigint", 1}, {"result", "bytea", 0}, {"done", "integer", 1},
  {"seq", "bigint", 1},
};
#define JOBS_NCOLS (sizeof jobs_columns / sizeof jobs_columns[0])

/*
** Check an existing jobs table against the contract's columns; *missing
** is 1 when there is no table.  A column of another type, or missing, is
** LEASE_SCHEMA naming it (text results here).
*/
static int check_schema(lease_db *db, int *missing) {
  PGresult *res = PQexec(LPG(db)->pg, LPG_SQL_COLUMNS);
  size_t i;
  int rows, r, rc = LEASE_OK;
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    rc = lpg_fail(db, res);
    PQclear(res);
    return rc;
  }
  rows = PQntuples(res);
  *missing = rows == 0;
  for (i = 0; rows > 0 && i < JOBS_NCOLS && rc == LEASE_OK; i++) {
    for (r = 0; r < rows; r++)
      if (strcmp(PQgetvalue(res, r, 0), jobs_columns[i].name) == 0) break;
    if (r == rows)
      rc = lease__fail(db, LEASE_SCHEMA, "the jobs table has no column %s", jobs_columns[i].name);
    else if (strcmp(PQgetvalue(res, r, 1), jobs_columns[i].type) != 0)
      rc = lease__fail(db, LEASE_SCHEMA, "jobs.%s is %s, not %s", jobs_columns[i].name,
                       PQgetvalue(res, r, 1), jobs_columns[i].type);
    else if (jobs_columns[i].notnull && PQgetvalue(res, r, 2)[0] != 't')
      rc = lease__fail(db, LEASE_SCHEMA, "jobs.%s is not NOT NULL", jobs_columns[i].name);
  }
  PQclear(res);
  return rc;
}

/* See lease.h (contract step 1): the table and the schema's steps
** (lpg_schema_upgrade), under an advisory lock so that concurrent creators
** do not collide.  A read-only handle has nothing to write when the table
** exists (its open checked that), as on SQLite. */
static int pg_init(lease_db *db) {
  int rc = lpg_ready(db);
  if (rc != LEASE_OK || (db->opt.flags & LEASE_OPEN_READONLY)) return rc;
  return lpg_schema_upgrade(db);
}

/*
** Connect c to db->path with the notice processor quiet from the first
** message on: a backend that starts just as the server goes down sends its
** FATAL error right after ReadyForQuery, and libpq hands a message that
** arrives on an idle connection to the notice processor, whose default
** prints it on stderr.  PQconnectdb would read that message before a
** processor could be set, so the connection is driven with PQconnectStart
** and PQconnectPoll (libpq's nonblocking connection loop), waiting at most
** the connection's connect_timeout (libpq's option or PGCONNECT_TIMEOUT,
** at least 2 s as libpq counts it; none: no limit, as PQconnectdb) for each
** step.
** Returns LEASE_OK, LEASE_NOMEM, or LEASE_CANTOPEN with libpq's message.
*/
static int connect_quiet(lease_db *db, lpg_conn *c) {
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  int timeout_ms = -1;
  PQconninfoOption *opts;
  char msg[LEASE__ERRMSG_MAX - 64];
  c->pg = PQconnectStart(db->path);
  if (!c->pg) return lease__fail(db, LEASE_NOMEM, "out of memory");
  PQsetNoticeProcessor(c->pg, quiet, NULL);
  if (PQstatus(c->pg) != CONNECTION_BAD && (opts = PQconninfo(c->pg)) != NULL) {
    for (PQconninfoOption *o = opts; o->keyword; o++)
      if (strcmp(o->keyword, "connect_timeout") == 0 && o->val && atoi(o->val) > 0)
        timeout_ms = (atoi(o->val) < 2 ? 2 : atoi(o->val)) * 1000;
    PQconninfoFree(opts);
  }
  while (PQstatus(c->pg) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
         st != PGRES_POLLING_FAILED) {
    struct pollfd p = {PQsocket(c->pg), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, 0};
    int n = poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0)
      return lease__fail(db, LEASE_CANTOPEN,
                         "PostgreSQL: cannot connect: timeout expired after %d s",
                         timeout_ms / 1000);
    st = PQconnectPoll(c->pg);
  }
  if (PQstatus(c->pg) == CONNECTION_OK) return LEASE_OK;
  trim_copy(msg, sizeof msg, PQerrorMessage(c->pg));
  return lease__fail(db, LEASE_CANTOPEN, "PostgreSQL: cannot connect: %s", msg);
}

/*
** The schema at open, once the jobs table is checked (*missing: there is
** none): the version read (one newer than this build knows refused, with
** nothing written); a read-only handle writes nothing and reads a database
** older than LPG_QUEUE_READABLE through empty temporary queue tables, one
** older than LPG_SCHEDULES_READABLE through an empty temporary
** lease_schedules (lpg_s_temp), one older than LPG_CONTROL_READABLE
** through empty settings tables, one older than LPG_KEY_READABLE with
** key NULL on every queue row (LPG_Q_SQL_KEY_VIEW); a writable one brings
** the database to LEASE_SCHEMA_VERSION (lpg_schema_upgrade) unless its
** version row says it is there.
*/
static int open_schema(lease_db *db, int missing) {
  lpg_conn *c = LPG(db);
  int rc;
  c->version = 0;
  c->versioned = 0;
  if (!missing && (rc = lpg_schema_read(db)) != LEASE_OK) return rc;
  if (db->opt.flags & LEASE_OPEN_READONLY) {
    if (c->version < LPG_QUEUE_READABLE &&
        (rc = lpg_exec(db, LPG_Q_SQL_TABLES("TEMP ", ""))) != LEASE_OK)
      return rc;
    if (c->version < LPG_KEY_READABLE &&
        (rc = lpg_exec(db, c->version < LPG_QUEUE_READABLE ? LPG_Q_SQL_KEY_TEMP
                                                           : LPG_Q_SQL_KEY_VIEW)) != LEASE_OK)
      return rc;
    if (c->version < LPG_CONTROL_READABLE && (rc = lpg_exec(db, LPG_Q_SQL_CONTROL_TEMP)) != LEASE_OK)
      return rc;
    return c->version >= LPG_SCHEDULES_READABLE ? LEASE_OK : lpg_s_temp(db);
  }
  if (!missing && c->versioned && c->version == LEASE_SCHEMA_VERSION) return LEASE_OK;
  return lpg_schema_upgrade(db);
}

/*
** See lease_int.h: connect with db->path as libpq's connection string
** (URI or keyword form), set the session, check the jobs table and create
** it when missing: not on a read-only handle (LEASE_SCHEMA, as on SQLite),
** nor with LEASE_OPEN_NOCREATE (LEASE_CANTOPEN, as SQLite refuses a
** missing file); then the schema's version (open_schema).
** A server that cannot be reached, or refuses the connection, is
** LEASE_CANTOPEN with libpq's message.
*/
static int pg_open(lease_db *db) {
  lpg_conn *c = calloc(1, sizeof *c);
  int rc, missing = 0;
  if (!c) return lease__fail(db, LEASE_NOMEM, "out of memory");
  db->conn = c;
  if ((rc = connect_quiet(db, c)) != LEASE_OK) return rc;
  if ((rc = lpg_exec(db, "SET default_transaction_read_only = off")) != LEASE_OK) return rc;
  if ((rc = check_schema(db, &missing)) != LEASE_OK) return rc;
  if (missing && (db->opt.flags & LEASE_OPEN_READONLY))
    return lease__fail(db, LEASE_SCHEMA, "the database has no jobs table (opened read-only)");
  if (missing && (db->opt.flags & LEASE_OPEN_NOCREATE))
    return lease__fail(db, LEASE_CANTOPEN, "the database has no jobs table (create = false)");
  if ((rc = open_schema(db, missing)) != LEASE_OK) return rc;
  if (missing && (rc = check_schema(db, &missing)) != LEASE_OK) return rc;
  db->schema_version = c->version;
  return set_session(db);
}

/* The keywords that name the server in lease_name, in this order. */
static const char *const name_keywords[] = {"host", "hostaddr", "port", "dbname", "user",
                                            "service"};

/*
** See lease_int.h.  libpq's own parser (PQconninfoParse: both forms,
** percent-decoding) gives the values: the name is "key=value" for each of
** name_keywords set, and the secrets are what lease__pg_raw_secrets finds
** plus the decoded values of password, sslpassword and passfile.  A string
** libpq cannot parse is named "PostgreSQL (invalid connection string)"; its
** open fails with libpq's message, the raw secrets scrubbed from it.
*/
int lease__pg_redact(lease_db *db) {
  size_t len = strlen(db->path), cap = 3 * len + 2, used = 0, n = 0, i;
  char *err = NULL;
  PQconninfoOption *opts = PQconninfoParse(db->path, &err), *o;
  PQfreemem(err);
  db->secrets = malloc(cap);
  db->name = malloc(len + 64);
  if (!db->secrets || !db->name) {
    PQconninfoFree(opts);
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  }
  db->secrets[0] = '\0';
  lease__pg_raw_secrets(db->path, db->secrets, cap, &used);
  db->name[0] = '\0';
  if (!opts) {
    strcpy(db->name, "PostgreSQL (invalid connection string)");
    return LEASE_OK;
  }
  for (o = opts; o->keyword; o++)
    if (o->val && (strcmp(o->keyword, "password") == 0 || strcmp(o->keyword, "sslpassword") == 0
                   || strcmp(o->keyword, "passfile") == 0))
      lease__secret_add(db->secrets, cap, &used, o->val, strlen(o->val));
  for (i = 0; i < sizeof name_keywords / sizeof name_keywords[0]; i++)
    for (o = opts; o->keyword; o++)
      if (strcmp(o->keyword, name_keywords[i]) == 0 && o->val && o->val[0] &&
          n + strlen(o->keyword) + strlen(o->val) + 3 < len + 64)
        n += (size_t)sprintf(db->name + n, "%s%s=%s", n ? " " : "", o->keyword, o->val);
  if (n == 0) strcpy(db->name, "PostgreSQL (libpq's default server)");
  PQconninfoFree(opts);
  return LEASE_OK;
}

/* See lease_int.h. */
static void pg_close(lease_db *db) {
  lpg_conn *c = LPG(db);
  if (!c) return;
  lpg_tx_close(db);
  if (c->pg) PQfinish(c->pg);
  free(c);
  db->conn = NULL;
}

/* See lease.h: lease_read_settings.  PostgreSQL always writes ahead:
** journal_mode "wal"; synchronous from the session's synchronous_commit
** (on, remote_write, remote_apply: FULL; local: FULL; off: NORMAL). */
static int pg_settings(lease_db *db, lease_settings *out) {
  PGresult *res;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  res = PQexec(LPG(db)->pg, "SELECT current_setting('synchronous_commit')");
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    rc = lpg_fail(db, res);
    PQclear(res);
    return rc;
  }
  snprintf(out->journal_mode, sizeof out->journal_mode, "wal");
  out->synchronous = strcmp(PQgetvalue(res, 0, 0), "off") == 0 ? 1 : 2;
  PQclear(res);
  return LEASE_OK;
}

/* See lease_int.h: every connection to a server sees the same database. */
static int pg_is_private(const lease_db *db) {
  (void)db;
  return 0;
}

/* See lease_int.h: bytea holds up to 1 GiB; the engine's own limit is lower. */
static size_t pg_max_length(const lease_db *db) {
  (void)db;
  return LEASE_MAX_LENGTH;
}

/* See lease_int.h: the server's clock (clock_timestamp()), seconds. */
static int pg_server_now(lease_db *db, double *out) {
  PGresult *res;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  if (!(res = run(db, LPG_ST_NOW, NULL))) return db->rc;
  *out = r_f8(res, 0, 0);
  PQclear(res);
  return LEASE_OK;
}

/* ===================================================================== */
/* Writes                                                                 */
/* ===================================================================== */

/* An id of enqueue's result, and whether an input job took it yet. */
typedef struct new_id {
  const char *id;
  size_t len;
  int used;
} new_id;

/* qsort and bsearch order of new_id: the bytes, then the length. */
static int new_id_cmp(const void *a, const void *b) {
  const new_id *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->id, y->id, n) : 0;
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The ledger's events of lpg_enqueue_ids, inside its transaction (the
** caller's, or lpg_ev_begin's): in input order, ok for the first of the
** jobs whose id res returned as inserted, exists for the others. */
static int enqueue_events(lease_db *db, const lease_new_job *jobs, int n, const PGresult *res) {
  new_id *ids, key;
  int i, rows = PQntuples(res), rc = LEASE_OK;
  if (!lease__events_on(db)) return LEASE_OK;
  if (!(ids = malloc((size_t)(rows ? rows : 1) * sizeof *ids)))
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0; i < rows; i++) {
    ids[i].id = PQgetvalue(res, i, 0);
    ids[i].len = (size_t)PQgetlength(res, i, 0);
    ids[i].used = 0;
  }
  qsort(ids, (size_t)rows, sizeof *ids, new_id_cmp);
  for (i = 0; i < n && rc == LEASE_OK; i++) {
    new_id *hit;
    key.id = jobs[i].id;
    key.len = jobs[i].id_len;
    hit = rows ? bsearch(&key, ids, (size_t)rows, sizeof *ids, new_id_cmp) : NULL;
    rc = lease__event_id(db, LEASE_EV_ENQUEUE, jobs[i].id, jobs[i].id_len, NAN,
                         hit && !hit->used ? LEASE_GRANTED : LEASE_EXISTS);
    if (hit) hit->used = 1;
  }
  free(ids);
  return rc;
}

/* See lpg_int.h: one INSERT of a bytea[] in PostgreSQL's binary array
** format (dimensions, then each element's length and bytes). */
int lpg_enqueue_ids(lease_db *db, const lease_new_job *jobs, int n, int *inserted) {
  params p = {0};
  PGresult *res;
  size_t size = 20, at, i;
  char *arr;
  int began, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  for (i = 0; i < (size_t)n; i++) {
    if (jobs[i].id_len > (size_t)INT32_MAX - 4 || size > (size_t)INT32_MAX - 4 - jobs[i].id_len)
      return lease__fail(db, LEASE_MISUSE, "enqueue_many: the ids add up to more than "
                         "PostgreSQL takes in one parameter (2 GiB)");
    size += 4 + jobs[i].id_len;
  }
  if (!(arr = malloc(size))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  put_be(arr, 1, 4);         /* one dimension */
  put_be(arr + 4, 0, 4);     /* no NULLs */
  put_be(arr + 8, T_BYTEA, 4);
  put_be(arr + 12, (uint64_t)n, 4);
  put_be(arr + 16, 1, 4);    /* lower bound */
  for (at = 20, i = 0; i < (size_t)n; i++) {
    put_be(arr + at, jobs[i].id_len, 4);
    if (jobs[i].id_len) memcpy(arr + at + 4, jobs[i].id, jobs[i].id_len);
    at += 4 + jobs[i].id_len;
  }
  p.v[0] = arr;
  p.len[0] = (int)size;
  p.fmt[0] = 1;
  p.n = 1;
  res = lpg_enqueue_run(db, LPG_ST_ENQUEUE_MANY, &p, jobs, n, &began);
  free(arr);
  if (!res) return lpg_ev_end(db, db->rc, began);
  rc = lpg_ev_end(db, enqueue_events(db, jobs, n, res), began);
  if (rc == LEASE_OK && inserted) *inserted = PQntuples(res);
  PQclear(res);
  return rc;
}

/* The statement of each guarded write. */
static const int write_stmt[] = {
  [LEASE__CLAIM] = LPG_ST_CLAIM,
  [LEASE__RENEW] = LPG_ST_RENEW,
  [LEASE__COMPLETE] = LPG_ST_COMPLETE,
  [LEASE__RELEASE] = LPG_ST_RELEASE,
};

/*
** See lpg_int.h: the outcome of a guarded write from its one row (lpg_sql.h:
** LPG_SQL_REPORT): granted when it wrote, else the job's facts from the
** row judged by the core's rules (lease__refusal, src/core/lease_rules.c).
** Sets *reason and a claim's *fence, or records why no reason fits.
*/
int lpg_outcome(lease_db *db, const lease__write *w, const PGresult *r, int64_t *fence,
                int *reason) {
  if (PQntuples(r) != 1)
    return lease__fail(db, LEASE_ERROR, "internal error: a guarded write returned %d rows",
                       PQntuples(r));
  return lpg_outcome_row(db, w, r, 0, fence, reason);
}

/* See lpg_int.h: lpg_outcome's reading of report row `row`. */
int lpg_outcome_row(lease_db *db, const lease__write *w, const PGresult *r, int row,
                    int64_t *fence, int *reason) {
  lease__facts f = {0};
  if (!PQgetisnull(r, row, 0) && r_i8(r, row, 0) > 0) {
    *reason = LEASE_GRANTED;
    if (w->op == LEASE__CLAIM && fence) *fence = r_i8(r, row, 0);
    return LEASE_OK;
  }
  if ((f.found = r_bool(r, row, 1))) {
    f.done = r_bool(r, row, 2);
    f.other_owner = r_bool(r, row, 3);
    f.other_fence = r_bool(r, row, 4);
    f.expired = r_bool(r, row, 5);
    f.blocked = r_i4(r, row, 6);
    f.live = r_bool(r, row, 7);
    f.qstate = PQgetisnull(r, row, 8) ? LEASE__Q_OPEN : r_i4(r, row, 8);
  }
  return lease__refusal(db, w, &f, reason);
}

/* The ledger's op of each guarded write. */
static const int write_event[] = {
  [LEASE__CLAIM] = LEASE_EV_CLAIM,
  [LEASE__RENEW] = LEASE_EV_RENEW,
  [LEASE__COMPLETE] = LEASE_EV_COMPLETE,
  [LEASE__RELEASE] = LEASE_EV_RELEASE,
};

/* The ledger's events of a claim that found the job's lease expired
** unreported (LPG_SQL_CLAIM's columns after the report): expire, with the
** lapsed lease's owner and fence, then discard when that was its last
** attempt. */
static int lapsed_events(lease_db *db, const lease__write *w, const PGresult *r) {
  lease__event e;
  int rc;
  if (PQntuples(r) != 1 || !r_bool(r, 0, 9)) return LEASE_OK;
  memset(&e, 0, sizeof e);
  e.op = LEASE_EV_EXPIRE;
  e.id = w->id;
  e.id_len = w->id_len;
  e.owner = PQgetisnull(r, 0, 11) ? NULL : PQgetvalue(r, 0, 11);
  e.owner_len = (size_t)PQgetlength(r, 0, 11);
  e.has_fence = 1;
  e.fence = r_i8(r, 0, 12);
  e.at = w->now;
  e.reason = LEASE_GRANTED;
  if ((rc = lease__event_add(db, &e)) != LEASE_OK || !r_bool(r, 0, 10)) return rc;
  return lease__event_id(db, LEASE_EV_DISCARD, w->id, w->id_len, w->now, LEASE_GRANTED);
}

/* See lpg_int.h. */
int lpg_write_params(const lease__write *w, params *p) {
  p_bytes(p, w->id, w->id_len);
  p_bytes(p, w->owner, w->owner_len);
  switch (w->op) {
    case LEASE__CLAIM:
      p_f8(p, w->now);
      p_f8(p, w->until);
      break;
    case LEASE__RENEW:
      p_i8(p, w->fence);
      p_f8(p, w->now);
      p_f8(p, w->until);
      break;
    case LEASE__COMPLETE:
      p_i8(p, w->fence);
      p_f8(p, w->now);
      p_bytes(p, w->result, w->result_len);
      break;
    case LEASE__RELEASE:
      p_i8(p, w->fence);
      break;
  }
  return write_stmt[w->op];
}

/* See lpg_int.h. */
int lpg_write_read(lease_db *db, const lease__write *w, PGresult *res, int64_t *fence,
                   int *reason) {
  int64_t got = 0;
  int rc;
  if (w->op == LEASE__CLAIM && PQntuples(res) == 1 && r_bool(res, 0, 10) && !r_bool(res, 0, 13)) {
    PQclear(res);
    return lease__skipped(db, "a claim's discard of", w->id, w->id_len);
  }
  rc = lpg_outcome(db, w, res, &got, reason);
  if (rc == LEASE_OK && w->op == LEASE__CLAIM) rc = lapsed_events(db, w, res);
  PQclear(res);
  if (rc != LEASE_OK) return rc;
  if (fence) *fence = got;
  return lease__event_write(db, write_event[w->op], w, got, *reason);
}

/* Run the guarded write w and read its outcome (a complete whose queue
** row was not written fails: lpg_skipped_as), then record its event in
** the ledger (in the caller's transaction; alone, the event is not
** recorded: pg_write opens one when events are on). */
static int guarded(lease_db *db, const lease__write *w, int64_t *fence, int *reason) {
  params p = {0};
  PGresult *res;
  if (!(res = run(db, lpg_write_params(w, &p), &p)))
    return w->op == LEASE__COMPLETE ? lpg_skipped_as(db, "complete's queue row of", w->id, w->id_len)
           : w->op == LEASE__CLAIM  ? lpg_skipped_as(db, "a claim's error record of", w->id, w->id_len)
                                    : db->rc;
  return lpg_write_read(db, w, res, fence, reason);
}

/* See lease_int.h: claim, renew, complete or release, one statement. */
static int pg_write(lease_db *db, const lease__write *w, int64_t *fence, int *reason) {
  int64_t got = 0;
  int r = LEASE_GRANTED, began, rc = lpg_ready(db);
  if (rc != LEASE_OK || (rc = lpg_ev_begin(db, &began)) != LEASE_OK) return rc;
  if ((rc = lpg_ev_end(db, guarded(db, w, &got, &r), began)) != LEASE_OK) return rc;
  if (fence) *fence = r == LEASE_GRANTED ? got : 0;
  if (reason) *reason = r;
  return LEASE_OK;
}

/* ===================================================================== */
/* Shared with lpg_tx.c (lpg_int.h)                                       */
/* ===================================================================== */

/* See lpg_int.h. */
PGconn *lpg_pq(lease_db *db) { return LPG(db)->pg; }
void **lpg_txstate(lease_db *db) { return &LPG(db)->tx; }
int lpg_fail_result(lease_db *db, const PGresult *res) { return lpg_fail(db, res); }
int lpg_guarded(lease_db *db, const lease__write *w, int *reason) {
  return guarded(db, w, NULL, reason);
}

/* ===================================================================== */
/* Operations the server ended: run again                                 */
/* ===================================================================== */

/* How many runs an operation gets when the server keeps ending its
** transaction (rerun). */
#define LPG_RUNS 8

/* The server's deadlock_timeout in seconds, at most 5 (1 when it cannot be
** read: PostgreSQL's default). */
static double deadlock_wait(lease_db *db) {
  PGresult *res = PQexec(LPG(db)->pg, "SELECT extract(epoch FROM"
                         " current_setting('deadlock_timeout')::interval)::float8");
  double s = 1;
  if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
    s = strtod(PQgetvalue(res, 0, 0), NULL);
  PQclear(res);
  return s > 0 && s <= 5 ? s : s > 5 ? 5 : 1;
}

/* Sleep `seconds` (>= 0). */
static void pause_for(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/*
** 1 when the operation that returned rc is run again, fewer than LPG_RUNS
** runs made: a statement or trigger function of it failed reading a clock
** mark that is no number as a float8, and that mark is now dropped
** (lpg_q_mark_dropped), or the server ended its transaction as a
** deadlock's victim (SQLSTATE 40P01) or for a serialization failure
** (40001); either way nothing of it was stored.  Each operation below is
** one transaction of the engine's own, rolled back on failure (a caller's
** with_lease lets no other call in); complete_claim_next's one round trip
** (lpg_queue.c: ccn_committed) commits at its pipeline's sync and sends
** no statement after it, so no failure the server reports follows a
** commit.  After a deadlock or a serialization failure, before the next
** run, the handle sleeps, so that the transactions the
** victim waited for finish before it takes its locks again: after a
** deadlock half to all of the server's deadlock_timeout, at random (a
** cycle of three, two of them this call's peers, ends one victim at a
** time, each found a deadlock_timeout after its wait began); after a
** serialization failure runs * [2, 6) ms.  The failure and the call's
** flags are forgotten, as at the start of a call.
*/
static int rerun(lease_db *db, int rc, int runs) {
  int deadlock = 0, dropped;
  if (rc == LEASE_OK || runs >= LPG_RUNS) return 0;
  if (!(dropped = lpg_q_mark_dropped(db))) {
    if (rc != LEASE_BUSY) return 0;
    deadlock = lpg_failed_with(db, "40P01");
    if (!deadlock && !lpg_failed_with(db, "40001")) return 0;
  }
  lease__clear_error(db);
  db->has_dup = 0;
  db->refused = 0;
  if (!dropped)
    pause_for(deadlock ? (0.5 + 0.5 * lease__random()) * deadlock_wait(db)
                       : runs * (0.002 + 0.004 * lease__random()));
  return 1;
}

/* rerun_<fn>: fn (args declared as decl), run again while rerun says so. */
#define LPG_RERUN_(fn, decl, args)                                      \
  static int rerun_##fn decl {                                          \
    int rc, runs = 0;                                                   \
    do rc = fn args;                                                    \
    while (rc != LEASE_OK && rerun(db, rc, ++runs));                    \
    return rc;                                                          \
  }
LPG_RERUN_(lpg_q_enqueue, (lease_db *db, const lease_new_job *jobs, int n, int *inserted),
           (db, jobs, n, inserted))
LPG_RERUN_(pg_write, (lease_db *db, const lease__write *w, int64_t *fence, int *reason),
           (db, w, fence, reason))
LPG_RERUN_(lpg_complete_many, (lease_db *db, const lease__write *w, const lease_result *items,
                               int n, int *reasons, int *stored),
           (db, w, items, n, reasons, stored))
LPG_RERUN_(lpg_q_claim_next, (lease_db *db, const lease__write *w, int max, lease_job *jobs,
                              int *count, int *why),
           (db, w, max, jobs, count, why))
LPG_RERUN_(lpg_q_complete_claim_next, (lease_db *db, const lease__write *wc,
                                       const lease__write *wn, int max, lease_job *jobs,
                                       int *count, int *reason, int *why),
           (db, wc, wn, max, jobs, count, reason, why))
LPG_RERUN_(lpg_q_complete_many_claim_next,
           (lease_db *db, const lease__write *wc, const lease_result *items, int n,
            int *reasons, int *stored, const lease__write *wn, int max, lease_job *jobs,
            int *count, int *why),
           (db, wc, items, n, reasons, stored, wn, max, jobs, count, why))
LPG_RERUN_(lpg_q_set_queue, (lease_db *db, const char *queue, size_t queue_len, int what,
                             int paused, const lease_queue_limits *l),
           (db, queue, queue_len, what, paused, l))
LPG_RERUN_(lpg_q_fail, (lease_db *db, const lease__write *w, const lease_fail_opts *o,
                        int *status, double *run_at, int *reason),
           (db, w, o, status, run_at, reason))
LPG_RERUN_(lpg_q_retry, (lease_db *db, const char *id, size_t id_len, double now, int *reason),
           (db, id, id_len, now, reason))
LPG_RERUN_(lpg_q_cancel, (lease_db *db, const char *id, size_t id_len, double now, int *reason),
           (db, id, id_len, now, reason))
LPG_RERUN_(lpg_q_prune, (lease_db *db, double before, const char *queue, size_t queue_len,
                         int status, int64_t *deleted),
           (db, before, queue, queue_len, status, deleted))
LPG_RERUN_(lpg_s_schedule, (lease_db *db, const lease_schedule_spec *s), (db, s))
LPG_RERUN_(lpg_s_unschedule, (lease_db *db, const char *name, size_t name_len, int *found),
           (db, name, name_len, found))
LPG_RERUN_(lpg_s_tick, (lease_db *db, double now, int max, const char **ids, size_t *id_lens,
                        int *count, int *more),
           (db, now, max, ids, id_lens, count, more))
#undef LPG_RERUN_

/* ===================================================================== */
/* The table of functions                                                 */
/* ===================================================================== */

/* See lease_int.h. */
const lease__backend lease__pg = {
  .name = "PostgreSQL",
  .statement = lpg_statement,
  .open = pg_open,
  .close = pg_close,
  .init = pg_init,
  .enqueue = rerun_lpg_q_enqueue,
  .after = lpg_q_after,
  .state = lpg_q_state,
  .write = rerun_pg_write,
  .complete_many = rerun_lpg_complete_many,
  .claim_next = rerun_lpg_q_claim_next,
  .list = lpg_q_list,
  .count = lpg_q_count,
  .settings = pg_settings,
  .is_private = pg_is_private,
  .max_length = pg_max_length,
  .server_now = pg_server_now,
  .with_lease = lpg_with_lease,
  .tx_run = lpg_tx_run,
  .tx_write = lpg_tx_write,
  .fence_gate = lpg_fence_gate,
  .errors = lpg_q_errors,
  .complete_claim_next = rerun_lpg_q_complete_claim_next,
  .complete_many_claim_next = rerun_lpg_q_complete_many_claim_next,
  .set_queue = rerun_lpg_q_set_queue,
  .queues = lpg_q_queues,
  .fail = rerun_lpg_q_fail,
  .retry = rerun_lpg_q_retry,
  .cancel = rerun_lpg_q_cancel,
  .prune = rerun_lpg_q_prune,
  .schedule = rerun_lpg_s_schedule,
  .unschedule = rerun_lpg_s_unschedule,
  .schedules = lpg_s_schedules,
  .tick = rerun_lpg_s_tick,
  .wake = lpg_wake,
  .wait_mark = lpg_wait_mark,
  .due = lpg_due,
  .wait_signal = lpg_wait_signal,
  .event = lpg_event,
  .event_prune = lpg_event_prune,
  .events = lpg_events,
};
