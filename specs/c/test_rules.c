/*
** test_rules.c: the core's rules (src/core/lease_rules.c) driven directly:
** a table of the facts a backend reads about a job -> the reason (or the
** failure) each write gets, one row per step of the order, and the rows
** where a fact a write does not ask must be ignored.  Also lease_cancel's
** and lease_retry's reasons, the fence gate's, prune's state of a status,
** and what follows a failed attempt or an expired lease.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lease.h"
#include "lease_int.h"

/* Short names for the table. */
enum { CL = LEASE__CLAIM, RE = LEASE__RENEW, CO = LEASE__COMPLETE, RL = LEASE__RELEASE };
#define OPEN LEASE__Q_OPEN
#define DISC LEASE__Q_DISCARDED
#define CANC LEASE__Q_CANCELLED
#define WAIT LEASE__Q_WAITING
#define FMAX LEASE__BLOCKED_FENCE_MAX
#define BID LEASE__BLOCKED_BAD_ID

/* One row: op and facts (found, done, qstate, other_owner, other_fence,
** blocked, live, expired) -> judge's rc and reason; refusal's differ only
** when judge grants (then LEASE_MISMATCH, "passes every check"). */
typedef struct rule_row {
  int op;
  lease__facts f;
  int rc, reason;
  const char *msg;   /* a substring of the failure's message, or NULL */
} rule_row;

static const rule_row rows[] = {
  /* missing comes first, whatever else is set */
  {CL, {0, 1, CANC, 1, 1, FMAX, 1, 0}, LEASE_OK, LEASE_MISSING, NULL},
  {RE, {0, 0, OPEN, 0, 0, 0, 0, 1}, LEASE_OK, LEASE_MISSING, NULL},
  {RL, {0, 0, OPEN, 1, 0, 0, 0, 0}, LEASE_OK, LEASE_MISSING, NULL},
  /* done, before the queue's ends and the owner */
  {CL, {1, 1, CANC, 0, 0, 0, 0, 1}, LEASE_OK, LEASE_DONE, NULL},
  {CO, {1, 1, DISC, 1, 1, BID, 0, 1}, LEASE_OK, LEASE_DONE, NULL},
  {RL, {1, 1, OPEN, 1, 0, 0, 0, 0}, LEASE_OK, LEASE_DONE, NULL},
  /* the queue's ends, before the owner and the fence */
  {CL, {1, 0, DISC, 0, 0, 0, 1, 0}, LEASE_OK, LEASE_DISCARDED, NULL},
  {RE, {1, 0, DISC, 1, 1, 0, 0, 1}, LEASE_OK, LEASE_DISCARDED, NULL},
  {CL, {1, 0, CANC, 0, 0, 0, 1, 0}, LEASE_OK, LEASE_CANCELLED, NULL},
  {CO, {1, 0, CANC, 1, 1, FMAX, 0, 1}, LEASE_OK, LEASE_CANCELLED, NULL},
  /* waiting for its dependencies, after the ends, before owner, fence and lease */
  {CL, {1, 0, WAIT, 0, 0, FMAX, 1, 0}, LEASE_OK, LEASE_WAITING, NULL},
  {CO, {1, 0, WAIT, 1, 1, 0, 0, 1}, LEASE_OK, LEASE_WAITING, NULL},
  {RL, {1, 0, WAIT, 0, 0, 0, 0, 0}, LEASE_OK, LEASE_GRANTED, NULL},
  /* release ignores the queue's ends: the owner decides */
  {RL, {1, 0, DISC, 1, 0, 0, 0, 0}, LEASE_OK, LEASE_NOT_OWNER, NULL},
  {RL, {1, 0, CANC, 0, 1, 0, 0, 0}, LEASE_OK, LEASE_STALE_FENCE, NULL},
  {RL, {1, 0, CANC, 0, 0, 0, 0, 0}, LEASE_OK, LEASE_GRANTED, NULL},
  /* owner, then fence, before a blocked job and the lease */
  {RE, {1, 0, OPEN, 1, 1, FMAX, 0, 1}, LEASE_OK, LEASE_NOT_OWNER, NULL},
  {CO, {1, 0, OPEN, 0, 1, FMAX, 0, 1}, LEASE_OK, LEASE_STALE_FENCE, NULL},
  /* claim asks neither owner nor fence */
  {CL, {1, 0, OPEN, 1, 1, 0, 1, 0}, LEASE_OK, LEASE_HELD, NULL},
  {CL, {1, 0, OPEN, 1, 1, 0, 0, 1}, LEASE_OK, LEASE_GRANTED, NULL},
  /* a blocked job fails, before held and expired, with the write's verb */
  {CL, {1, 0, OPEN, 0, 0, FMAX, 1, 0}, LEASE_RANGE, LEASE_GRANTED, "cannot claim this job"},
  {RE, {1, 0, OPEN, 0, 0, BID, 0, 1}, LEASE_MISMATCH, LEASE_GRANTED, "cannot write to this job"},
  {CO, {1, 0, OPEN, 0, 0, FMAX, 0, 1}, LEASE_RANGE, LEASE_GRANTED, "cannot write to this job"},
  /* release may write a blocked job */
  {RL, {1, 0, OPEN, 0, 0, FMAX, 0, 0}, LEASE_OK, LEASE_GRANTED, NULL},
  /* the lease: held for a claim, expired for renew and complete */
  {CL, {1, 0, OPEN, 0, 0, 0, 1, 0}, LEASE_OK, LEASE_HELD, NULL},
  {RE, {1, 0, OPEN, 0, 0, 0, 0, 1}, LEASE_OK, LEASE_EXPIRED, NULL},
  {CO, {1, 0, OPEN, 0, 0, 0, 0, 1}, LEASE_OK, LEASE_EXPIRED, NULL},
  /* a live lease is no refusal of renew or complete; expiry none of release */
  {RE, {1, 0, OPEN, 0, 0, 0, 1, 0}, LEASE_OK, LEASE_GRANTED, NULL},
  {CO, {1, 0, OPEN, 0, 0, 0, 1, 0}, LEASE_OK, LEASE_GRANTED, NULL},
  {RL, {1, 0, OPEN, 0, 0, 0, 0, 1}, LEASE_OK, LEASE_GRANTED, NULL},
};

