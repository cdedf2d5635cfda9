/*
** test_tx.c: the C API of fenced side effects (lease.h: lease_with_lease,
** lease_tx_exec, lease_tx_query, lease_tx_complete, lease_tx_renew,
** lease_fence_gate, lease_tx_fence_gate): the callback commits or rolls
** back everything at once, a refused lease never calls it, and the
** statement helper binds and reads every type.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lease.h"

#define FIXTURE_PREFIX "test_tx"
#include "fixtures.h"

/* What a callback of these tests does. */
typedef struct job_ctx {
  int calls;          /* how many times the callback ran */
  int fail_with;      /* return this code after writing (0: commit) */
  int complete;       /* call lease_tx_complete first */
  int reason;         /* its reason */
} job_ctx;

/* Callback: write one row, maybe complete, then commit or fail. */
static int write_row(lease_tx *tx, void *arg) {
  job_ctx *c = arg;
  lease_value v[2];
  int64_t changes = -1;
  int rc;
  c->calls++;
  if (c->complete && (rc = lease_tx_complete(tx, "done", LEASE_NTS, &c->reason)) != LEASE_OK)
    return rc;
  memset(v, 0, sizeof v);
  v[0].type = LEASE_TYPE_TEXT;
  v[0].s = "a\0b";
  v[0].len = 3;
  v[1].type = LEASE_TYPE_INTEGER;
  v[1].i = 42;
  rc = lease_tx_exec(tx, "INSERT INTO out VALUES (?, ?)", v, 2, &changes);
  if (rc != LEASE_OK) return rc;
  assert_int_equal(changes, 1);
  return c->fail_with;
}

/* Callback: create the output table. */
static int make_table(lease_tx *tx, void *arg) {
  (void)arg;
  return lease_tx_exec(tx, "CREATE TABLE IF NOT EXISTS out(k, v)", NULL, 0, NULL);
}

/* Row callback: count rows, check the one this test writes. */
static int count_row(void *arg, int ncols, const char *const *names, const lease_value *v) {
  int *n = arg;
  assert_int_equal(ncols, 2);
  assert_string_equal(names[0], "k");
  assert_int_equal(v[0].type, LEASE_TYPE_TEXT);
  assert_int_equal(v[0].len, 3);
  assert_memory_equal(v[0].s, "a\0b", 3);
  assert_int_equal(v[1].type, LEASE_TYPE_INTEGER);
  assert_int_equal(v[1].i, 42);
  (*n)++;
  return LEASE_OK;
}

/* Callback: count the rows of out into *(int *)arg. */
static int count_rows(lease_tx *tx, void *arg) {
  *(int *)arg = 0;
  return lease_tx_query(tx, "SELECT k, v FROM out", NULL, 0, count_row, arg);
}

/* A held job "j" (owner A, until 130) and the table out. */
static int64_t held_job(lease_db *db) {
  int64_t fence = 0;
  int reason = -1;
  assert_int_equal(enqueue_id(db, "j", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(lease_claim(db, "j", LEASE_NTS, "A", LEASE_NTS, 100, 30, &fence, &reason), LEASE_OK);
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 101, make_table, NULL,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  return fence;
}

/* Rows in out, read inside a with_lease of the held job. */
static int rows_now(lease_db *db, int64_t fence) {
  int n = -1, reason = -1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 101, count_rows, &n,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  return n;
}

static void commits_rows_and_complete_together(void **state) {
  lease_db *db = *state;
  int64_t fence = held_job(db);
  job_ctx c = {0, LEASE_OK, 0, -1};
  int reason = -1;
  assert_int_equal(rows_now(db, fence), 0);
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 110, write_row, &c,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(c.calls, 1);
  assert_int_equal(rows_now(db, fence), 1);
  c.complete = 1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 110, write_row, &c,
                                    &reason), LEASE_OK);
  assert_int_equal(c.reason, LEASE_GRANTED);
  assert_int_equal(must_state(db, "j").done, 1);
}

