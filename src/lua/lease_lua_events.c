/***
The events ledger: every operation on a job, as the engine saw it.
@module lease
*/
/*
** lease_lua_events.c: db:events, over the core's lease_events (lease.h,
** "The events ledger"), reached through lease_lua.c's op_method.
*/
#include <math.h>
#include <string.h>

#include "lease_lua_int.h"

/* db:events's default and largest limit. */
#define EVENTS_LIMIT_DEFAULT 100
#define EVENTS_LIMIT_MAX 10000

/***
Read the events ledger: the operations on jobs in the order they committed,
refused ones too, with what the engine saw. Written by handles opened with
`events = true` or `{keep=, max_age=}` (off by default; see `open`), pruned
to the newest `keep`. Read-only.
@function db:events
@tparam[opt] table filter `id` (string: one job's events; nil: all),
  `since_seq` (integer >= 0, default 0: the events after that seq),
  `limit` (integer 1 to 10000, default 100)
@treturn table a list, in seq order, of `{seq=, at=, op=, id=, queue=, owner=,
  fence=, outcome=, reason=}`: op one of "enqueue", "claim", "renew",
  "complete", "fail", "release", "cancel", "retry", "discard", "expire",
  "prune", "pause", "resume", "limit"; outcome "ok" or "refused"; reason the
  refusal's word ("not_owner", "stale_fence", ...) or nil; at the caller's
  now (for calls without one, the engine's clock in seconds); id nil for
  queue control, which names its queue; owner and fence nil where the
  operation has none. Fewer than limit means the end; the last seq is the
  next page's since_seq.
@raise `bad argument #2 to 'events' (filter.limit must be an integer from 1
  to 10000, got 0)` and the like; `lease.events: ...` on a database failure
*/
static void check_events(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const keys[] = {"id", "since_seq", "limit"};
  memset(&a->events, 0, sizeof a->events);
  a->n = EVENTS_LIMIT_DEFAULT;
  if (!lua_isnoneornil(L, 2)) {
    if (!lua_istable(L, 2)) lb_fail(L, 2, LB_ARG(c, 2, "filter"), "a table or nil");
    lb_check_keys(L, LB_ARG(c, 2, "filter"), 2, keys, 3, "filter");
    lua_getfield(L, 2, "id");
    a->events.id = lb_check_string(L, -1, LB_ARG(c, 2, "filter.id"), LB_OPTIONAL,
                                   &a->events.id_len);   /* stays on the stack, alive */
    lua_getfield(L, 2, "since_seq");
    a->events.since = lb_opt_integer(L, -1, LB_ARG(c, 2, "filter.since_seq"), 0, INT64_MAX, 0);
    lua_pop(L, 1);
    lua_getfield(L, 2, "limit");
    a->n = (int)lb_opt_integer(L, -1, LB_ARG(c, 2, "filter.limit"), 1, EVENTS_LIMIT_MAX,
                               EVENTS_LIMIT_DEFAULT);
    lua_pop(L, 1);
  }
  a->mem = lua_newuserdatauv(L, sizeof(lease_event) * (size_t)a->n, 0);
}

static int run_events(lease_db *db, lb_args *a) {
  return lease_events(db, &a->events, a->n, (lease_event *)a->mem, &a->found);
}

/* t[k] = s (len bytes) for the table at the top, unless s is NULL. */
static void set_bytes(lua_State *L, const char *k, const char *s, size_t len) {
  if (!s) return;
  lua_pushlstring(L, s, len);
  lua_setfield(L, -2, k);
}

static int push_events(lua_State *L, lb_args *a) {
  const lease_event *e = a->mem;
  int i;
  lua_createtable(L, a->found, 0);
  for (i = 0; i < a->found; i++) {
    lua_createtable(L, 0, 9);
    lua_pushinteger(L, (lua_Integer)e[i].seq);
    lua_setfield(L, -2, "seq");
    lua_pushnumber(L, e[i].at);
    lua_setfield(L, -2, "at");
    lua_pushstring(L, lease_event_name(e[i].op));
    lua_setfield(L, -2, "op");
    set_bytes(L, "id", e[i].id, e[i].id_len);
    set_bytes(L, "queue", e[i].queue, e[i].queue_len);
    set_bytes(L, "owner", e[i].owner, e[i].owner_len);
    if (e[i].has_fence) {
      lua_pushinteger(L, (lua_Integer)e[i].fence);
      lua_setfield(L, -2, "fence");
    }
    lua_pushstring(L, e[i].reason == LEASE_GRANTED ? "ok" : "refused");
    lua_setfield(L, -2, "outcome");
    if (e[i].reason != LEASE_GRANTED) {
      lua_pushstring(L, lease_reason_name(e[i].reason));
      lua_setfield(L, -2, "reason");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

const lb_op lb_op_events = {"events", 0, 0, check_events, run_events, push_events};
