/*
** lpg_many.c: the batches on PostgreSQL in one statement each: enqueue of
** many jobs with data (lease.h: lease_enqueue_many; the jobs with keys or
** dependencies go through lpg_queue.c, a statement each), complete_many
** (lease_complete_many); and the arrays in PostgreSQL's binary format
** their statements take.
**
** A batch is one transaction.  Its jobs are locked in id order whatever
** the input order, so two batches over the same jobs cannot deadlock; all
** of them are completed by one statement (LPG_SQL_COMPLETE_MANY: complete's
** guard for each job, with its own fence, in the WHERE of one UPDATE), the
** reasons read from its rows by the core's rules and handed back in input
** order.  A batch naming an id twice is run one job at a time
** (lpg_guarded), so the second sees what the first wrote.
*/
#include "lpg_int.h"
#include "lpg_sql.h"
#include "lpg_queue_sql.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Arrays                                                                 */
/* ===================================================================== */

/* The header: dimensions, has NULLs, element type, length, lower bound. */
#define ARRAY_HEAD 20

/* Make room for `more` bytes at the end of a; 0 when it cannot grow
** (a->failed: 1 out of memory, 2 past what one parameter holds). */
static int grow(lpg_array *a, size_t more) {
  size_t cap;
  char *b;
  if (a->failed) return 0;
  if (more > (size_t)INT32_MAX - a->len) {
    a->failed = 2;
    return 0;
  }
  if (a->len + more <= a->cap) return 1;
  for (cap = a->cap ? a->cap : 256; cap < a->len + more; cap *= 2) {}
  if (!(b = realloc(a->b, cap))) {
    a->failed = 1;
    return 0;
  }
  a->b = b;
  a->cap = cap;
  return 1;
}

/* See lpg_int.h. */
void lpg_array_init(lpg_array *a, unsigned type) {
  memset(a, 0, sizeof *a);
  a->type = type;
  if (grow(a, ARRAY_HEAD)) a->len = ARRAY_HEAD;
}

/* See lpg_int.h. */
void lpg_array_add(lpg_array *a, const char *s, size_t len) {
  if (!grow(a, 4 + (s ? len : 0))) return;
  put_be(a->b + a->len, s ? (uint64_t)len : 0xffffffffu, 4);
  if (s && len) memcpy(a->b + a->len + 4, s, len);
  a->len += 4 + (s ? len : 0);
  a->n++;
  if (!s) a->nulls = 1;
}

/* See lpg_int.h. */
void lpg_array_i8(lpg_array *a, int64_t v) {
  char num[8];
  put_be(num, (uint64_t)v, 8);
  lpg_array_add(a, num, 8);
}

/* See lpg_int.h. */
void lpg_array_f8(lpg_array *a, double d) {
  uint64_t bits;
  char num[8];
  if (isnan(d)) {
    lpg_array_add(a, NULL, 0);
    return;
  }
  memcpy(&bits, &d, sizeof bits);
  put_be(num, bits, 8);
  lpg_array_add(a, num, 8);
}

/* See lpg_int.h. */
int lpg_array_end(lease_db *db, lpg_array *a, params *p, const char *what) {
  if (a->failed == 1) return lease__fail(db, LEASE_NOMEM, "out of memory");
  if (a->failed)
    return lease__fail(db, LEASE_MISUSE, "%s add up to more than PostgreSQL takes in one "
                       "parameter (2 GiB)", what);
  put_be(a->b, 1, 4);
  put_be(a->b + 4, (uint64_t)a->nulls, 4);
  put_be(a->b + 8, a->type, 4);
  put_be(a->b + 12, (uint64_t)a->n, 4);
  put_be(a->b + 16, 1, 4);
  p_bytes(p, a->b, a->len);
  return LEASE_OK;
}

/* See lpg_int.h. */
void lpg_array_free(lpg_array *a) {
  free(a->b);
  a->b = NULL;
}

/* ===================================================================== */
/* enqueue with data                                                      */
/* ===================================================================== */

