/*
** test_threads.c: one handle used from two threads at once, against
** lease.h's rule (one thread at a time): the second call returns
** LEASE_MISUSE at once and nothing crashes.  With cmocka; built also under
** ThreadSanitizer in the sanitizer trees, where the misuse path must read
** nothing but the handle's busy flag.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lease.h"

#define FIXTURE_PREFIX "threads"
#include "fixtures.h"

#define ROUNDS 3000

/* One hammering thread: its handle, its owner name, what it saw. */
typedef struct hammer {
  lease_db *db;
  const char *owner;
  int ok, misuse, other;
} hammer;

/* Claim, read and complete job "j" in a loop on the shared handle,
** counting the result codes.  Only codes and reasons are read: a row's
** strings live in the handle's buffer, which the other thread's calls
** reuse. */
static void *hammer_main(void *arg) {
  hammer *h = arg;
  int i;
  for (i = 0; i < ROUNDS; i++) {
    int64_t fence = 0;
    int reason = 0, found = 0, rc;
    lease_row row;
    rc = lease_claim(h->db, "j", LEASE_NTS, h->owner, LEASE_NTS, i, 1e-3, &fence, &reason);
    if (rc == LEASE_OK) h->ok++;
    else if (rc == LEASE_MISUSE) h->misuse++;
    else h->other++;
    rc = lease_state(h->db, "j", LEASE_NTS, NAN, &row, &found);
    if (rc == LEASE_OK) h->ok++;
    else if (rc == LEASE_MISUSE) h->misuse++;
    else h->other++;
    rc = enqueue_id(h->db, h->owner, LEASE_NTS, &reason);
    if (rc == LEASE_OK) h->ok++;
    else if (rc == LEASE_MISUSE) h->misuse++;
    else h->other++;
  }
  return NULL;
}

/* Two threads hammer one handle: every call is LEASE_OK or LEASE_MISUSE,
** and afterwards the handle works as before.  (test_call_while_another_runs
** makes the overlap certain.) */
static void test_two_threads_one_handle(void **state) {
  lease_db *db = *state;
  hammer a = {db, "a", 0, 0, 0}, b = {db, "b", 0, 0, 0};
  pthread_t ta, tb;
  int reason = -1;
  lease_row row;
  assert_int_equal(enqueue_id(db, "j", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(pthread_create(&ta, NULL, hammer_main, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, hammer_main, &b), 0);
  assert_int_equal(pthread_join(ta, NULL), 0);
  assert_int_equal(pthread_join(tb, NULL), 0);
  assert_int_equal(a.other + b.other, 0);
  assert_int_equal(a.ok + a.misuse + b.ok + b.misuse, 2 * 3 * ROUNDS);
  assert_true(a.ok + b.ok > 0);   /* which calls overlap is up to the scheduler */
  /* the handle is whole: a call after the threads works */
  row = must_state(db, "j");
  assert_true(row.fence > 0);
  assert_int_equal(enqueue_id(db, "after", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
}

/* A claim blocked in the busy handler (another connection holds SQLite's
** write lock) owns the handle: a call from the main thread meanwhile is
** LEASE_MISUSE, and the claim still finishes once the lock goes. */
typedef struct blocked {
  lease_db *db;
  int rc, reason;
  int64_t fence;
} blocked;

static void *claim_main(void *arg) {
  blocked *c = arg;
  c->rc = lease_claim(c->db, "k", LEASE_NTS, "w", LEASE_NTS, 0, 10, &c->fence, &c->reason);
  return NULL;
}

static void test_call_while_another_runs(void **state) {
  lease_db *db = *state;
  sqlite3 *other;
  blocked c = {db, -1, -1, 0};
  pthread_t t;
  int reason = -1, found = -1;
  lease_row row;
  struct timespec pause = {0, 200 * 1000 * 1000};
  assert_int_equal(enqueue_id(db, "k", LEASE_NTS, &reason), LEASE_OK);
  assert_int_equal(sqlite3_open(lease_path(db), &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(pthread_create(&t, NULL, claim_main, &c), 0);
  nanosleep(&pause, NULL);   /* the claim is waiting for the lock by now */
  assert_int_equal(lease_state(db, "k", LEASE_NTS, NAN, &row, &found), LEASE_MISUSE);
  assert_int_equal(found, -1);   /* nothing written to the caller's slots */
  assert_int_equal(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(c.rc, LEASE_OK);
  assert_int_equal(c.reason, LEASE_GRANTED);
  assert_int_equal(c.fence, 1);
  row = must_state(db, "k");
  assert_int_equal(row.fence, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_two_threads_one_handle, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_call_while_another_runs, setup_db, teardown_db),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
