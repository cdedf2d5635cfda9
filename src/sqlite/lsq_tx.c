/*
** lsq_tx.c: fenced side effects on SQLite (lease.h: lease_with_lease,
** lease_tx_*, lease_fence_gate).
**
** with_lease holds one transaction of its own on the handle's connection
** while the caller's callback runs: BEGIN IMMEDIATE, the lease check
** (check_lease: complete's guard, read), the callback, then COMMIT, or
** ROLLBACK when the callback fails.  It does not go through lsq_write_txn:
** the caller's code runs inside the transaction, and no other body may
** share it.
**
** The caller's statements run under SQLite's authorizer (authorize): a
** statement that would end the transaction, attach another file, set a
** pragma, or write the engine's own tables is refused when it is
** prepared, by what it does, not by how it is spelled.
**
** The gate (LSQ_TX_SQL_GATE) is one upsert whose WHERE clause keeps the
** largest fence: a smaller one changes no row.
*/
#include "lsq.h"

#include <stdlib.h>
#include <string.h>

/*
** The lease check before the callback runs: complete's guard
** (LSQ_SQL_COMPLETE's WHERE clause) as a read, in the same transaction.
** ?1 id, ?2 owner, ?3 fence, ?4 now.  A row means the lease holds.
*/
#define LSQ_TX_SQL_HOLDS                                                    \
  "SELECT 1 FROM jobs"                                                     \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \
  " AND " LSQ_SQL_BLOCKED " = 0"                                           \
  " AND " LSQ_SQL_NOT_ENDED

/* The gate's table, created on first use; never part of the jobs table. */
#define LSQ_TX_SQL_CREATE_FENCES                                            \
  "CREATE TABLE IF NOT EXISTS lease_fences(resource TEXT PRIMARY KEY,"     \
  " fence INTEGER NOT NULL)"

/* The gate: store ?2 for resource ?1 unless a larger fence is stored
** (then no row changes).  Equal passes: a worker may write twice. */
#define LSQ_TX_SQL_GATE                                                     \
  "INSERT INTO lease_fences(resource, fence) VALUES (?1, ?2)"              \
  " ON CONFLICT(resource) DO UPDATE SET fence = excluded.fence"            \
  " WHERE excluded.fence >= lease_fences.fence"

/* After a gate of fence ?2 that changed no row: a row when resource ?1
** has a fence the gate's own condition (excluded.fence >= fence) does not
** pass, compared as the upsert compares them (the gate refused it); none
** means another client's trigger skipped the upsert. */
#define LSQ_TX_SQL_GATE_STORED                                              \
  "SELECT 1 FROM lease_fences WHERE resource = ?1 AND (?2 >= fence) IS NOT 1"

/* A connection's state for this file (lsq_conn.tx). */
typedef struct txstate {
  sqlite3_stmt *holds;      /* LSQ_TX_SQL_HOLDS, prepared on first use */
  sqlite3_stmt *gate;       /* LSQ_TX_SQL_GATE, prepared once the table exists */
  sqlite3_stmt *stored;     /* LSQ_TX_SQL_GATE_STORED, prepared on first use */
  sqlite3_stmt *user;       /* the caller's statement while it runs */
  lease_value *vals;        /* its row: values and names (one allocation) */
  int authorizer;           /* authorize is installed on the connection */
  int guard;                /* 1 while the caller's SQL is prepared or stepped */
  int in_row;               /* 1 while a row callback runs */
  const char *denied;       /* why authorize refused the last statement */
} txstate;

/* db's state, created on first use; NULL when memory ran out (recorded). */
static txstate *state(lease_db *db) {
  lsq_conn *c = LSQ(db);
  if (!c->tx && !(c->tx = calloc(1, sizeof(txstate))))
    lease__fail(db, LEASE_NOMEM, "out of memory");
  return c->tx;
}

/* End the caller's statement, if one is left (also after a callback
** raised past it). */
static void finish_user(txstate *t) {
  sqlite3_finalize(t->user);
  t->user = NULL;
  free(t->vals);
  t->vals = NULL;
  t->in_row = 0;
}

/* Prepare text into *slot, kept for the connection, unless it is there
** already.  LEASE_OK, or the failure recorded on db (*slot NULL). */
static int kept(lease_db *db, sqlite3_stmt **slot, const char *text) {
  int src;
  if (*slot) return LEASE_OK;
  src = sqlite3_prepare_v3(LSQ(db)->sql, text, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL);
  if (src == SQLITE_OK) return LEASE_OK;
  lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_finalize(*slot);
  *slot = NULL;
  return db->rc;
}

