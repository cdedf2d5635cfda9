/*
** test_cron.c: the cron expressions of schedules (src/core/lease_cron.c):
** the next matching minute after a time, and the last one at or before,
** over a table of expressions and times (steps, lists, ranges, names, the
** day-of-month / day-of-week OR rule, month ends, the leap day, year ends,
** Sunday as 0 and 7), and the errors of expressions that do not parse,
** each naming its field.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lease.h"
#include "lease_cron.h"

/* "YYYY-MM-DD HH:MM[:SS]" in UTC, as seconds since the epoch. */
static double utc(const char *s) {
  struct tm tm;
  int sec = 0;
  memset(&tm, 0, sizeof tm);
  assert_true(sscanf(s, "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &sec) >= 5);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = sec;
  return (double)timegm(&tm);
}

/* t as "YYYY-MM-DD HH:MM" (static buffer, one of two). */
static const char *show(double t) {
  static char buf[2][32];
  static int k;
  time_t s = (time_t)t;
  struct tm tm;
  k ^= 1;
  gmtime_r(&s, &tm);
  strftime(buf[k], sizeof buf[k], "%Y-%m-%d %H:%M", &tm);
  return buf[k];
}

static lease__cron parse(const char *expr) {
  lease__cron c;
  char err[160];
  if (lease__cron_parse(expr, strlen(expr), &c, err, sizeof err)) fail_msg("%s: %s", expr, err);
  return c;
}

/* expr, a time, the first matching minute strictly after it. */
static const struct { const char *expr, *from, *next; } nexts[] = {
  {"* * * * *", "2024-01-01 00:00", "2024-01-01 00:01"},
  {"* * * * *", "2024-01-01 00:00:30", "2024-01-01 00:01"},
  {"*/15 * * * *", "2024-01-01 00:14", "2024-01-01 00:15"},
  {"*/15 * * * *", "2024-01-01 00:45", "2024-01-01 01:00"},
  {"1-10/3 * * * *", "2024-01-01 00:07", "2024-01-01 00:10"},
  {"1-10/3 * * * *", "2024-01-01 00:10", "2024-01-01 01:01"},
  {"5/20 * * * *", "2024-01-01 00:30", "2024-01-01 00:45"},
  {"0 9 * * MON-FRI", "2024-01-05 09:00", "2024-01-08 09:00"},
  {"30 8 1,15 * *", "2024-01-01 08:30", "2024-01-15 08:30"},
  {"0 0 1 * *", "2024-01-31 12:00", "2024-02-01 00:00"},
  {"0 0 31 * *", "2024-01-31 00:00", "2024-03-31 00:00"},
  {"0 0 28-31 2 *", "2023-02-28 00:00", "2024-02-28 00:00"},
  {"0 0 29 2 *", "2024-02-29 00:00", "2028-02-29 00:00"},
  {"0 0 29 2 *", "2023-03-01 00:00", "2024-02-29 00:00"},
  {"0 0 29 2 *", "2096-03-01 00:00", "2104-02-29 00:00"},
  {"59 23 31 12 *", "2024-12-31 23:59", "2025-12-31 23:59"},
  {"0 0 1 1 *", "2024-12-31 23:59:59", "2025-01-01 00:00"},
  {"0 0 1 1 *", "2099-12-31 00:00", "2100-01-01 00:00"},
  {"0 0 * * 0", "2024-01-01 00:00", "2024-01-07 00:00"},
  {"0 0 * * 7", "2024-01-01 00:00", "2024-01-07 00:00"},
  {"0 0 * * SUN", "2024-01-01 00:00", "2024-01-07 00:00"},
  {"5 4 * * sun", "2024-01-07 04:05", "2024-01-14 04:05"},
  {"0 0 * * 5-7", "2024-01-06 00:00", "2024-01-07 00:00"},
  /* both day fields restricted: either matches (the 13th or a Friday) */
  {"0 0 13 * 5", "2024-01-01 00:00", "2024-01-05 00:00"},
  {"0 0 13 * 5", "2024-01-05 00:00", "2024-01-12 00:00"},
  {"0 0 13 * 5", "2024-01-12 00:00", "2024-01-13 00:00"},
  {"0 0 1 * MON", "2024-01-24 00:00", "2024-01-29 00:00"},
  /* a day field starting with '*': both must match */
  {"0 0 * * 5", "2024-01-12 00:00", "2024-01-19 00:00"},
  {"0 0 */10 * 1", "2024-01-01 00:00", "2024-03-11 00:00"},
  {"0 0 * * */2", "2024-01-01 00:00", "2024-01-02 00:00"},
  {"0 12 * JAN,jul *", "2024-02-01 00:00", "2024-07-01 12:00"},
  {"15 14 1 * *", "2024-01-01 14:15", "2024-02-01 14:15"},
  {"0 22 * * 1-5", "2024-01-06 12:00", "2024-01-08 22:00"},
  {"0 0,12 1 */2 *", "2024-01-01 12:00", "2024-03-01 00:00"},
  {"0 0 1 1 *", "1969-06-01 00:00", "1970-01-01 00:00"},
};

static void test_next(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof nexts / sizeof nexts[0]; i++) {
    lease__cron c = parse(nexts[i].expr);
    double got = -1;
    if (lease__cron_next(&c, utc(nexts[i].from), &got))
      fail_msg("%s after %s: no next", nexts[i].expr, nexts[i].from);
    if (got != utc(nexts[i].next))
      fail_msg("%s after %s: got %s, want %s", nexts[i].expr, nexts[i].from, show(got),
               nexts[i].next);
  }
}

/* expr, a time, the last matching minute at or before it. */
static const struct { const char *expr, *at, *prev; } prevs[] = {
  {"*/15 * * * *", "2024-01-01 00:14:59", "2024-01-01 00:00"},
  {"*/15 * * * *", "2024-01-01 00:15", "2024-01-01 00:15"},
  {"1-10/3 * * * *", "2024-01-01 00:59", "2024-01-01 00:10"},
  {"0 0 29 2 *", "2025-01-01 00:00", "2024-02-29 00:00"},
  {"0 9 * * MON-FRI", "2024-01-07 12:00", "2024-01-05 09:00"},
  {"0 0 13 * 5", "2024-01-12 23:00", "2024-01-12 00:00"},
  {"0 0 1 1 *", "2025-01-01 00:00:30", "2025-01-01 00:00"},
  {"59 23 31 12 *", "2025-01-01 00:00", "2024-12-31 23:59"},
  {"0 0 31 * *", "2024-03-30 00:00", "2024-01-31 00:00"},
};

static void test_prev(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof prevs / sizeof prevs[0]; i++) {
    lease__cron c = parse(prevs[i].expr);
    double got = -1;
    if (lease__cron_prev(&c, utc(prevs[i].at), &got))
      fail_msg("%s at %s: no previous", prevs[i].expr, prevs[i].at);
    if (got != utc(prevs[i].prev))
      fail_msg("%s at %s: got %s, want %s", prevs[i].expr, prevs[i].at, show(got),
               prevs[i].prev);
  }
}

