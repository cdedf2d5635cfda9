/*
** test_core.c: C-level tests of the lease core (src/lease.h), with cmocka.
** Each test opens a fresh database file under $LEASE_TEST_TMP (or /tmp).
** The Lua specs cover the contract in depth; these check the C API itself:
** result codes, reasons, out-parameters, messages and the state after a
** refused or failed call.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lease.h"

#define FIXTURE_PREFIX "c"
#include "fixtures.h"

/* The shared fixtures (fresh_path, setup_db, teardown_db, must_state) are
** in fixtures.h. */

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* Step 1: init twice changes nothing, rows and fences survive. */
static void test_init_idempotent(void **state) {
  lease_db *db = *state;
  int64_t fence;
  int why;
  assert_int_equal(enqueue_id(db, "a", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(lease_claim(db, "a", LEASE_NTS, "w", LEASE_NTS, 0, 10, &fence, &why), LEASE_OK);
  assert_int_equal(fence, 1);
  assert_int_equal(lease_init(db), LEASE_OK);
  assert_int_equal(lease_init(db), LEASE_OK);
  assert_int_equal(must_state(db, "a").fence, 1);
}

/* Step 2: enqueue reports exists and keeps a lease in progress. */
static void test_enqueue(void **state) {
  lease_db *db = *state;
  int64_t fence;
  int why = -1;
  lease_row row;
  assert_int_equal(enqueue_id(db, "a", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(lease_claim(db, "a", 1, "w", 1, 5, 10, &fence, &why), LEASE_OK);
  assert_int_equal(enqueue_id(db, "a", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(why, LEASE_EXISTS);
  row = must_state(db, "a");
  assert_string_equal(row.owner, "w");
  assert_true(row.until == 15.0);
  assert_int_equal(row.fence, 1);
}

/* Step 3: a missing id is found = 0, not an empty row. */
static void test_state_missing(void **state) {
  lease_db *db = *state;
  lease_row row;
  int found = -1;
  assert_int_equal(lease_state(db, "nope", LEASE_NTS, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
}

/* Step 4: reasons, the boundary now == until, fence growth. */
static void test_claim(void **state) {
  lease_db *db = *state;
  int64_t fence = -1;
  int why = -1;
  assert_int_equal(lease_claim(db, "x", 1, "a", 1, 0, 10, &fence, &why), LEASE_OK);
  assert_int_equal(why, LEASE_MISSING);
  assert_int_equal(fence, 0);
  enqueue_id(db, "x", 1, NULL);
  assert_int_equal(lease_claim(db, "x", 1, "a", 1, 0, 10, &fence, &why), LEASE_OK);
  assert_int_equal(fence, 1);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(lease_claim(db, "x", 1, "b", 1, 9.5, 10, &fence, &why), LEASE_OK);
  assert_int_equal(why, LEASE_HELD);
  assert_int_equal(fence, 0);
  assert_int_equal(lease_claim(db, "x", 1, "b", 1, 10, 10, &fence, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(fence, 2);
  assert_string_equal(must_state(db, "x").owner, "b");
}

/* Step 5-7: reasons of renew, complete and release, and what they keep. */
static void test_writes(void **state) {
  lease_db *db = *state;
  int64_t f1, f2;
  int why = -1;
  lease_row row;
  enqueue_id(db, "j", 1, NULL);
  lease_claim(db, "j", 1, "a", 1, 0, 10, &f1, &why);
  /* renew: expired at the boundary, stale and foreign refused */
  assert_int_equal(lease_renew(db, "j", 1, "a", 1, f1, 10, 5, &why), LEASE_OK);
  assert_int_equal(why, LEASE_EXPIRED);
  assert_true(must_state(db, "j").until == 10.0);
  assert_int_equal(lease_renew(db, "j", 1, "a", 1, f1, 9, 5, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_true(must_state(db, "j").until == 14.0);
  assert_int_equal(lease_renew(db, "j", 1, "b", 1, f1, 9, 5, &why), LEASE_OK);
  assert_int_equal(why, LEASE_NOT_OWNER);
  assert_int_equal(lease_renew(db, "j", 1, "a", 1, f1 + 1, 9, 5, &why), LEASE_OK);
  assert_int_equal(why, LEASE_STALE_FENCE);
  assert_int_equal(lease_renew(db, "k", 1, "a", 1, f1, 9, 5, &why), LEASE_OK);
  assert_int_equal(why, LEASE_MISSING);
  /* takeover; the old generation's complete is refused, result untouched */
  lease_claim(db, "j", 1, "b", 1, 14, 10, &f2, &why);
  assert_int_equal(f2, f1 + 1);
  assert_int_equal(lease_complete(db, "j", 1, "a", 1, f1, 15, "late", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(why, LEASE_NOT_OWNER);
  assert_int_equal(lease_release(db, "j", 1, "a", 1, f1, &why), LEASE_OK);
  assert_int_equal(why, LEASE_NOT_OWNER);
  assert_int_equal(lease_complete(db, "j", 1, "b", 1, f2, 15, "ok", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(lease_complete(db, "j", 1, "b", 1, f2, 15, "again", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(why, LEASE_DONE);
  assert_int_equal(lease_release(db, "j", 1, "b", 1, f2, &why), LEASE_OK);
  assert_int_equal(why, LEASE_DONE);
  row = must_state(db, "j");
  assert_string_equal(row.result, "ok");
  assert_int_equal(row.done, 1);
  assert_int_equal(row.fence, f2);
}

/* Step 7: release keeps the fence; the next claim gets a larger one. */
static void test_release_keeps_fence(void **state) {
  lease_db *db = *state;
  int64_t f1, f2;
  int why;
  lease_row row;
  enqueue_id(db, "r", 1, NULL);
  lease_claim(db, "r", 1, "a", 1, 0, 10, &f1, &why);
  assert_int_equal(lease_release(db, "r", 1, "a", 1, f1, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  row = must_state(db, "r");
  assert_null(row.owner);
  assert_true(row.until == 0.0);
  assert_int_equal(row.fence, f1);
  assert_int_equal(lease_claim(db, "r", 1, "b", 1, 1, 10, &f2, &why), LEASE_OK);
  assert_int_equal(f2, f1 + 1);
}

/* Byte strings with zero bytes are distinct keys and round-trip. */
static void test_zero_bytes(void **state) {
  lease_db *db = *state;
  int64_t fence;
  int why;
  lease_row row;
  int found;
  assert_int_equal(enqueue_id(db, "a\0b", 3, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(enqueue_id(db, "a\0c", 3, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(lease_claim(db, "a\0b", 3, "o\0x", 3, 0, 10, &fence, &why), LEASE_OK);
  assert_int_equal(lease_complete(db, "a\0b", 3, "o\0x", 3, fence, 1, "r\0s", 3, &why), LEASE_OK);
  assert_int_equal(why, LEASE_GRANTED);
  assert_int_equal(lease_state(db, "a\0b", 3, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 1);
  assert_int_equal(row.id_len, 3);
  assert_memory_equal(row.id, "a\0b", 3);
  assert_int_equal(row.owner_len, 3);
  assert_memory_equal(row.owner, "o\0x", 3);
  assert_int_equal(row.result_len, 3);
  assert_memory_equal(row.result, "r\0s", 3);
  assert_int_equal(lease_state(db, "a\0c", 3, NAN, &row, &found), LEASE_OK);
  assert_int_equal(row.done, 0);
  assert_int_equal(lease_state(db, "a", 1, NAN, &row, &found), LEASE_OK);
  assert_int_equal(found, 0);
}

/* Misuse: bad time and empty strings are refused; nothing changes. */
static void test_misuse(void **state) {
  lease_db *db = *state;
  int64_t fence = -1;
  int why;
  const char *msg;
  enqueue_id(db, "m", 1, NULL);
  assert_int_equal(lease_claim(db, "m", 1, "a", 1, 0, 0, &fence, &why), LEASE_MISUSE);
  assert_int_equal(lease_errcode(db), LEASE_MISUSE);
  assert_non_null(strstr(lease_errmsg(db), "ttl"));
  assert_int_equal(fence, 0);
  assert_int_equal(lease_claim(db, "m", 1, "a", 1, 1e300, 1e-300, &fence, &why), LEASE_MISUSE);
  assert_int_equal(lease_claim(db, "m", 1, "", 0, 0, 1, &fence, &why), LEASE_MISUSE);
  assert_non_null(strstr(lease_errmsg(db), "owner"));
  assert_int_equal(lease_claim(db, "", 0, "a", 1, 0, 1, &fence, &why), LEASE_MISUSE);
  assert_int_equal(lease_claim(db, NULL, 0, "a", 1, 0, 1, &fence, &why), LEASE_MISUSE);
  /* a claim whose fence the caller cannot learn is refused before it is taken */
  assert_int_equal(lease_claim(db, "m", 1, "a", 1, 0, 1, NULL, &why), LEASE_MISUSE);
  assert_non_null(strstr(lease_errmsg(db), "fence must not be NULL"));
  assert_int_equal(lease_check_time(0, -1, &msg), LEASE_ARG_TTL);
  assert_int_equal(lease_check_time(0.0 / 0.0, 1, &msg), LEASE_ARG_NOW);
  assert_int_equal(lease_check_time(0, 1, &msg), 0);
  assert_int_equal(must_state(db, "m").fence, 0);
  /* the handle still works after refusals */
  assert_int_equal(lease_claim(db, "m", 1, "a", 1, 0, 1, &fence, &why), LEASE_OK);
  assert_int_equal(fence, 1);
  assert_int_equal(lease_errcode(db), LEASE_OK);
  assert_string_equal(lease_errmsg(db), "not an error");
}

/* complete_many: every item is checked before anything is written (the
** message names the 1-based position); then each job is stored or refused
** as lease_complete would, with its reason in input order and the count. */
static void test_complete_many(void **state) {
  lease_db *db = *state;
  int64_t fa = 0, fb = 0;
  int why, reasons[3] = {-1, -1, -1}, stored = -1;
  lease_result items[3] = {
    {"a", LEASE_NTS, 0, "ra", LEASE_NTS},
    {"", 0, 0, NULL, 0},
    {"b", 1, 0, NULL, 0},
  };
  enqueue_id(db, "a", 1, NULL);
  enqueue_id(db, "b", 1, NULL);
  assert_int_equal(lease_claim(db, "a", 1, "w", 1, 0, 10, &fa, &why), LEASE_OK);
  assert_int_equal(lease_claim(db, "b", 1, "w", 1, 0, 10, &fb, &why), LEASE_OK);
  items[0].fence = fa;
  items[2].fence = fb;
  /* an empty id at position 2: nothing is stored, not even item 1 */
  assert_int_equal(lease_complete_many(db, "w", 1, 1, items, 3, reasons, &stored), LEASE_MISUSE);
  assert_non_null(strstr(lease_errmsg(db), "id 2"));
  assert_int_equal(stored, 0);
  assert_int_equal(must_state(db, "a").done, 0);
  items[1].id = NULL;
  assert_int_equal(lease_complete_many(db, "w", 1, 1, items, 3, reasons, &stored), LEASE_MISUSE);
  assert_non_null(strstr(lease_errmsg(db), "id 2"));
  assert_int_equal(lease_complete_many(db, "", 0, 1, items, 3, reasons, &stored), LEASE_MISUSE);
  assert_int_equal(lease_complete_many(db, "w", 1, 0.0 / 0.0, items, 3, reasons, &stored),
                   LEASE_MISUSE);
  assert_int_equal(lease_complete_many(db, "w", 1, 1, NULL, 1, reasons, &stored), LEASE_MISUSE);
  assert_int_equal(lease_complete_many(db, "w", 1, 1, items, -1, reasons, &stored), LEASE_MISUSE);
  assert_int_equal(must_state(db, "a").done, 0);
  /* item 2 with a stale fence: refused as complete refuses it, the others stored */
  items[1].id = "b";
  items[1].id_len = 1;
  items[1].fence = fb + 1;
  assert_int_equal(lease_complete_many(db, "w", 1, 1, items, 3, reasons, &stored), LEASE_OK);
  assert_int_equal(stored, 2);
  assert_int_equal(reasons[0], LEASE_GRANTED);
  assert_int_equal(reasons[1], LEASE_STALE_FENCE);
  assert_int_equal(reasons[2], LEASE_GRANTED);
  assert_string_equal(must_state(db, "a").result, "ra");
  assert_null(must_state(db, "b").result);
  assert_int_equal(must_state(db, "b").done, 1);
  /* n = 0 does nothing; NULL reasons and stored are allowed */
  assert_int_equal(lease_complete_many(db, "w", 1, 1, NULL, 0, NULL, &stored), LEASE_OK);
  assert_int_equal(stored, 0);
  assert_int_equal(lease_complete_many(db, "w", 1, 1, items, 1, NULL, NULL), LEASE_OK);
}

/* Busy: a writer holding the lock past the timeout makes claim fail
** LEASE_BUSY (not "held"), and the handle works again afterwards. */
static void test_busy(void **state) {
  lease_db *db;
  lease_options opt;
  sqlite3 *other;
  int64_t fence = -1;
  int why = -1;
  const char *path = fresh_path();
  (void)state;
  lease_options_default(&opt);
  opt.busy_timeout_ms = 50;
  assert_int_equal(lease_open(path, &opt, &db), LEASE_OK);
  enqueue_id(db, "b", 1, NULL);
  assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(lease_claim(db, "b", 1, "a", 1, 0, 10, &fence, &why), LEASE_BUSY);
  assert_string_equal(lease_errname(lease_errcode(db)), "busy");
  assert_int_equal(fence, 0);
  assert_int_equal(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  assert_int_equal(lease_claim(db, "b", 1, "a", 1, 0, 10, &fence, &why), LEASE_OK);
  assert_int_equal(fence, 1);
  lease_close(db);
}

/* A fence at its maximum, or not an integer, is an error, never a reuse. */
static void test_fence_limits(void **state) {
  lease_db *db = *state;
  sqlite3 *other;
  int64_t fence = -1;
  int why;
  enqueue_id(db, "max", 3, NULL);
  enqueue_id(db, "txt", 3, NULL);
  assert_int_equal(sqlite3_open(lease_path(db), &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other,
      "UPDATE jobs SET fence = 9223372036854775807 WHERE id = 'max';"
      "UPDATE jobs SET fence = 'x' WHERE id = 'txt';", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  assert_int_equal(lease_claim(db, "max", 3, "a", 1, 0, 10, &fence, &why), LEASE_RANGE);
  assert_int_equal(fence, 0);
  assert_int_equal(must_state(db, "max").fence, INT64_MAX);
  assert_null(must_state(db, "max").owner);
  assert_int_equal(lease_claim(db, "txt", 3, "a", 1, 0, 10, &fence, &why), LEASE_MISMATCH);
  assert_null(must_state(db, "txt").owner);
}

/* Opening: a missing directory, a non-database, a foreign jobs table. */
static void test_open_failures(void **state) {
  lease_db *db = NULL;
  sqlite3 *other;
  char path[600];
  FILE *f;
  (void)state;
  assert_int_equal(lease_open("/nonexistent-dir/x.db", NULL, &db), LEASE_CANTOPEN);
  assert_non_null(db);
  assert_string_equal(lease_path(db), "/nonexistent-dir/x.db");
  lease_close(db);

  snprintf(path, sizeof path, "%s", fresh_path());
  f = fopen(path, "wb");
  assert_non_null(f);
  fputs("this is not an SQLite database, just some text long enough to read.....\n", f);
  fclose(f);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_NOTADB);
  assert_string_equal(lease_errmsg(db), "file is not a database");
  lease_close(db);

  snprintf(path, sizeof path, "%s", fresh_path());
  assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, "
      "until REAL NOT NULL DEFAULT 0, fence TEXT, result TEXT, done INTEGER NOT NULL DEFAULT 0)",
      NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(other);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_SCHEMA);
  assert_non_null(strstr(lease_errmsg(db), "fence"));
  lease_close(db);

  assert_int_equal(lease_open(NULL, NULL, &db), LEASE_MISUSE);
  lease_close(db);
  assert_int_equal(lease_open("x", NULL, NULL), LEASE_MISUSE);
}

/* Size of the file at path, or -1 when it does not exist. */
static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Hostile files: a database cut inside a page, a WAL-mode database cut at
** a page boundary, a directory.  Each is refused with its code and a
** message saying what is wrong, the file keeps its size, and no -wal or
** -shm appears beside it. */
static void test_hostile_files(void **state) {
  lease_db *db = NULL;
  char path[600], wal[620], shm[620];
  long size;
  int i;
  (void)state;
  snprintf(path, sizeof path, "%s", fresh_path());
  snprintf(wal, sizeof wal, "%s-wal", path);
  snprintf(shm, sizeof shm, "%s-shm", path);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  for (i = 0; i < 200; i++) {
    char id[64];
    snprintf(id, sizeof id, "job-%d-with-a-longer-id-to-fill-pages", i);
    assert_int_equal(enqueue_id(db, id, LEASE_NTS, NULL), LEASE_OK);
  }
  lease_close(db);
  size = file_size(path);
  assert_true(size >= 3 * 4096);
  assert_int_equal(file_size(wal), -1);

  /* one byte short: SQLite alone would open it and write to it */
  assert_int_equal(truncate(path, size - 1), 0);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_CORRUPT);
  assert_non_null(strstr(lease_errmsg(db), "not a whole number of its 4096-byte pages (truncated)"));
  lease_close(db);
  assert_int_equal(file_size(path), size - 1);

  /* a page short: SQLite refuses it, but would leave -wal and -shm */
  assert_int_equal(truncate(path, size - 4096), 0);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_CORRUPT);
  lease_close(db);
  assert_int_equal(file_size(path), size - 4096);
  assert_int_equal(file_size(wal), -1);
  assert_int_equal(file_size(shm), -1);

  /* a directory, even read-only (SQLite's answer was a "disk I/O error") */
  {
    lease_options opt;
    const char *dir = getenv("LEASE_TEST_TMP");
    if (!dir || !*dir) dir = "/tmp";
    lease_options_default(&opt);
    opt.flags = LEASE_OPEN_READONLY;
    assert_int_equal(lease_open(dir, &opt, &db), LEASE_CANTOPEN);
    assert_string_equal(lease_errmsg(db), "unable to open database file: it is a directory");
    lease_close(db);
  }
}

/* Read-only: reads work, writes fail LEASE_READONLY and change nothing. */
static void test_readonly(void **state) {
  lease_db *db = *state, *ro;
  lease_options opt;
  int64_t fence = -1;
  int why;
  enqueue_id(db, "r", 1, NULL);
  lease_options_default(&opt);
  opt.flags = LEASE_OPEN_READONLY;
  assert_int_equal(lease_open(lease_path(db), &opt, &ro), LEASE_OK);
  assert_int_equal(must_state(ro, "r").fence, 0);
  assert_int_equal(lease_claim(ro, "r", 1, "a", 1, 0, 10, &fence, &why), LEASE_READONLY);
  assert_int_equal(fence, 0);
  assert_int_equal(enqueue_id(ro, "s", 1, &why), LEASE_READONLY);
  lease_close(ro);
  assert_null(must_state(db, "r").owner);
}

/* A read-only handle leaves no -wal or -shm beside an idle database. */
static void test_readonly_leaves_no_wal(void **state) {
  char wal[600], shm[600];
  const char *path = fresh_path();
  lease_db *db, *ro;
  lease_options opt;
  int why;
  (void)state;
  snprintf(wal, sizeof wal, "%s-wal", path);
  snprintf(shm, sizeof shm, "%s-shm", path);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  assert_int_equal(enqueue_id(db, "a", 1, &why), LEASE_OK);
  lease_close(db);
  assert_int_equal(file_size(wal), -1);
  lease_options_default(&opt);
  opt.flags = LEASE_OPEN_READONLY;
  assert_int_equal(lease_open(path, &opt, &ro), LEASE_OK);
  assert_int_equal(must_state(ro, "a").fence, 0);
  assert_int_equal(enqueue_id(ro, "b", 1, &why), LEASE_READONLY);
  lease_close(ro);
  assert_int_equal(file_size(wal), -1);
  assert_int_equal(file_size(shm), -1);
}

/* Names are stable words: every code and reason has the word CONTRACT.md
** and the Lua binding use, in order, and nothing past the last. */
static void test_names(void **state) {
  static const char *const rc_words[] = {
    "ok", "error", "misuse", "busy", "locked", "readonly", "notadb", "corrupt", "full",
    "ioerr", "cantopen", "nomem", "perm", "interrupt", "constraint", "protocol", "schema",
    "range", "mismatch",
  };
  static const char *const reason_words[] = {
    "ok", "missing", "exists", "done", "held", "not_owner", "stale_fence", "expired", "empty",
    "discarded", "cancelled", "paused", "limited", "waiting", "duplicate",
  };
  int i;
  (void)state;
  for (i = 0; i < (int)(sizeof rc_words / sizeof rc_words[0]); i++)
    assert_string_equal(lease_errname(i), rc_words[i]);
  assert_string_equal(lease_errname(i), "unknown");
  assert_string_equal(lease_errname(-1), "unknown");
  assert_int_equal(LEASE_MISMATCH, 18);
  for (i = 0; i < (int)(sizeof reason_words / sizeof reason_words[0]); i++)
    assert_string_equal(lease_reason_name(i), reason_words[i]);
  assert_string_equal(lease_reason_name(i), "unknown");
  assert_int_equal(LEASE_EMPTY, 8);
  assert_string_equal(lease_errname(LEASE_BUSY), "busy");
  assert_string_equal(lease_errname(LEASE_FULL), "full");
  assert_string_equal(lease_errname(999), "unknown");
  assert_string_equal(lease_reason_name(LEASE_STALE_FENCE), "stale_fence");
  assert_string_equal(lease_reason_name(LEASE_HELD), "held");
}

/* lease_file_id: the file held, by device and inode; CANTOPEN once its name
** names another file or none, and for a database that is no file. */
static void test_file_id(void **state) {
  char path[512], moved[530], other[530];
  lease_db *db = NULL, *mem = NULL;
  uint64_t dev = 1, ino = 1;
  struct stat st;
  int why;
  (void)state;
  snprintf(path, sizeof path, "%s", fresh_path());
  snprintf(moved, sizeof moved, "%s.moved", path);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(lease_file_id(db, &dev, &ino), LEASE_OK);
  assert_true(dev == (uint64_t)st.st_dev && ino == (uint64_t)st.st_ino);
  assert_int_equal(lease_file_id(db, NULL, &ino), LEASE_MISUSE);
  /* renamed away: the name no longer names the file held */
  assert_int_equal(rename(path, moved), 0);
  assert_int_equal(lease_file_id(db, &dev, &ino), LEASE_CANTOPEN);
  assert_true(dev == 0 && ino == 0);
  assert_non_null(strstr(lease_errmsg(db), "no longer at its name"));
  /* another database renamed to the name: not the file held */
  snprintf(other, sizeof other, "%s.other", path);
  assert_int_equal(lease_open(other, NULL, &mem), LEASE_OK);
  assert_int_equal(lease_close(mem), LEASE_OK);
  assert_int_equal(rename(other, path), 0);
  assert_int_equal(lease_file_id(db, &dev, &ino), LEASE_CANTOPEN);
  assert_non_null(strstr(lease_errmsg(db), "renamed, deleted or replaced"));
  /* the connection still works on the file it holds; closing it leaves its
  ** commits in that file and no frames in the -wal at the name */
  assert_int_equal(enqueue_id(db, "a", LEASE_NTS, &why), LEASE_OK);
  assert_int_equal(lease_close(db), LEASE_OK);
  assert_int_equal(lease_open(moved, NULL, &db), LEASE_OK);
  assert_int_equal(must_state(db, "a").fence, 0);
  assert_int_equal(lease_close(db), LEASE_OK);
  assert_int_equal(lease_open(path, NULL, &db), LEASE_OK);
  {
    lease_row row;
    int found = 1;
    assert_int_equal(lease_state(db, "a", LEASE_NTS, NAN, &row, &found), LEASE_OK);
    assert_int_equal(found, 0);
  }
  assert_int_equal(lease_close(db), LEASE_OK);
  /* no file at all */
  assert_int_equal(lease_open(":memory:", NULL, &mem), LEASE_OK);
  assert_int_equal(lease_file_id(mem, &dev, &ino), LEASE_CANTOPEN);
  assert_non_null(strstr(lease_errmsg(mem), "no file"));
  assert_int_equal(lease_close(mem), LEASE_OK);
  assert_int_equal(lease_file_id(NULL, &dev, &ino), LEASE_MISUSE);
  unlink(moved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_init_idempotent, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_enqueue, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_state_missing, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_claim, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_writes, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_release_keeps_fence, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_zero_bytes, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_misuse, setup_db, teardown_db),
    cmocka_unit_test_setup_teardown(test_complete_many, setup_db, teardown_db),
    cmocka_unit_test(test_busy),
    cmocka_unit_test_setup_teardown(test_fence_limits, setup_db, teardown_db),
    cmocka_unit_test(test_open_failures),
    cmocka_unit_test(test_hostile_files),
    cmocka_unit_test_setup_teardown(test_readonly, setup_db, teardown_db),
    cmocka_unit_test(test_readonly_leaves_no_wal),
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_file_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