/* Drop the gate's statements: after a rollback the table they were
** prepared against may be gone. */
static void drop_gate(txstate *t) {
  sqlite3_finalize(t->gate);
  t->gate = NULL;
  sqlite3_finalize(t->stored);
  t->stored = NULL;
}

/* See lsq.h. */
void lsq_tx_close(lease_db *db) {
  txstate *t = LSQ(db)->tx;
  if (!t) return;
  finish_user(t);
  sqlite3_finalize(t->holds);
  drop_gate(t);
  free(t);
  LSQ(db)->tx = NULL;
}

/* ===================================================================== */
/* The authorizer                                                         */
/* ===================================================================== */

/* True for a table, index or trigger the engine owns: the contract's jobs
** table and every object whose name starts with "lease_" (the gate's
** table, the queue's tables, indexes and triggers), a prefix the engine
** reserves. */
static int engine_object(const char *name) {
  return name && (sqlite3_stricmp(name, "jobs") == 0 || sqlite3_strnicmp(name, "lease_", 6) == 0);
}

/* True for a pragma that only reads, also when given an argument. */
static int pragma_reads(const char *name) {
  static const char *const reads[] = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check", NULL,
  };
  int i;
  for (i = 0; name && reads[i]; i++)
    if (sqlite3_stricmp(name, reads[i]) == 0) return 1;
  return 0;
}

/* Refuse, keeping why for the message. */
static int deny(txstate *t, const char *why) {
  t->denied = why;
  return SQLITE_DENY;
}

/*
** SQLite's authorizer for the connection (arg: its txstate): while the
** caller's SQL is prepared (t->guard), refuse what would end or widen the
** with_lease transaction or write the engine's tables.  The engine's own
** statements run with t->guard 0 and pass.  SQLite passes the table as
** the first name for writes and DROP TABLE, as the second for ALTER
** TABLE, indexes and triggers.
*/
static int authorize(void *arg, int action, const char *a1, const char *a2, const char *schema,
                     const char *trigger) {
  txstate *t = arg;
  (void)schema, (void)trigger;
  if (!t->guard) return SQLITE_OK;
  switch (action) {
    case SQLITE_TRANSACTION:
      return deny(t, "it would begin, commit or roll back the with_lease transaction");
    case SQLITE_ATTACH: case SQLITE_DETACH:
      return deny(t, "ATTACH and DETACH are not allowed inside with_lease");
    case SQLITE_PRAGMA:
      if (a2 && !pragma_reads(a1))
        return deny(t, "a pragma that sets a value is not allowed inside with_lease");
      break;
    case SQLITE_INSERT: case SQLITE_UPDATE: case SQLITE_DELETE:
    case SQLITE_CREATE_TABLE: case SQLITE_CREATE_TEMP_TABLE: case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_TABLE: case SQLITE_CREATE_VIEW: case SQLITE_CREATE_TEMP_VIEW:
      if (engine_object(a1))
        return deny(t, "it would write the engine's own tables (jobs, lease_fences): use "
                       "tx complete, renew or fence_gate");
      break;
    case SQLITE_ALTER_TABLE:
    case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TEMP_INDEX: case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX: case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER:
      if (engine_object(a1) || engine_object(a2))
        return deny(t, "it would change the engine's own tables (jobs, lease_fences)");
      break;
    default:
      break;
  }
  return SQLITE_OK;
}

/* ===================================================================== */
/* with_lease                                                             */
/* ===================================================================== */

/*
** The lease check before the callback, in the open transaction: the job
** is held by w's owner with w's fence, not done, until > now, not blocked
** (LSQ_TX_SQL_HOLDS, complete's guard).  When it does not hold, the
** reason comes from why_refused, as complete's does: the same words.
** Sets *reason; returns LEASE_OK or a failure (a blocked job, SQLite's).
*/
static int check_lease(lease_db *db, txstate *t, const lease__write *w, int *reason) {
  int src, held;
  if (kept(db, &t->holds, LSQ_TX_SQL_HOLDS) != LEASE_OK) return db->rc;
  sqlite3_bind_text(t->holds, 1, w->id, (int)w->id_len, SQLITE_STATIC);
  sqlite3_bind_text(t->holds, 2, w->owner, (int)w->owner_len, SQLITE_STATIC);
  sqlite3_bind_int64(t->holds, 3, w->fence);
  sqlite3_bind_double(t->holds, 4, w->now);
  src = sqlite3_step(t->holds);
  held = src == SQLITE_ROW;
  if (src != SQLITE_ROW && src != SQLITE_DONE) lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(t->holds);
  if (src != SQLITE_ROW && src != SQLITE_DONE) return db->rc;
  *reason = LEASE_GRANTED;
  if (!held) return lsq_why_refused(db, w, reason);
  return LEASE_OK;
}

