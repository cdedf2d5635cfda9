/*
** lpg_queue.c: the job queue in the PostgreSQL backend (lease.h, "The job
** queue"; the SQL, the schema and why each statement keeps the contract
** under READ COMMITTED: lpg_queue_sql.h).  The same outcomes, reason
** words, status words and attempt counts as the SQLite backend's
** (src/sqlite/lsq_queue.c).  Arguments arrive checked and resolved by the
** core (src/core/lease_queue.c).  Every write that changes a job under a lease
** (claim, fail) checks owner, fence, done and until on the job's locked
** row when it stores.
*/
#include "lpg_int.h"
#include "lpg_queue_sql.h"
#include "lpg_schema_sql.h"   /* LPG_ATTEMPTS_READABLE */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Run statement `which` (LPG_ST_*) with parameters p; NULL on a failure
** recorded. */
static PGresult *qrun(lease_db *db, int which, const params *p) {
  return lpg_stmt_run(db, which, p);
}

/*
** Run read statement `which` over a whole queue or table (the list, the
** tally) with sequential scans priced as usual: the session prices them
** out for its statements that find rows by key (lpg.c: set_session), but
** a read of every row is cheaper as a scan of the table.  The statement
** always runs so, so the plan it keeps is made so.  The session's setting
** is restored after it; should that fail, the connection is reset at the
** next call, which sets it again.  NULL on a failure recorded.
*/
static PGresult *scan_read(lease_db *db, int which, const params *p) {
  PGresult *res;
  if (lpg_exec(db, "SET enable_seqscan = on") != LEASE_OK) return NULL;
  res = qrun(db, which, p);
  PQclear(PQexec(LPG(db)->pg, "SET enable_seqscan = off"));
  return res;
}

/* The statement of a read of jobs with their attempts: `which`, or `old`
** on a database before schema step ATTEMPTS (a read-only handle's, which
** reads the attempts there from lease_queue.attempt). */
static int attempts_read(lease_db *db, int which, int old) {
  return LPG(db)->version < LPG_ATTEMPTS_READABLE ? old : which;
}

/* A float8 parameter, SQL NULL for NaN (no time). */
static void p_time(params *p, double t) {
  if (isnan(t)) p_null(p);
  else p_f8(p, t);
}

/* A float8 result, NaN for SQL NULL. */
static double r_time(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? NAN : r_f8(r, row, col);
}

/* See lpg_int.h. */
size_t lpg_keep(lease_db *db, const PGresult *r, int row, int col, size_t *len, size_t *used,
                int *failed) {
  size_t at = *used, n;
  *len = 0;
  if (PQgetisnull(r, row, col)) return 0;
  n = (size_t)PQgetlength(r, row, col);
  if (lease__reserve(db, at + n + 1) != LEASE_OK) {
    *failed = 1;
    return 0;
  }
  if (n) memcpy(db->buf + at, PQgetvalue(r, row, col), n);
  db->buf[at + n] = '\0';
  *used = at + n + 1;
  *len = n;
  return at + 1;
}

/* The pointer for an offset from lpg_keep (0: NULL). */
static const char *kept(lease_db *db, size_t off) { return off ? db->buf + off - 1 : NULL; }

/* Run one of the write transactions below: BEGIN, body, COMMIT; on a
** failure roll back.  LEASE_OK or the failure recorded. */
static int in_txn(lease_db *db, int (*body)(lease_db *, void *), void *ctx) {
  int rc = lpg_exec(db, "BEGIN");
  if (rc == LEASE_OK) rc = body(db, ctx);
  if (rc == LEASE_OK) rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) lpg_rollback(db);
  return rc;
}

/* ===================================================================== */
/* The clock                                                              */
/* ===================================================================== */

/* See lpg_int.h. */
int lpg_q_clock_judge(lease_db *db, const PGresult *res, int *move) {
  return lease__clock(db, PQntuples(res) == 1 ? r_time(res, 0, 0) : NAN, move);
}

/* See lpg_int.h. */
int lpg_q_clock_move(lease_db *db) {
  params p = {0};
  PGresult *res;
  p_f8(&p, db->clock_now);
  if (!(res = qrun(db, LPG_ST_CLOCK_MOVE, &p))) return db->rc;
  PQclear(res);
  return LEASE_OK;
}

/* See lpg_int.h. */
int lpg_q_clock(lease_db *db) {
  PGresult *res;
  int move, rc;
  if (!lease__clock_due(db, LPG(db)->version)) return LEASE_OK;
  if (!(res = qrun(db, LPG_ST_CLOCK_READ, NULL))) return db->rc;
  rc = lpg_q_clock_judge(db, res, &move);
  PQclear(res);
  return rc != LEASE_OK || !move ? rc : lpg_q_clock_move(db);
}

/* See lpg_int.h. */
int lpg_q_mark_dropped(lease_db *db) {
  int rc = db->rc, xrc = db->xrc, dropped = 0;
  char msg[sizeof db->errmsg];
  PGresult *res;
  if (!lpg_failed_with(db, "22P02") && !lpg_failed_with(db, "22003")) return 0;
  if (PQstatus(LPG(db)->pg) != CONNECTION_OK) return 0;
  memcpy(msg, db->errmsg, sizeof msg);
  lpg_rollback(db);
  if ((res = qrun(db, LPG_ST_CLOCK_DROP, NULL)) != NULL) {
    dropped = PQntuples(res) == 1;
    PQclear(res);
  }
  lease__set_error(db, rc, xrc, msg);   /* the caller clears it when dropped */
  return dropped;
}

/* ===================================================================== */
/* Enqueue                                                                */
/* ===================================================================== */

/* The job whose key refused a batch entry (id, length; id NULL: none). */
typedef struct held_by {
  char *id;
  size_t len;
} held_by;

/* An enqueue: its checked jobs, how many were added, and for each entry
** skipped for its key, the holder read then (held: n slots, or NULL for a
** batch no later entry of which lists an earlier one); again is 1 when
** the batch must run again (add_deps). */
typedef struct enqueue_ctx {
  const lease_new_job *jobs;
  int n, added, again;
  held_by *held;
} enqueue_ctx;

/* See lpg_int.h. */
int lpg_key_conflict(lease_db *db, int rc) {
  return rc == LEASE_CONSTRAINT && strcmp(LPG(db)->constraint, "lease_queue_key") == 0;
}

/* How many times a write refused by lease_queue_key is run again: each
** run reads the holder that refused the one before, so a second refusal
** needs that holder finished and another one enqueued in between. */
#define KEY_TRIES 8

/* A job a batch lists in an after: entry i's after[k], its id, and what
** check_deps read of it (state -1: no such job; waited: its queue row is
** flagged waited_on, or it has none). */
typedef struct listed {
  const char *id;
  size_t len;
  int i, k, state, waited;
} listed;

static int listed_by_id(const void *a, const void *b) {
  const listed *x = a, *y = b;
  int c = lpg_id_cmp(x->id, x->len, y->id, y->len);
  if (c) return c;
  return x->i != y->i ? (x->i > y->i) - (x->i < y->i) : (x->k > y->k) - (x->k < y->k);
}

/* Lock each of the m jobs of l (sorted by id) FOR SHARE and read its
** queue state and flag (LPG_Q_SQL_DEP_STATE), an id listed twice once. */
static int read_listed(lease_db *db, listed *l, int m) {
  int t;
  for (t = 0; t < m; t++) {
    params p = {0};
    PGresult *res;
    if (t > 0 && lpg_id_cmp(l[t].id, l[t].len, l[t - 1].id, l[t - 1].len) == 0) {
      l[t].state = l[t - 1].state;
      l[t].waited = l[t - 1].waited;
      continue;
    }
    p_bytes(&p, l[t].id, l[t].len);
    if (!(res = qrun(db, LPG_ST_Q_DEP_STATE, &p))) return db->rc;
    l[t].state = PQntuples(res) == 1 ? r_i4(res, 0, 0) : -1;
    l[t].waited = PQntuples(res) == 1 ? r_i4(res, 0, 1) : 1;
    PQclear(res);
  }
  return LEASE_OK;
}