/* A handle to record failures on. */
static lease_db *open_db(void) {
  lease_db *db = NULL;
  assert_int_equal(lease_open(":memory:", NULL, &db), LEASE_OK);
  return db;
}

/* Every row through lease__judge, then lease__refusal. */
static void test_write_order(void **state) {
  lease_db *db = open_db();
  lease__write w = {0};
  size_t i;
  (void)state;
  w.id = "j7";
  w.id_len = 2;
  for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const rule_row *r = &rows[i];
    int reason = -1, rc;
    rc = lease__judge(db, (lease__op)r->op, &r->f, &reason);
    assert_int_equal(rc, r->rc);
    if (rc == LEASE_OK) assert_int_equal(reason, r->reason);
    if (r->msg) assert_non_null(strstr(lease_errmsg(db), r->msg));
    reason = -1;
    w.op = (lease__op)r->op;
    rc = lease__refusal(db, &w, &r->f, &reason);
    if (r->rc == LEASE_OK && r->reason == LEASE_GRANTED) {
      assert_int_equal(rc, LEASE_MISMATCH);
      assert_non_null(strstr(lease_errmsg(db), "passes every check"));
      assert_non_null(strstr(lease_errmsg(db), r->op == CL ? "guarded claim of j7"
                                                           : "guarded update of j7"));
    } else {
      assert_int_equal(rc, r->rc);
      if (rc == LEASE_OK) assert_int_equal(reason, r->reason);
    }
  }
  lease_close(db);
}