/* Record that the transaction is gone (SQLite ended it after a failure
** under the callback); returns that failure's code. */
static int ended_fail(lease_db *db, lease_tx *tx) {
  return lease__fail(db, tx->ended, "the with_lease transaction was ended by an earlier "
                     "failure inside its callback (%s): nothing is committed",
                     lease_errname(tx->ended));
}

/* See lsq.h and lease.h. */
int lsq_with_lease(lease_db *db, lease_tx *tx, int *reason) {
  txstate *t = state(db);
  sqlite3 *sql = LSQ(db)->sql;
  int rc;
  if (!t) return db->rc;
  if (!t->authorizer) {
    sqlite3_set_authorizer(sql, authorize, t);
    t->authorizer = 1;
  }
  if ((rc = lsq_run(db, LSQ_ST_BEGIN)) != LEASE_OK) return rc;
  if ((rc = lsq_clock(db)) == LEASE_OK) rc = check_lease(db, t, &tx->w, reason);
  if (rc != LEASE_OK || *reason != LEASE_GRANTED) {
    lsq_rollback(db);
    return rc;
  }
  tx->open = 1;
  rc = tx->fn(tx, tx->ctx);
  tx->open = 0;
  finish_user(t);
  if (rc != LEASE_OK) {
    if (db->rc != rc)
      lease__fail(db, rc, "the with_lease callback returned %s: rolled back", lease_errname(rc));
    lsq_rollback(db);
    drop_gate(t);
    return rc;
  }
  if (!tx->ended && sqlite3_get_autocommit(sql)) tx->ended = LEASE_ERROR;
  if (tx->ended) {
    drop_gate(t);
    return ended_fail(db, tx);
  }
  if ((rc = lsq_run(db, LSQ_ST_COMMIT)) != LEASE_OK) {
    lsq_rollback(db);
    drop_gate(t);
  }
  return rc;
}

/* ===================================================================== */
/* The caller's statements                                                */
/* ===================================================================== */

/* Refuse a tx call when the transaction is gone or a row callback runs. */
static int tx_usable(lease_tx *tx, txstate *t) {
  if (tx->ended || sqlite3_get_autocommit(LSQ(tx->db)->sql)) {
    if (!tx->ended) tx->ended = LEASE_ERROR;
    return ended_fail(tx->db, tx);
  }
  if (t->in_row)
    return lease__fail(tx->db, LEASE_MISUSE, "the tx cannot run a statement inside a row "
                       "callback of its own query");
  return LEASE_OK;
}

/* Note a failure that ended the transaction; returns rc. */
static int note_end(lease_tx *tx, int rc) {
  if (rc != LEASE_OK && !tx->ended && sqlite3_get_autocommit(LSQ(tx->db)->sql)) tx->ended = rc;
  return rc;
}

/* Prepare the caller's sql into t->user under the authorizer, refusing
** more than one statement.  LEASE_OK or the failure recorded. */
static int prepare_user(lease_db *db, txstate *t, const char *text) {
  sqlite3 *sql = LSQ(db)->sql;
  sqlite3_stmt *extra = NULL;
  const char *tail = NULL;
  int src;
  t->denied = NULL;
  t->guard = 1;
  src = sqlite3_prepare_v2(sql, text, -1, &t->user, &tail);
  while (src == SQLITE_OK && !extra && tail && *tail)
    src = sqlite3_prepare_v2(sql, tail, -1, &extra, &tail);
  t->guard = 0;
  if (src == SQLITE_AUTH && t->denied)
    return lease__fail(db, LEASE_MISUSE, "statement refused: %s", t->denied);
  if (src != SQLITE_OK) return lsq_fail(db, sql, src);
  if (extra) {
    sqlite3_finalize(extra);
    return lease__fail(db, LEASE_MISUSE, "sql holds more than one statement");
  }
  if (!t->user) return lease__fail(db, LEASE_MISUSE, "sql holds no statement");
  return LEASE_OK;
}