/* Flag waited_on, in id order, the jobs of l (sorted) not flagged yet,
** when there are two or more (LPG_Q_SQL_DEP_FLAG).  The trigger
** lease_deps_added flags a parent as its edge is stored, in the batch's
** order; two enqueues listing two unflagged parents in opposite orders
** would then each hold one flag's row lock and wait for the other's. */
static int flag_parents(lease_db *db, const listed *l, int m) {
  int t, unflagged = 0;
  for (t = 0; t < m; t++) unflagged += l[t].state >= 0 && !l[t].waited;
  for (t = 0; t < m && unflagged > 1; t++) {
    params p = {0};
    PGresult *res;
    if (l[t].state < 0 || l[t].waited ||
        (t > 0 && lpg_id_cmp(l[t].id, l[t].len, l[t - 1].id, l[t - 1].len) == 0))
      continue;
    p_bytes(&p, l[t].id, l[t].len);
    if (!(res = qrun(db, LPG_ST_Q_DEP_FLAG, &p))) return db->rc;
    PQclear(res);
  }
  return LEASE_OK;
}

/* Before anything is written: every job the jobs list in after must
** exist (or, not there yet, come earlier in the batch) and not be
** discarded or cancelled; else lease__refuse_dep records the first in the
** batch's order, and *refused is 1.  The listed jobs are locked FOR SHARE
** and flagged (flag_parents) in id order, as complete_many locks jobs
** (lpg_many.c), so that no two of these wait for each other. */
static int check_deps(lease_db *db, const enqueue_ctx *e, int *refused) {
  int i, k, t, m = 0, first = -1, rc;
  listed *l;
  *refused = 0;
  for (i = 0; i < e->n; i++) m += e->jobs[i].n_after;
  if (m == 0) return LEASE_OK;
  if (!(l = malloc((size_t)m * sizeof *l))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0, t = 0; i < e->n; i++)
    for (k = 0; k < e->jobs[i].n_after; k++, t++) {
      l[t].id = e->jobs[i].after[k];
      l[t].len = e->jobs[i].after_lens[k];
      l[t].i = i;
      l[t].k = k;
    }
  qsort(l, (size_t)m, sizeof *l, listed_by_id);
  rc = read_listed(db, l, m);
  for (t = 0; rc == LEASE_OK && t < m; t++) {
    if (l[t].state < 0 && lease__dep_in_batch(e->jobs, l[t].i, l[t].k) >= 0) continue;
    if (lease__dep_reason(l[t].state >= 0, l[t].state) != LEASE_GRANTED &&
        (first < 0 || l[t].i < l[first].i || (l[t].i == l[first].i && l[t].k < l[first].k)))
      first = t;
  }
  if (rc == LEASE_OK && first >= 0)
    *refused = lease__refuse_dep(db, l[first].i, l[first].k, l[first].state >= 0,
                                 l[first].state >= 0 ? l[first].state : 0);
  else if (rc == LEASE_OK)
    rc = flag_parents(db, l, m);
  free(l);
  return rc;
}

/* Lock job id FOR SHARE and read its queue state after the lock
** (LPG_Q_SQL_DEP_STATE) into *state, -1 when there is no such job; once
** locked it cannot end before the enqueue commits without its trigger
** seeing the edge. */
static int lock_parent(lease_db *db, const char *id, size_t len, int *state) {
  params p = {0};
  PGresult *res;
  *state = -1;
  p_bytes(&p, id, len);
  if (!(res = qrun(db, LPG_ST_Q_DEP_STATE, &p))) return db->rc;
  *state = PQntuples(res) == 1 ? r_i4(res, 0, 0) : -1;
  PQclear(res);
  return LEASE_OK;
}

/* After an edge's insert that changed no row (p: the child's id, the
** parent's): LEASE_OK when the edge is there (LPG_Q_SQL_DEP_THERE: the
** same job listed twice), else another client's trigger skipped it:
** LEASE_MISMATCH recorded (lease__skipped). */
static int edge_there(lease_db *db, const params *p, const char *id, size_t id_len) {
  PGresult *res = qrun(db, LPG_ST_Q_DEP_THERE, p);
  int found;
  if (!res) return db->rc;
  found = PQntuples(res) > 0;
  PQclear(res);
  return found ? LEASE_OK : lease__skipped(db, "enqueue's dependency of", id, id_len);
}

/* The job of p ($1 its id) waits while a parent is not completed
** (LPG_Q_SQL_DEP_WAIT); a wait not stored of a job that needed it was
** skipped by another client's trigger: `what` names it (lease__skipped). */
static int wait_again(lease_db *db, const params *p, const char *what, const char *id,
                      size_t id_len) {
  PGresult *res = qrun(db, LPG_ST_Q_DEP_WAIT, p);
  int skipped;
  if (!res) return db->rc;
  skipped = !r_bool(res, 0, 0) && r_bool(res, 0, 1);
  PQclear(res);
  return skipped ? lease__skipped(db, what, id, id_len) : LEASE_OK;
}

/* Store the dependencies of job i of the batch; it waits while one is not
** completed.  check_deps locked the jobs listed by id that were there; an
** earlier entry of the batch (lease__dep_in_batch) stands for the job of
** its id (inserted or found by the batch), or, skipped for its key, for
** the holder it read, none of them locked yet: lock_parent locks it, and
** when it ended (discarded, cancelled or pruned) after the batch read it,
** the batch is rolled back and runs again (e->again), where check_deps
** or the key's enqueue sees the end. */
static int add_deps(lease_db *db, enqueue_ctx *e, int i) {
  const lease_new_job *j = &e->jobs[i];
  params p = {0};
  PGresult *res;
  int k, m, state;
  for (k = 0; k < j->n_after; k++) {
    params q = {0};
    const char *pid = j->after[k];
    size_t plen = j->after_lens[k];
    if (e->held && (m = lease__dep_in_batch(e->jobs, i, k)) >= 0) {
      if (lock_parent(db, pid, plen, &state) != LEASE_OK) return db->rc;
      if (state < 0 && e->held[m].id) {
        pid = e->held[m].id;
        plen = e->held[m].len;
        if (lock_parent(db, pid, plen, &state) != LEASE_OK) return db->rc;
      }
      if (lease__dep_reason(state >= 0, state) != LEASE_GRANTED) {
        e->again = 1;
        return lease__fail(db, LEASE_BUSY,
                           "lease_enqueue_many: job %d's after: the job it names ended while "
                           "the batch was stored, %d times",
                           i + 1, KEY_TRIES);
      }
    }
    p_bytes(&q, j->id, j->id_len);
    p_bytes(&q, pid, plen);
    if (!(res = qrun(db, LPG_ST_Q_DEP_ADD, &q))) return db->rc;
    if (atoi(PQcmdTuples(res)) == 0 && edge_there(db, &q, j->id, j->id_len) != LEASE_OK) {
      PQclear(res);
      return db->rc;
    }
    PQclear(res);
  }
  p_bytes(&p, j->id, j->id_len);
  return wait_again(db, &p, "enqueue's wait of", j->id, j->id_len);
}

