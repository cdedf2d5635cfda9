/*
** fixtures.h: what the C tests share (cmocka fixtures over the C API).
** Include after <cmocka.h> and "lease.h", with FIXTURE_PREFIX defined to
** the test file's name for its database files.
*/
#ifndef LEASE_TEST_FIXTURES_H
#define LEASE_TEST_FIXTURES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef FIXTURE_PREFIX
#error "define FIXTURE_PREFIX before including fixtures.h"
#endif

/* A fresh database path per call: $LEASE_TEST_TMP/<prefix>-<pid>-<n>.db. */
static const char *fresh_path(void) {
  static char path[512];
  static int n = 0;
  const char *dir = getenv("LEASE_TEST_TMP");
  if (!dir || !*dir) dir = "/tmp";
  snprintf(path, sizeof path, "%s/%s-%ld-%d.db", dir, FIXTURE_PREFIX, (long)getpid(), n++);
  unlink(path);
  return path;
}

/* Open a fresh database with the default options; the test state. */
static int setup_db(void **state) {
  lease_db *db = NULL;
  if (lease_open(fresh_path(), NULL, &db) != LEASE_OK) {
    fprintf(stderr, "open: %s\n", lease_errmsg(db));
    lease_close(db);
    return -1;
  }
  *state = db;
  return 0;
}

/* Close the test's handle. */
static int teardown_db(void **state) {
  lease_close(*state);
  return 0;
}

/* lease_enqueue of a job that carries nothing but its id (len bytes, or
** LEASE_NTS): the contract's plain enqueue.  Returns lease_enqueue's code. */
static inline int enqueue_id(lease_db *db, const char *id, size_t len, int *reason) {
  lease_new_job job;
  lease_new_job_default(&job);
  job.id = id;
  job.id_len = len;
  return lease_enqueue(db, &job, reason);
}

/* Read job id's row (no status: a NaN now); fails the test when it is
** missing. */
static lease_row must_state(lease_db *db, const char *id) {
  lease_row row;
  int found = -1;
  assert_int_equal(lease_state(db, id, LEASE_NTS, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 1);
  return row;
}

#endif
