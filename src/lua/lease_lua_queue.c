/***
The job queue: job data, claiming by queue and priority, failing with
backoff, operator actions.
@module lease
*/
/*
** lease_lua_queue.c: the job queue in the binding, over the core's
** lease.h "The job queue".  The records fail, retry, cancel and prune, and
** the argument checks and pushes that lease_lua.c's records enqueue,
** enqueue_many, state, claim_next, jobs and counts call for the queue's
** arguments and fields.  Reached as db:<name>(...) and lease.<name>(path,
** ...) through lease_lua.c's op_method and op_path.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease_lua_int.h"

/* The most entries of a list argument, as lease_lua.c's batches. */
#define QUEUE_BATCH_MAX 1000000

/* ===================================================================== */
/* Argument checks                                                        */
/* ===================================================================== */

/* The keys of enqueue's options; entry tables of enqueue_many add "id". */
enum {
  K_PAYLOAD, K_QUEUE, K_PRIORITY, K_RUN_AT, K_MAX_ATTEMPTS, K_TIMEOUT, K_AFTER, K_KEY, K_ID, K_COUNT
};
static const char *const job_keys[K_COUNT] = {
  "payload", "queue", "priority", "run_at", "max_attempts", "timeout", "after", "key", "id",
};
/* How errors name them: as an option, and as a field of entry k. */
static const char *const opt_names[K_COUNT] = {
  "opts.payload", "opts.queue", "opts.priority", "opts.run_at", "opts.max_attempts",
  "opts.timeout", "opts.after", "opts.key", "opts.id",
};
static const char *const entry_names[K_COUNT] = {
  "ids[%d].payload", "ids[%d].queue", "ids[%d].priority", "ids[%d].run_at",
  "ids[%d].max_attempts", "ids[%d].timeout", "ids[%d].after", "ids[%d].key", "ids[%d].id",
};

/* The most ids one job's after may list (lease.h: lease_new_job). */
#define AFTER_MAX 10000

/* Read the list at the top (a job's after, named by f) into job: a
** userdata of its ids' pointers and lengths, kept alive by the table at
** stack index anchor (appended to it); the strings stay alive in the
** list, which the job's table holds.  A batch anchors all of its jobs'
** lists in one table, so the stack does not grow with them. */
static void read_after(lua_State *L, const lb_arg *f, int anchor, lease_new_job *job) {
  const char **ids;
  size_t *lens;
  int k, n = lb_check_sequence(L, -1, f, AFTER_MAX);
  char what[48];
  void *mem = lua_newuserdatauv(L, (sizeof *ids + sizeof *lens) * (size_t)(n ? n : 1), 0);
  ids = mem;
  lens = (size_t *)(void *)(ids + (n ? n : 1));
  lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
  if (f->k > 0) {   /* an entry's field: "ids[2].after[%d]" */
    char base[32];
    snprintf(base, sizeof base, f->what, f->k);
    snprintf(what, sizeof what, "%s[%%d]", base);
  } else {          /* "opts.after[%d]" */
    snprintf(what, sizeof what, "%s[%%d]", f->what);
  }
  for (k = 1; k <= n; k++) {
    lb_arg e = {f->c, f->pos, what, k};
    lua_rawgeti(L, -1, k);
    ids[k - 1] = lb_check_string(L, -1, &e, 0, &lens[k - 1]);
    lua_pop(L, 1);
  }
  job->after = ids;
  job->after_lens = lens;
  job->n_after = n;
}

/* See lease_lua_int.h. */
void lb_check_after_self(lua_State *L, const lb_arg *a, const lease_new_job *job) {
  int k;
  for (k = 0; k < job->n_after; k++)
    if (job->after_lens[k] == job->id_len && memcmp(job->after[k], job->id, job->id_len) == 0) {
      if (a->k > 0)
        lb_error(L, a, lua_pushfstring(L, "ids[%d].after[%d] is the job's own id", a->k, k + 1));
      lb_error(L, a, lua_pushfstring(L, "opts.after[%d] is the job's own id", k + 1));
    }
}

/* Raise unless every key of the table at idx is one of keys[0..n):
** "bad argument #p to 'f' (<name> has an unknown key 'k')", and unless it
** is a plain table (lb_check_plain). */
static void check_keys(lua_State *L, const lb_arg *a, int idx, const char *const *keys, int n,
                       const char *name) {
  idx = lua_absindex(L, idx);
  lb_check_plain(L, a, idx, name);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int i, ok = 0;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (i = 0; i < n && !ok; i++) ok = strcmp(lua_tostring(L, -2), keys[i]) == 0;
    if (!ok)
      lb_error(L, a, lua_pushfstring(L, "%s has an unknown key '%s'", name,
                                     luaL_tolstring(L, -2, NULL)));
    lua_pop(L, 1);
  }
}