/* Keep the holder of ENQUEUE's result res (column 1) in *h. */
static int hold(lease_db *db, held_by *h, const PGresult *res) {
  h->len = (size_t)PQgetlength(res, 0, 1);
  if (!(h->id = malloc(h->len ? h->len : 1))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  memcpy(h->id, PQgetvalue(res, 0, 1), h->len);
  return LEASE_OK;
}

/* 1 when an entry of the batch lists an earlier one (which may be skipped
** for its key, and stand for its holder). */
static int lists_earlier(const enqueue_ctx *e) {
  int i, k;
  for (i = 1; i < e->n; i++)
    for (k = 0; k < e->jobs[i].n_after; k++)
      if (lease__dep_in_batch(e->jobs, i, k) >= 0) return 1;
  return 0;
}

static int enqueue_jobs(lease_db *db, enqueue_ctx *e);

/* Transaction body: enqueue_jobs, with room for the holders of skipped
** entries when a later entry lists an earlier one. */
static int enqueue_body(lease_db *db, void *ctx) {
  enqueue_ctx *e = ctx;
  int i, rc;
  e->held = NULL;
  if (lists_earlier(e) && !(e->held = calloc((size_t)e->n, sizeof *e->held)))
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  rc = enqueue_jobs(db, e);
  for (i = 0; e->held && i < e->n; i++) free(e->held[i].id);
  free(e->held);
  e->held = NULL;
  return rc;
}

/* Enqueue each job with its data (LPG_Q_SQL_ENQUEUE) and its
** dependencies, once they are all checked; a job whose key is held is
** skipped, the holder recorded. */
static int enqueue_jobs(lease_db *db, enqueue_ctx *e) {
  int i, refused, rc = check_deps(db, e, &refused);
  e->added = 0;
  if (rc != LEASE_OK || refused) return rc;
  for (i = 0; i < e->n; i++) {
    const lease_new_job *j = &e->jobs[i];
    params p = {0};
    PGresult *res;
    int added, held;
    p_bytes(&p, j->id, j->id_len);
    p_bytes(&p, j->payload, j->payload_len);
    p_bytes(&p, j->queue, j->queue_len);
    p_i8(&p, j->priority);
    p_time(&p, j->has_run_at ? j->run_at : NAN);
    p_i8(&p, j->max_attempts);
    p_time(&p, j->timeout != 0 ? j->timeout : NAN);
    p_bytes(&p, j->key, j->key_len);
    if (!(res = qrun(db, LPG_ST_ENQUEUE, &p)))
      return lpg_skipped_as(db, "enqueue's queue row of", j->id, j->id_len);
    added = (int)r_i8(res, 0, 0);
    e->added += added;
    if ((held = !PQgetisnull(res, 0, 1))) {
      rc = lease__duplicate(db, PQgetvalue(res, 0, 1), (size_t)PQgetlength(res, 0, 1));
      if (rc == LEASE_OK && e->held) rc = hold(db, &e->held[i], res);
    }
    PQclear(res);
    if (rc != LEASE_OK) return rc;
    if (!added && !held && (rc = lpg_enqueue_missing(db, j, 1)) != LEASE_OK) return rc;
    if (added == 1 && j->n_after > 0 && add_deps(db, e, i) != LEASE_OK) return db->rc;
    if ((rc = lease__event_id(db, LEASE_EV_ENQUEUE, j->id, j->id_len, NAN,
                              added ? LEASE_GRANTED : held ? LEASE_DUPLICATE : LEASE_EXISTS))
        != LEASE_OK)
      return rc;
  }
  return LEASE_OK;
}

/* See lpg_int.h. */
int lpg_q_enqueue_in(lease_db *db, const lease_new_job *jobs, int n, int *added) {
  enqueue_ctx e = {jobs, n, 0, 0, NULL};
  int rc = enqueue_body(db, &e);
  *added = e.added;
  return rc;
}

/* 1 when job j (checked) carries data beyond the defaults the trigger
** lease_jobs_added gives its queue row. */
static int has_data(const lease_new_job *j) {
  return j->payload || j->key || j->queue_len != 7 || memcmp(j->queue, "default", 7) != 0 ||
         j->priority != 0 || j->has_run_at || j->max_attempts != LEASE_MAX_ATTEMPTS_DEFAULT ||
         j->timeout != 0 || j->n_after > 0;
}

/* One run of an enqueue with data: one job without dependencies is one
** statement (with its event, in a transaction when events are on); else
** a transaction. */
static int enqueue_run(lease_db *db, enqueue_ctx *e) {
  int began, rc;
  if (e->n > 1 || e->jobs[0].n_after > 0) return in_txn(db, enqueue_body, e);
  if ((rc = lpg_ev_begin(db, &began)) != LEASE_OK) return rc;
  return lpg_ev_end(db, enqueue_body(db, e), began);
}

/* See lease.h: lease_enqueue and lease_enqueue_many, one transaction: one
** job without dependencies is one statement; many without data one INSERT
** of their ids (lpg_enqueue_ids); many with data, none with a key or
** dependencies, one statement (lpg_enqueue_data); else a statement per job
** between BEGIN and COMMIT.  A run_at the mark this handle last read does
** not settle (lease__clock_due) costs a read of the mark before them
** (lpg_ready).  A run refused by lease_queue_key (a holder committed after
** it read none) is run again, and finds the holder; so is one that found a
** job its after names ended (add_deps). */
int lpg_q_enqueue(lease_db *db, const lease_new_job *jobs, int n, int *inserted) {
  enqueue_ctx e = {jobs, n, 0, 0, NULL};
  int i, tries, plain = n > 1, batch = n > 1, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  for (i = 0; plain && i < n; i++) plain = !has_data(&jobs[i]);
  if (plain) return lpg_enqueue_ids(db, jobs, n, inserted);
  for (i = 0; batch && i < n; i++) batch = !jobs[i].key && jobs[i].n_after == 0;
  if (batch) return lpg_enqueue_data(db, jobs, n, inserted);
  for (tries = 1;; tries++) {
    e.again = 0;
    rc = enqueue_run(db, &e);
    if (!(lpg_key_conflict(db, rc) || e.again) || tries == KEY_TRIES) break;
    db->has_dup = 0;
    db->refused = 0;
  }
  if (rc == LEASE_OK && inserted) *inserted = e.added;
  return rc;
}

/* ===================================================================== */
/* Reads                                                                  */
/* ===================================================================== */

/*
** Copy the full row (LPG_Q_SQL_FULL_ROW's columns) at result row `row`
** into *out, its strings appended to db->buf at *used as offsets plus one
** (fix_row turns them into pointers).  LEASE_OK or LEASE_NOMEM.
*/
static int copy_full_row(lease_db *db, const PGresult *r, int row, lease_row *out, size_t *used) {
  size_t off[6];
  const int cols[6] = {0, 1, 4, 7, 8, 17};
  size_t *lens[6] = {&out->id_len, &out->owner_len, &out->result_len, &out->payload_len,
                     &out->queue_len, &out->key_len};
  const char **ptrs[6] = {&out->id, &out->owner, &out->result, &out->payload, &out->queue,
                          &out->key};
  int i, failed = 0;
  for (i = 0; i < 6; i++) {
    off[i] = lpg_keep(db, r, row, cols[i], lens[i], used, &failed);
    if (failed) return db->rc;
    *ptrs[i] = (const char *)(uintptr_t)off[i];
  }
  out->until = r_f8(r, row, 2);
  out->fence = r_i8(r, row, 3);
  out->done = r_i4(r, row, 5) != 0;
  out->blocked = lease__blocked_msg(r_i4(r, row, 6));
  out->priority = r_i8(r, row, 9);
  out->run_at = r_time(r, row, 10);
  out->attempt = r_i8(r, row, 11);
  out->max_attempts = r_i8(r, row, 12);
  out->finished_at = r_time(r, row, 13);
  out->status = r_i4(r, row, 14);
  out->seq = r_i8(r, row, 15);
  out->result_size = r_i8(r, row, 16);
  out->timeout = 0;   /* not among the columns: lease_state reads it apart */
  return LEASE_OK;
}

/* Turn copy_full_row's offsets into pointers into db->buf. */
static void fix_row(lease_db *db, lease_row *row) {
  row->id = kept(db, (uintptr_t)row->id);
  row->owner = kept(db, (uintptr_t)row->owner);
  row->result = kept(db, (uintptr_t)row->result);
  row->payload = kept(db, (uintptr_t)row->payload);
  row->queue = kept(db, (uintptr_t)row->queue);
  row->key = kept(db, (uintptr_t)row->key);
}

/* Read job id's timeout into *timeout (0: none, or a database older than
** step TIMEOUT, whose lease_queue has no such column). */
static int read_timeout(lease_db *db, const char *id, size_t id_len, double *timeout) {
  params p = {0};
  PGresult *res;
  *timeout = 0;
  if (!LEASE_SCHEMA_HAS(LPG(db)->version, TIMEOUT)) return LEASE_OK;
  p_bytes(&p, id, id_len);
  if (!(res = qrun(db, LPG_ST_Q_TIMEOUT, &p))) return db->rc;
  if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)) *timeout = r_f8(res, 0, 0);
  PQclear(res);
  return LEASE_OK;
}

/* See lease.h: lease_state (now NaN: the status is unknown). */
int lpg_q_state(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
                   int *found) {
  params p = {0};
  PGresult *res;
  size_t used = 0;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, id, id_len);
  p_time(&p, now);
  if (!(res = qrun(db, attempts_read(db, LPG_ST_Q_STATE, LPG_ST_Q_STATE_OLD), &p))) return db->rc;
  if (PQntuples(res) == 1) {
    if (copy_full_row(db, res, 0, row, &used) != LEASE_OK) {
      PQclear(res);
      return db->rc;
    }
    fix_row(db, row);
    *found = 1;
  }
  PQclear(res);
  return *found ? read_timeout(db, id, id_len, &row->timeout) : LEASE_OK;
}

