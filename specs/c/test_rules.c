/*
** test_rules.c: the core's rules (src/core/lease_rules.c) driven directly:
** a table of the facts a backend reads about a job -> the reason (or the
** failure) each write gets, one row per step of the order, and the rows
** where a fact a write does not ask must be ignored.  Also lease_cancel's
** reason, the fence gate's, and prune's state of a status.
*/
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
#define FMAX LEASE__BLOCKED_FENCE_MAX
#define BID LEASE__BLOCKED_BAD_ID

/* One row: op and facts (found, done, qstate, other_owner, other_fence,
** blocked, live, expired) -> judge's rc and reason; refusal's differ only
** when judge grants (then LEASE_ERROR, "internal error"). */
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
  size_t i;
  (void)state;
  for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const rule_row *r = &rows[i];
    int reason = -1, rc;
    rc = lease__judge(db, (lease__op)r->op, &r->f, &reason);
    assert_int_equal(rc, r->rc);
    if (rc == LEASE_OK) assert_int_equal(reason, r->reason);
    if (r->msg) assert_non_null(strstr(lease_errmsg(db), r->msg));
    reason = -1;
    rc = lease__refusal(db, (lease__op)r->op, &r->f, &reason);
    if (r->rc == LEASE_OK && r->reason == LEASE_GRANTED) {
      assert_int_equal(rc, LEASE_ERROR);
      assert_non_null(strstr(lease_errmsg(db), "passes every check"));
      assert_non_null(strstr(lease_errmsg(db), r->op == CL ? "guarded claim" : "guarded update"));
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
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_write_order),
    cmocka_unit_test(test_cancel),
    cmocka_unit_test(test_gate_and_prune),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
