/*
** lease_cron.c: cron expressions (lease_cron.h): the parser into bitsets
** and the search for the next and the previous matching minute, in UTC
** (gmtime_r and timegm), stepping by month, day, hour, then minute, so a
** search over years costs a few thousand steps.
*/
#include "lease_cron.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The five fields: their names, bounds and the names their values take. */
typedef struct field {
  const char *name;
  int lo, hi;
  const char *const *words;   /* words[i] stands for lo + i; NULL: numbers only */
} field;

static const char *const month_words[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC", NULL};
static const char *const dow_words[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", NULL};

static const field fields[5] = {
  {"minute", 0, 59, NULL},
  {"hour", 0, 23, NULL},
  {"day-of-month", 1, 31, NULL},
  {"month", 1, 12, month_words},
  {"day-of-week", 0, 7, dow_words},
};

/* Parse one value of f at *p (digits, or a word of f): 0 with *v set and
** *p moved past it, or -1 with err filled. */
static int parse_value(const field *f, const char **p, const char *end, int *v, char *err,
                       size_t errlen) {
  const char *s = *p;
  if (s < end && isdigit((unsigned char)*s)) {
    long n = 0;
    while (s < end && isdigit((unsigned char)*s)) {
      if (n < 1000) n = n * 10 + (*s - '0');
      s++;
    }
    if (n < f->lo || n > f->hi) {
      snprintf(err, errlen, "cron: %s field: %.*s is out of range %d-%d", f->name,
               (int)(s - *p), *p, f->lo, f->hi);
      return -1;
    }
    *v = (int)n;
    *p = s;
    return 0;
  }
  if (f->words && end - s >= 3) {
    int i;
    for (i = 0; f->words[i]; i++)
      if (toupper((unsigned char)s[0]) == f->words[i][0] &&
          toupper((unsigned char)s[1]) == f->words[i][1] &&
          toupper((unsigned char)s[2]) == f->words[i][2] &&
          (end - s == 3 || !isalpha((unsigned char)s[3]))) {
        *v = f->lo + i;
        *p = s + 3;
        return 0;
      }
  }
  {
    const char *e = s;
    while (e < end && *e != ',' && *e != '-' && *e != '/') e++;
    if (e == s)
      snprintf(err, errlen, "cron: %s field: a value is missing", f->name);
    else
      snprintf(err, errlen, "cron: %s field: '%.*s' is not a %s", f->name, (int)(e - s), s,
               f->words ? "number or name" : "number");
  }
  return -1;
}

/* Parse the field f from s to end into *bits.  0, or -1 with err filled. */
static int parse_field(const field *f, const char *s, const char *end, uint64_t *bits, char *err,
                       size_t errlen) {
  *bits = 0;
  for (;;) {
    int lo, hi, step = 1, v, ranged = 0;
    const char *item = s;
    if (s < end && *s == '*') {
      lo = f->lo;
      hi = f->hi;
      ranged = 1;
      s++;
    } else {
      if (parse_value(f, &s, end, &lo, err, errlen)) return -1;
      hi = lo;
      if (s < end && *s == '-') {
        s++;
        ranged = 1;
        if (parse_value(f, &s, end, &hi, err, errlen)) return -1;
        if (hi < lo) {
          snprintf(err, errlen, "cron: %s field: %.*s is an empty range", f->name,
                   (int)(s - item), item);
          return -1;
        }
      }
    }
    if (s < end && *s == '/') {
      long n = 0;
      const char *d = ++s;
      while (s < end && isdigit((unsigned char)*s)) {
        if (n < 1000) n = n * 10 + (*s - '0');
        s++;
      }
      if (s == d || n < 1 || n > f->hi) {
        const char *e = d;
        while (e < end && *e != ',') e++;
        snprintf(err, errlen, "cron: %s field: step '%.*s' must be a number from 1 to %d",
                 f->name, (int)(e - d), d, f->hi);
        return -1;
      }
      step = (int)n;
      if (!ranged) hi = f->hi;   /* a/s: from a to the maximum */
    }
    for (v = lo; v <= hi; v += step) *bits |= (uint64_t)1 << v;
    if (s == end) return 0;
    if (*s != ',') {
      snprintf(err, errlen, "cron: %s field: unexpected '%c'", f->name, *s);
      return -1;
    }
    s++;
  }
}

/* See lease_cron.h. */
int lease__cron_parse(const char *expr, size_t len, lease__cron *out, char *err,
                      size_t errlen) {
  const char *p = expr, *end = expr + len, *start[5], *stop[5];
  uint64_t bits[5];
  int n = 0, i;
  memset(out, 0, sizeof *out);
  if (errlen) err[0] = '\0';
  while (p < end) {
    while (p < end && isspace((unsigned char)*p)) p++;
    if (p == end) break;
    if (n == 5) {
      snprintf(err, errlen, "cron: expected 5 fields (minute hour day-of-month month "
               "day-of-week), got more");
      return -1;
    }
    start[n] = p;
    while (p < end && !isspace((unsigned char)*p)) p++;
    stop[n++] = p;
  }
  if (n < 5) {
    snprintf(err, errlen, "cron: expected 5 fields (minute hour day-of-month month "
             "day-of-week), got %d", n);
    return -1;
  }
  for (i = 0; i < 5; i++)
    if (parse_field(&fields[i], start[i], stop[i], &bits[i], err, errlen)) return -1;
  out->minute = bits[0];
  out->hour = (uint32_t)bits[1];
  out->dom = (uint32_t)bits[2];
  out->month = (uint32_t)bits[3];
  out->dow = (uint32_t)(bits[4] & 0x7f) | (uint32_t)((bits[4] >> 7) & 1);   /* 7: Sunday */
  out->dom_star = start[2][0] == '*';
  out->dow_star = start[4][0] == '*';
  return 0;
}

/* Whether the day of tm matches: Vixie cron's rule (lease_cron.h). */
static int day_matches(const lease__cron *c, const struct tm *tm) {
  int dom = (c->dom >> tm->tm_mday) & 1, dow = (c->dow >> tm->tm_wday) & 1;
  if (c->dom_star || c->dow_star) return dom && dow;
  return dom || dow;
}

/* The clock's range where gmtime_r and timegm are exact here: years 1
** to 9999. */
#define CLOCK_MIN (-62135596800.0)
#define CLOCK_MAX (253402300799.0)

/* See lease_cron.h. */
int lease__cron_next(const lease__cron *c, double t, double *out) {
  time_t s, limit;
  struct tm tm;
  if (!(t >= CLOCK_MIN && t <= CLOCK_MAX - LEASE__CRON_HORIZON)) return -2;
  s = (time_t)(floor(t / 60) * 60) + 60;   /* the first minute strictly after t */
  limit = s + (time_t)LEASE__CRON_HORIZON;
  while (s <= limit) {
    if (!gmtime_r(&s, &tm)) return -1;
    if (!((c->month >> (tm.tm_mon + 1)) & 1)) {
      tm.tm_mon++;   /* the first minute of the next month */
      tm.tm_mday = 1;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if (!day_matches(c, &tm)) {
      tm.tm_mday++;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if (!((c->hour >> tm.tm_hour) & 1)) {
      tm.tm_hour++;
      tm.tm_min = tm.tm_sec = 0;
    } else if (!((c->minute >> tm.tm_min) & 1)) {
      s += 60;
      continue;
    } else {
      *out = (double)s;
      return 0;
    }
    tm.tm_isdst = 0;
    s = timegm(&tm);
  }
  return -1;
}

/* See lease_cron.h. */
int lease__cron_prev(const lease__cron *c, double t, double *out) {
  time_t s, limit;
  struct tm tm;
  if (!(t >= CLOCK_MIN + LEASE__CRON_HORIZON && t <= CLOCK_MAX)) return -1;
  s = (time_t)(floor(t / 60) * 60);   /* the last minute at or before t */
  limit = s - (time_t)LEASE__CRON_HORIZON;
  while (s >= limit) {
    if (!gmtime_r(&s, &tm)) return -1;
    if (!((c->month >> (tm.tm_mon + 1)) & 1)) {
      tm.tm_mday = 1;   /* back to the last minute of the previous month */
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if (!day_matches(c, &tm)) {
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else if (!((c->hour >> tm.tm_hour) & 1)) {
      tm.tm_min = tm.tm_sec = 0;
    } else if (!((c->minute >> tm.tm_min) & 1)) {
      s -= 60;
      continue;
    } else {
      *out = (double)s;
      return 0;
    }
    tm.tm_isdst = 0;
    s = timegm(&tm) - 60;
  }
  return -1;
}
