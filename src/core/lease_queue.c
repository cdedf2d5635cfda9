/*
** lease_queue.c: the core of the job-queue part of the C API (lease.h,
** "The job queue"): argument checks, the default backoff and the status
** words; and the operations that read or take jobs by their queue data:
** enqueue, state, claim_next, list, count; and lease_wait, with the wake
** signal (lease__wake) the writes that make a job claimable send after
** they committed.  Each public function checks
** its arguments (a bad one is LEASE_MISUSE naming it, nothing touched),
** resolves LEASE_NTS lengths, and calls the backend member of the same
** name, or, for a member a backend may leave NULL, fails with LEASE_ERROR
** "not supported by the <name> backend".
*/
#include "lease.h"
#include "lease_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEASE_WORD_(name, word) word,
static const char *const status_words[] = {LEASE_STATUS_MAP(LEASE_WORD_)};
#undef LEASE_WORD_

/* See lease.h. */
const char *lease_status_name(int status) {
  if (status < 0 || status >= (int)(sizeof status_words / sizeof status_words[0]))
    return "unknown";
  return status_words[status];
}

/* ===================================================================== */
/* The default backoff                                                    */
/* ===================================================================== */

/* A per-thread xorshift64* generator, seeded on first use from the clock
** and the address of its state (distinct per thread). */
static _Thread_local uint64_t rng_state;

static uint64_t next_random(void) {
  uint64_t x = rng_state;
  if (x == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
        (uint64_t)(uintptr_t)&rng_state;
    if (x == 0) x = 0x9E3779B97F4A7C15u;
  }
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1Du;
}

/* See lease_int.h: the top 53 bits of next_random over 2^53. */
double lease__random(void) {
  return (double)(next_random() >> 11) / 9007199254740992.0;
}

/* See lease.h.  Exponential from 1 second, doubling per attempt, until
** it reaches LEASE_BACKOFF_CAP seconds; then times a jitter from
** [0.9, 1.1], at the cap too, so that jobs failing together do not retry
** together whatever their attempt. */
double lease_backoff(int64_t attempt) {
  double base, jitter;
  if (attempt < 1) attempt = 1;
  base = attempt > 13 ? LEASE_BACKOFF_CAP : ldexp(1.0, (int)(attempt - 1));
  if (base > LEASE_BACKOFF_CAP) base = LEASE_BACKOFF_CAP;
  jitter = 0.9 + 0.2 * lease__random();
  return base * jitter;
}

/* ===================================================================== */
/* Argument checks                                                        */
/* ===================================================================== */

