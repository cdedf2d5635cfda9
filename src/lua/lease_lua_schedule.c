/***
Schedules: recurring jobs.  A schedule enqueues one job per tick when
db:tick runs (a `forever` pool ticks as it polls); the clock is seconds
since the epoch, UTC.
@module lease
*/
/*
** lease_lua_schedule.c: schedules in the binding, over the core's lease.h
** "Schedules": the records schedule, unschedule, schedules and tick,
** reached as db:<name>(...) through lease_lua.c's op_method.
*/
#include <math.h>
#include <string.h>

#include "lease_lua_int.h"

/* Rows or ids read per call of the core. */
#define PAGE 64

/* --- schedule -------------------------------------------------------- */

/***
Create a schedule, or replace the one of that name (its ticks then count
from `now`; the jobs it enqueued stay); declared again as it is stored (the
same every or cron and job options), it keeps its ticks, a due one among
them.  Its ticks are the times after
`now` that are multiples of `every` seconds (k * every for an integer k),
or the minutes the cron expression matches in UTC: five fields
`"minute hour day-of-month month day-of-week"` with `*`, lists (`1,15`),
ranges (`1-5`), steps (`0-59/15`, `1-10/3`), names (`JAN`, `MON`), 0 and 7
both Sunday; when both day fields are restricted, a day matches if either
does (Vixie cron).  db:tick enqueues a job per tick.
@function db:schedule
@tparam string name 1 to 200 bytes
@tparam number now seconds since the epoch (finite): `lease.now()`
@tparam table opts `{every = seconds}` or `{cron = "m h dom mon dow"}` (one of
  them), and the jobs' options `queue`, `payload`, `priority`, `max_attempts`
  as for db:enqueue
@treturn boolean true
@raise `bad argument #3 to 'schedule' (every must be a positive number of
  seconds, got 0)`, `(... cron: minute field: 61 is out of range 0-59)`,
  `(opts: give every or cron, not both)` and the like, with nothing written;
  `lease.schedule: ...` on a database failure, `[readonly]` on a read-only
  handle, `[mismatch]` when another client's trigger skipped the write
  (nothing stored)
*/
static void check_schedule(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"every", "cron", "queue", "payload", "priority",
                                     "max_attempts"};
  static const char *const job_keys[] = {"queue", "payload", "priority", "max_attempts"};
  const lb_arg *o = LB_ARG(c, 4, "opts");
  lease_schedule_spec *s = &a->sched;
  lease_new_job job;
  int i, has_every, has_cron;
  lease_schedule_spec_default(s);
  s->name = lb_check_string(L, 2, LB_ARG(c, 2, "name"), 0, &s->name_len);
  if (s->name_len > LEASE_SCHEDULE_NAME_MAX)
    lb_error(L, LB_ARG(c, 2, NULL), lua_pushfstring(L, "name must be at most %d bytes, got %d",
                                                    LEASE_SCHEDULE_NAME_MAX, (int)s->name_len));
  a->now = lb_check_number(L, 3, LB_ARG(c, 3, "now"), LB_FINITE, -HUGE_VAL, 0);
  if (lua_type(L, 4) != LUA_TTABLE) lb_fail(L, 4, o, "a table");
  lb_check_keys(L, o, 4, keys, 6, "opts");
  lua_getfield(L, 4, "every");
  lua_getfield(L, 4, "cron");   /* stays on the stack, alive */
  has_every = !lua_isnil(L, -2);
  has_cron = !lua_isnil(L, -1);
  if (has_every && has_cron) lb_error(L, o, "opts: give every or cron, not both");
  if (!has_every && !has_cron) lb_error(L, o, "opts: give every (seconds) or cron (an expression)");
  if (has_every) {
    if (lua_type(L, -2) != LUA_TNUMBER || !(lua_tonumber(L, -2) > 0) ||
        !isfinite(lua_tonumber(L, -2)))
      lb_fail(L, -2, LB_ARG(c, 4, "every"), "a positive number of seconds");
    s->every = lua_tonumber(L, -2);
    if (!(fabs(a->now / s->every) <= 4503599627370496.0)) {
      /* past 2^53 no clock's now (seconds, ms, us) is meant: now is at fault */
      if (!(fabs(a->now) <= 9007199254740992.0))
        lb_error(L, LB_ARG(c, 3, NULL), "now is too far from 0 (past 2^53): the ticks of every "
                 "around it would not be distinct numbers");
      lb_error(L, o, "every is too small for now: its ticks would not be distinct numbers");
    }
  } else {
    char err[160];
    double next;
    int rc;
    s->cron = lb_check_string(L, -1, LB_ARG(c, 4, "cron"), 0, &s->cron_len);
    rc = lease_cron_next(s->cron, s->cron_len, a->now, &next, err, sizeof err);
    if (rc == LEASE_RANGE) lb_error(L, LB_ARG(c, 3, NULL), lua_pushstring(L, err));
    if (rc != LEASE_OK) lb_error(L, o, lua_pushstring(L, err));
  }
  /* the jobs' options, checked as enqueue's, from a table of just those */
  lua_createtable(L, 0, 4);
  for (i = 0; i < 4; i++) {
    lua_getfield(L, 4, job_keys[i]);
    lua_setfield(L, -2, job_keys[i]);
  }
  lease_new_job_default(&job);
  lb_check_job_opts(L, c, -1, 4, &job);
  s->queue = job.queue;
  s->queue_len = job.queue_len;
  s->payload = job.payload;
  s->payload_len = job.payload_len;
  s->priority = job.priority;
  s->max_attempts = job.max_attempts;
}
static int run_schedule(lease_db *db, lb_args *a) {
  return lease_schedule(db, &a->sched, a->now);
}
static int push_true(lua_State *L, lb_args *a) {
  (void)a;
  lua_pushboolean(L, 1);
  return 1;
}
const lb_op lb_op_schedule = {"schedule", 0, 0, check_schedule, run_schedule, push_true};