/* lease_cancel: missing, done, discarded, cancelled, else granted. */
static void test_cancel(void **state) {
  static const struct { lease__facts f; int reason; } c[] = {
    {{0, 1, CANC, 0, 0, 0, 0, 0}, LEASE_MISSING},
    {{1, 1, CANC, 0, 0, 0, 0, 0}, LEASE_DONE},
    {{1, 0, DISC, 0, 0, 0, 0, 0}, LEASE_DISCARDED},
    {{1, 0, CANC, 0, 0, 0, 0, 0}, LEASE_CANCELLED},
    {{1, 0, OPEN, 0, 0, FMAX, 1, 0}, LEASE_GRANTED},
    {{1, 0, WAIT, 0, 0, 0, 0, 0}, LEASE_GRANTED},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof c / sizeof c[0]; i++) assert_int_equal(lease__cancel_reason(&c[i].f), c[i].reason);
}

/* The gate's reason and prune's state of a status. */
static void test_gate_and_prune(void **state) {
  (void)state;
  assert_int_equal(lease__gate_reason(1), LEASE_GRANTED);
  assert_int_equal(lease__gate_reason(0), LEASE_STALE_FENCE);
  assert_int_equal(lease__prune_state(0), 0);
  assert_int_equal(lease__prune_state(LEASE_STATUS_COMPLETED), LEASE__Q_COMPLETED);
  assert_int_equal(lease__prune_state(LEASE_STATUS_DISCARDED), LEASE__Q_DISCARDED);
  assert_int_equal(lease__prune_state(LEASE_STATUS_CANCELLED), LEASE__Q_CANCELLED);
  /* the SQL text's numbers are the enum's */
  assert_string_equal(LEASE__Q_OPEN_S, "0");
  assert_string_equal(LEASE__Q_CANCELLED_S, "3");
  assert_string_equal(LEASE__Q_WAITING_S, "4");
}

/* lease_retry: missing; held only when open, not done and live. */
static void test_retry(void **state) {
  static const struct { lease__facts f; int reason; } c[] = {
    {{0, 0, OPEN, 0, 0, 0, 1, 0}, LEASE_MISSING},
    {{1, 0, OPEN, 0, 0, 0, 1, 0}, LEASE_HELD},
    {{1, 0, OPEN, 0, 0, 0, 0, 1}, LEASE_GRANTED},
    {{1, 1, LEASE__Q_COMPLETED, 0, 0, 0, 1, 0}, LEASE_GRANTED},
    {{1, 0, DISC, 0, 0, 0, 1, 0}, LEASE_GRANTED},
    {{1, 0, CANC, 0, 0, 0, 1, 0}, LEASE_GRANTED},
    {{1, 0, OPEN, 1, 1, FMAX, 0, 0}, LEASE_GRANTED},
    {{1, 0, WAIT, 0, 0, 0, 0, 0}, LEASE_GRANTED},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof c / sizeof c[0]; i++) assert_int_equal(lease__retry_reason(&c[i].f), c[i].reason);
}

/* BACKOFF: run_at is now + lease_backoff(attempt), whose jitter keeps it
** within [0.9, 1.1] times `base` seconds after now. */
#define BACKOFF (-1.0)
#define RETR LEASE_STATUS_RETRYABLE
#define GONE LEASE_STATUS_DISCARDED

/* One row: facts (attempt, max_attempts, now, no_attempt, has_run_at,
** run_at) -> what follows (qstate, status, attempt, run_at, finished_at;
** NAN: none). */
typedef struct next_row {
  lease__fail_facts f;
  lease__next want;
  double base;       /* BACKOFF rows: the backoff's base, seconds */
} next_row;

static const next_row fail_rows[] = {
  /* a counted attempt below the budget: open, again after the backoff */
  {{1, 3, 10, 0, 0, 0}, {OPEN, RETR, 1, BACKOFF, NAN}, 1},
  {{2, 3, 10, 0, 0, 0}, {OPEN, RETR, 2, BACKOFF, NAN}, 2},
  /* ... or at run_at when given */
  {{2, 3, 10, 0, 1, 500}, {OPEN, RETR, 2, 500, NAN}, 0},
  /* the last attempt (attempt >= max_attempts): discarded at now, run_at ignored */
  {{3, 3, 10, 0, 0, 0}, {DISC, GONE, 3, NAN, 10}, 0},
  {{1, 1, 10, 0, 1, 500}, {DISC, GONE, 1, NAN, 10}, 0},
  {{4, 3, 10, 0, 0, 0}, {DISC, GONE, 4, NAN, 10}, 0},
  /* given back: uncounted, at once or at run_at, whatever the budget */
  {{1, 3, 10, 1, 0, 0}, {OPEN, RETR, 0, 10, NAN}, 0},
  {{3, 3, 10, 1, 0, 0}, {OPEN, RETR, 2, 10, NAN}, 0},
  {{2, 3, 10, 1, 1, 500}, {OPEN, RETR, 1, 500, NAN}, 0},
  /* never below 0 */
  {{0, 3, 10, 1, 0, 0}, {OPEN, RETR, 0, 10, NAN}, 0},
};

