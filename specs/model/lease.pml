/*
** lease.pml: a model of the job state machine, as the SQLite backend
** (src/sqlite/lsq_sql.h, lsq_queue_sql.h, lsq_ops.c, lsq_queue.c) and the
** PostgreSQL backend (src/pg/lpg_sql.h, lpg_queue_sql.h, lpg_queue.c)
** write it, for SPIN.  specs/model/check.sh runs it; docs/model.md says
** what it checks and what it leaves out.
**
** One job (JOBS), three workers (owners 1..3; 0 is NULL), an
** administrator, and a clock that moves from 0 to TMAX one tick at a time.
** A lease lasts 1 or 2 ticks, a job has MAXATT attempts, and claims stop
** once the fence reaches FMAX (a bound of the model, as LEASE_FENCE_MAX is
** the engine's).  Each operation is one atomic step: the engine runs each
** in one write transaction (BEGIN IMMEDIATE on SQLite; on PostgreSQL one
** statement that locks the job's row FOR UPDATE, or a transaction that
** holds that lock), so no other write interleaves between its check and
** its update.
**
** The database.  The jobs row: owner, until, fence, done.  The queue row
** (lease_queue): qstate (0 open, 1 completed, 2 discarded, 3 cancelled)
** and base, the fence at which attempts were last counted from zero: the
** attempts made are fence - base (SQLite's LSQ_SQL_ATTEMPT; PostgreSQL
** keeps the same count in lease_queue.attempt, one up per fence change).
**
** Each step, and the C/SQL it models:
**   claim    lsq_guarded_step (LEASE__CLAIM) / LPG_SQL_CLAIM.  First
**            lsq_q_expired (LSQ_SQL_Q_EXPIRED; LPG_SQL_CLAIM's x.lapsed):
**            a lease that expired unreported (owner not NULL, done 0,
**            state 0, until <= now) counts against the job, and when that
**            was its last attempt (attempts >= max_attempts) LSQ_SQL_Q_END
**            discards it (state 2).  Then LSQ_SQL_CLAIM: WHERE done = 0
**            AND until <= now AND LSQ_SQL_NOT_ENDED (state < 2); SET
**            owner, until = now + ttl, fence = fence + 1.  claim_next
**            (LSQ_SQL_Q_CLAIM_FREE, LPG_Q_SQL_CLAIM_NEXT) hands out a job
**            only under the same guard, and further only when its run_at
**            has come: it is modelled by claim.
**   renew    LSQ_SQL_RENEW / LPG_SQL_RENEW: WHERE owner, fence match,
**            done = 0, until > now, not ended; SET until = now + ttl.
**   complete LSQ_SQL_COMPLETE / LPG_SQL_COMPLETE: the same guard; SET
**            done = 1 (and result); the trigger lease_jobs_done (PG:
**            lease_jobs_changed) sets the queue row completed (state 1).
**   fail     fail_body (lsq_queue.c) / lpg_q_fail: LSQ_SQL_Q_FAIL,
**            complete's guard; SET owner = NULL, until = 0 (fence kept).
**            Then attempt = fence - base; with no_attempt the attempt is
**            given back (attempt - 1, not below 0) and the job stays open;
**            else attempt >= max_attempts discards it (state 2), else it
**            stays open.  LSQ_SQL_Q_AFTER_FAIL: base = fence - attempt.
**            (run_at, when a retryable job may be claimed next, narrows
**            only claim_next: not modelled.)
**   release  LSQ_SQL_RELEASE / LPG_SQL_RELEASE: WHERE owner, fence match,
**            done = 0 (neither until nor the queue's state is checked);
**            SET owner = NULL, until = 0, fence kept.  When it stored, the
**            attempt is given back (LSQ_SQL_Q_GIVE_BACK, LPG_SQL_RELEASE's
**            g): base = base + 1 while base < fence.
**   cancel   cancel_body / LPG_Q_SQL_CANCEL: refused for a done, discarded
**            or cancelled job; else state = 3.  owner, until and fence are
**            kept: the holder's renew, complete and fail are then refused
**            (not ended fails), its release still passes.
**   retry    retry_body / LPG_Q_SQL_RETRY: refused while the job is open
**            (not done, state 0) and held (until > now); else LSQ_SQL_Q_REOPEN
**            (done = 0, owner = NULL, until = 0, fence kept) and
**            LSQ_SQL_Q_RESET (state 0, base = fence: a fresh budget).
**   clock    the callers' now, non-decreasing (the contract's clock).
**
** A write by a worker carries its owner and a fence: the fence of its
** latest claim, or the one before it (a late write from an earlier
** generation of that worker, such as a stalled thread that wakes up).
**
** Ghost state (not in the database; what the properties are judged by):
** issued, the highest fence handed out; ended, set when the job is
** completed, discarded or cancelled and cleared by retry; per worker its
** fence, the fence before it, the deadline it was given (now + ttl at its
** claim or renew) and whether it believes it holds the lease (cleared by
** its own complete, fail and release, and by a retry, which takes the job
** from any holder).
**
** The properties, asserted in the step that would break them:
**   P1  a claim is granted only while no worker holds a live lease on the
**       job (its deadline > now), so no two workers hold one at once;
**   P2  a write (renew, complete, fail, release) is stored only when its
**       fence is the newest handed out: no older fence is ever stored;
**   P3  a job's fence only grows, and a fence is handed out once;
**   P4  a job that ended (completed, discarded, cancelled) is never handed
**       out again until a retry reopens it;
**   P5  renew, complete and fail are stored only under a live lease: an
**       expired lease is never revived nor written under.
**
** The mutants (check.sh defines one of these to build a broken model,
** which must fail the check):
**   MUT_CLAIM_LIVE        claim compares until with now + ttl (?4) for
**                         now (?3): a live lease is claimable (P1);
**   MUT_RENEW_REVIVE      renew checks until >= now: at now == until an
**                         expired lease is revived (P5);
**   MUT_COMPLETE_NOFENCE  complete skips the fence check (P2);
**   MUT_CLAIM_ENDED       claim skips LSQ_SQL_NOT_ENDED (P4);
**   MUT_RELEASE_FENCE0    release resets fence = 0 (P3).
*/

