/*
** test_plans.c: SQLite plans each of the engine's statements from the
** file's statistics, and keeps that plan while the statement stays
** prepared; statistics stay as ANALYZE (or PRAGMA optimize, which SQLite
** advises running now and then) wrote them, however the tables grow since.
** Statistics taken while the tables held a handful of rows must therefore
** not turn a lookup by key into a scan of a table that grows with the jobs.
** For every statement of the SQLite backend (LSQ_STATEMENT_MAP), this test
** reads its EXPLAIN QUERY PLAN on a file with no statistics (SQLite then
** assumes large tables) and again after ANALYZE of a few jobs, and
** requires every scan of the second plan to be one the first has too.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lease.h"
#include "lease_int.h"
#include "lsq.h"
#include "lsq_queue_sql.h"
#include "lsq_schedule_sql.h"
#include "lsq_sql.h"

#define FIXTURE_PREFIX "test_plans"
#include "fixtures.h"

/* Every statement of the SQLite backend, by name. */
static const struct {
  const char *name, *sql;
} statements[] = {
#define PLANS_ENTRY_(name) {#name, LSQ_SQL_##name},
    LSQ_STATEMENT_MAP(PLANS_ENTRY_)
#undef PLANS_ENTRY_
};
enum { N_STATEMENTS = sizeof statements / sizeof statements[0] };

/* The scans in a plan: its EXPLAIN QUERY PLAN rows that start "SCAN ",
** each on a line of its own. */
typedef struct plan {
  int ok;            /* the statement could be explained here */
  char scans[2048];  /* "SCAN ..." rows, '\n' after each */
  char all[4096];    /* every row, for the failure message */
} plan;

static void explain(sqlite3 *c, const char *sql, plan *p) {
  char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
  sqlite3_stmt *st = NULL;
  memset(p, 0, sizeof *p);
  assert_non_null(q);
  if (sqlite3_prepare_v2(c, q, -1, &st, NULL) == SQLITE_OK) {
    p->ok = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
      const char *d = (const char *)sqlite3_column_text(st, 3);
      size_t a = strlen(p->all), s = strlen(p->scans);
      if (!d) continue;
      snprintf(p->all + a, sizeof p->all - a, "  %s\n", d);
      if (strncmp(d, "SCAN ", 5) == 0 && strcmp(d, "SCAN CONSTANT ROW") != 0)
        snprintf(p->scans + s, sizeof p->scans - s, "%s\n", d);
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(q);
}

/* Whether every line of `lines` is a line of `in`. */
static int lines_within(const char *lines, const char *in) {
  const char *l = lines;
  while (*l) {
    const char *e = strchr(l, '\n');
    size_t n = (size_t)(e - l);
    const char *f = in;
    int found = 0;
    while ((f = strstr(f, l)) != NULL) {
      if ((f == in || f[-1] == '\n') && strncmp(f, l, n + 1) == 0) {
        found = 1;
        break;
      }
      f++;
    }
    if (!found) return 0;
    l = e + 1;
  }
  return 1;
}

/* A file the engine made, holding a few of each kind of row: jobs, a key,
** a dependency, a queue with a concurrency limit, an error. */
static const char *small_file(void) {
  const char *path = fresh_path();
  const char *after[] = {"a"};
  lease_queue_limits lim = {2, 0, 0};
  lease_new_job j;
  lease_db *db = NULL;
  int reason = -1, i;
  const char *ids[] = {"a", "b", "c", "d"};
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  for (i = 0; i < 4; i++) assert_int_equal(enqueue_id(db, ids[i], LEASE_NTS, &reason), LEASE_OK);
  lease_new_job_default(&j);
  j.id = "keyed";
  j.id_len = LEASE_NTS;
  j.key = "k";
  j.key_len = LEASE_NTS;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  lease_new_job_default(&j);
  j.id = "child";
  j.id_len = LEASE_NTS;
  j.after = after;
  j.n_after = 1;
  assert_int_equal(lease_enqueue(db, &j, &reason), LEASE_OK);
  assert_int_equal(lease_limit(db, "default", LEASE_NTS, &lim), LEASE_OK);
  lease_close(db);
  return path;
}

static void test_small_statistics_add_no_scan(void **state) {
  static plan before[N_STATEMENTS], after;
  const char *path = small_file();
  sqlite3 *c = NULL;
  int i, explained = 0, failed = 0;
  (void)state;
  assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
  for (i = 0; i < N_STATEMENTS; i++) explain(c, statements[i].sql, &before[i]);
  assert_int_equal(sqlite3_exec(c, "ANALYZE", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(c);
  /* a new connection reads the statistics with the schema */
  assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
  for (i = 0; i < N_STATEMENTS; i++) {
    if (!before[i].ok) continue;
    explain(c, statements[i].sql, &after);
    assert_true(after.ok);
    explained++;
    if (!lines_within(after.scans, before[i].scans)) {
      failed++;
      fprintf(stderr, "%s scans after ANALYZE of a small file:\n%swithout statistics:\n%s",
              statements[i].name, after.all, before[i].all);
    }
  }
  sqlite3_close(c);
  /* most statements can be explained on their own (those needing a
  ** temporary table the engine makes first cannot) */
  assert_true(explained > N_STATEMENTS / 2);
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_statistics_add_no_scan),
  };
  (void)setup_db;   /* fixtures.h's, unused here */
  (void)teardown_db;
  (void)must_state;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