/* Bind params to t->user (their count checked against the statement's). */
static int bind_params(lease_db *db, sqlite3_stmt *st, const lease_value *params, int n) {
  int i, src = SQLITE_OK, want = sqlite3_bind_parameter_count(st);
  if (want != n)
    return lease__fail(db, LEASE_MISUSE, "sql has %d parameters, %d given", want, n);
  for (i = 0; i < n && src == SQLITE_OK; i++) {
    const lease_value *v = &params[i];
    size_t len = v->len;
    const char *s = v->s ? v->s : "";
    if (v->s && len == LEASE_NTS) len = strlen(v->s);
    switch (v->type) {
      case LEASE_TYPE_INTEGER: src = sqlite3_bind_int64(st, i + 1, v->i); break;
      case LEASE_TYPE_FLOAT: src = sqlite3_bind_double(st, i + 1, v->f); break;
      case LEASE_TYPE_TEXT:
        src = sqlite3_bind_text64(st, i + 1, s, len, SQLITE_STATIC, SQLITE_UTF8);
        break;
      case LEASE_TYPE_BLOB: src = sqlite3_bind_blob64(st, i + 1, s, len, SQLITE_STATIC); break;
      default: src = sqlite3_bind_null(st, i + 1); break;
    }
  }
  if (src != SQLITE_OK) return lsq_fail(db, LSQ(db)->sql, src);
  return LEASE_OK;
}

/* Read the current row of st into vals (ncols values, then names after
** them) and call row. */
static int call_row(txstate *t, sqlite3_stmt *st, lease_row_fn *row, void *ctx) {
  int i, n = sqlite3_column_count(st), rc;
  lease_value *v = t->vals;
  const char **names = (const char **)(v + n);
  for (i = 0; i < n; i++) {
    memset(&v[i], 0, sizeof v[i]);
    names[i] = sqlite3_column_name(st, i);
    switch (sqlite3_column_type(st, i)) {
      case SQLITE_INTEGER:
        v[i].type = LEASE_TYPE_INTEGER;
        v[i].i = sqlite3_column_int64(st, i);
        break;
      case SQLITE_FLOAT:
        v[i].type = LEASE_TYPE_FLOAT;
        v[i].f = sqlite3_column_double(st, i);
        break;
      case SQLITE_TEXT:
        v[i].type = LEASE_TYPE_TEXT;
        v[i].s = (const char *)sqlite3_column_text(st, i);
        v[i].len = (size_t)sqlite3_column_bytes(st, i);
        break;
      case SQLITE_BLOB:
        v[i].type = LEASE_TYPE_BLOB;
        v[i].s = sqlite3_column_blob(st, i);
        v[i].len = (size_t)sqlite3_column_bytes(st, i);
        break;
      default:
        v[i].type = LEASE_TYPE_NULL;
        break;
    }
  }
  t->in_row = 1;
  rc = row(ctx, n, (const char *const *)names, v);
  t->in_row = 0;
  return rc;
}

/* See lsq.h and lease.h: one statement of the caller's inside tx. */
int lsq_tx_run(lease_tx *tx, const char *text, const lease_value *params, int n,
               lease_row_fn *row, void *ctx, int64_t *changes) {
  lease_db *db = tx->db;
  sqlite3 *sql = LSQ(db)->sql;
  txstate *t = LSQ(db)->tx;
  int rc, src, ncols;
  sqlite3_int64 before = sqlite3_total_changes64(sql);
  if ((rc = tx_usable(tx, t)) != LEASE_OK) return rc;
  finish_user(t);
  if ((rc = prepare_user(db, t, text)) != LEASE_OK ||
      (rc = bind_params(db, t->user, params, n)) != LEASE_OK) {
    finish_user(t);
    return rc;
  }
  ncols = sqlite3_column_count(t->user);
  if (row && ncols > 0 &&
      !(t->vals = malloc((size_t)ncols * (sizeof(lease_value) + sizeof(char *))))) {
    finish_user(t);
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  }
  for (;;) {
    t->guard = 1;
    src = sqlite3_step(t->user);
    t->guard = 0;
    if (src != SQLITE_ROW) break;
    if (row && (rc = call_row(t, t->user, row, ctx)) != LEASE_OK) break;
  }
  if (rc == LEASE_OK && src != SQLITE_DONE) {
    rc = src == SQLITE_AUTH && t->denied
             ? lease__fail(db, LEASE_MISUSE, "statement refused: %s", t->denied)
             : lsq_fail(db, sql, src);
  }
  /* sqlite3_changes64 keeps the count of the last INSERT, UPDATE or
  ** DELETE: a statement of another kind changed rows only when the total
  ** moved. */
  if (rc == LEASE_OK && changes && sqlite3_total_changes64(sql) != before)
    *changes = sqlite3_changes64(sql);
  finish_user(t);
  return note_end(tx, rc);
}

