/*
** test_queue.c: the job queue's C API (lease.h, "The job queue"): what the
** Lua specs 30-32 check through the binding, here on the C functions the
** binding calls, including their argument checks and the "not supported"
** error of a backend without the queue.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lease.h"
#include "lease_int.h"

#define FIXTURE_PREFIX "test_queue"
#include "fixtures.h"

/* Enqueue id with the given priority and run_at (NAN: none). */
static void enqueue(lease_db *db, const char *id, int64_t priority, double run_at) {
  lease_new_job j;
  int reason = -1;
  lease_new_job_default(&j);
  j.id = id;
  j.id_len = LEASE_NTS;
  j.priority = priority;
  if (!isnan(run_at)) {
    j.has_run_at = 1;
    j.run_at = run_at;
  }
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
}

/* claim_next of one job in the default queue: its id, or "" when empty. */
static const char *next_id(lease_db *db, double now, int64_t *fence) {
  lease_job job;
  int count = -1;
  assert_int_equal(lease_claim_next(db, NULL, 0, "w", LEASE_NTS, now, 10, 1, &job, &count, NULL),
                   LEASE_OK);
  if (count == 0) return "";
  if (fence) *fence = job.fence;
  return job.id;
}

static void test_order_and_run_at(void **state) {
  lease_db *db = *state;
  enqueue(db, "late", 0, 5);
  enqueue(db, "plain", 0, NAN);
  enqueue(db, "urgent", -1, NAN);
  assert_string_equal(next_id(db, 4.5, NULL), "urgent");
  assert_string_equal(next_id(db, 4.5, NULL), "plain");
  assert_string_equal(next_id(db, 4.999, NULL), "");
  assert_string_equal(next_id(db, 5, NULL), "late");
}