#ifndef JOBS
#define JOBS 1
#endif
#ifndef TMAX
#define TMAX 4
#endif
#ifndef MAXATT
#define MAXATT 2
#endif
#ifndef FMAX
#define FMAX 4
#endif
#define W 3

/* The database: the jobs row and its queue row. */
byte owner[JOBS];    /* 0: NULL, else the worker 1..W */
byte until[JOBS];
byte fence[JOBS];
bit done[JOBS];
byte qstate[JOBS];   /* 0 open, 1 completed, 2 discarded, 3 cancelled */
byte base[JOBS];     /* base_fence: attempts made = fence - base */

byte now;            /* the callers' clock */

/* Ghost state. */
byte issued[JOBS];   /* the highest fence handed out */
byte seen[JOBS];     /* the fence after the last step (P3) */
bit ended[JOBS];     /* completed, discarded or cancelled, and not retried */
byte wf[W * JOBS];   /* a worker's fence from its latest claim (0: none) */
byte wold[W * JOBS]; /* the fence of its claim before that (0: none) */
byte wu[W * JOBS];   /* the deadline it was given */
bit wheld[W * JOBS]; /* it believes it holds the lease */

#define K(w, j) ((w) * JOBS + (j))

/* The guards the mutants change. */
#ifdef MUT_CLAIM_LIVE
#define CLAIM_FREE(j, ttl) (until[j] <= now + (ttl))
#else
#define CLAIM_FREE(j, ttl) (until[j] <= now)
#endif
#ifdef MUT_RENEW_REVIVE
#define RENEW_LIVE(j) (until[j] >= now)
#else
#define RENEW_LIVE(j) (until[j] > now)
#endif
#ifdef MUT_COMPLETE_NOFENCE
#define COMPLETE_FENCE(j, f) true
#else
#define COMPLETE_FENCE(j, f) (fence[j] == (f))
#endif
#ifdef MUT_CLAIM_ENDED
#define CLAIM_NOT_ENDED(j) true
#else
#define CLAIM_NOT_ENDED(j) (qstate[j] < 2)
#endif
#ifdef MUT_RELEASE_FENCE0
#define RELEASE_FENCE(j) fence[j] = 0
#else
#define RELEASE_FENCE(j) skip
#endif