/* --- unschedule ------------------------------------------------------ */

/***
Delete a schedule (the jobs it enqueued stay).
@function db:unschedule
@tparam string name the schedule
@treturn boolean true
@treturn[2] boolean false
@treturn[2] string `"missing"`
@raise `bad argument #1 to 'unschedule' (name must be a non-empty string, got
  nil)`; `lease.unschedule: ...` on a database failure, `[readonly]` on a
  read-only handle, `[mismatch]` when another client's trigger skipped the
  delete (the schedule stays)
*/
static void check_unschedule(lua_State *L, const lb_callee *c, lb_args *a) {
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "name"), 0, &a->id_len);
}
static int run_unschedule(lease_db *db, lb_args *a) {
  return lease_unschedule(db, a->id, a->id_len, &a->found);
}
static int push_unschedule(lua_State *L, lb_args *a) {
  lua_pushboolean(L, a->found);
  if (a->found) return 1;
  lua_pushliteral(L, "missing");
  return 2;
}
const lb_op lb_op_unschedule = {"unschedule", 0, 0, check_unschedule, run_unschedule,
                                push_unschedule};

/* --- schedules ------------------------------------------------------- */

/***
The schedules, in name order.  Works on a read-only handle (none when the
file has no schedules' table yet).
@function db:schedules
@treturn {table,...} each `{name=, every=, cron=, queue=, payload=,
  priority=, max_attempts=, created_at=, next_at=, last_at=}`: every or cron
  (the other nil), payload nil when none, last_at nil before the first tick
@raise `lease.schedules: ...` on a database failure
*/
static void check_none(lua_State *L, const lb_callee *c, lb_args *a) {
  (void)L;
  (void)c;
  (void)a;
}
static int run_schedules(lease_db *db, lb_args *a) {
  a->mem = NULL;
  a->db = db;
  return LEASE_OK;
}
/* Set t[k] = v for the table at the top, when v is a number (not NaN). */
static void set_time(lua_State *L, const char *k, double v) {
  if (isnan(v)) return;
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}
static void push_schedule(lua_State *L, const lease_schedule_spec *s) {
  lua_createtable(L, 0, 10);
  lua_pushlstring(L, s->name, s->name_len);
  lua_setfield(L, -2, "name");
  if (s->cron) {
    lua_pushlstring(L, s->cron, s->cron_len);
    lua_setfield(L, -2, "cron");
  } else {
    lua_pushnumber(L, s->every);
    lua_setfield(L, -2, "every");
  }
  lua_pushlstring(L, s->queue, s->queue_len);
  lua_setfield(L, -2, "queue");
  if (s->payload) {
    lua_pushlstring(L, s->payload, s->payload_len);
    lua_setfield(L, -2, "payload");
  }
  lua_pushinteger(L, (lua_Integer)s->priority);
  lua_setfield(L, -2, "priority");
  lua_pushinteger(L, (lua_Integer)s->max_attempts);
  lua_setfield(L, -2, "max_attempts");
  set_time(L, "created_at", s->created_at);
  set_time(L, "next_at", s->next_at);
  set_time(L, "last_at", s->last_at);
}
/* Read page after page (the strings of one live until the next call). */
static int push_schedules(lua_State *L, lb_args *a) {
  lease_schedule_spec page[PAGE];
  int n = 0, count, i;
  lua_newtable(L);
  do {
    const char *after = n ? lua_tostring(L, -1) : NULL;
    size_t after_len = 0;
    if (after) after_len = lua_rawlen(L, -1);
    if (lease_schedules(a->db, after, after_len, PAGE, page, &count) != LEASE_OK) {
      lb_push_db_error(L, a->db, "schedules");
      return -1;
    }
    if (n) lua_pop(L, 1);   /* the name read last */
    for (i = 0; i < count; i++) {
      push_schedule(L, &page[i]);
      lua_rawseti(L, -2, ++n);
    }
    if (count == PAGE) {
      lua_rawgeti(L, -1, n);
      lua_getfield(L, -1, "name");
      lua_replace(L, -2);
    }
  } while (count == PAGE);
  return 1;
}
const lb_op lb_op_schedules = {"schedules", 0, 0, check_none, run_schedules, push_schedules};

