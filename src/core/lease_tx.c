/*
** lease_tx.c: the core of fenced side effects (lease.h: lease_with_lease,
** lease_tx_*, lease_fence_gate).  No SQL here: the checks of the
** arguments, the handle's "inside a callback" state, and the calls through
** the backend's table (lease_int.h).
**
** While a callback runs, db->tx points at its transaction: every public
** function on db refuses (lease.c's CHECK_DB), so nothing else can begin,
** commit or roll back on the connection that holds the transaction.  The
** tx functions reach the backend directly, with the error state cleared
** as each public call does.
*/
#include "lease.h"
#include "lease_int.h"

#include <math.h>
#include <sched.h>
#include <string.h>

/* The error of a backend that leaves the fenced functions NULL. */
static int unsupported(lease_db *db, const char *what) {
  return lease__fail(db, LEASE_ERROR, "%s is not supported by the %s backend", what,
                     db->be->name);
}

/* Start a call on tx: refuse NULL, clear the handle's error state, and
** refuse a tx that is not open (LEASE_MISUSE: its callback is not
** running, as when a binding keeps it past the callback). */
static int tx_begin(lease_tx *tx, const char *fname) {
  lease_db *db;
  if (!tx || !tx->db) return LEASE_MISUSE;
  db = tx->db;
  db->rc = LEASE_OK;
  db->xrc = 0;
  db->errmsg[0] = '\0';
  if (!tx->open)
    return lease__fail(db, LEASE_MISUSE, "%s: the tx is used after its with_lease callback "
                       "returned", fname);
  return LEASE_OK;
}