/* An expression that parses but never matches: no next, no previous. */
static void test_never(void **state) {
  lease__cron c = parse("0 0 30 2 *");
  double got = -1;
  (void)state;
  assert_int_equal(lease__cron_next(&c, utc("2024-01-01 00:00"), &got), -1);
  assert_int_equal(lease__cron_prev(&c, utc("2024-01-01 00:00"), &got), -1);
  c = parse("0 0 31 4,6,9,11 *");
  assert_int_equal(lease__cron_next(&c, utc("2024-01-01 00:00"), &got), -1);
}

/* A time outside the calendar's years is told apart from an expression
** that never matches: -2, and lease_cron_next's LEASE_RANGE naming it. */
static void test_out_of_range(void **state) {
  lease__cron c = parse("* * * * *");
  double got = -1, late = 253402300799.0 - LEASE__CRON_HORIZON;
  char err[160];
  (void)state;
  assert_int_equal(lease__cron_next(&c, late, &got), 0);
  assert_int_equal(lease__cron_next(&c, late + 60, &got), -2);
  assert_int_equal(lease__cron_next(&c, -62135596800.0 - 1, &got), -2);
  assert_int_equal(lease_cron_next("* * * * *", LEASE_NTS, late + 60, &got, err, sizeof err),
                   LEASE_RANGE);
  assert_string_equal(err, "cron: the time 253086076859 is outside the years 1 to 9989");
  assert_int_equal(lease_cron_next("0 0 30 2 *", LEASE_NTS, 0, &got, err, sizeof err),
                   LEASE_MISUSE);
  assert_string_equal(err, "cron: '0 0 30 2 *' matches no time within ten years");
}