/* See lease_lua_int.h. */
void lb_check_plain(lua_State *L, const lb_arg *a, int idx, const char *name) {
  if (!lua_getmetatable(L, idx)) return;
  lua_pop(L, 1);
  lb_error(L, a, lua_pushfstring(L, "%s must be a plain table, without a metatable (options are read "
                                    "from the table's own fields)", name));
}

/* See lease_lua_int.h. */
void lb_check_keys(lua_State *L, const lb_arg *a, int idx, const char *const *keys, int n,
                   const char *name) {
  check_keys(L, a, idx, keys, n, name);
}

/* Check a queue name (non-empty, at most LEASE_QUEUE_MAX bytes) at idx. */
static const char *check_queue_name(lua_State *L, int idx, const lb_arg *a, int flags,
                                    size_t *len) {
  const char *q = lb_check_string(L, idx, a, flags, len);
  if (q && *len > LEASE_QUEUE_MAX)
    lb_error(L, a, lua_pushfstring(L, "queue must be at most %d bytes, got %d", LEASE_QUEUE_MAX,
                                   (int)*len));
  return q;
}

/* Check a job's timeout at idx: a finite number of seconds > 0. */
static double check_timeout(lua_State *L, int idx, const lb_arg *a) {
  double t = lua_type(L, idx) == LUA_TNUMBER ? (double)lua_tonumber(L, idx) : 0;
  if (!(isfinite(t) && t > 0)) lb_fail(L, idx, a, "a finite number of seconds > 0");
  return t;
}

/* Read the fields of the table at idx (raw) over *job.  names: how errors
** name each key; k: the entry's index (0 for opts); anchor: the stack
** index of the table that keeps the after list alive (read_after).  The
** strings stay alive in the table, which the caller keeps on the stack. */
static void read_job_fields(lua_State *L, const lb_callee *c, int pos, int idx, int k,
                            const char *const *names, lease_new_job *job, int with_id,
                            int anchor) {
  int i;
  idx = lua_absindex(L, idx);
  for (i = 0; i < K_COUNT; i++) {
    lb_arg f = {c, pos, names[i], k};
    if (i == K_ID && !with_id) continue;
    lua_pushstring(L, job_keys[i]);
    lua_rawget(L, idx);
    if (lua_isnil(L, -1) && i != K_ID) {
      lua_pop(L, 1);
      continue;
    }
    switch (i) {
      case K_PAYLOAD:
        job->payload = lb_check_string(L, -1, &f, LB_EMPTY, &job->payload_len);
        break;
      case K_QUEUE:
        job->queue = check_queue_name(L, -1, &f, 0, &job->queue_len);
        break;
      case K_PRIORITY:
        job->priority = lb_check_integer(L, -1, &f, INT32_MIN, INT32_MAX);
        break;
      case K_RUN_AT:
        job->run_at = lb_check_number(L, -1, &f, LB_FINITE, -HUGE_VAL, 0);
        job->has_run_at = 1;
        break;
      case K_MAX_ATTEMPTS:
        job->max_attempts = lb_check_integer(L, -1, &f, 1, INT32_MAX);
        break;
      case K_TIMEOUT:
        job->timeout = check_timeout(L, -1, &f);
        break;
      case K_AFTER:
        read_after(L, &f, anchor, job);
        break;
      case K_KEY:
        job->key = lb_check_string(L, -1, &f, 0, &job->key_len);
        if (job->key_len > LEASE_KEY_MAX)
          lb_error(L, &f, lua_pushfstring(L, "key must be at most %d bytes, got %d",
                                         LEASE_KEY_MAX, (int)job->key_len));
        break;
      case K_ID:
        job->id = lb_check_string(L, -1, &f, 0, &job->id_len);
        break;
    }
    lua_pop(L, 1);
  }
}

/* See lease_lua_int.h. */
void lb_check_job_opts(lua_State *L, const lb_callee *c, int idx, int pos, lease_new_job *job) {
  const lb_arg *a = LB_ARG(c, pos, "opts");
  if (lua_isnoneornil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TTABLE) lb_fail(L, idx, a, "a table or nil");
  check_keys(L, a, idx, job_keys, K_ID, "opts");
  idx = lua_absindex(L, idx);
  lua_newtable(L);   /* keeps opts.after's list alive (read_after), left on the stack */
  read_job_fields(L, c, pos, idx, 0, opt_names, job, 0, lua_gettop(L));
}