/* See lease.h: lease_list. */
int lpg_q_list(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count) {
  params p = {0};
  PGresult *res;
  size_t used = 0;
  int n, i, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_i8(&p, f->after);
  p_time(&p, f->now);
  p_i4(&p, max);
  p_i4(&p, f->status);
  p_bytes(&p, f->queue, f->queue_len);
  p_i4(&p, f->results != 0);
  p_i4(&p, f->which);
  if (!(res = scan_read(db, attempts_read(db, LPG_ST_Q_LIST, LPG_ST_Q_LIST_OLD), &p)))
    return db->rc;
  n = PQntuples(res) < max ? PQntuples(res) : max;
  for (i = 0; i < n; i++) {
    if (copy_full_row(db, res, i, &rows[i], &used) != LEASE_OK) {
      PQclear(res);
      return db->rc;
    }
  }
  PQclear(res);
  for (i = 0; i < n; i++) fix_row(db, &rows[i]);
  *count = n;
  return LEASE_OK;
}

/* See lease.h: lease_errors. */
int lpg_q_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                 int *count) {
  params p = {0};
  PGresult *res;
  size_t used = 0;
  int n, i, failed = 0, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, id, id_len);
  p_i4(&p, max);
  if (!(res = qrun(db, LPG_ST_Q_ERRORS, &p))) return db->rc;
  n = PQntuples(res) < max ? PQntuples(res) : max;
  for (i = 0; i < n && !failed; i++) {
    lease_job_error *e = &out[i];
    e->attempt = PQgetisnull(res, i, 0) ? 0 : r_i8(res, i, 0);
    e->at = r_time(res, i, 1);
    e->owner = (const char *)(uintptr_t)lpg_keep(db, res, i, 2, &e->owner_len, &used, &failed);
    e->fence = PQgetisnull(res, i, 3) ? 0 : r_i8(res, i, 3);
    e->message = (const char *)(uintptr_t)lpg_keep(db, res, i, 4, &e->message_len, &used, &failed);
  }
  PQclear(res);
  if (failed) return db->rc;
  for (i = 0; i < n; i++) {
    out[i].owner = kept(db, (uintptr_t)out[i].owner);
    out[i].message = kept(db, (uintptr_t)out[i].message);
  }
  *count = n;
  return LEASE_OK;
}

/* See lease.h: lease_after.  A database from before dependencies has none. */
int lpg_q_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
                int *count) {
  params p = {0};
  PGresult *res;
  size_t used = 0;
  int n, i, failed = 0, rc = lpg_ready(db);
  if (rc != LEASE_OK || !LEASE_SCHEMA_HAS(LPG(db)->version, DEPS)) return rc;
  p_bytes(&p, id, id_len);
  p_f8(&p, now);
  p_i4(&p, max);
  if (!(res = qrun(db, LPG_ST_Q_DEPS, &p))) return db->rc;
  n = PQntuples(res) < max ? PQntuples(res) : max;
  for (i = 0; i < n && !failed; i++) {
    out[i].id = (const char *)(uintptr_t)lpg_keep(db, res, i, 0, &out[i].id_len, &used, &failed);
    out[i].status = r_i4(res, i, 1);
  }
  PQclear(res);
  if (failed) return db->rc;
  for (i = 0; i < n; i++) out[i].id = kept(db, (uintptr_t)out[i].id);
  *count = n;
  return LEASE_OK;
}

/* See lease.h: lease_count (queue NULL: every queue). */
int lpg_q_count(lease_db *db, double now, const char *queue, size_t queue_len,
                lease_counts *out) {
  int64_t *all[13] = {&out->total, &out->done, &out->ready, &out->held, &out->blocked,
                      &out->available, &out->scheduled, &out->running, &out->retryable,
                      &out->completed, &out->discarded, &out->cancelled, &out->waiting};
  params p = {0};
  PGresult *res;
  int i, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_f8(&p, now);
  p_bytes(&p, queue, queue_len);
  if (!(res = scan_read(db, attempts_read(db, LPG_ST_TALLY, LPG_ST_TALLY_OLD), &p)))
    return db->rc;
  for (i = 0; i < 13; i++) *all[i] = r_i8(res, 0, i);
  PQclear(res);
  return LEASE_OK;
}

/* ===================================================================== */
/* claim_next                                                             */
/* ===================================================================== */

/* A job taken: offsets into db->buf until the end. */
typedef struct taken {
  size_t id, id_len, payload, payload_len, queue, queue_len;
} taken;

/* The ledger's event of a job claim_next's row i of res saw with a lapsed
** lease: op EXPIRE (its owner and fence, the old lease's), or DISCARD. */
static int lapsed_event(lease_db *db, const lease__write *w, const PGresult *res, int i, int op) {
  lease__event e;
  memset(&e, 0, sizeof e);
  e.op = op;
  e.id = PQgetvalue(res, i, 0);
  e.id_len = (size_t)PQgetlength(res, i, 0);
  if (op == LEASE_EV_EXPIRE) {
    e.owner = PQgetisnull(res, i, 8) ? NULL : PQgetvalue(res, i, 8);
    e.owner_len = (size_t)PQgetlength(res, i, 8);
    e.has_fence = 1;
    e.fence = r_i8(res, i, 9);
  }
  e.at = w->now;
  e.reason = LEASE_GRANTED;
  return lease__event_add(db, &e);
}

/* The ledger's claim event of claim_next's row i of res: taken, or
** refused as discarded (its expiry was its last attempt), as claim's. */
static int claim_event(lease_db *db, const lease__write *w, const PGresult *res, int i,
                       int reason) {
  lease__write one = *w;
  one.id = PQgetvalue(res, i, 0);
  one.id_len = (size_t)PQgetlength(res, i, 0);
  return lease__event_write(db, LEASE_EV_CLAIM, &one,
                            reason == LEASE_GRANTED ? r_i8(res, i, 1) : 0, reason);
}

/* The parameters of a claim_next round of w for up to `left` jobs. */
static void claim_params(const lease__write *w, int left, params *p) {
  p_bytes(p, w->queue, w->queue_len);
  p_f8(p, w->now);
  p_bytes(p, w->owner, w->owner_len);
  p_f8(p, w->until);
  p_i4(p, left);
}

/* The statement of a claim round for n jobs: which (Q_CLAIM_NEXT,
** Q_CLAIM_NEXT_FREE or Q_CLAIM_NEXT_KEEPING), or for one job its
** Q_CLAIM_ONE variant, whose kept plan is made for LIMIT 1
** (lpg_queue_sql.h: LPG_Q_SQL_CLAIM_ONE). */
static int claim_stmt(int which, int n) {
  if (n != 1) return which;
  if (which == LPG_ST_Q_CLAIM_NEXT_FREE) return LPG_ST_Q_CLAIM_ONE_FREE;
  if (which == LPG_ST_Q_CLAIM_NEXT_KEEPING) return LPG_ST_Q_CLAIM_ONE_KEEPING;
  return LPG_ST_Q_CLAIM_ONE;
}