/* After a batch enqueue's INSERT (which: LPG_ST_ENQUEUE_MANY, whose rows
** res are the ids inserted, or LPG_ST_ENQUEUE_DATA, whose rows are their
** positions in jobs, n of them), in its transaction: LEASE_OK when each
** job inserted has its queue row (LPG_SQL_UNQUEUED), else another
** client's trigger skipped one (the job would never be claimed):
** LEASE_MISMATCH recorded, naming it. */
static int all_queued(lease_db *db, int which, const lease_new_job *jobs, int n,
                      const PGresult *res) {
  lpg_array a;
  params p = {0};
  PGresult *got = NULL;
  int i, rc;
  lpg_array_init(&a, T_BYTEA);
  for (i = 0; i < PQntuples(res); i++) {
    int64_t k = which == LPG_ST_ENQUEUE_MANY ? 0 : r_i8(res, i, 0);
    if (which == LPG_ST_ENQUEUE_MANY)
      lpg_array_add(&a, PQgetvalue(res, i, 0), (size_t)PQgetlength(res, i, 0));
    else if (k >= 1 && k <= n)
      lpg_array_add(&a, jobs[k - 1].id, jobs[k - 1].id_len);
  }
  rc = lpg_array_end(db, &a, &p, "enqueue: the ids inserted");
  if (rc == LEASE_OK && !(got = lpg_stmt_run(db, LPG_ST_UNQUEUED, &p))) rc = db->rc;
  lpg_array_free(&a);
  if (rc == LEASE_OK && PQntuples(got) > 0 && !PQgetisnull(got, 0, 0))
    rc = lease__skipped(db, "enqueue's queue row of", PQgetvalue(got, 0, 0),
                        (size_t)PQgetlength(got, 0, 0));
  PQclear(got);
  return rc;
}

/* See lpg_int.h. */
PGresult *lpg_enqueue_run(lease_db *db, int which, const params *p, const lease_new_job *jobs,
                          int n, int *began) {
  const params *ps[2] = {NULL, p};
  const int w[2] = {LPG_PIPE_BEGIN, which};
  PGresult *out[2], *res;
  *began = PQtransactionStatus(LPG(db)->pg) == PQTRANS_IDLE;
  if (*began) {
    if (lpg_pipeline(db, 2, w, ps, out) != LEASE_OK) return NULL;
    PQclear(out[0]);
    res = out[1];
  } else if (!(res = lpg_stmt_run(db, which, p))) {
    return NULL;
  }
  if ((PQntuples(res) < n && lpg_enqueue_missing(db, jobs, n) != LEASE_OK) ||
      (PQntuples(res) > 0 && all_queued(db, which, jobs, n, res) != LEASE_OK)) {
    PQclear(res);
    return NULL;
  }
  return res;
}

/* See lpg_int.h. */
int lpg_enqueue_missing(lease_db *db, const lease_new_job *jobs, int n) {
  lpg_array a;
  params p = {0};
  PGresult *res = NULL;
  int i, rc;
  lpg_array_init(&a, T_BYTEA);
  for (i = 0; i < n; i++) lpg_array_add(&a, jobs[i].id, jobs[i].id_len);
  rc = lpg_array_end(db, &a, &p, "enqueue: the ids");
  if (rc == LEASE_OK && !(res = lpg_stmt_run(db, LPG_ST_JOBS_MISSING, &p))) rc = db->rc;
  lpg_array_free(&a);
  if (rc == LEASE_OK && PQntuples(res) > 0)
    rc = lease__skipped(db, "enqueue of", PQgetvalue(res, 0, 0), (size_t)PQgetlength(res, 0, 0));
  PQclear(res);
  return rc;
}

/* The parameters of LPG_Q_SQL_ENQUEUE_DATA in arrays arr (built here,
** freed by the caller) and p. */
static int enqueue_params(lease_db *db, const lease_new_job *jobs, int n, lpg_array arr[7],
                          params *p) {
  static const unsigned types[7] = {T_BYTEA, T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8, T_INT8, T_FLOAT8};
  static const char *const what[7] = {
    "enqueue_many: the ids", "enqueue_many: the payloads", "enqueue_many: the queues",
    "enqueue_many: the priorities", "enqueue_many: the run_at times",
    "enqueue_many: the max_attempts", "enqueue_many: the timeouts"};
  int i, rc = LEASE_OK;
  for (i = 0; i < 7; i++) lpg_array_init(&arr[i], types[i]);
  for (i = 0; i < n; i++) {
    const lease_new_job *j = &jobs[i];
    lpg_array_add(&arr[0], j->id, j->id_len);
    lpg_array_add(&arr[1], j->payload, j->payload_len);
    lpg_array_add(&arr[2], j->queue, j->queue_len);
    lpg_array_i8(&arr[3], j->priority);
    lpg_array_f8(&arr[4], j->has_run_at ? j->run_at : NAN);
    lpg_array_i8(&arr[5], j->max_attempts);
    lpg_array_f8(&arr[6], j->timeout != 0 ? j->timeout : NAN);
  }
  for (i = 0; i < 7 && rc == LEASE_OK; i++) rc = lpg_array_end(db, &arr[i], p, what[i]);
  return rc;
}