/* See lease.h. */
int lease_with_lease(lease_db *db, const char *id, size_t id_len, const char *owner,
                     size_t owner_len, int64_t fence, double now, lease_tx_fn *fn, void *ctx,
                     int *reason) {
  LEASE__HOLD(db);
  lease_tx tx;
  int rc, r = LEASE_GRANTED;
  if ((rc = lease__begin(db)) != LEASE_OK) return rc;
  if (reason) *reason = LEASE_GRANTED;
  memset(&tx, 0, sizeof tx);
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (lease__check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (!isfinite(now)) return lease__fail(db, LEASE_MISUSE, "now must be a finite number");
  db->clock_now = now;   /* the backend's clock step (lease__clock) checks it */
  if (!fn) return lease__fail(db, LEASE_MISUSE, "fn must not be NULL");
  if (!db->be->with_lease) return unsupported(db, "with_lease");
  tx.db = db;
  tx.w.op = LEASE__COMPLETE;
  tx.w.id = id;
  tx.w.id_len = id_len;
  tx.w.owner = owner;
  tx.w.owner_len = owner_len;
  tx.w.fence = fence;
  tx.w.now = now;
  tx.fn = fn;
  tx.ctx = ctx;
  tx.thread = pthread_self();
  db->tx = &tx;
  /* The flag is let go of while the transaction runs, so that a call on
  ** db inside fn is refused as inside a callback (its own message); a call
  ** from another thread meanwhile sees db->tx (written before the flag was
  ** let go) and is refused at once, holding the flag only that long. */
  lease__unhold(&lease__held_);
  rc = db->be->with_lease(db, &tx, &r);
  while (!lease__hold(db)) sched_yield();
  db->tx = NULL;
  tx.open = 0;
  /* committed with its completion: a slot of a limited queue is free */
  if (rc == LEASE_OK && r == LEASE_GRANTED && tx.completed) lease__wake_limited(db);
  if (reason) *reason = rc == LEASE_OK ? r : LEASE_GRANTED;
  return rc;
}

/* Check n parameters: known types, bytes present, lengths (LEASE_NTS
** resolved here and again by the backend) within the backend's limit. */
static int check_params(lease_db *db, const char *fname, const lease_value *params, int n) {
  int i;
  if (n < 0 || (n > 0 && !params))
    return lease__fail(db, LEASE_MISUSE, "%s: params must hold n entries", fname);
  for (i = 0; i < n; i++) {
    const lease_value *v = &params[i];
    size_t len = v->len;
    switch (v->type) {
      case LEASE_TYPE_NULL: case LEASE_TYPE_INTEGER: case LEASE_TYPE_FLOAT: break;
      case LEASE_TYPE_TEXT: case LEASE_TYPE_BLOB:
        if (!v->s && len != 0)
          return lease__fail(db, LEASE_MISUSE, "%s: parameter %d has no bytes", fname, i + 1);
        if (v->s && len == LEASE_NTS) len = strlen(v->s);
        if (len > db->be->max_length(db))
          return lease__fail(db, LEASE_MISUSE, "%s: parameter %d is %zu bytes, more than %s's "
                             "limit of %zu", fname, i + 1, len, db->be->name,
                             db->be->max_length(db));
        break;
      default:
        return lease__fail(db, LEASE_MISUSE, "%s: parameter %d has an unknown type %d", fname,
                           i + 1, v->type);
    }
  }
  return LEASE_OK;
}

/* The shared body of lease_tx_exec and lease_tx_query. */
static int tx_run(lease_tx *tx, const char *fname, const char *sql, const lease_value *params,
                  int n, lease_row_fn *row, void *ctx, int64_t *changes) {
  int rc;
  if (changes) *changes = 0;
  if ((rc = tx_begin(tx, fname)) != LEASE_OK) return rc;
  if (!sql) return lease__fail(tx->db, LEASE_MISUSE, "%s: sql must not be NULL", fname);
  if (check_params(tx->db, fname, params, n)) return tx->db->rc;
  return tx->db->be->tx_run(tx, sql, params, n, row, ctx, changes);
}

/* See lease.h. */
int lease_tx_exec(lease_tx *tx, const char *sql, const lease_value *params, int n,
                  int64_t *changes) {
  return tx_run(tx, "tx_exec", sql, params, n, NULL, NULL, changes);
}

/* See lease.h. */
int lease_tx_query(lease_tx *tx, const char *sql, const lease_value *params, int n,
                   lease_row_fn *row, void *ctx) {
  return tx_run(tx, "tx_query", sql, params, n, row, ctx, NULL);
}

/* See lease.h (contract step 6 inside tx). */
int lease_tx_complete(lease_tx *tx, const char *result, size_t result_len, int *reason) {
  lease__write w;
  int rc, r = LEASE_GRANTED;
  if ((rc = tx_begin(tx, "tx_complete")) != LEASE_OK) return rc;
  if (result && result_len == LEASE_NTS) result_len = strlen(result);
  if (!result) result_len = 0;
  if (result_len > tx->db->be->max_length(tx->db))
    return lease__fail(tx->db, LEASE_MISUSE, "result is %zu bytes, more than %s's limit of %zu",
                       result_len, tx->db->be->name, tx->db->be->max_length(tx->db));
  w = tx->w;
  w.op = LEASE__COMPLETE;
  w.result = result;
  w.result_len = result_len;
  rc = tx->db->be->tx_write(tx, &w, &r);
  if (rc == LEASE_OK && r == LEASE_GRANTED) tx->completed = 1;
  if (reason) *reason = rc == LEASE_OK ? r : LEASE_GRANTED;
  return rc;
}

/* See lease.h (contract step 5 inside tx). */
int lease_tx_renew(lease_tx *tx, double now, double ttl, int *reason) {
  lease__write w;
  const char *msg;
  int rc, r = LEASE_GRANTED;
  if ((rc = tx_begin(tx, "tx_renew")) != LEASE_OK) return rc;
  if (lease_check_time(now, ttl, &msg)) return lease__fail(tx->db, LEASE_MISUSE, "%s", msg);
  if (lease__clock_in_tx(tx->db, now, tx->w.now)) return tx->db->rc;
  w = tx->w;
  w.op = LEASE__RENEW;
  w.now = now;
  w.until = now + ttl;
  rc = tx->db->be->tx_write(tx, &w, &r);
  if (reason) *reason = rc == LEASE_OK ? r : LEASE_GRANTED;
  return rc;
}

/* Check the gate's arguments on db. */
static int check_gate(lease_db *db, const char *resource, size_t *len, int64_t fence) {
  if (lease__check_bytes(db, "resource", resource, len)) return db->rc;
  if (fence < 0) return lease__fail(db, LEASE_MISUSE, "fence must be >= 0");
  if (!db->be->fence_gate) return unsupported(db, "fence_gate");
  return LEASE_OK;
}

/* See lease.h. */
int lease_fence_gate(lease_db *db, const char *resource, size_t resource_len, int64_t fence,
                     int *reason) {
  LEASE__HOLD(db);
  int rc, r = LEASE_GRANTED;
  if ((rc = lease__begin(db)) != LEASE_OK) return rc;
  if (reason) *reason = LEASE_GRANTED;
  if (check_gate(db, resource, &resource_len, fence)) return db->rc;
  rc = db->be->fence_gate(db, NULL, resource, resource_len, fence, &r);
  if (reason) *reason = rc == LEASE_OK ? r : LEASE_GRANTED;
  return rc;
}

/* See lease.h. */
int lease_tx_fence_gate(lease_tx *tx, const char *resource, size_t resource_len, int64_t fence,
                        int *reason) {
  int rc, r = LEASE_GRANTED;
  if ((rc = tx_begin(tx, "tx_fence_gate")) != LEASE_OK) return rc;
  if (check_gate(tx->db, resource, &resource_len, fence)) return tx->db->rc;
  rc = tx->db->be->fence_gate(tx->db, tx, resource, resource_len, fence, &r);
  if (reason) *reason = rc == LEASE_OK ? r : LEASE_GRANTED;
  return rc;
}

/* See lease.h. */
double lease_tx_now(const lease_tx *tx) { return tx ? tx->w.now : 0; }