/*
** The rounds of a claim_next, in the caller's transaction (which took
** the queue's lock: lpg_q_claim_begin).  One statement per round
** (LPG_Q_SQL_CLAIM_NEXT); a round that discarded jobs whose expired
** lease was their last attempt looks again for as many more.  A discarded
** job leaves the candidates, so the rounds end.  A candidate the round
** neither claimed nor discarded, or whose lapsed lease's error record
** is missing (another client's trigger skipped the write), fails the call
** with LEASE_MISMATCH, and the caller rolls back.
** first: the result of the first round, already run
** (lpg_q_complete_claim_next's), or NULL; freed here.
*/
static int claim_rounds(lease_db *db, const lease__write *w, int max, lease_job *jobs,
                        int *count, PGresult *first) {
  taken *t;
  size_t used = 0;
  int n = 0, i, failed = 0, rc = LEASE_OK;
  if (!(t = malloc((size_t)max * sizeof *t))) {
    PQclear(first);
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  }
  for (;;) {
    params p = {0};
    PGresult *res = first;
    int rows, discarded = 0;
    first = NULL;
    claim_params(w, max - n, &p);
    if (!res && !(res = qrun(db, claim_stmt(LPG_ST_Q_CLAIM_NEXT, max - n), &p))) {
      free(t);
      return db->rc;
    }
    rows = PQntuples(res);
    for (i = 0; i < rows && !failed; i++) {
      lease_job *j = &jobs[n];
      taken *k = &t[n];
      if ((PQgetisnull(res, i, 1) && !r_bool(res, i, 12)) || r_bool(res, i, 13)) {
        /* neither write stored, or the lapsed lease's error record */
        rc = lease__skipped(db, r_bool(res, i, 13)   ? "a claim's error record of"
                                : r_bool(res, i, 11) ? "a claim's discard of"
                                                     : "claim_next's claim of",
                            PQgetvalue(res, i, 0), (size_t)PQgetlength(res, i, 0));
        break;
      }
      if (!PQgetisnull(res, i, 7) && r_bool(res, i, 7) &&
          (rc = lapsed_event(db, w, res, i, LEASE_EV_EXPIRE)) != LEASE_OK)
        break;
      if (PQgetisnull(res, i, 1)) {
        discarded++;
        if ((rc = lapsed_event(db, w, res, i, LEASE_EV_DISCARD)) != LEASE_OK ||
            (rc = claim_event(db, w, res, i, LEASE_DISCARDED)) != LEASE_OK)
          break;
        continue;
      }
      if (n == max) break;
      if ((rc = claim_event(db, w, res, i, LEASE_GRANTED)) != LEASE_OK) break;
      k->id = lpg_keep(db, res, i, 0, &k->id_len, &used, &failed);
      k->payload = lpg_keep(db, res, i, 2, &k->payload_len, &used, &failed);
      k->queue = lpg_keep(db, res, i, 3, &k->queue_len, &used, &failed);
      j->fence = r_i8(res, i, 1);
      j->priority = r_i8(res, i, 4);
      j->attempt = r_i8(res, i, 5);
      j->max_attempts = r_i8(res, i, 6);
      j->timeout = PQgetisnull(res, i, 10) ? 0 : r_f8(res, i, 10);
      n++;
    }
    PQclear(res);
    if (failed || rc != LEASE_OK) {
      free(t);
      return db->rc;
    }
    if (discarded == 0 || rows == 0 || n == max) break;
  }
  for (i = 0; i < n; i++) {
    jobs[i].id = kept(db, t[i].id);
    jobs[i].id_len = t[i].id_len;
    jobs[i].payload = kept(db, t[i].payload);
    jobs[i].payload_len = t[i].payload_len;
    jobs[i].queue = kept(db, t[i].queue);
    jobs[i].queue_len = t[i].queue_len;
  }
  free(t);
  *count = n;
  return LEASE_OK;
}

/* Read one integer (row 0, column 0) of queue statement which, with ?1
** the queue and ?2 at. */
static int count_of(lease_db *db, int which, const lease__write *w, double at, int64_t *out) {
  params p = {0};
  PGresult *res;
  p_bytes(&p, w->queue, w->queue_len);
  p_f8(&p, at);
  if (!(res = qrun(db, which, &p))) return db->rc;
  *out = r_i8(res, 0, 0);
  PQclear(res);
  return LEASE_OK;
}

/* The settings row of a queue (LPG_Q_SQL_SETTINGS's columns) in res, when
** there is one, into *q, zeroed first. */
static void settings_of(const PGresult *res, lease__queue_facts *q) {
  memset(q, 0, sizeof *q);
  if (PQntuples(res) != 1) return;
  q->found = 1;
  q->paused = r_i8(res, 0, 0) != 0;
  q->concurrency = r_i8(res, 0, 1);
  q->rate = r_i8(res, 0, 2);
  q->per = r_f8(res, 0, 3);
}

/* The claim's time for the rate of w's queue, and the claims around it,
** into q (LPG_Q_SQL_RECENT, which prunes those no later claim counts). */
static int rate_window(lease_db *db, const lease__write *w, lease__queue_facts *q) {
  params p = {0};
  PGresult *res;
  p_bytes(&p, w->queue, w->queue_len);
  p_f8(&p, w->now);
  p_f8(&p, q->per);
  if (!(res = qrun(db, LPG_ST_Q_RECENT, &p))) return db->rc;
  q->at = r_f8(res, 0, 0);
  q->recent = r_i8(res, 0, 1);
  PQclear(res);
  return LEASE_OK;
}

/* The facts a queue's limits need, once its settings row is read into q
** (found, not paused): the live leases for a concurrency limit, the
** claim's time and the claims around it for a rate. */
static int limit_facts(lease_db *db, const lease__write *w, lease__queue_facts *q) {
  int rc = LEASE_OK;
  if (!q->found || q->paused) return LEASE_OK;
  if (q->concurrency > 0) rc = count_of(db, LPG_ST_Q_LIVE, w, w->now, &q->live);
  if (rc == LEASE_OK && q->rate > 0) rc = rate_window(db, w, q);
  return rc;
}

/* Read the facts of w's queue (lease__queue_facts): its settings row by
** statement which (LPG_ST_Q_SETTINGS, or LPG_ST_Q_SETTINGS_LOCKED inside
** the claim's transaction), then, when limits, limit_facts. */
static int read_facts(lease_db *db, const lease__write *w, int which, int limits,
                      lease__queue_facts *q) {
  params p = {0};
  PGresult *res;
  memset(q, 0, sizeof *q);
  p_bytes(&p, w->queue, w->queue_len);
  if (!(res = qrun(db, which, &p))) return db->rc;
  settings_of(res, q);
  PQclear(res);
  return limits ? limit_facts(db, w, q) : LEASE_OK;
}

/* claim_rounds of w inside an open transaction, under its queue's
** settings q, read with the row locked (LPG_ST_Q_SETTINGS_LOCKED), so the
** claims of a queue with settings take turns and each counts what the one
** before it committed; at most the room lease__claim_room leaves; the jobs
** handed out recorded for a rate at the claim's time (q->at): a record
** another client's trigger skipped fails the claim (the caller rolls
** back). */
static int claim_under(lease_db *db, const lease__write *w, lease__queue_facts *q, int max,
                       lease_job *jobs, int *count, int *why) {
  int room, rc = limit_facts(db, w, q);
  *count = 0;
  if (rc != LEASE_OK) return rc;
  db->claim_limited = q->concurrency > 0 || q->rate > 0;
  if ((*why = lease__claim_room(q, max, &room)) != LEASE_GRANTED) return LEASE_OK;
  if ((rc = claim_rounds(db, w, room, jobs, count, NULL)) != LEASE_OK) return rc;
  if (q->rate > 0 && *count > 0) {
    params p = {0};
    PGresult *res;
    p_bytes(&p, w->queue, w->queue_len);
    p_f8(&p, q->at);
    p_i4(&p, *count);
    if (!(res = qrun(db, LPG_ST_Q_RECORD_CLAIMS, &p))) return db->rc;
    rc = atoi(PQcmdTuples(res)) == *count   /* unless a trigger skipped some */
             ? LEASE_OK
             : lease__skipped(db, "the claims counted for the rate of queue", w->queue, w->queue_len);
    PQclear(res);
  }
  return rc;
}

/* claim_under of w, its queue's settings read with the row locked. */
static int claim_controlled(lease_db *db, const lease__write *w, int max, lease_job *jobs,
                            int *count, int *why) {
  lease__queue_facts q;
  int rc = read_facts(db, w, LPG_ST_Q_SETTINGS_LOCKED, 0, &q);
  *count = 0;
  return rc != LEASE_OK ? rc : claim_under(db, w, &q, max, jobs, count, why);
}

/* See lpg_int.h. */
int lpg_q_claim_begin(lease_db *db, const lease__write *w) {
  params p = {0};
  const params *ps[2] = {NULL, &p};
  const int which[2] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK};
  PGresult *out[2];
  int rc;
  p_bytes(&p, w->queue, w->queue_len);
  if ((rc = lpg_pipeline(db, 2, which, ps, out)) != LEASE_OK) return rc;
  PQclear(out[0]);
  PQclear(out[1]);
  return LEASE_OK;
}

