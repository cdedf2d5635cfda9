/*
** test_group.c: group commit from C, with cmocka: many threads, each with
** its own handle on one file, hammer it with claims, renewals, refused and
** accepted completions, while other threads open and close handles (the
** registry joining and leaving).  Run under TSan in the tsan tree.  Checks:
** no job handed out twice, no fence handed out twice, every refusal with
** its own reason, every accepted completion stored and visible on the
** caller's own handle as soon as the call returned, and the same with group
** commit off (LEASE_OPEN_NO_GROUP_COMMIT).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lease.h"

#define FIXTURE_PREFIX "group"
#include "fixtures.h"

#define N_WORKERS 8
#define N_CHURN 2
#define N_JOBS 320
#define CHURN_ROUNDS 40

/* One worker's run: what it took, and what went wrong (0 when nothing). */
typedef struct worker {
  const char *path;
  int synchronous, flags;
  char owner[16];
  int taken[N_JOBS];     /* job index -> fence this worker got (0: none) */
  int count;
  char failure[256];     /* the first thing that went wrong */
} worker;

/* Record the first failure of a worker. */
static void fail_once(worker *w, const char *what, int rc, lease_db *db) {
  if (w->failure[0]) return;
  snprintf(w->failure, sizeof w->failure, "%s: %s (%s)", what, lease_errname(rc),
           db ? lease_errmsg(db) : "");
}

/* Open path with the worker's options. */
static lease_db *open_as(const worker *w) {
  lease_options opt;
  lease_db *db = NULL;
  lease_options_default(&opt);
  opt.synchronous = w->synchronous;
  opt.flags = w->flags;
  opt.busy_timeout_ms = 60000;
  if (lease_open(w->path, &opt, &db) != LEASE_OK) {
    lease_close(db);
    return NULL;
  }
  return db;
}

/* Check a job right after a write returned, on the caller's own handle:
** owner, fence and done as the write left them. */
static int seen(lease_db *db, const char *id, const char *owner, int64_t fence, int done) {
  lease_row row;
  int found = 0;
  if (lease_state(db, id, LEASE_NTS, NAN, &row, &found) != LEASE_OK || !found) return 0;
  return row.fence == fence && row.done == done && row.owner &&
         row.owner_len == strlen(owner) && memcmp(row.owner, owner, row.owner_len) == 0;
}

/* One job's writes: a renewal, a refused completion (stale fence), a
** refused renewal (not the owner), the completion; each outcome checked. */
static void work_on(worker *w, lease_db *db, const char *id, const lease_job *j) {
  int reason = -1, rc, k;
  if (!seen(db, id, w->owner, j->fence, 0)) fail_once(w, "claim not visible at once", 0, db);
  if ((rc = lease_renew(db, id, LEASE_NTS, w->owner, LEASE_NTS, j->fence, 2, 1e6, &reason)) !=
          LEASE_OK || reason != LEASE_GRANTED)
    fail_once(w, "renew", rc, db);
  if ((rc = lease_complete(db, id, LEASE_NTS, w->owner, LEASE_NTS, j->fence + 1, 3, "x", 1,
                           &reason)) != LEASE_OK || reason != LEASE_STALE_FENCE)
    fail_once(w, "complete with a stale fence not refused as stale_fence", rc, db);
  if ((rc = lease_renew(db, id, LEASE_NTS, "nobody", LEASE_NTS, j->fence, 3, 10, &reason)) !=
          LEASE_OK || reason != LEASE_NOT_OWNER)
    fail_once(w, "renew by another not refused as not_owner", rc, db);
  if ((rc = lease_complete(db, id, LEASE_NTS, w->owner, LEASE_NTS, j->fence, 4, w->owner,
                           LEASE_NTS, &reason)) != LEASE_OK || reason != LEASE_GRANTED)
    fail_once(w, "complete", rc, db);
  if (!seen(db, id, w->owner, j->fence, 1)) fail_once(w, "complete not visible at once", 0, db);
  w->count++;
  if (strncmp(id, "job-", 4) != 0) return;   /* a churn thread's job */
  k = atoi(id + 4);
  if (k < 0 || k >= N_JOBS) fail_once(w, "unknown id", 0, db);
  else if (w->taken[k]) fail_once(w, "the same job handed to one worker twice", 0, db);
  else w->taken[k] = (int)j->fence;
}

/* A worker thread: claim_next (two at a time) until nothing is ready. */
static void *run_worker(void *arg) {
  worker *w = arg;
  lease_db *db = open_as(w);
  lease_job jobs[2];
  char ids[2][32];
  int n = 0, i, rc;
  if (!db) {
    fail_once(w, "open", LEASE_ERROR, NULL);
    return NULL;
  }
  for (;;) {
    if ((rc = lease_claim_next(db, NULL, 0, w->owner, LEASE_NTS, 1, 1e6, 2, jobs, &n, NULL)) != LEASE_OK) {
      fail_once(w, "claim_next", rc, db);
      break;
    }
    if (n == 0) break;
    /* the ids live in the handle's memory until its next call: copy them */
    for (i = 0; i < n; i++)
      snprintf(ids[i], sizeof ids[i], "%.*s", (int)jobs[i].id_len, jobs[i].id);
    for (i = 0; i < n; i++) work_on(w, db, ids[i], &jobs[i]);
  }
  lease_close(db);
  return NULL;
}