/* See lease_lua_int.h. */
void lb_check_new_jobs(lua_State *L, const lb_callee *c, lb_args *a) {
  lease_new_job defaults, *jobs;
  int i, anchor;
  lease_new_job_default(&defaults);
  a->n = lb_check_sequence(L, 2, LB_ARG(c, 2, "ids"), QUEUE_BATCH_MAX);
  lb_check_job_opts(L, c, 3, 3, &defaults);
  a->mem = jobs = lua_newuserdatauv(L, sizeof *jobs * (size_t)(a->n ? a->n : 1), 0);
  lua_newtable(L);   /* the entries' after lists (read_after) */
  anchor = lua_gettop(L);
  for (i = 1; i <= a->n; i++) {
    lb_arg entry = {c, 2, "ids[%d]", i};
    jobs[i - 1] = defaults;
    switch (lua_rawgeti(L, 2, i)) {
      case LUA_TSTRING:
        jobs[i - 1].id = lb_check_string(L, -1, &entry, 0, &jobs[i - 1].id_len);
        break;
      case LUA_TTABLE: {
        char name[32];
        snprintf(name, sizeof name, "ids[%d]", i);
        check_keys(L, &entry, -1, job_keys, K_COUNT, name);
        read_job_fields(L, c, 2, -1, i, entry_names, &jobs[i - 1], 1, anchor);
        break;
      }
      default:
        lb_fail(L, -1, &entry, "a non-empty string or a table");
    }
    lb_check_after_self(L, &entry, &jobs[i - 1]);
    lua_pop(L, 1);
  }
}

/* See lease_lua_int.h. */
void lb_check_claim_opts(lua_State *L, const lb_callee *c, int idx, lb_args *a) {
  static const char *const keys[] = {"n", "queue"};
  const lb_arg *o = LB_ARG(c, idx, "opts");
  a->n = 0;   /* not a table: n, raising "n must be an integer ..." for another type */
  a->queue = NULL;
  if (lua_type(L, idx) != LUA_TTABLE) {
    a->n = (int)lb_opt_integer(L, idx, LB_ARG(c, idx, "n"), 1, QUEUE_BATCH_MAX, 0);
    return;
  }
  check_keys(L, o, idx, keys, 2, "opts");
  lua_pushliteral(L, "n");
  lua_rawget(L, idx);
  a->n = (int)lb_opt_integer(L, -1, LB_ARG(c, idx, "opts.n"), 1, QUEUE_BATCH_MAX, 0);
  lua_pop(L, 1);
  lua_pushliteral(L, "queue");
  lua_rawget(L, idx);
  /* the string stays alive in the opts table, on the stack */
  a->queue = check_queue_name(L, -1, LB_ARG(c, idx, "opts.queue"), LB_OPTIONAL, &a->queue_len);
  lua_pop(L, 1);
}

/* The number at idx (named by a), finite, or the current time when nil. */
static double now_or_clock(lua_State *L, int idx, const lb_arg *a) {
  struct timespec ts;
  if (!lua_isnoneornil(L, idx)) return lb_check_number(L, idx, a, LB_FINITE, -HUGE_VAL, 0);
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* See lease_lua_int.h. */
double lb_check_now_opt(lua_State *L, const lb_callee *c, int idx) {
  return now_or_clock(L, idx, LB_ARG(c, idx, "now"));
}

/* The status word at idx into a LEASE_STATUS_* (0 for nil). */
static int check_status(lua_State *L, int idx, const lb_arg *a, int ended_only) {
  const char *w;
  int s;
  if (lua_isnoneornil(L, idx)) return 0;
  w = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : "";
  for (s = ended_only ? LEASE_STATUS_COMPLETED : LEASE_STATUS_AVAILABLE;
       s <= (ended_only ? LEASE_STATUS_CANCELLED : LEASE_STATUS_WAITING); s++)
    if (strcmp(w, lease_status_name(s)) == 0) return s;
  return lb_fail(L, idx, a, ended_only ? "\"completed\", \"discarded\", \"cancelled\" or nil"
                                       : "a status word (\"available\", \"scheduled\", "
                                         "\"running\", \"retryable\", \"completed\", "
                                         "\"discarded\", \"cancelled\", \"waiting\") or nil");
}

/* See lease_lua_int.h. */
void lb_check_jobs_table(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"status", "queue", "now", "limit", "after", "results",
                                     "errors"};
  const lb_arg *o = LB_ARG(c, 2, "filter");
  int i;
  check_keys(L, o, 2, keys, 7, "filter");
  lease_filter_default(&a->filter);
  a->table_form = 1;
  a->n = 1000;
  for (i = 0; i < 7; i++) {
    static const char *const names[] = {"filter.status", "filter.queue", "filter.now",
                                        "filter.limit", "filter.after", "filter.results",
                                        "filter.errors"};
    const lb_arg *f = LB_ARG(c, 2, names[i]);
    lua_pushstring(L, keys[i]);
    lua_rawget(L, 2);
    switch (i) {
      case 0: a->filter.status = check_status(L, -1, f, 0); break;
      case 1:
        a->filter.queue = check_queue_name(L, -1, f, LB_OPTIONAL, &a->filter.queue_len);
        break;
      case 2: a->filter.now = now_or_clock(L, -1, f); break;
      case 3: a->n = (int)lb_opt_integer(L, -1, f, 1, 100000, 1000); break;
      case 4: a->filter.after = lb_opt_integer(L, -1, f, INT64_MIN, INT64_MAX, 0); break;
      case 5:
      case 6:
        if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) lb_fail(L, -1, f, "a boolean or nil");
        if (i == 5) a->filter.results = lua_isnil(L, -1) || lua_toboolean(L, -1);
        else a->with_errors = lua_toboolean(L, -1);
        break;
    }
    if (i != 1) lua_pop(L, 1);   /* the queue string stays on the stack, alive */
  }
  a->mem = lua_newuserdatauv(L, sizeof(lease_row) * (size_t)a->n, 0);
}