/* --- tick ------------------------------------------------------------ */

/***
Enqueue the jobs of the schedules due at `now` (`next_at <= now`): for each,
one job for its latest due tick (missed ticks are not replayed), with the
schedule's options and the id `name .. "@" .. tick` (`"nightly@1700006400"`);
the schedule's next_at moves to its first tick after now, last_at to the
tick.  Any number of handles and processes may tick at once: each tick is
enqueued once.
@function db:tick
@tparam number now seconds since the epoch (finite): `lease.now()`
@treturn {string,...} the ids of the jobs it enqueued
@raise `bad argument #1 to 'tick' (now must be a finite number, got nan)`;
  `lease.tick: ...` on a database failure (nothing enqueued), `[readonly]`
  on a read-only handle
*/
static void check_tick(lua_State *L, const lb_callee *c, lb_args *a) {
  a->now = lb_check_number(L, 2, LB_ARG(c, 2, "now"), LB_FINITE, -HUGE_VAL, 0);
}
static int run_tick(lease_db *db, lb_args *a) {
  a->db = db;
  return LEASE_OK;
}
static int push_tick(lua_State *L, lb_args *a) {
  const char *ids[PAGE];
  size_t lens[PAGE];
  int n = 0, count, more, i;
  lua_newtable(L);
  do {
    if (lease_tick(a->db, a->now, PAGE, ids, lens, &count, &more) != LEASE_OK) {
      lb_push_db_error(L, a->db, "tick");
      return -1;
    }
    for (i = 0; i < count; i++) {
      lua_pushlstring(L, ids[i], lens[i]);
      lua_rawseti(L, -2, ++n);
    }
  } while (more);
  return 1;
}
const lb_op lb_op_tick = {"tick", 0, 0, check_tick, run_tick, push_tick};

/* --- cron_next ------------------------------------------------------- */

/***
The first minute strictly after `t` that a cron expression matches in UTC,
as db:schedule reads it (for checking an expression, or showing when it
runs).
@function cron_next
@tparam string expr five fields: `"minute hour day-of-month month day-of-week"`
@tparam number t seconds since the epoch (finite)
@treturn number seconds since the epoch
@raise `bad argument #1 to 'lease.cron_next' (cron: hour field: 24 is out of
  range 0-23)`, or `(cron: '0 0 30 2 *' matches no time within ten years)`;
  `bad argument #2 to 'lease.cron_next' (cron: the time ... is outside the
  years 1 to 9989)` for a `t` so late that ten years after it pass 9999
*/
int lb_cron_next(lua_State *L) {
  lb_callee c = {"cron_next", 0};
  size_t len;
  const char *expr = lb_check_string(L, 1, LB_ARG(&c, 1, "expr"), 0, &len);
  double t = lb_check_number(L, 2, LB_ARG(&c, 2, "t"), LB_FINITE, -HUGE_VAL, 0), next;
  char err[160];
  int rc = lease_cron_next(expr, len, t, &next, err, sizeof err);
  if (rc != LEASE_OK) lb_error(L, LB_ARG(&c, rc == LEASE_RANGE ? 2 : 1, NULL), lua_pushstring(L, err));
  lua_pushnumber(L, next);
  return 1;
}
