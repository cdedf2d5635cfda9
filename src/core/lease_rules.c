/*
** lease_rules.c: which reason refuses a write to a job, decided once.
**
** The guarded writes (claim, renew, complete, release: CONTRACT.md steps
** 4-7), with_lease's check (complete's), lease_cancel and the fence gate
** each end in one of the reasons of lease.h, or in a failure (a blocked
** job; a guard that refused a write these rules grant).  The order of the checks
** is the contract's and lives here only.  A backend reads the facts about
** the job from its row (lease__facts), in the write's transaction, and
** asks; it never turns a fact into a reason itself.  No SQL here.
*/
#include "lease.h"
#include "lease_int.h"

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
  if (!is_claim && f->other_owner) *reason = LEASE_NOT_OWNER;
  else if (!is_claim && f->other_fence) *reason = LEASE_STALE_FENCE;
  else if (!is_release && lease__blocked_msg(f->blocked))
    return lease__blocked_fail(db, f->blocked, op_verb(op));
  else if (is_claim && f->live) *reason = LEASE_HELD;
  else if (!is_claim && !is_release && f->expired) *reason = LEASE_EXPIRED;
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__refusal(lease_db *db, lease__op op, const lease__facts *f, int *reason) {
  int rc = lease__judge(db, op, f, reason);
  if (rc != LEASE_OK || *reason != LEASE_GRANTED) return rc;
  return lease__fail(db, LEASE_ERROR, "internal error: the guarded %s refused a write that "
                     "passes every check", op == LEASE__CLAIM ? "claim" : "update");
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