/* Start a call: lease__begin, then refuse a backend without member fn. */
#define BEGIN(db, fn)                                                              \
  LEASE__HOLD(db);                                                                 \
  do {                                                                             \
    int rc_ = lease__begin(db);                                                    \
    if (rc_ != LEASE_OK) return rc_;                                               \
    if (!(db)->be->fn)                                                             \
      return lease__fail((db), LEASE_ERROR, "%s is not supported by the %s backend", \
                         #fn, (db)->be->name);                                     \
  } while (0)

/* Resolve and check an optional byte string (NULL stays NULL; empty
** allowed) against the backend's length limit. */
static int check_optional(lease_db *db, const char *what, const char *s, size_t *len) {
  size_t limit = db->be->max_length(db);
  if (!s) {
    *len = 0;
    return LEASE_OK;
  }
  if (*len == LEASE_NTS) *len = strlen(s);
  if (*len > limit)
    return lease__fail(db, LEASE_MISUSE, "%s is %zu bytes, more than %s's limit of %zu", what,
                       *len, db->be->name, limit);
  return LEASE_OK;
}

/* Resolve and check a queue name: NULL is "default"; else 1 to
** LEASE_QUEUE_MAX bytes. */
static int check_queue(lease_db *db, const char *what, const char **q, size_t *len) {
  if (!*q) {
    *q = "default";
    *len = 7;
    return LEASE_OK;
  }
  if (*len == LEASE_NTS) *len = strlen(*q);
  if (*len == 0 || *len > LEASE_QUEUE_MAX)
    return lease__fail(db, LEASE_MISUSE, "%s must be 1 to %d bytes, got %zu", what,
                       LEASE_QUEUE_MAX, *len);
  return LEASE_OK;
}

/* Check a finite time argument. */
static int check_finite(lease_db *db, const char *what, double t) {
  if (!isfinite(t)) return lease__fail(db, LEASE_MISUSE, "%s must be a finite number", what);
  return LEASE_OK;
}

/* The most dependencies one job may list (lease_new_job's after). */
#define AFTER_MAX 10000

/* Check out's after (named by prefix): n_after within range, each id
** non-empty, storable and not the job's own id.  The resolved lengths go
** to an array the core keeps until the call ends (out->after_lens). */
static int check_after(lease_db *db, const char *prefix, lease_new_job *out) {
  char what[64];
  size_t *lens;
  int k;
  if (out->n_after == 0) {
    out->after = NULL;
    out->after_lens = NULL;
    return LEASE_OK;
  }
  if (out->n_after < 0 || out->n_after > AFTER_MAX || !out->after)
    return lease__fail(db, LEASE_MISUSE, "%safter must hold n_after ids (0 to %d)", prefix,
                       AFTER_MAX);
  if (!(lens = malloc((size_t)out->n_after * sizeof *lens)))
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (k = 0; k < out->n_after; k++) {
    lens[k] = out->after_lens ? out->after_lens[k] : LEASE_NTS;
    snprintf(what, sizeof what, "%safter[%d]", prefix, k + 1);
    if (lease__check_bytes(db, what, out->after[k], &lens[k])) break;
    if (lens[k] == out->id_len && memcmp(out->after[k], out->id, lens[k]) == 0) {
      lease__fail(db, LEASE_MISUSE, "%s is the job's own id", what);
      break;
    }
  }
  if (k < out->n_after) {
    free(lens);
    return db->rc;
  }
  out->after_lens = lens;
  return LEASE_OK;
}

/* Free what check_after kept for n checked jobs. */
static void free_after(lease_new_job *js, int n) {
  int i;
  for (i = 0; i < n; i++) free((void *)(uintptr_t)js[i].after_lens);
}

/* See lease_int.h. */
int lease__dep_in_batch(const lease_new_job *jobs, int i, int k) {
  const char *id = jobs[i].after[k];
  size_t len = jobs[i].after_lens[k];
  int m;
  for (m = 0; m < i; m++)
    if (jobs[m].id_len == len && memcmp(jobs[m].id, id, len) == 0) return m;
  return -1;
}

/* Check job (named by prefix, e.g. "job 3: ") into *out, lengths resolved. */
static int check_new_job(lease_db *db, const char *prefix, const lease_new_job *job,
                         lease_new_job *out) {
  char what[64];
  *out = *job;
  snprintf(what, sizeof what, "%sid", prefix);
  if (lease__check_bytes(db, what, out->id, &out->id_len)) return db->rc;
  snprintf(what, sizeof what, "%spayload", prefix);
  if (check_optional(db, what, out->payload, &out->payload_len)) return db->rc;
  snprintf(what, sizeof what, "%squeue", prefix);
  if (check_queue(db, what, &out->queue, &out->queue_len)) return db->rc;
  if (out->has_run_at && !isfinite(out->run_at))
    return lease__fail(db, LEASE_MISUSE, "%srun_at must be a finite number", prefix);
  if (out->has_run_at) lease__clock_also(db, "run_at", out->run_at);
  if (out->max_attempts < 1)
    return lease__fail(db, LEASE_MISUSE, "%smax_attempts must be at least 1", prefix);
  if (out->key) {
    if (out->key_len == LEASE_NTS) out->key_len = strlen(out->key);
    if (out->key_len == 0 || out->key_len > LEASE_KEY_MAX)
      return lease__fail(db, LEASE_MISUSE, "%skey must be 1 to %d bytes, got %zu", prefix,
                         LEASE_KEY_MAX, out->key_len);
  } else {
    out->key_len = 0;
  }
  if (out->timeout != 0 && !(isfinite(out->timeout) && out->timeout > 0))
    return lease__fail(db, LEASE_MISUSE, "%stimeout must be a finite number of seconds > 0",
                       prefix);
  return check_after(db, prefix, out);
}

/* See lease_int.h. */
int lease__check_new_job(lease_db *db, const char *prefix, const lease_new_job *job,
                         lease_new_job *out) {
  return check_new_job(db, prefix, job, out);
}

/* Refuse what the backend leaves out (a NULL member). */
static int unsupported(lease_db *db, const char *what) {
  return lease__fail(db, LEASE_ERROR, "%s is not supported by the %s backend", what,
                     db->be->name);
}

/* ===================================================================== */
/* The operations                                                         */
/* ===================================================================== */

/* See lease.h. */
void lease_new_job_default(lease_new_job *job) {
  if (!job) return;
  memset(job, 0, sizeof *job);
  job->max_attempts = LEASE_MAX_ATTEMPTS_DEFAULT;
}

/* See lease.h. */
void lease_filter_default(lease_filter *f) {
  if (!f) return;
  memset(f, 0, sizeof *f);
  f->results = 1;
}

/* See lease.h (contract step 2): one job. */
int lease_enqueue(lease_db *db, const lease_new_job *job, int *reason) {
  LEASE__HOLD(db);
  lease_new_job j;
  int n = 0, rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  db->refused = 0;
  if (!job) return lease__fail(db, LEASE_MISUSE, "job must not be NULL");
  if (check_new_job(db, "", job, &j)) return db->rc;
  rc = db->be->enqueue(db, &j, 1, &n);
  free_after(&j, 1);
  if (rc == LEASE_OK && n == 1) lease__wake(db, j.queue, j.queue_len);
  if (rc == LEASE_OK && reason)
    *reason = db->refused ? db->refused : n == 1 ? LEASE_GRANTED
              : db->has_dup ? LEASE_DUPLICATE : LEASE_EXISTS;
  return rc;
}

/* See lease.h. */
int lease_enqueue_refused(lease_db *db, int *job, int *after, int *reason) {
  if (!db || !db->refused) return 0;
  if (job) *job = db->refused_job;
  if (after) *after = db->refused_after;
  if (reason) *reason = db->refused;
  return 1;
}

/* See lease.h. */
int lease_after(lease_db *db, const char *id, size_t id_len, double now, lease_dep *out, int max,
                int *count) {
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (!out || !count) return lease__fail(db, LEASE_MISUSE, "out and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (check_finite(db, "now", now)) return db->rc;
  if (!db->be->after) return LEASE_OK;   /* a backend without dependencies keeps none */
  return db->be->after(db, id, id_len, now, out, max, count);
}

/* See lease.h (contract step 2 for each job, one transaction). */
int lease_enqueue_many(lease_db *db, const lease_new_job *jobs, int n, int *inserted) {
  LEASE__HOLD(db);
  lease_new_job *js;
  int i, added = 0, one_queue = 1, rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (inserted) *inserted = 0;
  db->refused = 0;
  if (n < 0 || (n > 0 && !jobs)) return lease__fail(db, LEASE_MISUSE, "jobs must hold n entries");
  if (n == 0) return LEASE_OK;
  if (!(js = malloc((size_t)n * sizeof *js))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0; i < n; i++) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "job %d: ", i + 1);
    if (check_new_job(db, prefix, &jobs[i], &js[i])) {
      free_after(js, i);
      free(js);
      return db->rc;
    }
  }
  rc = db->be->enqueue(db, js, n, &added);
  db->has_dup = 0;   /* the holder of one skipped job among many: not reported */
  if (rc == LEASE_OK && inserted) *inserted = added;
  if (rc == LEASE_OK && added > 0) {
    for (i = 1; i < n && one_queue; i++)
      one_queue = js[i].queue_len == js[0].queue_len &&
                  memcmp(js[i].queue, js[0].queue, js[0].queue_len) == 0;
    /* one queue: its waiters; jobs of several: every waiter looks */
    lease__wake(db, one_queue ? js[0].queue : NULL, one_queue ? js[0].queue_len : 0);
  }
  free_after(js, n);
  free(js);
  if (rc == LEASE_OK && db->refused && inserted) *inserted = 0;
  return rc;
}