/* expr, its error. */
static const struct { const char *expr, *err; } bad[] = {
  {"61 * * * *", "cron: minute field: 61 is out of range 0-59"},
  {"* 24 * * *", "cron: hour field: 24 is out of range 0-23"},
  {"* * 0 * *", "cron: day-of-month field: 0 is out of range 1-31"},
  {"* * 32 * *", "cron: day-of-month field: 32 is out of range 1-31"},
  {"* * * 13 *", "cron: month field: 13 is out of range 1-12"},
  {"* * * * 8", "cron: day-of-week field: 8 is out of range 0-7"},
  {"* * * *", "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 4"},
  {"", "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 0"},
  {"* * * * * *", "cron: expected 5 fields (minute hour day-of-month month day-of-week), "
                  "got more"},
  {"*/0 * * * *", "cron: minute field: step '0' must be a number from 1 to 59"},
  {"*/ * * * *", "cron: minute field: step '' must be a number from 1 to 59"},
  {"5-1 * * * *", "cron: minute field: 5-1 is an empty range"},
  {"* * * FOO *", "cron: month field: 'FOO' is not a number or name"},
  {"* * * * MONDAY", "cron: day-of-week field: 'MONDAY' is not a number or name"},
  {"x * * * *", "cron: minute field: 'x' is not a number"},
  {"1,,2 * * * *", "cron: minute field: a value is missing"},
  {"1-5x * * * *", "cron: minute field: unexpected 'x'"},
  {"* * * JAN-FEB MON-FOO", "cron: day-of-week field: 'FOO' is not a number or name"},
};

static void test_errors(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lease__cron c;
    char err[160];
    if (lease__cron_parse(bad[i].expr, strlen(bad[i].expr), &c, err, sizeof err) != -1)
      fail_msg("'%s' parsed", bad[i].expr);
    if (strcmp(err, bad[i].err) != 0)
      fail_msg("'%s': got \"%s\", want \"%s\"", bad[i].expr, err, bad[i].err);
  }
}

/* The bitsets of a few expressions, and the length given is what is read. */
static void test_bits(void **state) {
  lease__cron c = parse("0-59/20 0,12 * * 1-5");
  (void)state;
  assert_true(c.minute == ((1ULL << 0) | (1ULL << 20) | (1ULL << 40)));
  assert_true(c.hour == ((1u << 0) | (1u << 12)));
  assert_true(c.dow == 0x3e);
  assert_true(c.dom_star && !c.dow_star);
  c = parse("0 0 * * 7");
  assert_true(c.dow == 1);
  assert_int_equal(lease__cron_parse("0 0 * * 1 garbage", 9, &c, (char[8]){0}, 8), 0);
  assert_true(c.dow == 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_next),
    cmocka_unit_test(test_prev),
    cmocka_unit_test(test_never),
    cmocka_unit_test(test_out_of_range),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