/* The ledger's events of an enqueue in input order: ok for the entries at
** the positions res returned (1-based), exists for the others. */
static int enqueue_events(lease_db *db, const lease_new_job *jobs, int n, const PGresult *res) {
  char *added;
  int i, rc = LEASE_OK;
  if (!lease__events_on(db)) return LEASE_OK;
  if (!(added = calloc((size_t)n, 1))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0; i < PQntuples(res); i++) {
    int64_t k = r_i8(res, i, 0);
    if (k >= 1 && k <= n) added[k - 1] = 1;
  }
  for (i = 0; i < n && rc == LEASE_OK; i++)
    rc = lease__event_id(db, LEASE_EV_ENQUEUE, jobs[i].id, jobs[i].id_len, NAN,
                         added[i] ? LEASE_GRANTED : LEASE_EXISTS);
  free(added);
  return rc;
}

/* See lpg_int.h. */
int lpg_enqueue_data(lease_db *db, const lease_new_job *jobs, int n, int *inserted) {
  lpg_array arr[7];
  params p = {0};
  PGresult *res = NULL;
  int i, began, rc = enqueue_params(db, jobs, n, arr, &p);
  if (rc == LEASE_OK) {
    if (!(res = lpg_enqueue_run(db, LPG_ST_ENQUEUE_DATA, &p, jobs, n, &began))) rc = db->rc;
    else rc = enqueue_events(db, jobs, n, res);
    rc = lpg_ev_end(db, rc, began);
  }
  for (i = 0; i < 7; i++) lpg_array_free(&arr[i]);
  if (rc == LEASE_OK && inserted) *inserted = PQntuples(res);
  PQclear(res);
  return rc;
}

/* ===================================================================== */
/* complete_many                                                          */
/* ===================================================================== */

/* complete_many's items sorted by id (bytes, then length), input order
** among equal ids. */
typedef struct order_item {
  const char *id;
  size_t len;
  int at;
} order_item;

/* Compare two ids as bytea compares: the bytes, then the length. */
static int id_cmp(const order_item *x, const order_item *y) {
  return lpg_id_cmp(x->id, x->len, y->id, y->len);
}

static int by_id(const void *a, const void *b) {
  const order_item *x = a, *y = b;
  int c = id_cmp(x, y);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* One batch: the items, their id order, what it gives back. */
typedef struct batch {
  const lease__write *w;
  const lease_result *items;
  order_item *ord;
  int n, *reasons, done;
} batch;

/* The item at sorted position i as one complete of b's owner at its now. */
static void item_write(const batch *b, int i, lease__write *one) {
  const lease_result *it = &b->items[b->ord[i].at];
  *one = *b->w;
  one->id = b->ord[i].id;
  one->id_len = b->ord[i].len;
  one->fence = it->fence;
  one->result = it->result;
  one->result_len = it->result && it->result_len == LEASE_NTS ? strlen(it->result)
                                                               : it->result_len;
}

/* Note the reason of sorted position i. */
static void note(batch *b, int i, int r) {
  if (b->reasons) b->reasons[b->ord[i].at] = r;
  if (r == LEASE_GRANTED) b->done++;
}

/* The batch one job at a time, in id order (an id named twice). */
static int each_body(lease_db *db, batch *b) {
  int i, r, rc = LEASE_OK;
  for (i = 0; i < b->n && rc == LEASE_OK; i++) {
    lease__write one;
    item_write(b, i, &one);
    if ((rc = lpg_guarded(db, &one, &r)) == LEASE_OK) note(b, i, r);
  }
  return rc;
}

/* The parameters of LPG_SQL_COMPLETE_MANY in arrays ids, fences, results
** (built here, freed by the caller) and p. */
static int batch_params(lease_db *db, const batch *b, lpg_array arr[3], params *p) {
  int i, rc = LEASE_OK;
  lpg_array_init(&arr[0], T_BYTEA);
  lpg_array_init(&arr[1], T_INT8);
  lpg_array_init(&arr[2], T_BYTEA);
  for (i = 0; i < b->n; i++) {
    lease__write one;
    item_write(b, i, &one);
    lpg_array_add(&arr[0], one.id, one.id_len);
    lpg_array_i8(&arr[1], one.fence);
    lpg_array_add(&arr[2], one.result, one.result_len);
  }
  if ((rc = lpg_array_end(db, &arr[0], p, "complete_many: the ids")) == LEASE_OK &&
      (rc = lpg_array_end(db, &arr[1], p, "complete_many: the fences")) == LEASE_OK &&
      (rc = lpg_array_end(db, &arr[2], p, "complete_many: the results")) == LEASE_OK) {
    p_bytes(p, b->w->owner, b->w->owner_len);
    p_f8(p, b->w->now);
  }
  return rc;
}

/* BEGIN, the lock of wq's queue when a claim follows (wq not NULL:
** lpg_q_claim_begin) and the batch's one statement, in one round trip with
** the clock's mark (lpg_pipeline_clocked);
** then each row's outcome (lpg_outcome_row) and ledger event in id order,
** as one at a time would record them; a job stored whose queue row was
** not written fails the batch (LEASE_MISMATCH: the caller rolls back). */
static int batch_body(lease_db *db, batch *b, const lease__write *wq) {
  lpg_array arr[3];
  params p = {0}, pq = {0};
  const params *ps[3] = {NULL, &pq, &p};
  int which[3] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, LPG_ST_COMPLETE_MANY};
  PGresult *out[3] = {NULL, NULL, NULL}, *res;
  int i, r, k = wq ? 0 : 1, rc = batch_params(db, b, arr, &p);
  if (wq) p_bytes(&pq, wq->queue, wq->queue_len);
  else which[1] = LPG_PIPE_BEGIN;
  if (rc == LEASE_OK) rc = lpg_pipeline_clocked(db, 3 - k, which + k, ps + k, out + k);
  for (i = 0; i < 3; i++) lpg_array_free(&arr[i]);
  PQclear(out[0]);
  PQclear(out[1]);
  if (rc != LEASE_OK) return rc;
  res = out[2];
  if (PQntuples(res) != b->n)
    rc = lease__fail(db, LEASE_ERROR, "internal error: complete_many's statement returned %d "
                     "rows for %d jobs", PQntuples(res), b->n);
  for (i = 0; i < b->n && rc == LEASE_OK; i++) {
    lease__write one;
    item_write(b, i, &one);
    if (r_bool(res, i, 10)) {   /* its queue row not written */
      rc = lease__skipped(db, "complete's queue row of", one.id, one.id_len);
      break;
    }
    if ((rc = lpg_outcome_row(db, &one, res, i, NULL, &r)) != LEASE_OK) break;
    note(b, i, r);
    rc = lease__event_write(db, LEASE_EV_COMPLETE, &one, 0, r);
  }
  PQclear(res);
  return rc;
}