/* The guard renew, complete and fail share, but for the lease's until. */
#define HELD_BY(j, w, f) (owner[j] == (w) + 1 && fence[j] == (f) && !done[j] && qstate[j] < 2)

/* Attempts made: max(0, fence - base). */
#define ATTEMPTS(j) (fence[j] > base[j] -> fence[j] - base[j] : 0)

/* Worker v holds a live lease on job j, as it believes. */
#define LIVE(v, j) (wheld[K(v, j)] && wu[K(v, j)] > now)

/* P3, after every step: the fence never went down. */
inline fence_grows(j) {
  assert(fence[j] >= seen[j]);
  seen[j] = fence[j]
}

/* P2 and P5 for a stored write by worker w with fence f (P5 when `lease`:
** renew, complete and fail need a live lease; release does not). */
inline stored_write(j, w, f, lease) {
  assert(f >= issued[j]);
  assert(!lease || wu[K(w, j)] > now)
}

inline claim(j, w, ttl) {
  /* lsq_q_expired: a lease that expired unreported counts first. */
  if
  :: owner[j] != 0 && !done[j] && qstate[j] == 0 && until[j] <= now && ATTEMPTS(j) >= MAXATT ->
     qstate[j] = 2;
     ended[j] = 1
  :: else -> skip
  fi;
  if
  :: !done[j] && CLAIM_FREE(j, ttl) && CLAIM_NOT_ENDED(j) ->
     assert(!LIVE(0, j) && !LIVE(1, j) && !LIVE(2, j));   /* P1 */
     assert(!ended[j]);                                     /* P4 */
     fence[j] = fence[j] + 1;
     owner[j] = w + 1;
     until[j] = now + ttl;
     assert(fence[j] > issued[j]);                          /* P3: a new fence */
     issued[j] = fence[j];
     wold[K(w, j)] = wf[K(w, j)];
     wf[K(w, j)] = fence[j];
     wu[K(w, j)] = until[j];
     wheld[K(w, j)] = 1
  :: else -> skip
  fi;
  fence_grows(j)
}

inline renew(j, w, f, ttl) {
  if
  :: HELD_BY(j, w, f) && RENEW_LIVE(j) ->
     stored_write(j, w, f, 1);
     until[j] = now + ttl;
     if
     :: f == wf[K(w, j)] -> wu[K(w, j)] = until[j]
     :: else -> skip
     fi
  :: else -> skip
  fi;
  fence_grows(j)
}

inline complete(j, w, f) {
  if
  :: owner[j] == w + 1 && COMPLETE_FENCE(j, f) && !done[j] && qstate[j] < 2 && until[j] > now ->
     stored_write(j, w, f, 1);
     done[j] = 1;
     qstate[j] = 1;
     ended[j] = 1;
     wheld[K(w, j)] = 0
  :: else -> skip
  fi;
  fence_grows(j)
}

