/*
** test_many.c: C-level tests of lease_claim_many (contract step 8), with
** cmocka.  The Lua specs (specs/08-claim_many_spec.lua) race it in depth;
** these check the C API: result codes, slots, reasons, messages, the
** handle's options carried to the workers, and the state after a refusal.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lease.h"

#define FIXTURE_PREFIX "many"
#include "fixtures.h"

/* ------------------------------------------------------------------ */
/* Fixtures (the shared ones are in fixtures.h)                        */
/* ------------------------------------------------------------------ */

/* Fill names with n owner names "w0".."w<n-1>" (storage in buf). */
static void make_owners(const char **names, char (*buf)[24], size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    snprintf(buf[i], sizeof buf[i], "w%zu", i);
    names[i] = buf[i];
  }
}

/*
** Check one finished claim_many on a fresh job: exactly one slot holds
** fence `want`, every other slot 0 with reason LEASE_HELD, and the stored
** row names the winner with that fence.  Returns the winner's index.
*/
static size_t check_one_winner(lease_db *db, const char *id, const char **names,
                               const int64_t *fences, const int *reasons, size_t n,
                               int64_t want) {
  size_t i, winner = n, wins = 0;
  lease_row row;
  for (i = 0; i < n; i++) {
    if (fences[i] != 0) {
      wins++;
      winner = i;
      assert_int_equal(fences[i], want);
      assert_int_equal(reasons[i], LEASE_GRANTED);
    } else {
      assert_int_equal(reasons[i], LEASE_HELD);
    }
  }
  assert_int_equal(wins, 1);
  row = must_state(db, id);
  assert_int_equal(row.fence, want);
  assert_int_equal(row.owner_len, strlen(names[winner]));
  assert_memory_equal(row.owner, names[winner], row.owner_len);
  return winner;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* Eight owners on fresh jobs: exactly one winner each round. */
static void test_one_winner(void **state) {
  lease_db *db = *state;
  const char *names[8];
  char buf[8][24], id[32];
  int64_t fences[8];
  int reasons[8], r;
  make_owners(names, buf, 8);
  for (r = 0; r < 20; r++) {
    snprintf(id, sizeof id, "job%d", r);
    assert_int_equal(enqueue_id(db, id, LEASE_NTS, NULL), LEASE_OK);
    assert_int_equal(lease_claim_many(db, id, LEASE_NTS, names, NULL, 8, 100, 10,
                                      fences, reasons), LEASE_OK);
    check_one_winner(db, id, names, fences, reasons, 8, 1);
  }
}

/* More owners than threads: the rest queue, still exactly one winner, and
** after expiry the next round hands out the next fence. */
static void test_queued_owners(void **state) {
  lease_db *db = *state;
  enum { N = LEASE_MANY_THREADS * 2 + 7 };
  const char *names[N];
  char buf[N][24];
  int64_t fences[N];
  int reasons[N];
  make_owners(names, buf, N);
  assert_int_equal(enqueue_id(db, "q", 1, NULL), LEASE_OK);
  assert_int_equal(lease_claim_many(db, "q", 1, names, NULL, N, 0, 10, fences, reasons),
                   LEASE_OK);
  check_one_winner(db, "q", names, fences, reasons, N, 1);
  /* at now == until the job is free again: the next fence, one winner */
  assert_int_equal(lease_claim_many(db, "q", 1, names, NULL, N, 10, 10, fences, reasons),
                   LEASE_OK);
  check_one_winner(db, "q", names, fences, reasons, N, 2);
}

/* Missing and done jobs: every slot 0 with the reason, nothing created. */
static void test_refusals(void **state) {
  lease_db *db = *state;
  const char *names[3] = {"a", "b", "c"};
  int64_t fences[3], fence;
  int reasons[3], i;
  lease_row row;
  int found = 1;
  assert_int_equal(lease_claim_many(db, "nope", 4, names, NULL, 3, 0, 10, fences, reasons),
                   LEASE_OK);
  for (i = 0; i < 3; i++) {
    assert_int_equal(fences[i], 0);
    assert_int_equal(reasons[i], LEASE_MISSING);
  }
  assert_int_equal(lease_state(db, "nope", 4, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
  enqueue_id(db, "d", 1, NULL);
  assert_int_equal(lease_claim(db, "d", 1, "a", 1, 0, 10, &fence, NULL), LEASE_OK);
  assert_int_equal(lease_complete(db, "d", 1, "a", 1, fence, 1, "r", 1, NULL), LEASE_OK);
  assert_int_equal(lease_claim_many(db, "d", 1, names, NULL, 3, 50, 10, fences, reasons),
                   LEASE_OK);
  for (i = 0; i < 3; i++) assert_int_equal(reasons[i], LEASE_DONE);
  assert_int_equal(must_state(db, "d").fence, 1);
}

/* Bad arguments: LEASE_MISUSE naming the position, before anything runs. */
static void test_misuse(void **state) {
  lease_db *db = *state, *mem = NULL;
  const char *names[3] = {"a", "", "c"};
  const char *nul[2] = {"a", NULL};
  size_t lens[2] = {1, 0};
  int64_t fences[3] = {7, 7, 7};
  enqueue_id(db, "j", 1, NULL);
  assert_int_equal(lease_claim_many(db, "j", 1, names, NULL, 3, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "owners[1] must not be empty");
  assert_int_equal(fences[0], 7);   /* untouched: nothing ran */
  assert_int_equal(lease_claim_many(db, "j", 1, nul, NULL, 2, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "owners[1] must not be NULL");
  assert_int_equal(lease_claim_many(db, "j", 1, names, lens, 2, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  {
    /* A second owner longer than the database can store: refused before
    ** any thread runs, so the first owner's claim never happens.  (The
    ** length is checked before the bytes are read.) */
    const char *two[2] = {"a", "b"};
    size_t long_lens[2] = {1, (size_t)LEASE_MAX_LENGTH + 1};
    assert_int_equal(lease_claim_many(db, "j", 1, two, long_lens, 2, 0, 10, fences, NULL),
                     LEASE_MISUSE);
    assert_non_null(strstr(lease_errmsg(db), "owners[1] is 1000000001 bytes, more than"));
    assert_int_equal(fences[0], 7);
    assert_int_equal(must_state(db, "j").fence, 0);
  }
  assert_int_equal(lease_claim_many(db, "j", 1, names, NULL, 0, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  assert_int_equal(lease_claim_many(db, "j", 1, names, NULL, 1, 0, 0, fences, NULL),
                   LEASE_MISUSE);
  assert_string_equal(lease_errmsg(db), "ttl must be a number > 0");
  assert_int_equal(lease_claim_many(db, "", 0, names, NULL, 1, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  assert_int_equal(lease_claim_many(db, "j", 1, names, NULL, 1, 0, 10, NULL, NULL),
                   LEASE_MISUSE);
  assert_int_equal(lease_claim_many(NULL, "j", 1, names, NULL, 1, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  assert_null(must_state(db, "j").owner);
  assert_int_equal(must_state(db, "j").fence, 0);
  /* a private database cannot be shared with the workers' connections */
  assert_int_equal(lease_open(":memory:", NULL, &mem), LEASE_OK);
  enqueue_id(mem, "j", 1, NULL);
  assert_int_equal(lease_claim_many(mem, "j", 1, names, NULL, 1, 0, 10, fences, NULL),
                   LEASE_MISUSE);
  lease_close(mem);
}

/* The workers open with the handle's options: a read-only handle's claims
** fail LEASE_READONLY, returned and recorded on the handle. */
static void test_readonly_options(void **state) {
  lease_db *db = *state, *ro = NULL;
  const char *names[4] = {"a", "b", "c", "d"};
  int64_t fences[4];
  lease_options opt;
  enqueue_id(db, "r", 1, NULL);
  lease_options_default(&opt);
  opt.flags = LEASE_OPEN_READONLY;
  assert_int_equal(lease_open(lease_path(db), &opt, &ro), LEASE_OK);
  assert_int_equal(lease_claim_many(ro, "r", 1, names, NULL, 4, 0, 10, fences, NULL),
                   LEASE_READONLY);
  assert_int_equal(lease_errcode(ro), LEASE_READONLY);
  assert_non_null(strstr(lease_errmsg(ro), "readonly"));
  lease_close(ro);
  assert_null(must_state(db, "r").owner);
}

/* A writer holding the lock past a short busy timeout: LEASE_BUSY comes
** back as an error, never as "another owner won". */
static void test_busy(void **state) {
  lease_db *db = *state, *h = NULL;
  const char *names[4] = {"a", "b", "c", "d"};
  int64_t fences[4];
  sqlite3 *other;
  lease_options opt;
  int i;
  enqueue_id(db, "b", 1, NULL);
  assert_int_equal(sqlite3_open(lease_path(db), &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  lease_options_default(&opt);
  opt.busy_timeout_ms = 30;
  assert_int_equal(lease_open(lease_path(db), &opt, &h), LEASE_OK);
  assert_int_equal(lease_claim_many(h, "b", 1, names, NULL, 4, 0, 10, fences, NULL),
                   LEASE_BUSY);
  assert_int_equal(lease_errcode(h), LEASE_BUSY);
  assert_int_equal(lease_extended_errcode(h) & 0xff, SQLITE_BUSY);
  for (i = 0; i < 4; i++) assert_int_equal(fences[i], 0);
  sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close(other);
  assert_int_equal(lease_claim_many(h, "b", 1, names, NULL, 4, 0, 10, fences, NULL), LEASE_OK);
  lease_close(h);
  assert_int_equal(must_state(db, "b").fence, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_one_winner, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_queued_owners, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_refusals, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_misuse, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_readonly_options, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_busy, setup_db, teardown_db),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
