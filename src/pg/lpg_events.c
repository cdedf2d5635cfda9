/*
** lpg_events.c: the events ledger in the PostgreSQL backend (lease.h, "The
** events ledger"; the table: lpg_schema_sql.h, step EVENTS; the SQL:
** lpg_queue_sql.h, LPG_Q_SQL_EVENT_*).  The core (src/core/lease_events.c)
** calls add and prune inside the transaction of the write being recorded;
** a write that is one statement on its own (claim, renew, complete,
** release, retry, cancel, prune, enqueue of one job) runs in a transaction
** of its own when it records an event (lpg_ev_begin, lpg_ev_end), so the
** event commits or rolls back with it.
*/
#include "lpg_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* See lpg_int.h. */
int lpg_ev_begin(lease_db *db, int *began) {
  *began = 0;
  if (!lease__events_on(db) || PQtransactionStatus(LPG(db)->pg) != PQTRANS_IDLE) return LEASE_OK;
  if (lpg_exec(db, "BEGIN") != LEASE_OK) return db->rc;
  *began = 1;
  return LEASE_OK;
}

/* See lpg_int.h. */
int lpg_ev_end(lease_db *db, int rc, int began) {
  if (!began) return rc;
  if (rc == LEASE_OK) rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) lpg_rollback(db);
  return rc;
}

/* See lease_int.h: lease__backend.event. */
int lpg_event(lease_db *db, const lease__event *e, int64_t *seq) {
  params p = {0};
  PGresult *res;
  if (isnan(e->at)) p_null(&p);
  else p_f8(&p, e->at);
  p_i4(&p, e->op);
  p_bytes(&p, e->id, e->id_len);
  p_bytes(&p, e->queue, e->queue_len);
  p_bytes(&p, e->owner, e->owner_len);
  if (e->has_fence) p_i8(&p, e->fence);
  else p_null(&p);
  p_i4(&p, e->reason);
  if (!(res = lpg_stmt_run(db, LPG_ST_EVENT_ADD, &p))) return db->rc;
  if (PQntuples(res) != 1) {   /* another client's trigger skipped the insert */
    PQclear(res);
    return lease__skipped(db, "the ledger's event of", e->id ? e->id : "", e->id ? e->id_len : 0);
  }
  *seq = r_i8(res, 0, 0);
  PQclear(res);
  return LEASE_OK;
}

/* See lease_int.h: lease__backend.event_prune. */
int lpg_event_prune(lease_db *db, int64_t upto, double cutoff) {
  params p = {0};
  PGresult *res;
  p_i8(&p, upto);
  p_f8(&p, cutoff);
  if (!(res = lpg_stmt_run(db, LPG_ST_EVENT_PRUNE, &p))) return db->rc;
  PQclear(res);
  return LEASE_OK;
}

static const char *kept(lease_db *db, const char *off) {
  return off ? db->buf + ((uintptr_t)off - 1) : NULL;
}

/* See lease_int.h: lease__backend.events. */
int lpg_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out, int *count) {
  params p = {0};
  PGresult *res;
  size_t used = 0;
  int i, n, failed = 0, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_i8(&p, f->since);
  p_bytes(&p, f->id, f->id_len);
  p_i4(&p, max);
  if (!(res = lpg_stmt_run(db, LPG_ST_EVENT_READ, &p))) return db->rc;
  n = PQntuples(res) < max ? PQntuples(res) : max;
  for (i = 0; i < n && !failed; i++) {
    lease_event *e = &out[i];
    memset(e, 0, sizeof *e);
    e->seq = r_i8(res, i, 0);
    e->at = r_f8(res, i, 1);
    e->op = r_i4(res, i, 2);
    e->id = (const char *)(uintptr_t)lpg_keep(db, res, i, 3, &e->id_len, &used, &failed);
    e->queue = (const char *)(uintptr_t)lpg_keep(db, res, i, 4, &e->queue_len, &used, &failed);
    e->owner = (const char *)(uintptr_t)lpg_keep(db, res, i, 5, &e->owner_len, &used, &failed);
    e->has_fence = !PQgetisnull(res, i, 6);
    e->fence = e->has_fence ? r_i8(res, i, 6) : 0;
    e->reason = r_i4(res, i, 7);
  }
  PQclear(res);
  if (failed) return db->rc;
  for (i = 0; i < n; i++) {
    out[i].id = kept(db, out[i].id);
    out[i].queue = kept(db, out[i].queue);
    out[i].owner = kept(db, out[i].owner);
  }
  *count = n;
  return LEASE_OK;
}