/* ===================================================================== */
/* Pushing                                                                */
/* ===================================================================== */

/* t[k] = s (len bytes) for the table at the top, unless s is NULL. */
static void set_bytes(lua_State *L, const char *k, const char *s, size_t len) {
  if (!s) return;
  lua_pushlstring(L, s, len);
  lua_setfield(L, -2, k);
}

/* t[k] = v as an integer for the table at the top. */
static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* t[k] = v for the table at the top, unless v is NaN. */
static void set_num(lua_State *L, const char *k, double v) {
  if (isnan(v)) return;
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* See lease_lua_int.h. */
void lb_push_queue_fields(lua_State *L, const lease_row *row, int with_seq) {
  set_bytes(L, "payload", row->payload, row->payload_len);
  set_bytes(L, "queue", row->queue ? row->queue : "default", row->queue ? row->queue_len : 7);
  set_int(L, "priority", row->priority);
  set_num(L, "run_at", row->run_at);
  set_int(L, "attempt", row->attempt);
  set_int(L, "max_attempts", row->max_attempts);
  if (row->timeout != 0) set_num(L, "timeout", row->timeout);
  set_num(L, "finished_at", row->finished_at);
  set_bytes(L, "key", row->key, row->key_len);
  if (row->status != LEASE_STATUS_UNKNOWN) {
    lua_pushstring(L, lease_status_name(row->status));
    lua_setfield(L, -2, "status");
  }
  if (with_seq) {
    set_int(L, "seq", row->seq);
    set_int(L, "result_size", row->result_size);
  }
}

/* See lease_lua_int.h. */
void lb_push_errors(lua_State *L, const lease_job_error *errs, int n) {
  int i;
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    lua_createtable(L, 0, 5);
    set_int(L, "attempt", errs[i].attempt);
    lua_pushnumber(L, errs[i].at);
    lua_setfield(L, -2, "at");
    set_bytes(L, "owner", errs[i].owner, errs[i].owner_len);
    set_int(L, "fence", errs[i].fence);
    set_bytes(L, "message", errs[i].message, errs[i].message_len);
    lua_rawseti(L, -2, i + 1);
  }
}

/* See lease_lua_int.h. */
void lb_push_job_fields(lua_State *L, const lease_job *job) {
  set_bytes(L, "payload", job->payload, job->payload_len);
  set_bytes(L, "queue", job->queue, job->queue_len);
  set_int(L, "priority", job->priority);
  set_int(L, "attempt", job->attempt);
  set_int(L, "max_attempts", job->max_attempts);
  if (job->timeout != 0) set_num(L, "timeout", job->timeout);
}

/* Read the errors of the row table at the top through db and set them as
** its `errors`.  0 with a message pushed on a database failure. */
static int attach_one(lua_State *L, lease_db *db, const char *op) {
  lease_job_error errs[LEASE_ERRORS_KEPT];
  size_t len;
  const char *id;
  int count;
  lua_getfield(L, -1, "id");
  id = lua_tolstring(L, -1, &len);
  if (lease_errors(db, id, len, errs, LEASE_ERRORS_KEPT, &count) != LEASE_OK) {
    lb_push_db_error(L, db, op);
    return 0;
  }
  lua_pop(L, 1);
  lb_push_errors(L, errs, count);
  lua_setfield(L, -2, "errors");
  return 1;
}

/* See lease_lua_int.h. */
int lb_attach_after(lua_State *L, lease_db *db, const char *op, double now) {
  lease_dep *deps = malloc(sizeof *deps * AFTER_MAX);
  size_t len;
  const char *id;
  int count = 0, i, rc;
  if (!deps) return luaL_error(L, "lease.%s: out of memory", op);
  lua_getfield(L, -1, "id");
  id = lua_tolstring(L, -1, &len);   /* held by the row table */
  lua_pop(L, 1);
  rc = lease_after(db, id, len, now, deps, AFTER_MAX, &count);
  if (rc != LEASE_OK) {
    free(deps);
    lb_push_db_error(L, db, op);
    return 0;
  }
  if (count > 0) {
    lua_createtable(L, count, 0);
    for (i = 0; i < count; i++) {
      lua_pushlstring(L, deps[i].id, deps[i].id_len);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "after");
  }
  free(deps);
  return 1;
}

/* See lease_lua_int.h. */
int lb_attach_errors(lua_State *L, lease_db *db, const char *op, int list) {
  int i, n;
  if (!list) return attach_one(L, db, op);
  n = (int)lua_rawlen(L, -1);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    if (!attach_one(L, db, op)) return 0;
    lua_pop(L, 1);
  }
  return 1;
}

/* ===================================================================== */
/* The records                                                            */
/* ===================================================================== */

