/*
** lease_rules.c: which reason refuses a write to a job, decided once.
**
** The guarded writes (claim, renew, complete, release: CONTRACT.md steps
** 4-7), with_lease's check (complete's), lease_cancel and the fence gate
** each end in one of the reasons of lease.h, or in a failure (a blocked
** job; a guard that refused a write these rules grant).  The order of the checks
** is the contract's and lives here only.  A backend reads the facts about
** the job from its row (lease__facts), in the write's transaction, and
** asks; it never turns a fact into a reason itself.  What follows a failed
** attempt or an expired lease (lease__next: discarded, or open again and
** when) is decided here too, from the attempts a backend counts.  No SQL
** here.
*/
#include "lease.h"
#include "lease_int.h"

#include <math.h>

/*
** The head every write and cancel share: the job is missing, done, or
** (when queue) ended by the queue: discarded, cancelled.  LEASE_GRANTED
** when none.
*/
static int ended_reason(const lease__facts *f, int queue) {
  if (!f->found) return LEASE_MISSING;
  if (f->done) return LEASE_DONE;
  if (queue && f->qstate == LEASE__Q_DISCARDED) return LEASE_DISCARDED;
  if (queue && f->qstate == LEASE__Q_CANCELLED) return LEASE_CANCELLED;
  return LEASE_GRANTED;
}

/* The verb of a blocked job's message for op. */
static const char *op_verb(lease__op op) {
  return op == LEASE__CLAIM ? "claim" : "write to";
}

/* See lease_int.h. */
int lease__judge(lease_db *db, lease__op op, const lease__facts *f, int *reason) {
  int is_claim = op == LEASE__CLAIM, is_release = op == LEASE__RELEASE;
  /* Release may end the lease of a job the queue ended, or a blocked one. */
  if ((*reason = ended_reason(f, !is_release)) != LEASE_GRANTED) return LEASE_OK;
  /* A job waiting for its dependencies takes no lease (release still ends one). */
  if (!is_release && f->qstate == LEASE__Q_WAITING) {
    *reason = LEASE_WAITING;
    return LEASE_OK;
  }
  if (!is_claim && f->other_owner) *reason = LEASE_NOT_OWNER;
  else if (!is_claim && f->other_fence) *reason = LEASE_STALE_FENCE;
  else if (!is_release && lease__blocked_msg(f->blocked))
    return lease__blocked_fail(db, f->blocked, op_verb(op));
  else if (is_claim && f->live) *reason = LEASE_HELD;
  else if (!is_claim && !is_release && f->expired) *reason = LEASE_EXPIRED;
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__refusal(lease_db *db, const lease__write *w, const lease__facts *f, int *reason) {
  int rc = lease__judge(db, w->op, f, reason);
  if (rc != LEASE_OK || *reason != LEASE_GRANTED) return rc;
  return lease__fail(db, LEASE_MISMATCH, "the guarded %s of %.*s changed no row, yet the job "
                     "passes every check (a trigger?): nothing stored",
                     w->op == LEASE__CLAIM ? "claim" : "update", (int)w->id_len, w->id);
}

/* See lease_int.h. */
int lease__skipped(lease_db *db, const char *what, const char *name, size_t name_len) {
  return lease__fail(db, LEASE_MISMATCH, "%s%s%.*s changed no row (a trigger?): nothing stored",
                     what, name ? " " : "", name ? (int)name_len : 0, name ? name : "");
}

/* See lease_int.h. */
int lease__cancel_reason(const lease__facts *f) {
  return ended_reason(f, 1);
}

/* See lease_int.h. */
int lease__prune_state(int status) {
  switch (status) {
    case LEASE_STATUS_COMPLETED: return LEASE__Q_COMPLETED;
    case LEASE_STATUS_DISCARDED: return LEASE__Q_DISCARDED;
    case LEASE_STATUS_CANCELLED: return LEASE__Q_CANCELLED;
    default: return 0;
  }
}

/* See lease_int.h. */
double lease__prune_held(const lease_db *db, double before) {
  return isnan(db->clock_mark) || db->clock_mark > before ? before : db->clock_mark;
}

/* See lease_int.h. */
int lease__dep_reason(int found, int qstate) {
  return !found                          ? LEASE_MISSING
         : qstate == LEASE__Q_DISCARDED ? LEASE_DISCARDED
         : qstate == LEASE__Q_CANCELLED ? LEASE_CANCELLED
                                        : LEASE_GRANTED;
}

/* See lease_int.h. */
int lease__refuse_dep(lease_db *db, int i, int k, int found, int qstate) {
  int why = lease__dep_reason(found, qstate);
  if (why == LEASE_GRANTED) return 0;
  db->refused = why;
  db->refused_job = i;
  db->refused_after = k;
  return 1;
}

/* See lease_int.h. */
int lease__gate_reason(int stored) {
  return stored ? LEASE_GRANTED : LEASE_STALE_FENCE;
}

/* See lease_int.h.  A paused queue first; then each limit leaves its
** room, the smaller one counting. */
int lease__claim_room(const lease__queue_facts *q, int max, int *room) {
  *room = max;
  if (!q->found) return LEASE_GRANTED;
  if (q->paused) return LEASE_PAUSED;
  if (q->concurrency > 0) {
    if (q->live >= q->concurrency) return LEASE_LIMITED;
    if (q->concurrency - q->live < *room) *room = (int)(q->concurrency - q->live);
  }
  if (q->rate > 0) {
    if (q->recent >= q->rate) return LEASE_LIMITED;
    if (q->rate - q->recent < *room) *room = (int)(q->rate - q->recent);
  }
  return LEASE_GRANTED;
}

/* See lease_int.h. */
int lease__retry_reason(const lease__facts *f) {
  if (!f->found) return LEASE_MISSING;
  if (!f->done && f->qstate == LEASE__Q_OPEN && f->live) return LEASE_HELD;
  return LEASE_GRANTED;
}

/*
** The last attempt: the attempts made reached the job's budget.  The
** PostgreSQL backend's claim statements write this comparison in SQL
** (attempt >= max_attempts AS last: lpg_sql.h, lpg_queue_sql.h).
*/
static int last_attempt(const lease__fail_facts *f) {
  return f->attempt >= f->max_attempts;
}

/* Set *out to "discarded at now", the attempts kept. */
static void discarded(const lease__fail_facts *f, lease__next *out) {
  out->qstate = LEASE__Q_DISCARDED;
  out->status = LEASE_STATUS_DISCARDED;
  out->attempt = f->attempt;
  out->run_at = NAN;
  out->finished_at = f->now;
}

/* Set *out to "open again at run_at", attempt counted as made. */
static void open_again(lease__next *out, int64_t attempt, double run_at) {
  out->qstate = LEASE__Q_OPEN;
  out->status = LEASE_STATUS_RETRYABLE;
  out->attempt = attempt;
  out->run_at = run_at;
  out->finished_at = NAN;
}

/* See lease_int.h. */
void lease__after_fail(const lease__fail_facts *f, lease__next *out) {
  if (f->no_attempt)
    open_again(out, f->attempt > 0 ? f->attempt - 1 : 0, f->has_run_at ? f->run_at : f->now);
  else if (last_attempt(f))
    discarded(f, out);
  else
    open_again(out, f->attempt, f->has_run_at ? f->run_at : f->now + lease_backoff(f->attempt));
}

/* See lease_int.h. */
void lease__after_expiry(const lease__fail_facts *f, lease__next *out) {
  if (last_attempt(f)) discarded(f, out);
  else open_again(out, f->attempt, f->now);
}