inline fail(j, w, f, no_attempt) {
  if
  :: HELD_BY(j, w, f) && until[j] > now ->
     stored_write(j, w, f, 1);
     owner[j] = 0;
     until[j] = 0;
     wheld[K(w, j)] = 0;
     att = ATTEMPTS(j);
     if
     :: no_attempt -> if :: att > 0 -> att-- :: else -> skip fi
     :: !no_attempt && att >= MAXATT -> qstate[j] = 2; ended[j] = 1
     :: else -> skip
     fi;
     base[j] = fence[j] - att;
     att = 0
  :: else -> skip
  fi;
  fence_grows(j)
}

inline release(j, w, f) {
  if
  :: owner[j] == w + 1 && fence[j] == f && !done[j] ->
     stored_write(j, w, f, 0);
     owner[j] = 0;
     until[j] = 0;
     if
     :: base[j] < fence[j] -> base[j] = base[j] + 1
     :: else -> skip
     fi;
     RELEASE_FENCE(j);
     wheld[K(w, j)] = 0
  :: else -> skip
  fi;
  fence_grows(j)
}

inline cancel(j) {
  if
  :: !done[j] && qstate[j] < 2 ->
     qstate[j] = 3;
     ended[j] = 1
  :: else -> skip
  fi;
  fence_grows(j)
}

inline retry(j) {
  if
  :: done[j] || qstate[j] != 0 || until[j] <= now ->
     done[j] = 0;
     owner[j] = 0;
     until[j] = 0;
     qstate[j] = 0;
     base[j] = fence[j];
     ended[j] = 0;
     wheld[K(0, j)] = 0;   /* a retry takes the job from any holder */
     wheld[K(1, j)] = 0;
     wheld[K(2, j)] = 0
  :: else -> skip
  fi;
  fence_grows(j)
}

/* Pick a job into j. */
inline pick(j) {
  j = 0;
  do
  :: j < JOBS - 1 -> j++
  :: break
  od
}

/* A fence worker w may write with: that of its latest claim, or the one
** before (a late write of an earlier generation). */
inline token(j, w, f) {
  if
  :: f = wf[K(w, j)]
  :: wold[K(w, j)] > 0 -> f = wold[K(w, j)]
  fi
}

proctype worker(byte w) {
  byte j, f, ttl, att;
  bit na;
end:
  do
  :: atomic {
       pick(j);
       if
       :: fence[j] < FMAX ->
          if :: ttl = 1 :: ttl = 2 fi;
          claim(j, w, ttl)
       :: else -> skip   /* the model's bound: no more claims */
       fi;
       j = 0; ttl = 0
     }
  :: atomic {
       pick(j);
       if
       :: wf[K(w, j)] > 0 ->
          token(j, w, f);
          if :: ttl = 1 :: ttl = 2 fi;
          renew(j, w, f, ttl)
       :: else -> skip   /* it never claimed this job */
       fi;
       j = 0; f = 0; ttl = 0
     }
  :: atomic {
       pick(j);
       if
       :: wf[K(w, j)] > 0 ->
          token(j, w, f);
          complete(j, w, f)
       :: else -> skip   /* it never claimed this job */
       fi;
       j = 0; f = 0
     }
  :: atomic {
       pick(j);
       if
       :: wf[K(w, j)] > 0 ->
          token(j, w, f);
          if :: na = 0 :: na = 1 fi;
          fail(j, w, f, na)
       :: else -> skip   /* it never claimed this job */
       fi;
       j = 0; f = 0; na = 0
     }
  :: atomic {
       pick(j);
       if
       :: wf[K(w, j)] > 0 ->
          token(j, w, f);
          release(j, w, f)
       :: else -> skip   /* it never claimed this job */
       fi;
       j = 0; f = 0
     }
  od
}

active proctype admin() {
  byte j;
end:
  do
  :: atomic { pick(j); cancel(j); j = 0 }
  :: atomic { pick(j); retry(j); j = 0 }
  od
}

active proctype clock() {
end:
  do
  :: atomic { now < TMAX -> now++ }
  od
}

init {
  atomic {
    run worker(0);
    run worker(1);
    run worker(2)
  }
}