/* --- fail ------------------------------------------------------------ */

/***
Report that the holder's attempt failed, under complete's guard (owner and
fence match, not done, `until > now`, not cancelled or discarded; refused
with the same reasons, and then nothing is stored).  Records the error
`{attempt=, at=now, owner=, fence=, message=}` (the last 20 are kept), ends
the lease (owner nil, until 0, the fence kept), then discards the job when
`attempt >= max_attempts`, or makes it retryable at
`now + lease.backoff(attempt)` (seconds).
@function db:fail
@tparam string id the job
@tparam string owner its holder
@tparam integer fence the fence the holder was handed
@tparam number now finite, caller's unit
@tparam[opt] string message the error (any bytes)
@tparam[opt] table opts `{run_at = number}` retry at run_at instead of after
  the backoff (pass it when now is not in seconds); `{attempt = false}` gives
  the attempt back (not counted against max_attempts: a shutdown),
  retryable at run_at or now
@treturn string `"retryable"`, then the run_at (number)
@treturn[2] string `"discarded"`
@treturn[3] boolean false
@treturn[3] string `"missing"`, `"done"`, `"discarded"`, `"cancelled"`,
  `"not_owner"`, `"stale_fence"` or `"expired"`
@raise `bad argument #5 to 'fail' (message must be a string or nil, got 7)` and
  the like; `lease.fail: ...` on a database failure (nothing stored)
*/
static void check_fail(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"run_at", "attempt"};
  const lb_arg *o = LB_ARG(c, 7, "opts");
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "id"), 0, &a->id_len);
  a->owner = lb_check_string(L, 3, LB_ARG(c, 3, "owner"), 0, &a->owner_len);
  a->fence = lb_check_integer(L, 4, LB_ARG(c, 4, "fence"), INT64_MIN, INT64_MAX);
  a->now = lb_check_number(L, 5, LB_ARG(c, 5, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->result = lb_check_string(L, 6, LB_ARG(c, 6, "message"), LB_OPTIONAL | LB_EMPTY,
                              &a->result_len);
  if (lua_isnoneornil(L, 7)) return;
  if (lua_type(L, 7) != LUA_TTABLE) lb_fail(L, 7, o, "a table or nil");
  check_keys(L, o, 7, keys, 2, "opts");
  lua_getfield(L, 7, "run_at");
  if (!lua_isnil(L, -1)) {
    a->fail.run_at = lb_check_number(L, -1, LB_ARG(c, 7, "opts.run_at"), LB_FINITE, -HUGE_VAL, 0);
    a->fail.has_run_at = 1;
  }
  lua_getfield(L, 7, "attempt");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    lb_fail(L, -1, LB_ARG(c, 7, "opts.attempt"), "a boolean or nil");
  a->fail.no_attempt = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
  lua_pop(L, 2);
}
static int run_fail(lease_db *db, lb_args *a) {
  return lease_fail(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now, a->result,
                    a->result_len, &a->fail, &a->status, &a->run_at, &a->reason);
}
static int push_fail(lua_State *L, lb_args *a) {
  if (a->reason != LEASE_GRANTED) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, lease_reason_name(a->reason));
    return 2;
  }
  lua_pushstring(L, lease_status_name(a->status));
  if (a->status != LEASE_STATUS_RETRYABLE) return 1;
  lua_pushnumber(L, a->run_at);
  return 2;
}
const lb_op lb_op_fail = {"fail", 1, 0, check_fail, run_fail, push_fail};

/* Push true, or false and the reason word. */
static int push_reason(lua_State *L, lb_args *a) {
  if (a->reason == LEASE_GRANTED) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, lease_reason_name(a->reason));
  return 2;
}

/* See lease_lua_int.h. */
int lb_push_outcome(lua_State *L, lb_args *a) {
  int n = push_reason(L, a);
  if (a->reason != LEASE_DUPLICATE || !a->dup) return n;
  lua_pushlstring(L, a->dup, a->dup_len);
  return n + 1;
}

/* id at 2, now at 3. */
static void check_id_now(lua_State *L, const lb_callee *c, lb_args *a) {
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "id"), 0, &a->id_len);
  a->now = lb_check_number(L, 3, LB_ARG(c, 3, "now"), LB_FINITE, -HUGE_VAL, 0);
}

/* --- retry ----------------------------------------------------------- */

/***
Make a job available at once with a fresh attempt budget (attempt 0): one
the queue ended (completed, discarded, cancelled) or one waiting (scheduled,
retryable).  The fence is kept (it never goes down), the errors stay; a
completed job gets `done = false` (its result stays until the next
complete).  A running job (held: `until > now`, not ended) is refused, and
so is a job with a unique key that another unfinished job of its queue
holds by now (`"duplicate"`: nothing changes).  A job enqueued `after`
others waits again (`"waiting"`) while one of them is not completed.
@function db:retry
@tparam string id the job
@tparam number now finite, caller's unit
@treturn boolean true
@treturn[2] boolean false
@treturn[2] string `"missing"`, `"held"` or `"duplicate"`
@treturn[2] string for `"duplicate"`: the id of the unfinished job holding the key
@raise `bad argument` for a bad id or now; `lease.retry: ...` on a database failure
*/
static int run_retry(lease_db *db, lb_args *a) {
  int rc = lease_retry(db, a->id, a->id_len, a->now, &a->reason);
  a->dup = lease_duplicate_id(db, &a->dup_len);
  return rc;
}
const lb_op lb_op_retry = {"retry", 1, 0, check_id_now, run_retry, lb_push_outcome};