/*
** BEGIN, the lock of w's queue (LPG_Q_SQL_CLAIM_LOCK), its settings read
** with the row locked and a claim_next round for max jobs that claims
** nothing from a queue with settings (LPG_Q_SQL_CLAIM_NEXT_FREE), in one
** round trip with the clock's mark (lpg_pipeline_clocked), the
** transaction left open.  The statements after the lock see every change
** of the settings committed before it was granted, and none can commit
** until this transaction ends.  A queue without settings: the claim's
** rounds from that first one (claim_rounds); with settings, claim_under
** them.
*/
static int claim_pipelined(lease_db *db, const lease__write *w, int max, lease_job *jobs,
                           int *count, int *why) {
  params pl = {0}, ps = {0}, pn = {0};
  const params *p[4] = {NULL, &pl, &ps, &pn};
  int which[4] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, LPG_ST_Q_SETTINGS_LOCKED,
                  LPG_ST_Q_CLAIM_NEXT_FREE};
  PGresult *out[4];
  lease__queue_facts q;
  int rc;
  p_bytes(&pl, w->queue, w->queue_len);
  p_bytes(&ps, w->queue, w->queue_len);
  claim_params(w, max, &pn);
  which[3] = claim_stmt(which[3], max);
  if ((rc = lpg_pipeline_clocked(db, 4, which, p, out)) != LEASE_OK) return rc;
  PQclear(out[0]);
  PQclear(out[1]);
  settings_of(out[2], &q);
  PQclear(out[2]);
  if (!q.found) return claim_rounds(db, w, max, jobs, count, out[3]);
  PQclear(out[3]);
  return claim_under(db, w, &q, max, jobs, count, why);
}

/* See lease.h: lease_claim_next, one transaction: claim_pipelined, then
** COMMIT. */
int lpg_q_claim_next(lease_db *db, const lease__write *w, int max, lease_job *jobs, int *count,
                     int *why) {
  int rc = lpg_ready_conn(db);
  *why = LEASE_GRANTED;
  *count = 0;
  if (rc != LEASE_OK) return rc;
  if ((rc = claim_pipelined(db, w, max, jobs, count, why)) == LEASE_OK)
    rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) {
    lpg_rollback(db);
    *count = 0;
  }
  return rc;
}

/*
** BEGIN, the lock of wn's queue (LPG_Q_SQL_CLAIM_LOCK), the complete wc,
** the settings of wn's queue read with the row locked and a claim_next
** round of wn for max jobs that claims nothing from a queue with settings
** (LPG_Q_SQL_CLAIM_NEXT_FREE), in one round trip with the clock's mark
** (lpg_pipeline_clocked), the transaction left open.  The lock comes
** first, so the transaction waits for a change of the settings before it
** locks the job it completes.  The complete's outcome into *reason (with
** its event); then the claim's rounds from that first one (claim_rounds),
** or for a queue with settings claim_under them.
*/
static int ccn_pipelined(lease_db *db, const lease__write *wc, const lease__write *wn, int max,
                         lease_job *jobs, int *count, int *reason, int *why) {
  params pl = {0}, pc = {0}, ps = {0}, pn = {0};
  const params *p[5] = {NULL, &pl, &pc, &ps, &pn};
  int which[5] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, 0, LPG_ST_Q_SETTINGS_LOCKED,
                  LPG_ST_Q_CLAIM_NEXT_FREE};
  PGresult *out[5];
  lease__queue_facts q;
  int rc;
  p_bytes(&pl, wn->queue, wn->queue_len);
  which[2] = lpg_write_params(wc, &pc);
  p_bytes(&ps, wn->queue, wn->queue_len);
  claim_params(wn, max, &pn);
  which[4] = claim_stmt(which[4], max);
  if ((rc = lpg_pipeline_clocked(db, 5, which, p, out)) != LEASE_OK)
    return lpg_skipped_as(db, "complete's queue row of", wc->id, wc->id_len);   /* the only one dividing */
  PQclear(out[0]);
  PQclear(out[1]);
  settings_of(out[3], &q);
  PQclear(out[3]);
  if ((rc = lpg_write_read(db, wc, out[2], NULL, reason)) != LEASE_OK) {
    PQclear(out[4]);
    return rc;
  }
  if (!q.found) return claim_rounds(db, wn, max, jobs, count, out[4]);
  PQclear(out[4]);
  return claim_under(db, wn, &q, max, jobs, count, why);
}

/*
** The complete wc taking the lock of wn's queue
** (LPG_Q_SQL_COMPLETE_LOCKING), then a claim_next round of wn for max jobs
** that discards none, with its check (LPG_Q_SQL_CLAIM_NEXT_KEEPING), in
** one round trip and one transaction: the session is idle, and
** PostgreSQL runs the statements of a pipeline up to its sync as one
** transaction, which the sync commits, or rolls back at the first
** failure, skipping the statements after it.  For a handle that records
** no events (the complete's and the claims' events are written once the
** results are read) and whose clock mark needs no move for the write's
** now (lease__clock_settled; the check confirms the mark inside the
** transaction).  *committed 0: the round would discard a job, or the
** check failed (the mark moved, wn's queue has settings, or the complete
** left the job not done): all rolled back, nothing recorded.  Else the
** complete's outcome into *reason and the claims (one round: it
** discarded none); what fails after the commit (memory for the results)
** leaves both stored, the jobs claimed until their leases expire.
*/
static int ccn_committed(lease_db *db, const lease__write *wc, const lease__write *wn, int max,
                         lease_job *jobs, int *count, int *reason, int *committed) {
  params pc = {0}, pn = {0};
  const params *p[2] = {&pc, &pn};
  int which[2] = {LPG_ST_Q_COMPLETE_LOCKING, 0};
  PGresult *out[2];
  int rc;
  *committed = 0;
  lpg_write_params(wc, &pc);
  p_bytes(&pc, wn->queue, wn->queue_len);
  claim_params(wn, max, &pn);
  which[1] = claim_stmt(LPG_ST_Q_CLAIM_NEXT_KEEPING, max);
  if (isnan(db->clock_mark)) p_null(&pn);   /* no mark: the check wants none still */
  else p_f8(&pn, db->clock_mark);
  p_bytes(&pn, wc->id, wc->id_len);
  if ((rc = lpg_pipeline(db, 2, which, p, out)) != LEASE_OK) {
    lpg_rollback(db);
    if (!lpg_failed_with(db, "22012")) return rc;
    lease__clear_error(db);
    return LEASE_OK;
  }
  *committed = 1;
  if ((rc = lpg_write_read(db, wc, out[0], NULL, reason)) != LEASE_OK) {
    PQclear(out[1]);
    return rc;
  }
  return claim_rounds(db, wn, max, jobs, count, out[1]);
}

/* See lpg_int.h: the complete wc, then the claim of wn, in one
** transaction (ccn_committed when it can; else ccn_pipelined, then
** COMMIT); a failure of either rolls both back. */
int lpg_q_complete_claim_next(lease_db *db, const lease__write *wc, const lease__write *wn,
                              int max, lease_job *jobs, int *count, int *reason, int *why) {
  int committed = 0, rc = lpg_ready_conn(db);
  *why = LEASE_GRANTED;
  *count = 0;
  if (rc != LEASE_OK) return rc;
  if (lease__clock_settled(db) && !lease__events_on(db)) {
    rc = ccn_committed(db, wc, wn, max, jobs, count, reason, &committed);
    if (rc != LEASE_OK || committed) return rc;
  }
  rc = ccn_pipelined(db, wc, wn, max, jobs, count, reason, why);
  if (rc == LEASE_OK) rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) {
    lpg_rollback(db);
    *count = 0;
  }
  return rc;
}

/* See lpg_int.h: BEGIN and the lock of wn's queue (lpg_q_claim_begin),
** the completions as complete_many's (lpg_complete_begun: one statement
** for the batch, in the same round trip), then claim_controlled of wn,
** then COMMIT; a failure of either rolls both back.  No items: the clock
** step, BEGIN with the lock, and the claim. */
int lpg_q_complete_many_claim_next(lease_db *db, const lease__write *wc,
                                   const lease_result *items, int n, int *reasons, int *stored,
                                   const lease__write *wn, int max, lease_job *jobs, int *count,
                                   int *why) {
  int done = 0, rc = n > 0 ? lpg_ready_conn(db) : lpg_ready(db);
  *why = LEASE_GRANTED;
  if (rc != LEASE_OK) return rc;
  rc = n > 0 ? lpg_complete_begun(db, wc, items, n, reasons, &done, wn)
             : lpg_q_claim_begin(db, wn);
  if (rc == LEASE_OK && (rc = claim_controlled(db, wn, max, jobs, count, why)) == LEASE_OK)
    rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) {
    lpg_rollback(db);
    *count = 0;
    return rc;
  }
  if (stored) *stored = done;
  return LEASE_OK;
}

/* ===================================================================== */
/* Queue control                                                          */
/* ===================================================================== */

