/*
** test_steps.c: a schema step's SQL stays as released (lease_schema.h): a
** database made by one build is taken to the next version by the steps of
** another, so a step whose text changed would make different layouts of
** one version.  The steps are written with macros the engine's statements
** share (the queue states, LPG_Q_SQL_DUE_NOW, ...), so an edit made for a
** statement can change a released step without touching its file.  This
** test holds a hash of every step's SQL on each backend and fails on any
** step whose text differs, printing the table as it now stands: a new step
** adds its line; a changed one means the old text must be written out in
** the step, and the change made a new step.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lease_schema.h"
#include "lpg_schema_sql.h"
#include "lsq_schema_sql.h"

/* FNV-1a, 64 bits, of s and its terminating zero, continuing from h. */
static uint64_t fnv(uint64_t h, const char *s) {
  do {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ULL;
  } while (*s++);
  return h;
}

#define FNV_START 0xcbf29ce484222325ULL

/* Each step's statements on SQLite (NULL-terminated) and its SQL on
** PostgreSQL, by the order of LEASE_SCHEMA_STEPS. */
#define STEPS_TEXT_(sql) sql,
#define STEPS_ARRAY_(name) \
  static const char *const lsq_##name[] = {LSQ_STEP_##name(STEPS_TEXT_) NULL};
LEASE_SCHEMA_STEPS(STEPS_ARRAY_)
#define STEPS_ENTRY_(name) {#name, lsq_##name, LPG_STEP_##name},
static const struct {
  const char *name;
  const char *const *sqlite;
  const char *pg;
} steps[] = {LEASE_SCHEMA_STEPS(STEPS_ENTRY_)};
#undef STEPS_TEXT_
#undef STEPS_ARRAY_
#undef STEPS_ENTRY_
enum { N_STEPS = sizeof steps / sizeof steps[0] };

/* The released steps' hashes: SQLite's statements in order, PostgreSQL's
** text.  Printed by this test when a step differs. */
static const struct {
  const char *name;
  uint64_t sqlite, pg;
} released[] = {
    {"QUEUE", 0x5f3dd3654766f621ULL, 0x687f309714c92176ULL},
    {"REFENCE", 0x015d809eb9b25288ULL, 0xaf63bd4c8601b7dfULL},
    {"RENAMED", 0x2d52aebced0c79f9ULL, 0xaf63bd4c8601b7dfULL},
    {"SCHEDULES", 0xa917febe320c4280ULL, 0x78bf6f56bc3c9008ULL},
    {"CONTROL", 0x057573962fee71caULL, 0xd42e3a0cbf9d97faULL},
    {"CLOCK", 0x2d877e382a6e46ffULL, 0x33394f563669055aULL},
    {"ATTEMPTS", 0xcbf29ce484222325ULL, 0x5a5226c2e9a747a6ULL},
    {"EVENTS", 0xe6ae791fbaa379d9ULL, 0x8b44a5ccaa80ec49ULL},
    {"TIMEOUT", 0x27e18b479988ae8bULL, 0xb3c13e49c80a4509ULL},
    {"DEPS", 0xfc2173d006d037c5ULL, 0x2d94085cf8fa0eeeULL},
    {"UNIQUE", 0xcfb6f1df2aad92dcULL, 0x5aea25982d9eea6fULL},
    {"DEPS_FOLLOW", 0xcbf29ce484222325ULL, 0x9bf98e61f4c996ffULL},
    {"COMPLETE_ONCE", 0xcbf29ce484222325ULL, 0x2284f50e6898e045ULL},
    {"DEPS_CHILDLESS", 0xcbf29ce484222325ULL, 0xf635006098cbfa71ULL},
    {"QUEUE_NOW_PLPGSQL", 0xcbf29ce484222325ULL, 0xf360fe8ff6990b09ULL},
    {"SQLITE_COMPLETE_ONCE", 0x7f1e64eed1d19fceULL, 0xaf63bd4c8601b7dfULL},
    {"DEPS_KEYED", 0xcbf29ce484222325ULL, 0x984667563b3ecfd7ULL},
    {"ADDED_FLOOR", 0xcbf29ce484222325ULL, 0x130daf0fc441ae78ULL},
    {"DEPS_ANY_CLIENT", 0x0c3cb1f5f067d1cfULL, 0x81f4c9f56b9e12d0ULL},
    {"HELD_SLOTS", 0xcbf29ce484222325ULL, 0xadc844364d42418aULL},
    {"QUIET_COMPLETE", 0xcbf29ce484222325ULL, 0xe7dd3825ce0b2b59ULL},
    {"WAITED_ON_ANY_CLIENT", 0xcbf29ce484222325ULL, 0x566a777810060929ULL},
    {"WAKE_ANY_CLIENT", 0xcbf29ce484222325ULL, 0x9fea0b9be256cf74ULL},
    {"SQLITE_QUIET_COMPLETE", 0x3db58cb0aa764396ULL, 0xaf63bd4c8601b7dfULL},
};
enum { N_RELEASED = sizeof released / sizeof released[0] };

static uint64_t sqlite_hash(int i) {
  uint64_t h = FNV_START;
  const char *const *s;
  for (s = steps[i].sqlite; *s; s++) h = fnv(h, *s);
  return h;
}

static void test_released_steps_unchanged(void **state) {
  int i, differ = 0;
  (void)state;
  assert_int_equal(N_STEPS, LEASE_SCHEMA_VERSION);
  for (i = 0; i < N_STEPS; i++) {
    uint64_t sq = sqlite_hash(i), pg = fnv(FNV_START, steps[i].pg);
    if (i >= N_RELEASED) {
      fprintf(stderr, "step %d %s is not in this test's table\n", i + 1, steps[i].name);
      differ++;
    } else if (strcmp(released[i].name, steps[i].name) != 0 || released[i].sqlite != sq ||
               released[i].pg != pg) {
      fprintf(stderr, "step %d %s: its SQL is not the SQL released (%s%s)\n", i + 1,
              steps[i].name, released[i].sqlite != sq ? "SQLite " : "",
              released[i].pg != pg ? "PostgreSQL" : "");
      differ++;
    }
  }
  if (differ) {
    fprintf(stderr, "the table as the steps now stand:\n");
    for (i = 0; i < N_STEPS; i++)
      fprintf(stderr, "    {\"%s\", 0x%016llxULL, 0x%016llxULL},\n", steps[i].name,
              (unsigned long long)sqlite_hash(i),
              (unsigned long long)fnv(FNV_START, steps[i].pg));
  }
  assert_int_equal(N_RELEASED, N_STEPS);
  assert_int_equal(differ, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_released_steps_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