static void refused_lease_never_calls(void **state) {
  lease_db *db = *state;
  int64_t fence = held_job(db);
  job_ctx c = {0, LEASE_OK, 0, -1};
  int reason = -1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 130, write_row, &c,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_EXPIRED);
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "B", LEASE_NTS, fence, 110, write_row, &c,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_NOT_OWNER);
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence - 1, 110, write_row,
                                    &c, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_STALE_FENCE);
  assert_int_equal(lease_with_lease(db, "x", LEASE_NTS, "A", LEASE_NTS, fence, 110, write_row, &c,
                                    &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_MISSING);
  assert_int_equal(c.calls, 0);
  assert_int_equal(rows_now(db, fence), 0);
}

static void failing_callback_rolls_back(void **state) {
  lease_db *db = *state;
  int64_t fence = held_job(db);
  job_ctx c = {0, LEASE_CONSTRAINT, 1, -1};
  int reason = -1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 110, write_row, &c,
                                    &reason), LEASE_CONSTRAINT);
  assert_string_equal(lease_errmsg(db), "the with_lease callback returned constraint: rolled back");
  assert_int_equal(c.calls, 1);
  assert_int_equal(c.reason, LEASE_GRANTED);   /* the complete ran, and was rolled back */
  assert_int_equal(must_state(db, "j").done, 0);
  assert_int_equal(rows_now(db, fence), 0);
}

/* Callback: try the handle itself, a nested with_lease and a refused statement. */
static int misuse_inside(lease_tx *tx, void *arg) {
  lease_db *db = arg;
  lease_row row;
  int found, reason;
  assert_int_equal(lease_state(db, "j", LEASE_NTS, NAN, &row, &found), LEASE_MISUSE);
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, 1, 110, make_table, NULL,
                                    &reason), LEASE_MISUSE);
  assert_int_equal(lease_tx_exec(tx, "COMMIT", NULL, 0, NULL), LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "statement refused: it would begin, commit or roll back "
                                        "the with_lease transaction");
  assert_int_equal(lease_tx_exec(tx, "UPDATE jobs SET done = 1", NULL, 0, NULL), LEASE_MISUSE);
  assert_int_equal(lease_tx_exec(tx, "SELECT ?", NULL, 0, NULL), LEASE_MISUSE);
  assert_int_equal(lease_tx_fence_gate(tx, "r", 1, 3, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(lease_tx_renew(tx, 110, 100, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  return LEASE_OK;
}

static void misuse_inside_callback(void **state) {
  lease_db *db = *state;
  int64_t fence = held_job(db);
  int reason = -1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, fence, 110, misuse_inside,
                                    db, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_true(must_state(db, "j").until == 210);
  assert_int_equal(lease_fence_gate(db, "r", LEASE_NTS, 2, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_STALE_FENCE);
  assert_int_equal(lease_fence_gate(db, "r", LEASE_NTS, 3, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
}

static void bad_arguments(void **state) {
  lease_db *db = *state;
  int reason = -1;
  assert_int_equal(lease_with_lease(db, "j", LEASE_NTS, "A", LEASE_NTS, 1, 110, NULL, NULL, &reason),
                   LEASE_MISUSE);
  assert_int_equal(lease_with_lease(db, "", 0, "A", LEASE_NTS, 1, 110, make_table, NULL, &reason),
                   LEASE_MISUSE);
  assert_int_equal(lease_fence_gate(db, "r", LEASE_NTS, -1, &reason), LEASE_MISUSE);
  assert_int_equal(lease_fence_gate(db, "", 0, 1, &reason), LEASE_MISUSE);
  assert_int_equal(lease_tx_exec(NULL, "SELECT 1", NULL, 0, NULL), LEASE_MISUSE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(commits_rows_and_complete_together, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(refused_lease_never_calls, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(failing_callback_rolls_back, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(misuse_inside_callback, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(bad_arguments, setup_db, teardown_db),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
