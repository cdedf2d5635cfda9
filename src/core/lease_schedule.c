/*
** lease_schedule.c: the core of schedules (lease.h, "Schedules"): the
** argument checks, the ticks of a schedule (every seconds, or a cron
** expression: lease_cron.c), and the calls into the backend's members
** schedule, unschedule, schedules and tick.  A backend reads the due
** schedules and asks lease__schedule_due for the tick to enqueue and the
** next one; it writes each under a guarded UPDATE (lease_int.h).
*/
#include "lease.h"
#include "lease_cron.h"
#include "lease_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Start a call that writes: the handle's busy flag (LEASE__HOLD),
** lease__begin, refuse a backend without member fn, and a read-only handle. */
#define BEGIN_WRITE(db, fn)                                                        \
  LEASE__HOLD(db);                                                                 \
  do {                                                                             \
    int rc_ = lease__begin(db);                                                    \
    if (rc_ != LEASE_OK) return rc_;                                               \
    if (!(db)->be->fn)                                                             \
      return lease__fail((db), LEASE_ERROR, "%s is not supported by the %s backend", \
                         #fn, (db)->be->name);                                     \
    if ((db)->opt.flags & LEASE_OPEN_READONLY)                                     \
      return lease__fail((db), LEASE_READONLY, "%s writes, and the handle is read-only", #fn); \
  } while (0)

/* See lease.h. */
void lease_schedule_spec_default(lease_schedule_spec *s) {
  if (!s) return;
  memset(s, 0, sizeof *s);
  s->max_attempts = LEASE_MAX_ATTEMPTS_DEFAULT;
  s->created_at = s->next_at = s->last_at = NAN;
}

/* Check a schedule name: 1 to LEASE_SCHEDULE_NAME_MAX bytes. */
static int check_name(lease_db *db, const char *what, const char *name, size_t *len) {
  if (!name) return lease__fail(db, LEASE_MISUSE, "%s must not be NULL", what);
  if (*len == LEASE_NTS) *len = strlen(name);
  if (*len == 0 || *len > LEASE_SCHEDULE_NAME_MAX)
    return lease__fail(db, LEASE_MISUSE, "%s must be 1 to %d bytes, got %zu", what,
                       LEASE_SCHEDULE_NAME_MAX, *len);
  return LEASE_OK;
}

/* Check a finite clock reading; it is the call's now for the clock step
** (lease__clock). */
static int check_now(lease_db *db, double now) {
  if (!isfinite(now)) return lease__fail(db, LEASE_MISUSE, "now must be a finite number");
  db->clock_now = now;
  return LEASE_OK;
}

/* 1 when the ticks of every around t are distinct doubles: |t / every|
** at most 2^52, so that k, k - 1 and k + 1 are distinct too. */
static int every_fits(double every, double t) {
  double q = t / every;
  return every > 0 && isfinite(q) && fabs(q) <= 4503599627370496.0;
}

/* See lease_int.h.  The every ticks are k * every; a float product may land
** a hair off the real number, so k is nudged until the tick is on the
** right side of t. */
int lease__schedule_next(const lease_schedule_spec *s, double t, double *next) {
  if (s->cron) {
    lease__cron c;
    char err[16];
    if (lease__cron_parse(s->cron, s->cron_len, &c, err, sizeof err)) return -1;
    return lease__cron_next(&c, t, next);
  } else {
    double k;
    if (!every_fits(s->every, t)) return -1;
    k = floor(t / s->every) + 1;
    while (k * s->every <= t) k++;
    while ((k - 1) * s->every > t) k--;
    *next = k * s->every;
    return isfinite(*next) ? 0 : -1;
  }
}

/* See lease_int.h. */
int lease__schedule_due(const lease_schedule_spec *s, double now, double *tick, double *next) {
  double latest;
  if (s->cron) {
    lease__cron c;
    char err[16];
    int e;
    if (lease__cron_parse(s->cron, s->cron_len, &c, err, sizeof err)) return -1;
    /* next_at is a tick <= now: the search finds one at least that late */
    if (lease__cron_prev(&c, now, &latest) || latest < s->next_at) latest = s->next_at;
    if ((e = lease__cron_next(&c, now, next)) != 0) return e == -2 ? -2 : -1;
  } else {
    double k;
    if (!(s->every > 0 && isfinite(s->every))) return -1;   /* another client stored it */
    if (!every_fits(s->every, now)) return -2;
    k = floor(now / s->every);
    while (k * s->every > now) k--;
    while ((k + 1) * s->every <= now) k++;
    latest = k * s->every;
    if (latest < s->next_at) latest = s->next_at;
    if (lease__schedule_next(s, now, next)) return -1;
  }
  *tick = latest;
  return 0;
}

/* See lease_int.h. */
int lease__schedule_due_failed(lease_db *db, const lease_schedule_spec *s, double now, int e) {
  if (e == -2 && s->cron)
    return lease__fail(db, LEASE_MISUSE, "now %.17g is outside the years 1 to 9989 that the cron of "
                       "schedule %.*s reads", now, (int)s->name_len, s->name);
  if (e == -2)
    return lease__fail(db, LEASE_MISUSE, "now %.17g is out of range for schedule %.*s: its every "
                       "(%.17g) gives it no distinct next tick", now, (int)s->name_len, s->name,
                       s->every);
  return lease__fail(db, LEASE_MISMATCH, "schedule %.*s: its stored cron or every gives no "
                     "next tick", (int)s->name_len, s->name);
}

/* See lease_int.h.  The name is copied as bytes: a zero byte in it is
** part of the id, as in the name. */
int lease__schedule_job_id(const lease_schedule_spec *s, double tick, char *out, size_t n) {
  char at[40];
  int m = tick == floor(tick) && fabs(tick) < 9.2e18
              ? snprintf(at, sizeof at, "@%" PRId64, (int64_t)tick)
              : snprintf(at, sizeof at, "@%.17g", tick);
  if (n > 0) {
    size_t name = s->name_len < n - 1 ? s->name_len : n - 1;
    size_t rest = n - 1 - name, suffix = (size_t)m < rest ? (size_t)m : rest;
    memcpy(out, s->name, name);
    memcpy(out + name, at, suffix);
    out[name + suffix] = '\0';
  }
  return (int)(s->name_len + (size_t)m);
}

/* See lease.h. */
int lease_cron_next(const char *expr, size_t len, double t, double *out, char *err,
                    size_t errlen) {
  lease__cron c;
  char buf[160];
  if (!err || errlen == 0) {
    err = buf;
    errlen = sizeof buf;
  }
  if (!expr || !out) {
    snprintf(err, errlen, "cron: expr and out must not be NULL");
    return LEASE_MISUSE;
  }
  if (len == LEASE_NTS) len = strlen(expr);
  if (lease__cron_parse(expr, len, &c, err, errlen)) return LEASE_MISUSE;
  switch (lease__cron_next(&c, t, out)) {
  case 0:
    return LEASE_OK;
  case -2:
    snprintf(err, errlen, "cron: the time %.17g is outside the years 1 to 9989", t);
    return LEASE_RANGE;
  default:
    snprintf(err, errlen, "cron: '%.*s' matches no time within ten years", (int)len, expr);
    return LEASE_MISUSE;
  }
}

/* See lease.h. */
int lease_schedule(lease_db *db, const lease_schedule_spec *s, double now) {
  lease_schedule_spec t;
  lease_new_job j;
  BEGIN_WRITE(db, schedule);
  if (!s) return lease__fail(db, LEASE_MISUSE, "s must not be NULL");
  t = *s;
  if (check_name(db, "name", t.name, &t.name_len)) return db->rc;
  if (check_now(db, now)) return db->rc;
  if (t.cron && t.every != 0)
    return lease__fail(db, LEASE_MISUSE, "give every or cron, not both");
  if (!t.cron && t.every == 0) return lease__fail(db, LEASE_MISUSE, "give every or cron");
  if (t.cron) {
    char err[160];
    if (t.cron_len == LEASE_NTS) t.cron_len = strlen(t.cron);
    if (lease_cron_next(t.cron, t.cron_len, now, &t.next_at, err, sizeof err))
      return lease__fail(db, LEASE_MISUSE, "%s", err);
  } else if (!(isfinite(t.every) && t.every > 0)) {
    return lease__fail(db, LEASE_MISUSE, "every must be a positive number of seconds");
  }
  /* the jobs' options, checked as an enqueue's */
  lease_new_job_default(&j);
  j.id = "x";
  j.id_len = 1;
  j.queue = t.queue;
  j.queue_len = t.queue_len;
  j.payload = t.payload;
  j.payload_len = t.payload_len;
  j.priority = t.priority;
  j.max_attempts = t.max_attempts;
  if (lease__check_new_job(db, "", &j, &j)) return db->rc;
  t.queue = j.queue;
  t.queue_len = j.queue_len;
  t.payload_len = j.payload_len;
  t.created_at = now;
  t.last_at = NAN;
  if (!t.cron && lease__schedule_next(&t, now, &t.next_at))
    return lease__fail(db, LEASE_MISUSE, "%s",
                       fabs(now) > 9007199254740992.0
                           ? "now is too far from 0 (past 2^53): the ticks of every around it "
                             "would not be distinct numbers"
                           : "every is too small for now: its ticks would not be distinct numbers");
  return db->be->schedule(db, &t);
}

/* See lease.h. */
int lease_unschedule(lease_db *db, const char *name, size_t name_len, int *found) {
  int f = 0;
  BEGIN_WRITE(db, unschedule);
  if (found) *found = 0;
  if (check_name(db, "name", name, &name_len)) return db->rc;
  if (db->be->unschedule(db, name, name_len, &f) != LEASE_OK) return db->rc;
  if (found) *found = f;
  return LEASE_OK;
}

/* See lease.h. */
int lease_schedules(lease_db *db, const char *after, size_t after_len, int max,
                    lease_schedule_spec *out, int *count) {
  LEASE__HOLD(db);
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (!out || !count) return lease__fail(db, LEASE_MISUSE, "out and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (after && after_len == LEASE_NTS) after_len = strlen(after);
  if (!db->be->schedules) return LEASE_OK;   /* a backend without schedules has none */
  return db->be->schedules(db, after, after_len, max, out, count);
}

/* See lease.h. */
int lease_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
               int *more) {
  int m = 0;
  BEGIN_WRITE(db, tick);
  if (count) *count = 0;
  if (more) *more = 0;
  if (!ids || !id_lens || !count)
    return lease__fail(db, LEASE_MISUSE, "ids, id_lens and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (check_now(db, now)) return db->rc;
  if (db->be->tick(db, now, max, ids, id_lens, count, &m) != LEASE_OK) return db->rc;
  if (*count > 0) lease__wake(db, NULL, 0);
  if (more) *more = m;
  return LEASE_OK;
}