/* --- cancel ---------------------------------------------------------- */

/***
Cancel a job that is not completed: no claim hands it out again (until
db:retry); a worker still holding it is refused with `"cancelled"` when it
renews, completes or fails.  The fence is kept.  A waiting job can be
cancelled; the jobs waiting for this one (enqueue's `after`), and theirs,
are cancelled with it, each with the error `dependency "<id>" was
cancelled`.
@function db:cancel
@tparam string id the job
@tparam number now finite, caller's unit: recorded as when it finished
@treturn boolean true
@treturn[2] boolean false
@treturn[2] string `"missing"`, `"done"`, `"discarded"` or `"cancelled"` (already)
@raise `bad argument` for a bad id or now; `lease.cancel: ...` on a database failure
*/
static int run_cancel(lease_db *db, lb_args *a) {
  return lease_cancel(db, a->id, a->id_len, a->now, &a->reason);
}
const lb_op lb_op_cancel = {"cancel", 1, 0, check_id_now, run_cancel, push_reason};

/* --- prune ----------------------------------------------------------- */

/***
Delete the jobs the queue ended (completed, discarded, cancelled) that
finished before `before` (strictly), with their data and errors; never a job
still held (not done, `until > before`: cancelled while a worker holds it).
@function db:prune
@tparam number before caller's unit (not NaN)
@tparam[opt] table opts `{queue = string, status = "completed"|"discarded"|"cancelled"}`
@treturn integer how many jobs were deleted
@raise `bad argument #2 to 'prune' (opts.status must be ...)` and the like;
  `lease.prune: ...` on a database failure (nothing deleted)
*/
static void check_prune(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"queue", "status"};
  const lb_arg *o = LB_ARG(c, 3, "opts");
  a->now = lb_check_number(L, 2, LB_ARG(c, 2, "before"), 0, -HUGE_VAL, 0);
  if (isnan(a->now)) lb_error(L, LB_ARG(c, 2, NULL), "before must be a number, got nan");
  if (lua_isnoneornil(L, 3)) return;
  if (lua_type(L, 3) != LUA_TTABLE) lb_fail(L, 3, o, "a table or nil");
  check_keys(L, o, 3, keys, 2, "opts");
  lua_getfield(L, 3, "queue");   /* stays on the stack, alive */
  a->queue = check_queue_name(L, -1, LB_ARG(c, 3, "opts.queue"), LB_OPTIONAL, &a->queue_len);
  lua_getfield(L, 3, "status");
  a->status = check_status(L, -1, LB_ARG(c, 3, "opts.status"), 1);
  lua_pop(L, 1);
}
static int run_prune(lease_db *db, lb_args *a) {
  return lease_prune(db, a->now, a->queue, a->queue_len, a->status, &a->deleted);
}
static int push_prune(lua_State *L, lb_args *a) {
  lua_pushinteger(L, (lua_Integer)a->deleted);
  return 1;
}
const lb_op lb_op_prune = {"prune", 1, 0, check_prune, run_prune, push_prune};

/* --- pause, resume --------------------------------------------------- */

/* The queue at 2: a non-empty string of at most LEASE_QUEUE_MAX bytes. */
static void check_queue_arg(lua_State *L, const lb_callee *c, lb_args *a) {
  a->queue = check_queue_name(L, 2, LB_ARG(c, 2, "queue"), 0, &a->queue_len);
}
static int push_true(lua_State *L, lb_args *a) {
  (void)a;
  lua_pushboolean(L, 1);
  return 1;
}

/***
Pause a queue: db:claim_next on it hands out nothing (`nil, "paused"`) until
db:resume, for every handle and process on the database at once; other
queues go on, and leases already held still renew, complete and fail.
@function db:pause
@tparam string queue the queue (non-empty, at most 255 bytes)
@treturn boolean true
@raise `bad argument #2 to 'pause' (queue must be a non-empty string, got ...)`;
  `lease.pause: ...` on a database failure
*/
static int run_pause(lease_db *db, lb_args *a) { return lease_pause(db, a->queue, a->queue_len); }
const lb_op lb_op_pause = {"pause", 1, 0, check_queue_arg, run_pause, push_true};