/* 1 when two items of ord (sorted) name the same id. */
static int named_twice(const order_item *ord, int n) {
  int i;
  for (i = 1; i < n; i++)
    if (id_cmp(&ord[i - 1], &ord[i]) == 0) return 1;
  return 0;
}

/* Sort b's items by id into b->ord (allocated here; the caller frees it). */
static int batch_sort(lease_db *db, batch *b) {
  int i;
  if (!(b->ord = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->ord)))
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0; i < b->n; i++) {
    b->ord[i].id = b->items[i].id;
    b->ord[i].len = b->items[i].id_len == LEASE_NTS ? strlen(b->items[i].id) : b->items[i].id_len;
    b->ord[i].at = i;
  }
  qsort(b->ord, (size_t)b->n, sizeof *b->ord, by_id);
  return LEASE_OK;
}

/* See lpg_int.h. */
int lpg_complete_begun(lease_db *db, const lease__write *w, const lease_result *items, int n,
                       int *reasons, int *stored, const lease__write *wq) {
  batch b = {w, items, NULL, n, reasons, 0};
  int rc;
  *stored = 0;
  if ((rc = batch_sort(db, &b)) != LEASE_OK) return rc;
  if (named_twice(b.ord, n)) {
    if ((rc = lpg_q_clock(db)) == LEASE_OK &&
        (rc = wq ? lpg_q_claim_begin(db, wq) : lpg_exec(db, "BEGIN")) == LEASE_OK)
      rc = each_body(db, &b);
  } else {
    rc = batch_body(db, &b, wq);
  }
  free(b.ord);
  if (rc == LEASE_OK) *stored = b.done;
  return rc;
}

/* See lpg_int.h and lease.h (contract step 6 for each job, one
** transaction). */
int lpg_complete_many(lease_db *db, const lease__write *w, const lease_result *items, int n,
                      int *reasons, int *stored) {
  int done, rc;
  if ((rc = lpg_ready_conn(db)) != LEASE_OK) return rc;
  if ((rc = lpg_complete_begun(db, w, items, n, reasons, &done, NULL)) == LEASE_OK)
    rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) lpg_rollback(db);
  if (rc == LEASE_OK && stored) *stored = done;
  return rc;
}