/* The arguments and outcome of lsq_tx_write's guarded step. */
typedef struct tx_write_ctx {
  const lease__write *w;
  int *reason;
} tx_write_ctx;

/* Savepoint body: the guarded step of x->w. */
static int tx_write_body(lease_db *db, void *ctx) {
  tx_write_ctx *x = ctx;
  return lsq_guarded_step(db, x->w, NULL, x->reason);
}

/* See lsq.h: renew or complete of the held job inside tx.  A complete is
** two statements (the job's queue row, then its jobs row: lsq_ops.c), and
** the transaction goes on after a failure the callback may catch, so it
** runs in a savepoint: a failure undoes both. */
int lsq_tx_write(lease_tx *tx, const lease__write *w, int *reason) {
  txstate *t = LSQ(tx->db)->tx;
  tx_write_ctx x = { w, reason };
  int rc;
  if ((rc = tx_usable(tx, t)) != LEASE_OK) return rc;
  if (w->op == LEASE__COMPLETE) return note_end(tx, lsq_savepoint(tx->db, tx_write_body, &x));
  return note_end(tx, tx_write_body(tx->db, &x));
}

/* ===================================================================== */
/* The fence gate                                                         */
/* ===================================================================== */

/* The arguments and outcome of a gate body. */
typedef struct gate_ctx {
  const char *resource;
  size_t len;
  int64_t fence;
  int reason;
} gate_ctx;

/* After g's upsert changed no row: LEASE_OK when a larger fence is stored
** (the gate refused g), else LEASE_MISMATCH recorded (the upsert was
** skipped by another client's trigger: lease__skipped). */
static int gate_refused(lease_db *db, const gate_ctx *g) {
  txstate *t = LSQ(db)->tx;
  int larger, rc;
  if ((rc = kept(db, &t->stored, LSQ_TX_SQL_GATE_STORED)) != LEASE_OK) return rc;
  sqlite3_bind_text(t->stored, 1, g->resource, (int)g->len, SQLITE_STATIC);
  sqlite3_bind_int64(t->stored, 2, g->fence);
  if ((rc = lsq_found_row(db, t->stored, &larger)) != LEASE_OK) return rc;
  return larger ? LEASE_OK : lease__skipped(db, "fence_gate's fence of", g->resource, g->len);
}

/* Write body: the gate's upsert (the table created on first use). */
static int gate_body(lease_db *db, void *ctx) {
  gate_ctx *g = ctx;
  txstate *t = state(db);
  sqlite3 *sql = LSQ(db)->sql;
  int src;
  if (!t) return db->rc;
  if (!t->gate) {
    if (lsq_exec(db, LSQ_TX_SQL_CREATE_FENCES) != LEASE_OK) return db->rc;
    if (kept(db, &t->gate, LSQ_TX_SQL_GATE) != LEASE_OK) {
      drop_gate(t);
      return db->rc;
    }
  }
  sqlite3_bind_text(t->gate, 1, g->resource, (int)g->len, SQLITE_STATIC);
  sqlite3_bind_int64(t->gate, 2, g->fence);
  src = sqlite3_step(t->gate);
  if (src != SQLITE_DONE) {
    lsq_fail(db, sql, src);
    drop_gate(t);
    return db->rc;
  }
  sqlite3_reset(t->gate);
  g->reason = lease__gate_reason(sqlite3_changes(sql) > 0);
  return g->reason == LEASE_GRANTED ? LEASE_OK : gate_refused(db, g);
}

/* See lsq.h and lease.h: in its own write transaction, or inside tx. */
int lsq_fence_gate(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                   int64_t fence, int *reason) {
  gate_ctx g = { resource, resource_len, fence, LEASE_GRANTED };
  int rc;
  if (tx) {
    txstate *t = state(db);
    if (!t) return db->rc;
    if ((rc = tx_usable(tx, t)) != LEASE_OK) return rc;
    rc = note_end(tx, gate_body(db, &g));
  } else if ((rc = lsq_write_txn(db, gate_body, &g)) != LEASE_OK) {
    txstate *t = LSQ(db)->tx;
    if (t) drop_gate(t);
  }
  if (rc == LEASE_OK) *reason = g.reason;
  return rc;
}
