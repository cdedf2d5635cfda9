/*
** test_pg_conn.c: a PostgreSQL connection that libpq left in pipeline
** mode, its results unread (a pipeline cut short by a server that ended
** the session), is as broken as a lost one.  The next call on the handle
** resets it and goes on, and a with_lease statement on it is refused (its
** transaction is no longer open) instead of reading another statement's
** results.  Against the server LEASE_TEST_PG names (scripts/pg-cluster run
** starts one).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lease.h"
#include "lease_int.h"
#include "lpg_int.h"

/* A handle on LEASE_TEST_PG with the tables empty. */
static lease_db *open_fresh(void) {
  const char *ci = getenv("LEASE_TEST_PG");
  lease_db *db = NULL;
  assert_non_null(ci);
  assert_int_equal(lease_open(ci, NULL, &db), LEASE_OK);
  PQclear(PQexec(lpg_pq(db), "TRUNCATE jobs CASCADE"));
  return db;
}

/* Leave db's connection in pipeline mode with a statement's results
** unread, as a pipeline whose reading stopped early leaves it. */
static void strand(lease_db *db) {
  PGconn *pg = lpg_pq(db);
  assert_int_equal(PQenterPipelineMode(pg), 1);
  assert_int_equal(PQsendQueryParams(pg, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0), 1);
  assert_int_equal(PQexitPipelineMode(pg), 0);
  assert_int_equal(PQstatus(pg), CONNECTION_OK);
}

/* Enqueue job `id` on db. */
static void enqueue(lease_db *db, const char *id) {
  lease_new_job j;
  int reason = -1;
  lease_new_job_default(&j);
  j.id = id, j.id_len = LEASE_NTS;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
}

/* The next call resets the connection: the claim is granted and stored. */
static void next_call_resets(void **state) {
  lease_db *db = open_fresh(), *other = NULL;
  lease_row row;
  int64_t fence = -1;
  int reason = -1, found = 0;
  double now = 0;
  (void)state;
  enqueue(db, "a");
  strand(db);
  assert_int_equal(lease_server_now(db, &now), LEASE_OK);
  strand(db);
  assert_int_equal(lease_claim(db, "a", LEASE_NTS, "w1", LEASE_NTS, now, 30, &fence, &reason),
                   LEASE_OK);
  assert_int_equal(reason, LEASE_GRANTED);
  assert_int_equal(fence, 1);
  assert_int_equal(PQpipelineStatus(lpg_pq(db)), PQ_PIPELINE_OFF);
  assert_int_equal(lease_open(getenv("LEASE_TEST_PG"), NULL, &other), LEASE_OK);
  assert_int_equal(lease_state(other, "a", LEASE_NTS, now, &row, &found), LEASE_OK);
  assert_int_equal(found, 1);
  assert_int_equal(row.fence, 1);
  assert_int_equal(row.owner_len, 2);
  assert_memory_equal(row.owner, "w1", 2);
  lease_close(other);
  lease_close(db);
}

/* with_lease's statement on a stranded connection: refused, nothing sent. */
static int exec_stranded(lease_tx *tx, void *ctx) {
  int rc;
  strand((lease_db *)ctx);
  rc = lease_tx_exec(tx, "SELECT 1", NULL, 0, NULL);
  assert_int_equal(rc, LEASE_ERROR);
  assert_non_null(strstr(lease_errmsg((lease_db *)ctx), "transaction was ended"));
  return rc;
}

static void with_lease_refuses(void **state) {
  lease_db *db = open_fresh();
  lease_row row;
  int64_t fence = -1;
  int reason = -1, found = 0;
  double now = 0;
  (void)state;
  enqueue(db, "b");
  assert_int_equal(lease_server_now(db, &now), LEASE_OK);
  assert_int_equal(lease_claim(db, "b", LEASE_NTS, "w1", LEASE_NTS, now, 30, &fence, &reason),
                   LEASE_OK);
  assert_int_equal(lease_with_lease(db, "b", LEASE_NTS, "w1", LEASE_NTS, fence, now,
                                    exec_stranded, db, &reason),
                   LEASE_ERROR);
  /* the handle works again, and the job is as before */
  assert_int_equal(lease_state(db, "b", LEASE_NTS, now, &row, &found), LEASE_OK);
  assert_int_equal(found, 1);
  assert_int_equal(row.fence, fence);
  assert_int_equal(row.done, 0);
  lease_close(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(next_call_resets),
    cmocka_unit_test(with_lease_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