static const next_row expiry_rows[] = {
  /* below the budget: open, claimable at once, the attempt counted */
  {{1, 2, 10, 0, 0, 0}, {OPEN, RETR, 1, 10, NAN}, 0},
  /* the last attempt: discarded at now */
  {{2, 2, 10, 0, 0, 0}, {DISC, GONE, 2, NAN, 10}, 0},
  {{5, 2, 10, 0, 0, 0}, {DISC, GONE, 5, NAN, 10}, 0},
  /* fail's options mean nothing to an expiry */
  {{1, 2, 10, 1, 1, 500}, {OPEN, RETR, 1, 10, NAN}, 0},
  {{2, 2, 10, 1, 1, 500}, {DISC, GONE, 2, NAN, 10}, 0},
};

/* A time as the table has it: equal, or both NaN. */
static void assert_time(double got, double want) {
  if (isnan(want)) assert_true(isnan(got));
  else assert_true(got == want);
}

/* Check table[0..n) through fn. */
static void check_next(const next_row *table, size_t n,
                       void (*fn)(const lease__fail_facts *, lease__next *)) {
  size_t i;
  for (i = 0; i < n; i++) {
    const next_row *r = &table[i];
    lease__next got = {-1, -1, -1, -2, -2};
    fn(&r->f, &got);
    assert_int_equal(got.qstate, r->want.qstate);
    assert_int_equal(got.status, r->want.status);
    assert_int_equal(got.attempt, r->want.attempt);
    if (r->want.run_at == BACKOFF) {
      assert_true(got.run_at >= r->f.now + 0.9 * r->base);
      assert_true(got.run_at <= r->f.now + 1.1 * r->base);
    } else {
      assert_time(got.run_at, r->want.run_at);
    }
    assert_time(got.finished_at, r->want.finished_at);
  }
}

/* What follows a failed attempt, every row of the decision. */
static void test_after_fail(void **state) {
  (void)state;
  check_next(fail_rows, sizeof fail_rows / sizeof fail_rows[0], lease__after_fail);
}

/* What follows an expired lease found by the next claim. */
static void test_after_expiry(void **state) {
  (void)state;
  check_next(expiry_rows, sizeof expiry_rows / sizeof expiry_rows[0], lease__after_expiry);
}

/* Every statement of the shared list (lease_statements.h) has its SQL on
** each backend built, and a number outside the list has none. */
static void test_shared_statements(void **state) {
  const lease__backend *b[] = {&lease__sqlite, &lease__pg};
  size_t k;
  int i;
  (void)state;
  for (k = 0; k < sizeof b / sizeof b[0]; k++) {
    if (!b[k]->statement) continue;   /* PostgreSQL not built */
    for (i = 0; i < LEASE__ST_COUNT; i++) {
      const char *sql = b[k]->statement((lease__stmt)i);
      assert_non_null(sql);
      assert_true(strlen(sql) > 0);
    }
    assert_null(b[k]->statement(LEASE__ST_COUNT));
  }
  assert_string_equal(lease__sqlite.statement(LEASE__ST_ENQUEUE),
                      "INSERT OR IGNORE INTO jobs(id, fence) VALUES (?1, coalesce(?2, 0))");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_write_order),
    cmocka_unit_test(test_cancel),
    cmocka_unit_test(test_gate_and_prune),
    cmocka_unit_test(test_retry),
    cmocka_unit_test(test_after_fail),
    cmocka_unit_test(test_after_expiry),
    cmocka_unit_test(test_shared_statements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