typedef struct control_ctx {
  const char *queue;
  size_t queue_len;
  int what, paused;
  const lease_queue_limits *l;
} control_ctx;

/* Transaction body of set_queue: the queue's advisory lock taken
** exclusive (LPG_Q_SQL_CONTROL_LOCK: it waits for the claims of the queue
** in progress, and the claims that start meanwhile wait for this
** transaction's end), the row, then tidy. */
static int control_body(lease_db *db, void *ctx) {
  control_ctx *x = ctx;
  params p = {0};
  PGresult *res;
  p_bytes(&p, x->queue, x->queue_len);
  if (!(res = qrun(db, LPG_ST_Q_CONTROL_LOCK, &p))) return db->rc;
  PQclear(res);
  if (x->what == 0) {
    p_i4(&p, x->paused);
  } else {
    if (x->l->concurrency > 0) p_i8(&p, x->l->concurrency);
    else p_null(&p);
    if (x->l->rate > 0) p_i8(&p, x->l->rate);
    else p_null(&p);
    if (x->l->rate > 0) p_f8(&p, x->l->per);
    else p_null(&p);
  }
  if (!(res = qrun(db, x->what == 0 ? LPG_ST_Q_SET_PAUSED : LPG_ST_Q_SET_LIMITS, &p))) return db->rc;
  if (atoi(PQcmdTuples(res)) != 1) {   /* the upsert writes its row unless a trigger skips it */
    PQclear(res);
    return lease__skipped(db, "the settings of queue", x->queue, x->queue_len);
  }
  PQclear(res);
  {
    lease__event e = {x->what ? LEASE_EV_LIMIT : x->paused ? LEASE_EV_PAUSE : LEASE_EV_RESUME,
                      NULL, 0, x->queue, x->queue_len, NULL, 0, 0, 0, NAN, LEASE_GRANTED};
    int rc = lease__event_add(db, &e);
    if (rc != LEASE_OK) return rc;
  }
  memset(&p, 0, sizeof p);
  p_bytes(&p, x->queue, x->queue_len);
  if (!(res = qrun(db, LPG_ST_Q_TIDY, &p))) return db->rc;
  PQclear(res);
  return LEASE_OK;
}

/*
** What must change of lease_jobs_live (LPG_Q_SQL_LIVE_WANT) into want ("":
** nothing), and the DROP of it in jobs' schema into drop.  LEASE_OK or the
** failure recorded.
*/
static int live_want(lease_db *db, char *want, size_t want_cap, char *drop, size_t drop_cap) {
  PGresult *res = PQexec(LPG(db)->pg, LPG_Q_SQL_LIVE_WANT);
  int rc = LEASE_OK;
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    rc = lpg_fail(db, res);
  } else {
    snprintf(want, want_cap, "%s", PQgetvalue(res, 0, 0));
    snprintf(drop, drop_cap, LPG_Q_SQL_LIVE_DROP, PQgetvalue(res, 0, 1));
  }
  PQclear(res);
  return rc;
}

/*
** The index lease_jobs_live made or dropped to match the settings as they
** now stand, each statement on its own outside a transaction, by one
** session at a time: under the session's advisory lock of that index
** (LPG_Q_SQL_LIVE_LOCK), taken without waiting.  A session that finds it
** taken has committed its settings before its try, so before the holder
** lets go; the holder looks again after letting go, and takes the lock
** again when something is left to change.  Each step either ends or
** changes what the next look sees; the rounds are bounded all the same.
** Best effort: the count of live leases reads the queue's open jobs while
** no valid index exists, so it is right either way, and the limits have
** committed.  A failure (a role that may not build an index on jobs, a
** lock_timeout while the build waits for the transactions in progress)
** is forgotten, and the next lease_limit takes it up again; an index a
** failed build left invalid is made anew then.
*/
static int live_index(lease_db *db) {
  PGconn *pg = LPG(db)->pg;
  char want[8], drop[256];
  int round, step, rc = LEASE_OK;
  for (round = 0; round < 8 && rc == LEASE_OK; round++) {
    PGresult *res;
    int locked;
    if ((rc = live_want(db, want, sizeof want, drop, sizeof drop)) != LEASE_OK || !want[0]) break;
    res = PQexec(pg, LPG_Q_SQL_LIVE_LOCK);
    locked = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
             PQgetvalue(res, 0, 0)[0] == 't';
    if (PQresultStatus(res) != PGRES_TUPLES_OK) rc = lpg_fail(db, res);
    PQclear(res);
    if (!locked) break;
    for (step = 0; rc == LEASE_OK && step < 4; step++) {
      if ((rc = live_want(db, want, sizeof want, drop, sizeof drop)) != LEASE_OK || !want[0]) break;
      if (strcmp(want, "make") != 0) rc = lpg_exec(db, drop);
      if (rc == LEASE_OK && strcmp(want, "drop") != 0) rc = lpg_exec(db, LPG_Q_SQL_LIVE_INDEX);
    }
    PQclear(PQexec(pg, LPG_Q_SQL_LIVE_UNLOCK));
  }
  if (rc != LEASE_OK) lease__clear_error(db);
  return LEASE_OK;
}

/* See lease.h: lease_pause, lease_resume, lease_limit.  A limit's
** settings commit first, then lease_jobs_live follows them (live_index). */
int lpg_q_set_queue(lease_db *db, const char *queue, size_t queue_len, int what, int paused,
                    const lease_queue_limits *l) {
  control_ctx x = {queue, queue_len, what, paused, l};
  int rc = lpg_ready(db);
  if (rc == LEASE_OK) rc = in_txn(db, control_body, &x);
  if (rc == LEASE_OK && what != 0) rc = live_index(db);
  return rc;
}

/* See lease.h: lease_queues.  The names and settings, then each queue's
** counts (lpg_q_count). */
int lpg_q_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count) {
  params p = {0};
  PGresult *res;
  size_t used = 0, *names;
  int i, n, failed = 0, rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  if (!(res = qrun(db, LPG_ST_Q_QUEUES, &p))) return db->rc;
  n = PQntuples(res) < max ? PQntuples(res) : max;
  if (!(names = malloc((size_t)(n ? n : 1) * sizeof *names))) {
    PQclear(res);
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  }
  for (i = 0; i < n && !failed; i++) {
    memset(&out[i], 0, sizeof out[i]);
    names[i] = lpg_keep(db, res, i, 0, &out[i].name_len, &used, &failed);
    out[i].paused = r_i8(res, i, 1) != 0;
    out[i].limits.concurrency = r_i8(res, i, 2);
    out[i].limits.rate = r_i8(res, i, 3);
    out[i].limits.per = r_f8(res, i, 4);
  }
  PQclear(res);
  rc = failed ? db->rc : LEASE_OK;
  for (i = 0; rc == LEASE_OK && i < n; i++)
    rc = lpg_q_count(db, now, kept(db, names[i]), out[i].name_len, &out[i].counts);
  for (i = 0; rc == LEASE_OK && i < n; i++) out[i].name = kept(db, names[i]);
  free(names);
  if (rc == LEASE_OK) *count = n;
  return rc;
}

/* ===================================================================== */
/* fail, retry, cancel, prune                                             */
/* ===================================================================== */

typedef struct fail_ctx {
  const lease__write *w;
  const lease_fail_opts *o;
  int status, reason;
  double run_at;
} fail_ctx;