/***
Resume a paused queue: db:claim_next hands out its jobs again.  Resuming a
queue not paused changes nothing.
@function db:resume
@tparam string queue the queue
@treturn boolean true
@raise as db:pause
*/
static int run_resume(lease_db *db, lb_args *a) { return lease_resume(db, a->queue, a->queue_len); }
const lb_op lb_op_resume = {"resume", 1, 0, check_queue_arg, run_resume, push_true};

/* --- wait ------------------------------------------------------------ */

/* The queue at 2 and the timeout at 3 (seconds, finite, >= 0). */
static void check_wait(lua_State *L, const lb_callee *c, lb_args *a) {
  a->queue = check_queue_name(L, 2, LB_ARG(c, 2, "queue"), 0, &a->queue_len);
  a->ttl = lb_check_number(L, 3, LB_ARG(c, 3, "timeout"), LB_FINITE | LB_SECONDS, 0, 0);
}

/***
Wait until a job of a queue may be ready to claim, or until the timeout:
returns at once when one is due, else sleeps until the earliest due time of
the queue's jobs (a run_at, a retry's backoff, a lease that expires) or
until a write wakes it: an enqueue, release, fail with a retry, retry,
resume, limit or a tick that enqueued, on any handle on the database.  On
SQLite a write of this process wakes it at once, another process's on
Linux once its commit is visible (an inotify watch of the files; without
it, within 10 to 100 ms: the size and time of the files); on PostgreSQL
through LISTEN/NOTIFY.
Nothing is claimed: call db:claim_next after it.  Due times are compared
with db:server_now(), so the jobs' times must be seconds since the epoch.
A paused queue has no job due until it is resumed, and its db:resume
wakes the wait.  A queue at its db:limit has no job due until the limit
leaves room (the earliest end of its live leases, a claim leaving the
rate's window, on the database's clock: claimers that wait pass
db:server_now() as their now), and a handle whose db:claim_next found
limits on a queue wakes that queue's waiters (every queue's, once it found
them on two) when it ends a lease (complete, complete_many, fail, release,
a with_lease that completed, the fused calls unless their claim took as
many jobs of that queue), so a freed slot is taken at once; a lease ended
on another handle, or shortened by a renew, wakes them only as any write
does (SQLite: the file's change; PostgreSQL: at the next due time).
@function db:wait
@tparam string queue the queue (non-empty, at most 255 bytes)
@tparam number timeout the longest wait, seconds (finite, >= 0; 0 only looks)
@treturn boolean true when a job of the queue may be ready, false when the
  timeout passed first
@raise `bad argument #2 to 'wait' (queue must be a non-empty string, got nil)`,
  `bad argument #3 to 'wait' (timeout must be a finite number of seconds >= 0,
  got -1)`; `lease.wait: ...` on a database failure
*/
static int run_wait(lease_db *db, lb_args *a) {
  return lease_wait(db, a->queue, a->queue_len, a->ttl, &a->found);
}
static int push_woken(lua_State *L, lb_args *a) {
  lua_pushboolean(L, a->found);
  return 1;
}
const lb_op lb_op_wait = {"wait", 0, 0, check_wait, run_wait, push_woken};

/* --- limit ----------------------------------------------------------- */

/***
Set a queue's limits, replacing the ones it had (`{}` removes them), across
every handle and process on the database, enforced inside each claim's own
transaction.  At a limit db:claim_next gives `nil, "limited"`; below it,
`claim_next(..., {n = k})` returns at most the room left.
@function db:limit
@tparam string queue the queue
@tparam table limits `{concurrency = n, rate = n, per = seconds}`, each
  optional: concurrency, at most n of the queue's jobs held with a live lease
  (until > now) at once, whoever holds them (a job cancelled while held
  counts until its lease ends: its worker may still run it); rate with per,
  at most rate jobs handed out by claim_next in any window of per (now's
  unit) of the claims' times: a claim's time is the claimer's now, and it
  counts the claims within per of it on either side, so claims that commit
  out of the order of their nows still keep it (docs/queue.md)
@treturn boolean true
@raise `bad argument #3 to 'limit' (limits.concurrency must be an integer >= 1 or
  nil, got 0)`, `(limits.rate needs limits.per)` and the like (nothing changed);
  `lease.limit: ...` on a database failure (nothing changed).  On
  PostgreSQL the index of live leases is built after the limits commit, at
  best effort (docs/queue.md): it may wait up to the busy timeout for the
  transactions in progress in the database, and raises nothing when it
  cannot finish.
*/
static void check_limit(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"concurrency", "rate", "per"};
  const lb_arg *o = LB_ARG(c, 3, "limits");
  check_queue_arg(L, c, a);
  memset(&a->limits, 0, sizeof a->limits);
  if (lua_type(L, 3) != LUA_TTABLE) lb_fail(L, 3, o, "a table");
  check_keys(L, o, 3, keys, 3, "limits");
  lua_getfield(L, 3, "concurrency");
  a->limits.concurrency = lb_opt_integer(L, -1, LB_ARG(c, 3, "limits.concurrency"), 1,
                                         INT64_MAX, 0);
  lua_getfield(L, 3, "rate");
  a->limits.rate = lb_opt_integer(L, -1, LB_ARG(c, 3, "limits.rate"), 1, INT64_MAX, 0);
  lua_getfield(L, 3, "per");
  if (!lua_isnil(L, -1)) {
    a->limits.per = lb_check_number(L, -1, LB_ARG(c, 3, "limits.per"), 0, -HUGE_VAL, 0);
    if (!(a->limits.per > 0 && isfinite(a->limits.per)))
      lb_error(L, LB_ARG(c, 3, NULL), lua_pushfstring(L, "limits.per must be a finite number of "
                                                      "seconds > 0, got %s", lb_got(L, -1)));
    if (a->limits.rate == 0) lb_error(L, LB_ARG(c, 3, NULL), "limits.per needs limits.rate");
  } else if (a->limits.rate > 0) {
    lb_error(L, LB_ARG(c, 3, NULL), "limits.rate needs limits.per");
  }
  lua_pop(L, 3);
}
static int run_limit(lease_db *db, lb_args *a) {
  return lease_limit(db, a->queue, a->queue_len, &a->limits);
}
const lb_op lb_op_limit = {"limit", 1, 0, check_limit, run_limit, push_true};