/* A thread that opens a handle, enqueues one job of its own and closes it,
** again and again: handles joining and leaving the file's group while the
** workers write. */
static void *run_churn(void *arg) {
  worker *w = arg;
  char id[32];
  int i, rc, reason;
  for (i = 0; i < CHURN_ROUNDS; i++) {
    lease_db *db = open_as(w);
    if (!db) {
      fail_once(w, "open", LEASE_ERROR, NULL);
      return NULL;
    }
    snprintf(id, sizeof id, "%s-%d", w->owner, i);
    if ((rc = enqueue_id(db, id, LEASE_NTS, &reason)) != LEASE_OK || reason != LEASE_GRANTED)
      fail_once(w, "enqueue", rc, db);
    else w->count++;
    lease_close(db);
  }
  return NULL;
}

/* Enqueue N_JOBS jobs "job-0000".., run the workers and the churn threads,
** then check what each got against the file. */
static void hammer(int synchronous, int flags) {
  static worker ws[N_WORKERS + N_CHURN];
  pthread_t tids[N_WORKERS + N_CHURN];
  const char *path = fresh_path();
  lease_new_job jobs[N_JOBS];
  char names[N_JOBS][16];
  lease_db *db = NULL;
  lease_counts counts;
  int i, k, inserted = 0, total = 0;
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  for (k = 0; k < N_JOBS; k++) {
    snprintf(names[k], sizeof names[k], "job-%04d", k);
    lease_new_job_default(&jobs[k]);
    jobs[k].id = names[k];
    jobs[k].id_len = LEASE_NTS;
  }
  assert_int_equal(lease_enqueue_many(db, jobs, N_JOBS, &inserted), LEASE_OK);
  assert_int_equal(inserted, N_JOBS);
  memset(ws, 0, sizeof ws);
  for (i = 0; i < N_WORKERS + N_CHURN; i++) {
    ws[i].path = path;
    ws[i].synchronous = synchronous;
    ws[i].flags = flags;
    snprintf(ws[i].owner, sizeof ws[i].owner, i < N_WORKERS ? "w%d" : "churn%d", i);
    assert_int_equal(pthread_create(&tids[i], NULL, i < N_WORKERS ? run_worker : run_churn,
                                    &ws[i]), 0);
  }
  for (i = 0; i < N_WORKERS + N_CHURN; i++) pthread_join(tids[i], NULL);
  for (i = 0; i < N_WORKERS + N_CHURN; i++) {
    if (ws[i].failure[0]) fail_msg("%s: %s", ws[i].owner, ws[i].failure);
    if (i >= N_WORKERS) assert_int_equal(ws[i].count, CHURN_ROUNDS);
  }
  /* each job handed out once, with fence 1, completed by the one it went to */
  for (k = 0; k < N_JOBS; k++) {
    int holders = 0, who = -1;
    lease_row row;
    for (i = 0; i < N_WORKERS; i++)
      if (ws[i].taken[k]) {
        holders++;
        who = i;
        assert_int_equal(ws[i].taken[k], 1);
      }
    assert_int_equal(holders, 1);
    row = must_state(db, names[k]);
    assert_int_equal(row.done, 1);
    assert_int_equal(row.fence, 1);
    assert_int_equal(row.result_len, strlen(ws[who].owner));
    assert_memory_equal(row.result, ws[who].owner, row.result_len);
  }
  /* every job completed was stored, the churn threads' jobs too */
  for (i = 0; i < N_WORKERS; i++) total += ws[i].count;
  assert_int_equal(lease_count(db, 5, NULL, 0, &counts), LEASE_OK);
  assert_int_equal(counts.total, N_JOBS + N_CHURN * CHURN_ROUNDS);
  assert_int_equal(counts.done, total);
  assert_true(total >= N_JOBS);
  lease_close(db);
}

static void group_commit_normal(void **state) {
  (void)state;
  hammer(LEASE_SYNC_NORMAL, 0);
}

static void group_commit_full(void **state) {
  (void)state;
  hammer(LEASE_SYNC_FULL, 0);
}

static void group_commit_off(void **state) {
  (void)state;
  hammer(LEASE_SYNC_NORMAL, LEASE_OPEN_NO_GROUP_COMMIT);
}

/* The flag is an open option like the others (unknown bits stay
** refused); a handle with it and one without write the same file. */
static void group_commit_flag_checked(void **state) {
  lease_db *db = *state, *off = NULL, *bad = NULL;
  lease_options opt;
  int reason = -1;
  lease_options_default(&opt);
  opt.flags = LEASE_OPEN_NO_GROUP_COMMIT;
  assert_int_equal(lease_open(lease_path(db), &opt, &off), LEASE_OK);
  assert_int_equal(enqueue_id(off, "a", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(enqueue_id(db, "a", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_EXISTS);
  lease_close(off);
  opt.flags = 8;
  assert_int_equal(lease_open(fresh_path(), &opt, &bad), LEASE_MISUSE);
  lease_close(bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(group_commit_normal),
    cmocka_unit_test(group_commit_full),
    cmocka_unit_test(group_commit_off),
    cmocka_unit_test_setup_teardown(group_commit_flag_checked, setup_db, teardown_db),
  };
  return cmocka_run_group_tests_name("group commit", tests, NULL, NULL);
}