/* Transaction body: fail's guarded write (LPG_Q_SQL_FAIL: complete's
** guard, the lease ends, the error recorded), then, when it stored, the
** job's next state, decided on the attempt read on the locked row; the
** error and the state each change their one row (skipped when not). */
static int fail_body(lease_db *db, void *ctx) {
  fail_ctx *x = ctx;
  const lease__write *w = x->w;
  params p = {0};
  PGresult *res;
  lease__fail_facts f = {0, 0, w->now, x->o->no_attempt, x->o->has_run_at, x->o->run_at};
  lease__next next;
  int rc;
  p_bytes(&p, w->id, w->id_len);
  p_bytes(&p, w->owner, w->owner_len);
  p_i8(&p, w->fence);
  p_f8(&p, w->now);
  p_bytes(&p, w->message, w->message_len);
  if (!(res = qrun(db, LPG_ST_Q_FAIL, &p))) return db->rc;
  rc = lpg_outcome(db, w, res, NULL, &x->reason);
  if (rc == LEASE_OK) rc = lease__event_write(db, LEASE_EV_FAIL, w, 0, x->reason);
  if (rc != LEASE_OK || x->reason != LEASE_GRANTED) {
    PQclear(res);
    return rc;
  }
  f.attempt = r_i8(res, 0, 9);
  f.max_attempts = r_i8(res, 0, 10);
  rc = r_i8(res, 0, 11) == 1 ? LEASE_OK
                             : lease__skipped(db, "fail's error record of", w->id, w->id_len);
  PQclear(res);
  if (rc != LEASE_OK) return rc;
  lease__after_fail(&f, &next);
  x->status = next.status;
  x->run_at = next.run_at;
  memset(&p, 0, sizeof p);
  p_bytes(&p, w->id, w->id_len);
  p_i8(&p, next.attempt);
  p_i4(&p, next.qstate);
  p_time(&p, next.run_at);
  p_time(&p, next.finished_at);
  if (!(res = qrun(db, LPG_ST_Q_AFTER_FAIL, &p))) return db->rc;
  rc = atoi(PQcmdTuples(res)) == 1 ? LEASE_OK
                                   : lease__skipped(db, "fail's queue state of", w->id, w->id_len);
  PQclear(res);
  if (rc != LEASE_OK || next.qstate != LEASE__Q_DISCARDED) return rc;
  return lease__event_id(db, LEASE_EV_DISCARD, w->id, w->id_len, w->now, LEASE_GRANTED);
}

/* See lease.h: lease_fail. */
int lpg_q_fail(lease_db *db, const lease__write *w, const lease_fail_opts *o, int *status,
               double *run_at, int *reason) {
  fail_ctx x = {w, o, 0, LEASE_GRANTED, NAN};
  int rc = lpg_ready(db);
  if (rc == LEASE_OK) rc = in_txn(db, fail_body, &x);
  if (rc != LEASE_OK) return rc;
  if (reason) *reason = x.reason;
  if (x.reason == LEASE_GRANTED) {
    *status = x.status;
    *run_at = x.run_at;
  }
  return LEASE_OK;
}

/* Run retry or cancel (`which`, $1 id, $2 now): one statement.  Returns
** the result (one row) or NULL with the failure recorded. */
static PGresult *admin(lease_db *db, int which, const char *id, size_t id_len, double now) {
  params p = {0};
  p_bytes(&p, id, id_len);
  p_f8(&p, now);
  return qrun(db, which, &p);
}

/* The facts of retry's and cancel's row (found, done, the queue's state
** before; retry's also live, until > now) into *f. */
static void admin_facts(const PGresult *res, lease__facts *f) {
  if (!(f->found = r_bool(res, 0, 0))) return;
  f->done = r_bool(res, 0, 1);
  f->qstate = PQgetisnull(res, 0, 2) ? LEASE__Q_OPEN : r_i4(res, 0, 2);
  if (PQnfields(res) > 3) f->live = r_bool(res, 0, 3);
}

/* One run of retry or cancel (which, op the ledger's) with its event, in
** one transaction when events are on.  The reason: lease__retry_reason or
** lease__cancel_reason; for retry LEASE_DUPLICATE when another unfinished
** job holds the job's key (the statement's h).  On a ready connection
** (lpg_ready, which would roll back a transaction begun before it). */
static int admin_once(lease_db *db, int which, int op, const char *id, size_t id_len,
                      double now, int *reason) {
  PGresult *res;
  lease__facts f = {0};
  int r, began, rc;
  if ((rc = lpg_ev_begin(db, &began)) != LEASE_OK) return rc;
  if (!(res = admin(db, which, id, id_len, now))) {
    if (lpg_failed_with(db, "22012")) {   /* a write the rules granted was skipped */
      lease__clear_error(db);
      lease__skipped(db, which == LPG_ST_Q_RETRY ? "retry of" : "cancel of", id, id_len);
    }
    return lpg_ev_end(db, db->rc, began);
  }
  admin_facts(res, &f);
  r = which == LPG_ST_Q_RETRY ? lease__retry_reason(&f) : lease__cancel_reason(&f);
  if (which == LPG_ST_Q_RETRY && r == LEASE_GRANTED && !PQgetisnull(res, 0, 4)) {
    r = LEASE_DUPLICATE;
    rc = lease__duplicate(db, PQgetvalue(res, 0, 4), (size_t)PQgetlength(res, 0, 4));
  }
  PQclear(res);
  if (rc == LEASE_OK) rc = lease__event_id(db, op, id, id_len, now, r);
  rc = lpg_ev_end(db, rc, began);
  if (rc == LEASE_OK && reason) *reason = r;
  return rc;
}

/* Cancel (admin_once); a run refused by lease_queue_key (a holder of the
** key committed after the statement read none) is run again. */
static int admin_op(lease_db *db, int which, int op, const char *id, size_t id_len, double now,
                    int *reason) {
  int tries, rc = LEASE_OK;
  for (tries = 1; tries <= KEY_TRIES; tries++) {
    if ((rc = lpg_ready(db)) != LEASE_OK) break;
    rc = admin_once(db, which, op, id, id_len, now, reason);
    if (!lpg_key_conflict(db, rc)) break;
    db->has_dup = 0;
  }
  return rc;
}

/* The body of a retry with dependencies (ctx: the retry's arguments): the
** retry, then, when it was granted, the job waits again for its parents
** not completed.  A completed job's retry sets done = 0, and the trigger
** lease_jobs_changed, which fires once the retry's statement has run,
** makes its queue row open whatever the retry wrote; so the wait is a
** statement of its own, in the same transaction (wait_again: a skipped
** wait fails the retry). */
typedef struct retry_ctx {
  const char *id;
  size_t id_len;
  double now;
  int reason;
} retry_ctx;

static int retry_body(lease_db *db, void *ctx) {
  retry_ctx *x = ctx;
  params p = {0};
  int rc = admin_once(db, LPG_ST_Q_RETRY, LEASE_EV_RETRY, x->id, x->id_len, x->now, &x->reason);
  if (rc != LEASE_OK || x->reason != LEASE_GRANTED) return rc;
  p_bytes(&p, x->id, x->id_len);
  return wait_again(db, &p, "retry's wait of", x->id, x->id_len);
}

/* See lease.h: lease_retry. */
int lpg_q_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  retry_ctx x = {id, id_len, now, LEASE_GRANTED};
  int tries, rc = LEASE_OK;
  /* a run refused by lease_queue_key (a holder of the key committed after
  ** retry read none) is run again, each in its own transaction */
  for (tries = 1; tries <= KEY_TRIES; tries++) {
    if ((rc = lpg_ready(db)) != LEASE_OK) break;
    rc = in_txn(db, retry_body, &x);
    if (!lpg_key_conflict(db, rc)) break;
    db->has_dup = 0;
  }
  if (rc == LEASE_OK && reason) *reason = x.reason;
  return rc;
}

/* See lease.h: lease_cancel. */
int lpg_q_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  return admin_op(db, LPG_ST_Q_CANCEL, LEASE_EV_CANCEL, id, id_len, now, reason);
}

/* See lease.h: lease_prune.  status: LEASE_STATUS_* of an ended job, or 0. */
int lpg_q_prune(lease_db *db, double before, const char *queue, size_t queue_len, int status,
                int64_t *deleted) {
  params p = {0};
  PGresult *res;
  int i, began, rc = lpg_ready(db);
  if (rc != LEASE_OK || (rc = lpg_ev_begin(db, &began)) != LEASE_OK) return rc;
  p_f8(&p, before);
  p_bytes(&p, queue, queue_len);
  p_i4(&p, lease__prune_state(status));
  p_f8(&p, lease__prune_held(db, before));
  if (!(res = qrun(db, LPG_ST_Q_PRUNE, &p))) {
    if (lpg_failed_with(db, "22012")) {   /* the floor's raise was skipped */
      lease__clear_error(db);
      lease__skipped(db, "prune's raise of the fence floor", NULL, 0);
    }
    return lpg_ev_end(db, db->rc, began);
  }
  for (i = 0; rc == LEASE_OK && i < PQntuples(res); i++)
    rc = lease__event_id(db, LEASE_EV_PRUNE, PQgetvalue(res, i, 0),
                         (size_t)PQgetlength(res, i, 0), NAN, LEASE_GRANTED);
  if (rc == LEASE_OK) *deleted = PQntuples(res);
  PQclear(res);
  return lpg_ev_end(db, rc, began);
}