static void test_fail_retry_cancel_prune(void **state) {
  lease_db *db = *state;
  lease_fail_opts o = {0, 0, 0};
  lease_job_error errs[LEASE_ERRORS_KEPT];
  lease_row row;
  int64_t fence = 0, deleted = -1;
  int status = -1, reason = -1, found = 0, count = -1;
  double run_at = 0;
  lease_new_job j;
  lease_new_job_default(&j);
  j.id = "a";
  j.id_len = LEASE_NTS;
  j.max_attempts = 2;
  j.payload = "p\0q";
  j.payload_len = 3;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  assert_string_equal(next_id(db, 0, &fence), "a");
  /* a stale fence is refused, nothing recorded */
  assert_int_equal(lease_fail(db, "a", LEASE_NTS, "w", LEASE_NTS, fence + 1, 1, "x", LEASE_NTS,
                              NULL, &status, &run_at, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_STALE_FENCE);
  assert_int_equal(lease_errors(db, "a", LEASE_NTS, errs, LEASE_ERRORS_KEPT, &count), LEASE_OK);
  assert_int_equal(count, 0);
  assert_int_equal(lease_fail(db, "a", LEASE_NTS, "w", LEASE_NTS, fence, 1, "boom", LEASE_NTS,
                              &o, &status, &run_at, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(status, LEASE_STATUS_RETRYABLE);
  assert_true(run_at >= 1.9 && run_at <= 2.1);
  assert_int_equal(lease_state(db, "a", LEASE_NTS, 1, &row, &found), LEASE_OK);
  assert_int_equal(found, 1);
  assert_int_equal(row.status, LEASE_STATUS_RETRYABLE);
  assert_int_equal(row.payload_len, 3);
  assert_memory_equal(row.payload, "p\0q", 3);
  assert_string_equal(next_id(db, 3, &fence), "a");
  assert_int_equal(lease_fail(db, "a", LEASE_NTS, "w", LEASE_NTS, fence, 4, NULL, 0, NULL,
                              &status, &run_at, &reason), LEASE_OK);
  assert_int_equal(status, LEASE_STATUS_DISCARDED);
  assert_int_equal(lease_errors(db, "a", LEASE_NTS, errs, LEASE_ERRORS_KEPT, &count), LEASE_OK);
  assert_int_equal(count, 2);
  assert_string_equal(errs[0].message, "boom");
  assert_null(errs[1].message);
  assert_int_equal(lease_claim(db, "a", LEASE_NTS, "v", LEASE_NTS, 5, 10, &fence, &reason),
                   LEASE_OK);
  assert_int_equal(reason, LEASE_DISCARDED);
  assert_int_equal(lease_retry(db, "a", LEASE_NTS, 5, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_string_equal(next_id(db, 5, &fence), "a");
  assert_int_equal(fence, 3);
  assert_int_equal(lease_cancel(db, "a", LEASE_NTS, 6, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(lease_complete(db, "a", LEASE_NTS, "w", LEASE_NTS, fence, 7, "r", LEASE_NTS,
                                  &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_CANCELLED);
  /* held until 15: prune leaves it, also with a before past 15 while the
  ** database has seen no now past it (its clock mark); after one, it goes */
  assert_int_equal(lease_prune(db, 10, NULL, 0, 0, &deleted), LEASE_OK);
  assert_int_equal(deleted, 0);
  assert_int_equal(lease_prune(db, 16, NULL, 0, LEASE_STATUS_CANCELLED, &deleted), LEASE_OK);
  assert_int_equal(deleted, 0);
  enqueue(db, "z", 0, NAN);
  assert_int_equal(lease_claim(db, "z", LEASE_NTS, "w", LEASE_NTS, 16, 10, &fence, &reason), LEASE_OK);
  assert_int_equal(lease_prune(db, 16, NULL, 0, LEASE_STATUS_CANCELLED, &deleted), LEASE_OK);
  assert_int_equal(deleted, 1);
}

static void test_list_and_counts(void **state) {
  lease_db *db = *state;
  lease_filter f;
  lease_row rows[4];
  lease_counts c;
  int count = -1;
  enqueue(db, "a", 0, NAN);
  enqueue(db, "b", 0, 100);
  lease_filter_default(&f);
  f.now = 1;
  f.status = LEASE_STATUS_SCHEDULED;
  assert_int_equal(lease_list(db, &f, 4, rows, &count), LEASE_OK);
  assert_int_equal(count, 1);
  assert_string_equal(rows[0].id, "b");
  assert_int_equal(rows[0].seq, 2);
  /* the contract's view: both ready (until <= now), whatever their run_at */
  f.status = 0;
  f.which = LEASE_LIST_READY;
  assert_int_equal(lease_list(db, &f, 4, rows, &count), LEASE_OK);
  assert_int_equal(count, 2);
  f.which = LEASE_LIST_HELD;
  assert_int_equal(lease_list(db, &f, 4, rows, &count), LEASE_OK);
  assert_int_equal(count, 0);
  assert_int_equal(lease_count(db, 1, NULL, 0, &c), LEASE_OK);
  assert_int_equal(c.total, 2);
  assert_int_equal(c.available, 1);
  assert_int_equal(c.scheduled, 1);
  assert_int_equal(lease_count(db, 1, "other", LEASE_NTS, &c), LEASE_OK);
  assert_int_equal(c.total, 0);
}

/* Enqueue id with key in queue (NULL: default); the reason. */
static int enqueue_key(lease_db *db, const char *id, const char *key, const char *queue) {
  lease_new_job j;
  int reason = -1;
  lease_new_job_default(&j);
  j.id = id;
  j.id_len = LEASE_NTS;
  j.key = key;
  j.key_len = LEASE_NTS;
  j.queue = queue;
  j.queue_len = LEASE_NTS;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  return reason;
}

static void test_unique_key(void **state) {
  lease_db *db = *state;
  lease_row row;
  const char *other;
  size_t len = 99;
  int found = 0, reason = -1, count = -1;
  lease_new_job js[2];
  assert_int_equal(enqueue_key(db, "a", "k", NULL), LEASE_GRANTED);
  assert_null(lease_duplicate_id(db, &len));
  assert_int_equal(len, 0);
  assert_int_equal(enqueue_key(db, "b", "k", NULL), LEASE_DUPLICATE);
  other = lease_duplicate_id(db, &len);
  assert_non_null(other);
  assert_int_equal(len, 1);
  assert_memory_equal(other, "a", 1);
  assert_string_equal(lease_reason_name(LEASE_DUPLICATE), "duplicate");
  /* nothing stored; the next call clears the holder */
  assert_int_equal(lease_state(db, "b", LEASE_NTS, 0, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
  assert_null(lease_duplicate_id(db, NULL));
  assert_int_equal(lease_state(db, "a", LEASE_NTS, 0, &row, &found), LEASE_OK);
  assert_int_equal(row.key_len, 1);
  assert_memory_equal(row.key, "k", 1);
  assert_int_equal(enqueue_key(db, "a", "k", NULL), LEASE_EXISTS);
  assert_int_equal(enqueue_key(db, "c", "k", "other"), LEASE_GRANTED);
  assert_int_equal(enqueue_key(db, "d", NULL, NULL), LEASE_GRANTED);
  assert_int_equal(lease_state(db, "d", LEASE_NTS, 0, &row, &found), LEASE_OK);
  assert_null(row.key);
  /* cancelled: the key is free; the retry of the cancelled job is refused */
  assert_int_equal(lease_cancel(db, "a", LEASE_NTS, 1, &reason), LEASE_OK);
  assert_int_equal(enqueue_key(db, "b", "k", NULL), LEASE_GRANTED);
  assert_int_equal(lease_retry(db, "a", LEASE_NTS, 2, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_DUPLICATE);
  other = lease_duplicate_id(db, &len);
  assert_int_equal(len, 1);
  assert_memory_equal(other, "b", 1);
  /* enqueue_many skips the held key and the one taken earlier in the batch */
  lease_new_job_default(&js[0]);
  lease_new_job_default(&js[1]);
  js[0].id = "e";
  js[1].id = "f";
  js[0].id_len = js[1].id_len = LEASE_NTS;
  js[0].key = js[1].key = "k2";
  js[0].key_len = js[1].key_len = LEASE_NTS;
  assert_int_equal(lease_enqueue_many(db, js, 2, &count), LEASE_OK);
  assert_int_equal(count, 1);
  /* bad keys */
  js[0].id = "g";
  js[0].key = "";
  assert_int_equal(lease_enqueue(db, &js[0], &reason), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "key must be 1 to 1024 bytes, got 0");
  js[0].key = "x";
  js[0].key_len = LEASE_KEY_MAX + 1;
  assert_int_equal(lease_enqueue_many(db, js, 1, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "job 1: key must be 1 to 1024 bytes, got 1025");
  assert_int_equal(lease_state(db, "g", LEASE_NTS, 0, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
}

static void test_misuse(void **state) {
  lease_db *db = *state;
  lease_new_job j;
  lease_filter f;
  lease_row row;
  lease_job job;
  int reason, count, found;
  int64_t deleted;
  lease_new_job_default(&j);
  j.id = "a";
  j.id_len = LEASE_NTS;
  j.max_attempts = 0;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "max_attempts must be at least 1");
  j.max_attempts = 1;
  j.queue = "";
  j.queue_len = 0;
  assert_int_equal(lease_enqueue_many(db, &j, 1, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "job 1: queue must be 1 to 255 bytes, got 0");
  assert_int_equal(lease_state(db, "a", LEASE_NTS, INFINITY, &row, &found), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "now must be a finite number or NaN");
  assert_int_equal(lease_claim_next(db, "q", LEASE_NTS, "w", LEASE_NTS, 0, 0, 1, &job, &count,
                                    NULL), LEASE_MISUSE);
  assert_int_equal(lease_prune(db, NAN, NULL, 0, 0, &deleted), LEASE_MISUSE);
  assert_int_equal(lease_prune(db, 1, NULL, 0, LEASE_STATUS_RUNNING, &deleted), LEASE_MISUSE);
  lease_filter_default(&f);
  f.status = 99;
  assert_int_equal(lease_list(db, &f, 1, &row, &count), LEASE_MISUSE);
  f.status = 0;
  f.which = LEASE_LIST_BLOCKED + 1;
  assert_int_equal(lease_list(db, &f, 1, &row, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "unknown list kind 5");
  assert_int_equal(lease_cancel(db, "a", LEASE_NTS, INFINITY, &reason), LEASE_MISUSE);
  /* nothing was written */
  assert_int_equal(lease_state(db, "a", LEASE_NTS, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
  enqueue(db, "b", 0, 5);
  row = must_state(db, "b");   /* a NaN now: the row without a status */
  assert_int_equal(row.status, LEASE_STATUS_UNKNOWN);
  assert_int_equal(row.queue_len, 7);
  assert_memory_equal(row.queue, "default", 7);
  assert_true(row.run_at == 5);
  assert_int_equal(lease_state(db, "b", LEASE_NTS, 1, &row, &found), LEASE_OK);
  assert_int_equal(row.status, LEASE_STATUS_SCHEDULED);
}

/* A job's timeout: stored and read back; one that is not a finite number
** of seconds > 0 refused with nothing written (0 is none). */
static void test_timeout(void **state) {
  lease_db *db = *state;
  const double bad[] = {-1, NAN, INFINITY, -INFINITY};
  lease_new_job j;
  lease_row row;
  lease_job job;
  int reason, count, found, i;
  lease_new_job_default(&j);
  assert_true(j.timeout == 0);
  j.id = "t";
  j.id_len = LEASE_NTS;
  for (i = 0; i < 4; i++) {
    j.timeout = bad[i];
    assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_MISUSE);
    assert_string_equal(lease_errmsg(db), "timeout must be a finite number of seconds > 0");
    assert_int_equal(lease_enqueue_many(db, &j, 1, &count), LEASE_MISUSE);
    assert_string_equal(lease_errmsg(db), "job 1: timeout must be a finite number of seconds > 0");
  }
  assert_int_equal(lease_state(db, "t", LEASE_NTS, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
  j.timeout = 2.5;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  enqueue(db, "u", 1, NAN);
  row = must_state(db, "t");
  assert_true(row.timeout == 2.5);
  row = must_state(db, "u");
  assert_true(row.timeout == 0);
  assert_int_equal(lease_claim_next(db, "default", LEASE_NTS, "w", LEASE_NTS, 1, 10, 1, &job,
                                    &count, NULL), LEASE_OK);
  assert_int_equal(count, 1);
  assert_int_equal(job.id_len, 1);
  assert_memory_equal(job.id, "t", 1);
  assert_true(job.timeout == 2.5);
}

/* A backend without the queue's members: the core says so by name. */
/* Dependencies through the C API: a bad after refused (LEASE_MISUSE,
** named), a missing one refused with lease_enqueue_refused naming it and
** nothing stored, then the wait, lease_after, and the release. */
static void test_after(void **state) {
  lease_db *db = *state;
  const char *after[] = {"p", "nope"};
  const char *self[] = {"p", "c"};
  lease_new_job j;
  lease_dep deps[4];
  lease_row row;
  lease_counts n;
  int reason, count, found, job, at, why;
  int64_t fence;
  lease_new_job_default(&j);
  j.id = "p";
  j.id_len = LEASE_NTS;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  j.id = "c";
  j.after = self;
  j.n_after = 2;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "after[2] is the job's own id");
  assert_int_equal(lease_enqueue_many(db, &j, 1, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "job 1: after[2] is the job's own id");
  j.n_after = -1;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_MISUSE);
  j.after = after;
  j.n_after = 2;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_MISSING);
  assert_int_equal(lease_enqueue_refused(db, &job, &at, &why), 1);
  assert_int_equal(job, 0);
  assert_int_equal(at, 1);
  assert_int_equal(why, LEASE_MISSING);
  assert_int_equal(lease_state(db, "c", LEASE_NTS, 1, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
  assert_int_equal(lease_enqueue_refused(db, NULL, NULL, NULL), 0);
  j.n_after = 1;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(lease_state(db, "c", LEASE_NTS, 1, &row, &found), LEASE_OK);
  assert_int_equal(row.status, LEASE_STATUS_WAITING);
  assert_int_equal(lease_after(db, "c", LEASE_NTS, 1, deps, 4, &count), LEASE_OK);
  assert_int_equal(count, 1);
  assert_memory_equal(deps[0].id, "p", 1);
  assert_int_equal(deps[0].status, LEASE_STATUS_AVAILABLE);
  assert_int_equal(lease_count(db, 1, NULL, 0, &n), LEASE_OK);
  assert_int_equal(n.waiting, 1);
  assert_int_equal(lease_claim(db, "c", LEASE_NTS, "w", LEASE_NTS, 1, 10, &fence, &reason),
                   LEASE_OK);
  assert_int_equal(reason, LEASE_WAITING);
  assert_int_equal(lease_claim(db, "p", LEASE_NTS, "w", LEASE_NTS, 1, 10, &fence, &reason),
                   LEASE_OK);
  assert_int_equal(lease_complete(db, "p", LEASE_NTS, "w", LEASE_NTS, fence, 2, NULL, 0, &reason),
                   LEASE_OK);
  assert_int_equal(lease_state(db, "c", LEASE_NTS, 3, &row, &found), LEASE_OK);
  assert_int_equal(row.status, LEASE_STATUS_AVAILABLE);
}

static void test_not_supported(void **state) {
  lease_db *db = *state;
  lease__backend bare = *db->be;
  const lease__backend *real = db->be;
  int reason = -1;
  bare.cancel = NULL;
  bare.name = "bare";
  db->be = &bare;
  assert_int_equal(lease_cancel(db, "a", LEASE_NTS, 0, &reason), LEASE_ERROR);
  assert_string_equal(lease_errmsg(db), "cancel is not supported by the bare backend");
  db->be = real;
}

static void test_backoff(void **state) {
  int64_t a;
  (void)state;
  for (a = 1; a <= 60; a++) {
    double d = lease_backoff(a), base = a > 13 ? LEASE_BACKOFF_CAP : ldexp(1.0, (int)(a - 1));
    if (base > LEASE_BACKOFF_CAP) base = LEASE_BACKOFF_CAP;
    assert_true(d >= 0.9 * base && d <= 1.1 * base);
  }
  assert_true(lease_backoff(INT64_MAX) <= 1.1 * LEASE_BACKOFF_CAP);
  assert_true(lease_backoff(INT64_MAX) >= 0.9 * LEASE_BACKOFF_CAP);
  assert_string_equal(lease_status_name(LEASE_STATUS_CANCELLED), "cancelled");
  assert_string_equal(lease_reason_name(LEASE_DISCARDED), "discarded");
}

/* The events ledger: off by default, kept to events_keep, lease_events'
** paging and its argument checks, and the options' checks. */
static void test_events(void **state) {
  lease_db *db = *state, *ev = NULL;
  lease_options o;
  lease_event out[8];
  lease_event_filter f = {NULL, 0, 0};
  int count = -1, i;
  enqueue(db, "off", 0, NAN);
  assert_int_equal(lease_events(db, NULL, 8, out, &count), LEASE_OK);
  assert_int_equal(count, 0);                       /* off by default */
  lease_options_default(&o);
  o.events_keep = -1;
  assert_int_equal(lease_open(fresh_path(), &o, &ev), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(ev), "events_keep must be >= 0 (0: no events)");
  lease_close(ev);
  o.events_keep = 3;
  o.events_max_age = NAN;
  assert_int_equal(lease_open(fresh_path(), &o, &ev), LEASE_MISUSE);
  lease_close(ev);
  o.events_max_age = 0;
  assert_int_equal(lease_open(fresh_path(), &o, &ev), LEASE_OK);
  for (i = 0; i < 5; i++) {
    char id[16];
    snprintf(id, sizeof id, "e%d", i);
    enqueue(ev, id, 0, NAN);
  }
  assert_int_equal(lease_events(ev, NULL, 8, out, &count), LEASE_OK);
  assert_int_equal(count, 3);                       /* the newest 3 */
  assert_string_equal(out[0].id, "e2");
  assert_string_equal(out[2].id, "e4");
  assert_int_equal(out[2].op, LEASE_EV_ENQUEUE);
  assert_int_equal(out[2].reason, LEASE_GRANTED);
  assert_string_equal(lease_event_name(out[2].op), "enqueue");
  f.since = out[0].seq;
  assert_int_equal(lease_events(ev, &f, 1, out, &count), LEASE_OK);
  assert_int_equal(count, 1);
  assert_string_equal(out[0].id, "e3");
  f.id = "e4";
  f.id_len = LEASE_NTS;
  assert_int_equal(lease_events(ev, &f, 8, out, &count), LEASE_OK);
  assert_int_equal(count, 1);
  /* bad arguments: named, nothing read */
  assert_int_equal(lease_events(ev, NULL, 0, out, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(ev), "max must be at least 1");
  assert_int_equal(lease_events(ev, NULL, 1, NULL, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(ev), "out and count must not be NULL");
  f.id = NULL;
  f.since = -1;
  assert_int_equal(lease_events(ev, &f, 1, out, &count), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(ev), "since must be >= 0");
  f.since = 0;
  f.id = "";
  f.id_len = 0;
  assert_int_equal(lease_events(ev, &f, 1, out, &count), LEASE_MISUSE);
  assert_string_equal(lease_event_name(0), "unknown");
  assert_string_equal(lease_event_name(LEASE_EV_END), "unknown");
  lease_close(ev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_order_and_run_at, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_fail_retry_cancel_prune, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_list_and_counts, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_unique_key, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_misuse, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_timeout, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_after, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_not_supported, setup_db, teardown_db),
    cmocka_unit_test(test_backoff),
    cmocka_unit_test_setup_teardown(test_events, setup_db, teardown_db),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