/* --- queues ---------------------------------------------------------- */

/* The most queues db:queues lists. */
#define QUEUES_MAX 4096

/***
Every queue that has jobs or settings, by name (bytewise), with its
settings and its jobs counted by status at now; read-only.
@function db:queues
@tparam number now caller's unit (not NaN): decides the statuses
@treturn table a list of `{name=, paused=, concurrency=, rate=, per=,
  total=, available=, scheduled=, running=, retryable=, completed=,
  discarded=, cancelled=}` (concurrency, rate and per nil when not set),
  at most 4096 queues
@raise `bad argument #2 to 'queues' (now must be a number, got nan)`;
  `lease.queues: ...` on a database failure
*/
static void check_queues(lua_State *L, const lb_callee *c, lb_args *a) {
  a->now = lb_check_number(L, 2, LB_ARG(c, 2, "now"), 0, -HUGE_VAL, 0);
  if (isnan(a->now)) lb_error(L, LB_ARG(c, 2, NULL), "now must be a number, got nan");
  a->mem = lua_newuserdatauv(L, sizeof(lease_queue_info) * QUEUES_MAX, 0);
}
static int run_queues(lease_db *db, lb_args *a) {
  return lease_queues(db, a->now, (lease_queue_info *)a->mem, QUEUES_MAX, &a->found);
}
static int push_queues(lua_State *L, lb_args *a) {
  static const char *const words[] = {"total", "available", "scheduled", "running", "retryable",
                                      "completed", "discarded", "cancelled", "waiting"};
  const lease_queue_info *q = a->mem;
  int i;
  size_t k;
  lua_createtable(L, a->found, 0);
  for (i = 0; i < a->found; i++) {
    const lease_counts *n = &q[i].counts;
    const int64_t values[] = {n->total, n->available, n->scheduled, n->running, n->retryable,
                              n->completed, n->discarded, n->cancelled, n->waiting};
    lua_createtable(L, 0, 14);
    lua_pushlstring(L, q[i].name, q[i].name_len);
    lua_setfield(L, -2, "name");
    lua_pushboolean(L, q[i].paused);
    lua_setfield(L, -2, "paused");
    if (q[i].limits.concurrency > 0) {
      lua_pushinteger(L, (lua_Integer)q[i].limits.concurrency);
      lua_setfield(L, -2, "concurrency");
    }
    if (q[i].limits.rate > 0) {
      lua_pushinteger(L, (lua_Integer)q[i].limits.rate);
      lua_setfield(L, -2, "rate");
      lua_pushnumber(L, q[i].limits.per);
      lua_setfield(L, -2, "per");
    }
    for (k = 0; k < sizeof words / sizeof words[0]; k++) {
      lua_pushinteger(L, (lua_Integer)values[k]);
      lua_setfield(L, -2, words[k]);
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}
const lb_op lb_op_queues = {"queues", 1, 0, check_queues, run_queues, push_queues};

/* --- backoff --------------------------------------------------------- */

/***
The default backoff: the delay in seconds before retrying a job whose
attempt `attempt` failed: `2^(attempt-1)` seconds, capped at 3600 (one
hour, from attempt 13 on), times a jitter drawn uniformly from [0.9, 1.1]
at every attempt, the capped ones too (so between 3240 and 3960 there).
db:fail uses it when no run_at is given.
@function backoff
@tparam integer attempt the attempt that failed, >= 1
@treturn number seconds
@raise `bad argument #1 to 'lease.backoff' (attempt must be an integer >= 1, got 0)`
*/
int lb_backoff(lua_State *L) {
  lb_callee c = {"backoff", 0};
  int64_t n = lb_check_integer(L, 1, LB_ARG(&c, 1, "attempt"), 1, INT64_MAX);
  lua_pushnumber(L, lease_backoff(n));
  return 1;
}