/* See lease.h (contract step 3). */
int lease_state(lease_db *db, const char *id, size_t id_len, double now, lease_row *row,
                int *found) {
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (!row || !found) return lease__fail(db, LEASE_MISUSE, "row and found must not be NULL");
  *found = 0;
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (isinf(now)) return lease__fail(db, LEASE_MISUSE, "now must be a finite number or NaN");
  if (lease__clock_cached(db, now)) return db->rc;
  return db->be->state(db, id, id_len, now, row, found);
}

/* See lease.h. */
int lease_errors(lease_db *db, const char *id, size_t id_len, lease_job_error *out, int max,
                 int *count) {
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (!out || !count) return lease__fail(db, LEASE_MISUSE, "out and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (!db->be->errors) return LEASE_OK;   /* a backend without the queue keeps none */
  return db->be->errors(db, id, id_len, out, max, count);
}

/* claim_next's arguments checked into *w (a claim with its queue). */
static int check_claim_next(lease_db *db, lease__write *w, const char *queue, size_t queue_len,
                            const char *owner, size_t owner_len, double now, double ttl,
                            int max, lease_job *jobs, int *count) {
  const char *why;
  if (count) *count = 0;
  if (!jobs || !count) return lease__fail(db, LEASE_MISUSE, "jobs and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  memset(w, 0, sizeof *w);
  w->op = LEASE__CLAIM;
  if (check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (lease__check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (lease_check_time(now, ttl, &why)) return lease__fail(db, LEASE_MISUSE, "%s", why);
  w->owner = owner;
  w->owner_len = owner_len;
  w->now = now;
  w->until = now + ttl;
  db->clock_now = now;
  w->queue = queue;
  w->queue_len = queue_len;
  return LEASE_OK;
}

/* 1 when queue is db's limited queue, the only one it claimed from. */
static int only_limited(const lease_db *db, const char *queue, size_t queue_len) {
  return !db->limited_several && db->limited_queue_len == queue_len &&
         memcmp(db->limited_queue, queue, queue_len) == 0;
}

/* claim_next's reason: the backend's refusal (why), else granted when
** jobs were taken, empty when none was ready. */
static void claim_reason(int *reason, int why, int count) {
  if (reason) *reason = why != LEASE_GRANTED ? why : count > 0 ? LEASE_GRANTED : LEASE_EMPTY;
}

/* See lease.h. */
int lease_claim_next(lease_db *db, const char *queue, size_t queue_len, const char *owner,
                     size_t owner_len, double now, double ttl, int max, lease_job *jobs,
                     int *count, int *reason) {
  LEASE__HOLD(db);
  lease__write w;
  int why = LEASE_GRANTED, rc = lease__begin(db);
  if (reason) *reason = LEASE_EMPTY;
  if (rc != LEASE_OK) return rc;
  if (check_claim_next(db, &w, queue, queue_len, owner, owner_len, now, ttl, max, jobs, count))
    return db->rc;
  db->claim_limited = 0;
  if ((rc = db->be->claim_next(db, &w, max, jobs, count, &why)) == LEASE_OK) {
    claim_reason(reason, why, *count);
    lease__claimed_from(db, w.queue, w.queue_len);
  }
  return rc;
}

/* See lease.h.  Every argument of both steps is checked before the
** backend writes anything. */
int lease_complete_claim_next(lease_db *db, const char *id, size_t id_len, const char *owner,
                              size_t owner_len, int64_t fence, double now, const char *result,
                              size_t result_len, const char *queue, size_t queue_len, double ttl,
                              int max, lease_job *jobs, int *count, int *reason,
                              int *claim_reason_out) {
  LEASE__HOLD(db);
  lease__write wc, wn;
  int why = LEASE_GRANTED, rc = lease__begin(db);
  if (claim_reason_out) *claim_reason_out = LEASE_EMPTY;
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (lease__check_complete(db, &wc, id, id_len, owner, owner_len, fence, now, result,
                            result_len))
    return db->rc;
  if (check_claim_next(db, &wn, queue, queue_len, owner, owner_len, now, ttl, max, jobs, count))
    return db->rc;
  if (!db->be->complete_claim_next) return unsupported(db, "complete_claim_next");
  db->claim_limited = 0;
  rc = db->be->complete_claim_next(db, &wc, &wn, max, jobs, count, reason, &why);
  if (rc == LEASE_OK) {
    claim_reason(claim_reason_out, why, *count);
    lease__claimed_from(db, wn.queue, wn.queue_len);
    /* the slot the complete freed, unless the claim took one of the queue */
    if (!(*count > 0 && only_limited(db, wn.queue, wn.queue_len))) lease__wake_limited(db);
  }
  return rc;
}

/* See lease.h.  Every argument of both steps is checked before the
** backend writes anything. */
int lease_complete_many_claim_next(lease_db *db, const char *owner, size_t owner_len,
                                   double now, const lease_result *items, int n, int *reasons,
                                   int *stored, const char *queue, size_t queue_len, double ttl,
                                   int max, lease_job *jobs, int *count, int *claim_reason_out) {
  LEASE__HOLD(db);
  lease__write wc, wn;
  int why = LEASE_GRANTED, kept = 0, rc = lease__begin(db);
  if (claim_reason_out) *claim_reason_out = LEASE_EMPTY;
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (lease__check_complete_many(db, &wc, owner, owner_len, now, items, n, stored))
    return db->rc;
  if (check_claim_next(db, &wn, queue, queue_len, owner, owner_len, now, ttl, max, jobs, count))
    return db->rc;
  if (!db->be->complete_many_claim_next) return unsupported(db, "complete_many_claim_next");
  db->claim_limited = 0;
  rc = db->be->complete_many_claim_next(db, &wc, items, n, reasons, &kept, &wn, max, jobs,
                                        count, &why);
  if (rc == LEASE_OK) {
    claim_reason(claim_reason_out, why, *count);
    lease__claimed_from(db, wn.queue, wn.queue_len);
    if (stored) *stored = kept;
    /* the slots the completes freed, unless the claim took as many of the queue */
    if (kept > 0 && !(*count >= kept && only_limited(db, wn.queue, wn.queue_len)))
      lease__wake_limited(db);
  }
  return rc;
}

/* See lease.h. */
int lease_fail(lease_db *db, const char *id, size_t id_len, const char *owner, size_t owner_len,
               int64_t fence, double now, const char *message, size_t message_len,
               const lease_fail_opts *opts, int *status, double *run_at, int *reason) {
  static const lease_fail_opts none;
  lease__write w;
  int st = 0;
  double at = NAN;
  BEGIN(db, fail);
  if (status) *status = 0;
  if (run_at) *run_at = NAN;
  if (!opts) opts = &none;
  memset(&w, 0, sizeof w);
  w.op = LEASE__COMPLETE;
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (lease__check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (check_finite(db, "now", now)) return db->rc;
  if (check_optional(db, "message", message, &message_len)) return db->rc;
  if (opts->has_run_at && check_finite(db, "run_at", opts->run_at)) return db->rc;
  w.id = id;
  w.id_len = id_len;
  w.owner = owner;
  w.owner_len = owner_len;
  w.fence = fence;
  w.now = now;
  db->clock_now = now;
  if (opts->has_run_at) lease__clock_also(db, "run_at", opts->run_at);
  w.message = message;
  w.message_len = message_len;
  if (db->be->fail(db, &w, opts, &st, &at, reason) != LEASE_OK) return db->rc;
  if (st == LEASE_STATUS_RETRYABLE) lease__wake(db, NULL, 0);
  else if (st == LEASE_STATUS_DISCARDED) lease__wake_limited(db);
  if (status) *status = st;
  if (run_at) *run_at = at;
  return LEASE_OK;
}

/* See lease.h. */
int lease_retry(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  int why = LEASE_GRANTED;
  BEGIN(db, retry);
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (check_finite(db, "now", now)) return db->rc;
  db->clock_now = now;
  if (db->be->retry(db, id, id_len, now, &why) != LEASE_OK) return db->rc;
  if (why == LEASE_GRANTED) lease__wake(db, NULL, 0);
  if (reason) *reason = why;
  return LEASE_OK;
}

/* See lease.h. */
int lease_cancel(lease_db *db, const char *id, size_t id_len, double now, int *reason) {
  BEGIN(db, cancel);
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (check_finite(db, "now", now)) return db->rc;
  db->clock_now = now;
  return db->be->cancel(db, id, id_len, now, reason);
}

/* See lease.h. */
int lease_prune(lease_db *db, double before, const char *queue, size_t queue_len, int status,
                int64_t *deleted) {
  int64_t n = 0;
  BEGIN(db, prune);
  if (deleted) *deleted = 0;
  if (isnan(before)) return lease__fail(db, LEASE_MISUSE, "before must be a number");
  lease__clock_also(db, "before", before);
  db->clock_read = 1;   /* the mark stands for now: lease__prune_held */
  if (queue && check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (status != 0 && status != LEASE_STATUS_COMPLETED && status != LEASE_STATUS_DISCARDED &&
      status != LEASE_STATUS_CANCELLED)
    return lease__fail(db, LEASE_MISUSE,
                       "status must be completed, discarded or cancelled (or 0 for all three)");
  if (db->be->prune(db, before, queue, queue_len, status, &n) != LEASE_OK) return db->rc;
  if (deleted) *deleted = n;
  return LEASE_OK;
}

/* See lease.h. */
int lease_list(lease_db *db, const lease_filter *f, int max, lease_row *rows, int *count) {
  LEASE__HOLD(db);
  lease_filter g;
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (!f || !rows || !count) return lease__fail(db, LEASE_MISUSE, "f, rows and count must not be NULL");
  g = *f;
  if (g.which < LEASE_LIST_ALL || g.which > LEASE_LIST_BLOCKED)
    return lease__fail(db, LEASE_MISUSE, "unknown list kind %d", g.which);
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (g.status < 0 || g.status > LEASE_STATUS_WAITING)
    return lease__fail(db, LEASE_MISUSE, "unknown status %d", g.status);
  if (g.queue && check_queue(db, "queue", &g.queue, &g.queue_len)) return db->rc;
  if (isnan(g.now)) return lease__fail(db, LEASE_MISUSE, "now must be a number");
  if (lease__clock_cached(db, g.now)) return db->rc;
  return db->be->list(db, &g, max, rows, count);
}

/* See lease.h. */
int lease_count(lease_db *db, double now, const char *queue, size_t queue_len,
                lease_counts *out) {
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (!out) return lease__fail(db, LEASE_MISUSE, "out must not be NULL");
  if (isnan(now)) return lease__fail(db, LEASE_MISUSE, "now must be a number");
  if (queue && check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (lease__clock_cached(db, now)) return db->rc;
  memset(out, 0, sizeof *out);
  return db->be->count(db, now, queue, queue_len, out);
}

/* ===================================================================== */
/* Queue control                                                          */
/* ===================================================================== */

/* Write queue's paused flag. */
static int set_paused(lease_db *db, const char *queue, size_t queue_len, int paused) {
  BEGIN(db, set_queue);
  if (check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (db->be->set_queue(db, queue, queue_len, 0, paused, NULL) != LEASE_OK) return db->rc;
  if (!paused) lease__wake(db, queue, queue_len);
  return LEASE_OK;
}

/* See lease.h. */
int lease_pause(lease_db *db, const char *queue, size_t queue_len) {
  return set_paused(db, queue, queue_len, 1);
}

/* See lease.h. */
int lease_resume(lease_db *db, const char *queue, size_t queue_len) {
  return set_paused(db, queue, queue_len, 0);
}

/* See lease.h. */
int lease_limit(lease_db *db, const char *queue, size_t queue_len,
                const lease_queue_limits *limits) {
  static const lease_queue_limits none;
  BEGIN(db, set_queue);
  if (!limits) limits = &none;
  if (check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (limits->concurrency < 0)
    return lease__fail(db, LEASE_MISUSE, "concurrency must be at least 1 (0 for none)");
  if (limits->rate < 0) return lease__fail(db, LEASE_MISUSE, "rate must be at least 1 (0 for none)");
  if (limits->rate > 0 && !(isfinite(limits->per) && limits->per > 0))
    return lease__fail(db, LEASE_MISUSE, "per must be a finite number above 0 with a rate");
  if (limits->rate == 0 && limits->per != 0)
    return lease__fail(db, LEASE_MISUSE, "per needs a rate");
  if (db->be->set_queue(db, queue, queue_len, 1, 0, limits) != LEASE_OK) return db->rc;
  lease__wake(db, queue, queue_len);
  return LEASE_OK;
}

/* See lease.h. */
int lease_queues(lease_db *db, double now, lease_queue_info *out, int max, int *count) {
  BEGIN(db, queues);
  if (count) *count = 0;
  if (!out || !count) return lease__fail(db, LEASE_MISUSE, "out and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (isnan(now)) return lease__fail(db, LEASE_MISUSE, "now must be a number");
  return db->be->queues(db, now, out, max, count);
}

/* ===================================================================== */
/* Waiting for jobs                                                       */
/* ===================================================================== */

/* See lease_int.h. */
void lease__wake(lease_db *db, const char *queue, size_t queue_len) {
  if (db->be->wake) db->be->wake(db, queue, queue_len);
}

/* See lease_int.h. */
void lease__claimed_from(lease_db *db, const char *queue, size_t queue_len) {
  int same = db->limited_queue_len == queue_len &&
             memcmp(db->limited_queue, queue, queue_len) == 0;
  if (db->claim_limited && queue_len <= sizeof db->limited_queue) {
    if (db->limited_queue_len > 0 && !same) db->limited_several = 1;
    memcpy(db->limited_queue, queue, queue_len);
    db->limited_queue_len = queue_len;
  } else if (same && !db->limited_several) {
    db->limited_queue_len = 0;
  }
}

/* See lease_int.h. */
void lease__wake_limited(lease_db *db) {
  if (db->limited_several) lease__wake(db, NULL, 0);
  else if (db->limited_queue_len > 0) lease__wake(db, db->limited_queue, db->limited_queue_len);
}

/* Seconds on the monotonic clock. */
static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep `seconds` (> 0) without a signal to wait for: the backends that
** keep none. */
static void sleep_for(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* See lease.h.  Each round: the mark of the signals seen, then the due
** time, then a sleep until the earlier of the due time and the deadline
** that a signal after the mark cuts short.  A signal whose look finds
** nothing due (a job scheduled for later, another queue's job, a write
** of another process that was no enqueue) only starts the next round. */
int lease_wait(lease_db *db, const char *queue, size_t queue_len, double timeout, int *woken) {
  double deadline;
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (woken) *woken = 0;
  if (rc != LEASE_OK) return rc;
  if (check_queue(db, "queue", &queue, &queue_len)) return db->rc;
  if (!(timeout >= 0 && isfinite(timeout)))
    return lease__fail(db, LEASE_MISUSE, "timeout must be a finite number of seconds >= 0");
  if (!db->be->due) return unsupported(db, "wait");
  deadline = mono_now() + timeout;
  for (;;) {
    uint64_t mark = 0;
    double delay, left;
    int signalled = 0;
    if (db->be->wait_mark && (rc = db->be->wait_mark(db, &mark)) != LEASE_OK) return rc;
    if ((rc = db->be->due(db, queue, queue_len, &delay)) != LEASE_OK) return rc;
    if (delay <= 0) {
      if (woken) *woken = 1;
      return LEASE_OK;
    }
    left = deadline - mono_now();
    if (left <= 0) return LEASE_OK;
    if (delay < left) left = delay;
    if (db->be->wait_signal) {
      rc = db->be->wait_signal(db, queue, queue_len, mark, left, &signalled);
      if (rc != LEASE_OK) return rc;
    } else {
      sleep_for(left);
    }
  }
}
