/*
** lease_cron.h: cron expressions (five fields, UTC) for the schedules of
** the job queue (lease.h, "Schedules").  Internal to the core and its
** backends; every name carries the prefix lease__cron.
**
** An expression is "minute hour day-of-month month day-of-week", the
** fields separated by blanks, each a comma list of items: `*`, a value, a
** range `a-b`, each optionally with a step `/s` (`*`/s, a-b/s, and a/s
** meaning a to the field's maximum).  minute 0-59, hour 0-23,
** day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 0-7 or SUN-SAT
** (0 and 7 are both Sunday); names are case-insensitive.  Vixie cron's
** day rule: when both day fields are restricted (neither starts with
** `*`), a day matches when EITHER matches; otherwise both must.
*/
#ifndef LEASE_CRON_H
#define LEASE_CRON_H

#include <stddef.h>
#include <stdint.h>

/* A parsed expression: one bit per allowed value. */
typedef struct lease__cron {
  uint64_t minute;   /* bits 0-59 */
  uint32_t hour;     /* bits 0-23 */
  uint32_t dom;      /* bits 1-31 */
  uint32_t month;    /* bits 1-12 */
  uint32_t dow;      /* bits 0-6, Sunday 0 (7 folded onto 0) */
  int dom_star;      /* the day-of-month field starts with '*' */
  int dow_star;      /* the day-of-week field starts with '*' */
} lease__cron;

/* How far lease__cron_next and lease__cron_prev look, seconds (ten years:
** "0 0 29 2 *" matches at least once in any eight). */
#define LEASE__CRON_HORIZON (10.0 * 366 * 86400)

/*
** lease__cron_parse: parse expr (len bytes) into *out.  Returns 0, or -1
** with a message in err (errlen bytes, always terminated) naming the
** field: "cron: minute field: 61 is out of range 0-59".
*/
int lease__cron_parse(const char *expr, size_t len, lease__cron *out, char *err, size_t errlen);

/*
** lease__cron_next: the first minute strictly after t (seconds since the
** epoch, UTC) that c matches, into *out.  Returns 0, -1 when none comes
** within LEASE__CRON_HORIZON (an expression that never matches, such as
** "0 0 30 2 *"), or -2 when t is out of the clock's range (before the
** year 1, or less than LEASE__CRON_HORIZON before the end of 9999).
*/
int lease__cron_next(const lease__cron *c, double t, double *out);

/*
** lease__cron_prev: the last minute at or before t that c matches, into
** *out.  Returns 0, or -1 when none lies within LEASE__CRON_HORIZON
** before t.
*/
int lease__cron_prev(const lease__cron *c, double t, double *out);

#endif
