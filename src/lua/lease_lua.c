/***
The `lease` module: leases with fencing tokens on a SQLite file.

Two faces of one implementation: the handle API (`local db = lease.open(path)`,
then `db:claim(id, ...)`: one connection, prepared statements) and the path
functions (`lease.claim(path, id, ...)`: one operation on the Lua state's
own connection to that file, kept from call to call).

Error idioms (CONTRACT.md, Lua mapping): protocol outcomes are return values
(`nil`/`false` plus a reason word); invalid arguments raise
`bad argument #i to 'f' (...)` before the database is touched; database
failures raise `lease.<op>: <SQLite's message> [<code word>] (file "<name>")`, the
name without secrets (`db:name()`).
Times (`now`, `ttl`, `until`) are numbers in the caller's unit (seconds with
`lease.now`).
@module lease
*/
/*
** lease_lua.c: the module table, the lease.db handle, and the binding's
** operations, one record each (lb_op: name, check, run, push; see
** lease_lua_int.h).  Every record is reached two ways by two generic C
** functions: op_method (db:<name>) and op_path (lease.<name>(path, ...)).
** Adding an operation is adding one record, its three functions, and a
** line in `ops`.  No SQL in this file.
*/
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lease_lua_int.h"
#include "core/lease_schema.h"

#define DB_MT "lease.db"

/*
** A handle: NULL db means closed (and a handle starts closed).  inuse
** counts the calls running on it.  Any Lua allocation inside a call can run
** a finalizer, and a finalizer may close this very handle; the call still
** reads the connection and its buffers, so such a close is deferred
** (closing) to the end of the last running call, while the handle already
** counts as closed for every new call.
*/
typedef struct lhandle {
  lease_db *db;
  int inuse;
  int closing;
} lhandle;

/* ===================================================================== */
/* Handles                                                                */
/* ===================================================================== */

/* The handle at i, open; raises on a closed one (or one being closed). */
static lhandle *check_handle(lua_State *L, int i) {
  lhandle *h = luaL_checkudata(L, i, DB_MT);
  if (!h->db || h->closing) luaL_error(L, "attempt to use a closed lease database");
  return h;
}

/* Enter a call on the open handle at i: its connection stays valid until
** leave_handle, even if a finalizer closes the handle meanwhile. */
static lease_db *enter_handle(lua_State *L, int i) {
  lhandle *h = check_handle(L, i);
  h->inuse++;
  return h->db;
}

/* End a call entered on the handle at i, finishing a close asked for
** during it. */
static void leave_handle(lua_State *L, int i) {
  lhandle *h = lua_touserdata(L, i);
  if (h->inuse > 0) h->inuse--;
  if (h->inuse == 0 && h->closing) {
    lease_close(h->db);
    h->db = NULL;
    h->closing = 0;
  }
}

/* Push a new handle in the closed state (liolib's newprefile): a failure
** half-way through opening leaves nothing inconsistent for __gc. */
static lhandle *new_handle(lua_State *L) {
  lhandle *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->db = NULL;
  h->inuse = 0;
  h->closing = 0;
  luaL_setmetatable(L, DB_MT);
  return h;
}

/* See lease_lua_int.h. */
void lb_push_db_error(lua_State *L, lease_db *db, const char *op) {
  lua_pushfstring(L, "lease.%s: %s [%s] (file \"%s\")", op, lease_errmsg(db),
                  lease_errname(lease_errcode(db)), lease_name(db));
}

/* Open path into a new handle pushed on the stack; raises on failure,
** naming op (the function the user called). */
static lease_db *open_handle(lua_State *L, const char *op, const char *path,
                             const lease_options *opt) {
  lhandle *h = new_handle(L);
  lease_db *db = NULL;
  int rc = lease_open(path, opt, &db);
  if (rc != LEASE_OK) {
    if (!db) luaL_error(L, "lease.%s: out of memory [nomem]", op);
    lb_push_db_error(L, db, op);
    lease_close(db);
    lua_error(L);
  }
  h->db = db;
  return db;
}

/* Close the handle at i if open, or, when calls on it are running (this
** close comes from a finalizer inside one), when the last of them ends.
** Shared by close, __close and the path functions. */
static int close_handle(lua_State *L, int i) {
  lhandle *h = luaL_checkudata(L, i, DB_MT);
  if (h->db && h->inuse > 0) {
    h->closing = 1;
  } else if (h->db) {
    lease_close(h->db);
    h->db = NULL;
  }
  return 0;
}

/* The open option events at the top: false (no events, the default), true
** (keep LEASE_EVENTS_KEEP), or a table {keep = integer >= 1, max_age =
** seconds > 0}. */
static void check_events_option(lua_State *L, const lb_arg *a, lease_options *opt) {
  int t = lua_gettop(L);
  if (lua_type(L, t) == LUA_TBOOLEAN) {
    opt->events_keep = lua_toboolean(L, t) ? LEASE_EVENTS_KEEP : 0;
    return;
  }
  if (!lua_istable(L, t)) lb_error(L, a, "events must be a boolean or a table {keep=, max_age=}");
  lb_check_plain(L, a, t, "events");
  opt->events_keep = LEASE_EVENTS_KEEP;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    if (strcmp(key, "keep") == 0) {
      double k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
      if (!(k >= 1 && k <= 9007199254740992.0 && floor(k) == k))
        lb_error(L, a, "events.keep must be an integer >= 1");
      opt->events_keep = (int64_t)k;
    } else if (strcmp(key, "max_age") == 0) {
      double s = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
      if (!(s > 0 && isfinite(s))) lb_error(L, a, "events.max_age must be a finite number > 0");
      opt->events_max_age = s;
    } else {
      lb_error(L, a, lua_pushfstring(L, "events has an unknown key '%s'",
                                     luaL_tolstring(L, -2, NULL)));
    }
    lua_pop(L, 1);
  }
}

/* Read the options table at i into opt; raises on an unknown key or bad value. */
static void check_options(lua_State *L, const lb_callee *c, int i, lease_options *opt) {
  const lb_arg *a = LB_ARG(c, i, "options");
  int clock_check = 1;
  double clock_factor = LEASE_CLOCK_FACTOR;
  lease_options_default(opt);
  if (lua_isnoneornil(L, i)) return;
  if (!lua_istable(L, i)) lb_fail(L, i, a, "a table or nil");
  lb_check_plain(L, a, i, "options");
  lua_pushnil(L);
  while (lua_next(L, i)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (key && strcmp(key, "busy_timeout") == 0) {
      double s = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!isfinite(s) || s < 0 || s > 2e6)
        lb_error(L, a, "busy_timeout must be a number of seconds from 0 to 2e6");
      opt->busy_timeout_ms = (int)ceil(s * 1000.0);
    } else if (key && strcmp(key, "synchronous") == 0) {
      const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      if (strcmp(v, "full") == 0) opt->synchronous = LEASE_SYNC_FULL;
      else if (strcmp(v, "normal") == 0) opt->synchronous = LEASE_SYNC_NORMAL;
      else lb_error(L, a, "synchronous must be \"full\" or \"normal\"");
    } else if (key && (strcmp(key, "readonly") == 0 || strcmp(key, "create") == 0)) {
      int flag = key[0] == 'r' ? LEASE_OPEN_READONLY : LEASE_OPEN_NOCREATE;
      int on;
      if (lua_type(L, -1) != LUA_TBOOLEAN)
        lb_error(L, a, lua_pushfstring(L, "%s must be a boolean", key));
      on = lua_toboolean(L, -1);
      if (flag == LEASE_OPEN_NOCREATE) on = !on;
      if (on) opt->flags |= flag;
      else opt->flags &= ~flag;
    } else if (key && strcmp(key, "group_commit") == 0) {
      if (lua_type(L, -1) != LUA_TBOOLEAN) lb_error(L, a, "group_commit must be a boolean");
      if (lua_toboolean(L, -1)) opt->flags &= ~LEASE_OPEN_NO_GROUP_COMMIT;
      else opt->flags |= LEASE_OPEN_NO_GROUP_COMMIT;
    } else if (key && strcmp(key, "clock_factor") == 0) {
      double f = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
      if (!(f > 1 && isfinite(f))) lb_error(L, a, "clock_factor must be a finite number > 1");
      clock_factor = f;
    } else if (key && strcmp(key, "events") == 0) {
      check_events_option(L, a, opt);
    } else if (key && strcmp(key, "clock_check") == 0) {
      if (lua_type(L, -1) != LUA_TBOOLEAN) lb_error(L, a, "clock_check must be a boolean");
      clock_check = lua_toboolean(L, -1);
    } else {
      /* a key that is no string is named as Lua writes it, with its type */
      const char *type = luaL_typename(L, -2);
      const char *shown = key ? key : luaL_tolstring(L, -2, NULL);
      lb_error(L, a, key ? lua_pushfstring(L, "unknown option '%s'", shown)
                         : lua_pushfstring(L, "unknown option %s (a %s key)", shown, type));
    }
    lua_pop(L, 1);
  }
  opt->clock_factor = clock_check ? clock_factor : 0;
}

/***
Open a database file and return a handle on it.
Creates the jobs table when missing (contract step 1) and checks an existing
one (its columns, types and constraints).
@function open
@tparam string path the database file (a URI with `file:` too); created when
  missing unless `options.create` is false. Non-empty, no zero bytes.
@tparam[opt] table options `busy_timeout` (number, seconds, 0 to 2e6, default
  10), `synchronous` (`"full"`, the default, or `"normal"`), `readonly`
  (boolean, default false), `create` (boolean, default true), `group_commit`
  (boolean, default true: threads of this process writing the same file share
  commits; false: each write commits alone), `clock_factor` (number > 1,
  default 100: a call whose `now` is off from the database's clock mark, the
  highest `now` it has seen, by this factor or more either way raises, as when
  one caller counts seconds and another milliseconds, and so does a `run_at`
  or prune's `before` off by this factor or 500, whichever is larger; compared
  only when both are at least 1e6), `clock_check` (boolean, default true;
  false: no check),
  `events` (false, the default: this handle's writes record no event in the
  ledger; true or a table `{keep = integer >= 1, max_age = number > 0}`:
  record them, keep the newest `keep` events (default 100000), and with
  `max_age` none older than that before the now of the write that prunes;
  see db:events).
@treturn db an open handle
@raise `bad argument` for a bad path or option; `lease.open: <message> [<code>]
  (file "<path>")` when the database cannot be opened (cantopen, notadb,
  schema, busy, readonly...).
*/
static int l_open(lua_State *L) {
  lease_options opt;
  lb_callee c = {"open", 0};
  const char *path = lb_check_string(L, 1, LB_ARG(&c, 1, "path"), LB_NOZERO, NULL);
  check_options(L, &c, 2, &opt);
  open_handle(L, "open", path, &opt);
  return 1;
}

/***
A handle on one database file: one connection with prepared statements.
Using a closed handle raises `attempt to use a closed lease database`.
@type db
*/

/***
Close the connection; closing a closed handle does nothing.
Also the `__close` (`local db <close> = lease.open(p)`) and `__gc` metamethods.
@function db:close
@treturn boolean true
@raise nothing
*/
static int m_close(lua_State *L) {
  close_handle(L, 1);
  lua_pushboolean(L, 1);
  return 1;
}

/* __close: close quietly, as db:close() does. */
static int m_close_scope(lua_State *L) {
  return close_handle(L, 1);
}

/* __gc: close now.  A collected handle is unreachable, so no call can be
** running on it; a nonzero inuse only means a call ended by an error
** (out of memory) before it could leave. */
static int m_gc(lua_State *L) {
  lhandle *h = luaL_checkudata(L, 1, DB_MT);
  h->inuse = 0;
  h->closing = 0;
  if (h->db) {
    lease_close(h->db);
    h->db = NULL;
  }
  return 0;
}

/* __tostring: "lease.db (name)" (lease_name: no secrets) or "lease.db (closed)". */
static int m_tostring(lua_State *L) {
  lhandle *h = luaL_checkudata(L, 1, DB_MT);
  if (h->db && !h->closing) lua_pushfstring(L, "lease.db (%s)", lease_name(h->db));
  else lua_pushliteral(L, "lease.db (closed)");
  return 1;
}

/***
The database this handle is open on, named without secrets: an SQLite
path as given; for a PostgreSQL connection string "host=... port=...
dbname=... user=..." (no password, sslpassword or passfile, in whatever
form the string held them).  Every error message names the database this way.
@function db:name
@treturn string the name
@raise `attempt to use a closed lease database`
*/
static int m_name(lua_State *L) {
  lhandle *h = luaL_checkudata(L, 1, DB_MT);
  if (!h->db || h->closing) return luaL_error(L, "attempt to use a closed lease database");
  lua_pushstring(L, lease_name(h->db));
  return 1;
}

/* ===================================================================== */
/* Pushing results                                                        */
/* ===================================================================== */

/*
** Push fencing token v.  Every Lua 5.3+ integer holds it; on 5.1 and
** LuaJIT a fence above 2^53 would be rounded to another token, so this
** returns 0 with the message pushed instead (the caller raises it after
** leaving the handle).  Returns 1 when pushed.
*/
static int push_fence(lua_State *L, const char *op, int64_t v) {
#if !LB_INTEGERS
  if (v > LB_EXACT_MAX || v < -LB_EXACT_MAX) {
    char num[24];
    snprintf(num, sizeof num, "%lld", (long long)v);
    lua_pushfstring(L, "lease.%s: fence %s is above 2^53, which this Lua cannot hold "
                    "exactly (its numbers are doubles); the stored row keeps it", op, num);
    return 0;
  }
#else
  (void)op;
#endif
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

/* Push a job row as CONTRACT.md describes; returns 0 with a message
** pushed instead when its fence cannot be pushed (push_fence). */
static int push_row(lua_State *L, const char *op, const lease_row *row) {
  lua_createtable(L, 0, 6);
  lua_pushlstring(L, row->id, row->id_len);
  lua_setfield(L, -2, "id");
  if (row->owner) {
    lua_pushlstring(L, row->owner, row->owner_len);
    lua_setfield(L, -2, "owner");
  }
  lua_pushnumber(L, row->until);
  lua_setfield(L, -2, "until");
  if (!push_fence(L, op, row->fence)) return 0;
  lua_setfield(L, -2, "fence");
  if (row->result) {
    lua_pushlstring(L, row->result, row->result_len);
    lua_setfield(L, -2, "result");
  }
  lua_pushboolean(L, row->done);
  lua_setfield(L, -2, "done");
  if (row->blocked) {
    lua_pushstring(L, row->blocked);
    lua_setfield(L, -2, "blocked");
  }
  return 1;
}

/* Push `ok` as true, or false and the reason word. */
static int push_outcome(lua_State *L, lb_args *a) {
  if (a->reason == LEASE_GRANTED) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, lease_reason_name(a->reason));
  return 2;
}

/* Check no arguments. */
static void check_none(lua_State *L, const lb_callee *c, lb_args *a) {
  (void)L, (void)c, (void)a;
}

/* The id at 2: a non-empty string (zero bytes allowed). */
static void check_id(lua_State *L, const lb_callee *c, lb_args *a) {
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "id"), 0, &a->id_len);
}

/* id at 2, owner at 3, fence at 4: what renew, complete, release share. */
static void check_id_owner_fence(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id(L, c, a);
  a->owner = lb_check_string(L, 3, LB_ARG(c, 3, "owner"), 0, &a->owner_len);
  a->fence = lb_check_integer(L, 4, LB_ARG(c, 4, "fence"), INT64_MIN, INT64_MAX);
}

/* ===================================================================== */
/* The operations: one record each                                       */
/* ===================================================================== */

/* --- init_db --------------------------------------------------------- */

/***
Create the jobs table if it does not exist (contract step 1); a second call
changes nothing.
@function db:init_db
@treturn boolean true
@raise `lease.init_db: ...` on a database failure
*/
static int run_init(lease_db *db, lb_args *a) {
  (void)a;
  return lease_init(db);
}
static int push_true(lua_State *L, lb_args *a) {
  (void)a;
  lua_pushboolean(L, 1);
  return 1;
}
static const lb_op op_init_db = {"init_db", 1, 0, check_none, run_init, push_true};

/* --- enqueue --------------------------------------------------------- */

/***
Insert a job in the default state (contract step 2): no owner, until 0,
fence 0, not done, with its queue data beside it.  An existing job, its
lease and its data stay as they are.  A job with a unique key is not
inserted while another job of its queue with that key is unfinished (not
completed, discarded or cancelled); the database enforces it, so of
concurrent enqueues of one key exactly one is inserted.
@function db:enqueue
@tparam string id the job (non-empty, may hold zero bytes)
@tparam[opt] table opts `{payload = string (any bytes), queue = string
  (1 to 255 bytes, default "default"), priority = integer (smaller runs first,
  default 0), run_at = number (claim_next does not hand it out before; default
  at once), max_attempts = integer >= 1 (default 25), key = string (the
  unique key, 1 to 1024 bytes; default none), timeout = number (seconds
  > 0: the pool stops a handler running longer; default none), after =
  {string,...} (the jobs it waits for: it is "waiting" until every one is
  completed, and cancelled when one is discarded or cancelled;
  docs/queue.md)}`; other keys raise
@treturn boolean true when inserted
@treturn[2] boolean false
@treturn[2] string `"exists"`; `"duplicate"` when the key is held; or
  `"missing"`, `"discarded"`, `"cancelled"` for a job of `after` that does
  not exist or the queue ended (nothing stored; checked before the key)
@treturn[2] string for `"duplicate"`: the id of the unfinished job holding
  the key; with the `after` reasons: that job's id
@raise `bad argument` for a bad id or option (`opts.after[2] must be a
  non-empty string`, `opts.after[1] is the job's own id`); `lease.enqueue:
  ...` on a database failure
*/
static void check_enqueue(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id(L, c, a);
  lease_new_job_default(&a->job);
  lb_check_job_opts(L, c, 3, 3, &a->job);
  a->job.id = a->id;
  a->job.id_len = a->id_len;
  lb_check_after_self(L, LB_ARG(c, 3, "opts"), &a->job);
}
static int run_enqueue(lease_db *db, lb_args *a) {
  int rc;
  a->db = db;
  rc = lease_enqueue(db, &a->job, &a->reason);
  a->dup = lease_duplicate_id(db, &a->dup_len);
  return rc;
}
/* false, the reason and the listed id that refused jobs (an enqueue's
** dependency: lease_enqueue_refused), or 0 pushed when none did. */
static int push_refused(lua_State *L, lb_args *a, const lease_new_job *jobs) {
  int i, k, why;
  if (!lease_enqueue_refused(a->db, &i, &k, &why)) return 0;
  lua_pushboolean(L, 0);
  lua_pushstring(L, lease_reason_name(why));
  lua_pushlstring(L, jobs[i].after[k], jobs[i].after_lens[k]);
  return 3;
}
static int push_enqueue(lua_State *L, lb_args *a) {
  int n = push_refused(L, a, &a->job);
  return n ? n : lb_push_outcome(L, a);
}
static const lb_op op_enqueue = {"enqueue", 1, 0, check_enqueue, run_enqueue, push_enqueue};

/* --- state ----------------------------------------------------------- */

/***
Read a job's stored row (contract step 3) and its queue data; a pure read.
`owner` and `result` are nil when NULL, `done` is a boolean, `fence` an
integer, `until` a number (read it as `s["until"]`).  A job another client
left unclaimable also has `blocked = "<why>"` (and `until` NaN when the
stored until is not a number).  The queue's fields: `payload` (nil when
none), `queue`, `priority`, `run_at` (nil: at once), `attempt` (claims since
enqueue or the last retry), `max_attempts`, `finished_at` (when it was
completed, discarded or cancelled), `key` (its unique key, nil when none),
`errors` (`{attempt=, at=, owner=, fence=, message=}`, oldest first, the
last 20 kept), `after` (for a job enqueued after others: every job it
listed, by id, completed or not) and `status` at now: `"available"`,
`"scheduled"`, `"running"`, `"retryable"`, `"completed"`, `"discarded"`,
`"cancelled"` or `"waiting"`.
@function db:state
@tparam string id the job
@tparam[opt] number now finite, caller's unit: the time the status is for
  (default lease.now())
@treturn table `{id=, owner=, until=, fence=, result=, done=[, blocked=], payload=,
  queue=, priority=, run_at=, attempt=, max_attempts=, errors=[, after=], status=}`
@treturn[2] nil when there is no such job
@raise `bad argument` for a bad id; `lease.state: ...` on a database failure;
  `lease.state: fence ... is above 2^53` on a Lua without integers.
*/
static void check_state(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id(L, c, a);
  a->now = lb_check_now_opt(L, c, 3);
}
static int run_state(lease_db *db, lb_args *a) {
  a->db = db;
  return lease_state(db, a->id, a->id_len, a->now, &a->row, &a->found);
}
static int push_state(lua_State *L, lb_args *a) {
  if (!a->found) {
    lua_pushnil(L);
    return 1;
  }
  if (!push_row(L, "state", &a->row)) return -1;
  lb_push_queue_fields(L, &a->row, 0);
  if (!lb_attach_errors(L, a->db, "state", 0)) return -1;
  return lb_attach_after(L, a->db, "state", isnan(a->now) ? 0 : a->now) ? 1 : -1;
}
static const lb_op op_state = {"state", 1, 0, check_state, run_state, push_state};

/* --- claim ----------------------------------------------------------- */

/***
Take the lease on a job (contract step 4, one `BEGIN IMMEDIATE`
transaction): when it exists, is not done and `until <= now`, store
owner, `until = now + ttl` and `fence + 1`.
@function db:claim
@tparam string id the job (non-empty)
@tparam string owner who takes it (non-empty)
@tparam number now the time, caller's unit; finite
@tparam number ttl the lease's length, same unit; finite, > 0, and
  `now + ttl > now`
@treturn integer the new fencing token
@treturn[2] nil
@treturn[2] string `"missing"`, `"done"`, `"held"`, `"discarded"`,
  `"cancelled"` or `"waiting"` (enqueued after jobs not all completed)
@raise `bad argument #4 to 'claim' (ttl must be a number > 0, got 0)` and the
  like before anything runs; `lease.claim: <message> [<code>] (file "<path>")`
  on a database failure (busy past the timeout, readonly, full...).
*/
static void check_claim(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id(L, c, a);
  a->owner = lb_check_string(L, 3, LB_ARG(c, 3, "owner"), 0, &a->owner_len);
  lb_check_time(L, c, 4, &a->now, &a->ttl);
}
static int run_claim(lease_db *db, lb_args *a) {
  return lease_claim(db, a->id, a->id_len, a->owner, a->owner_len, a->now, a->ttl, &a->fence,
                     &a->reason);
}
static int push_claim(lua_State *L, lb_args *a) {
  if (a->reason != LEASE_GRANTED) {
    lua_pushnil(L);
    lua_pushstring(L, lease_reason_name(a->reason));
    return 2;
  }
  return push_fence(L, "claim", a->fence) ? 1 : -1;
}
static const lb_op op_claim = {"claim", 1, 0, check_claim, run_claim, push_claim};

/* --- renew ----------------------------------------------------------- */

/***
Extend a lease to `now + ttl` (contract step 5) when owner and fence match,
the job is not done and `until > now`.
@function db:renew
@tparam string id the job
@tparam string owner the holder
@tparam integer fence the token claim returned
@tparam number now as for claim
@tparam number ttl as for claim
@treturn boolean true when extended
@treturn[2] boolean false
@treturn[2] string `"missing"`, `"done"`, `"not_owner"`, `"stale_fence"` or `"expired"`
@raise as claim does
*/
static void check_renew(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id_owner_fence(L, c, a);
  lb_check_time(L, c, 5, &a->now, &a->ttl);
}
static int run_renew(lease_db *db, lb_args *a) {
  return lease_renew(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now, a->ttl,
                     &a->reason);
}
static const lb_op op_renew = {"renew", 1, 0, check_renew, run_renew, push_outcome};

/* --- complete -------------------------------------------------------- */

/***
Store a result and mark the job done (contract step 6), only under the
current lease: owner and fence match, not done, `until > now`.  Otherwise
the stored result stays.
@function db:complete
@tparam string id the job
@tparam string owner the holder
@tparam integer fence the token claim returned
@tparam number now finite, caller's unit
@tparam[opt] string result any bytes, or nil
@treturn boolean true when stored
@treturn[2] boolean false
@treturn[2] string a reason, as for renew
@raise `bad argument` for a bad argument; `lease.complete: ...` on a database
  failure; `lease.complete: complete's queue row of <id> changed no row (a
  trigger?): nothing stored [mismatch]` when a trigger another client defined
  skipped the write of the job's queue row, and on SQLite `... job <id>
  changed between its queue row and its jobs row ... [mismatch]` when one
  changes the job within the call
*/
static void check_complete(lua_State *L, const lb_callee *c, lb_args *a) {
  check_id_owner_fence(L, c, a);
  a->now = lb_check_number(L, 5, LB_ARG(c, 5, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->result = lb_check_string(L, 6, LB_ARG(c, 6, "result"), LB_OPTIONAL | LB_EMPTY,
                              &a->result_len);
}
static int run_complete(lease_db *db, lb_args *a) {
  return lease_complete(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now,
                        a->result, a->result_len, &a->reason);
}
static const lb_op op_complete = {"complete", 1, 0, check_complete, run_complete, push_outcome};

/* --- release --------------------------------------------------------- */

/***
Give a lease back (contract step 7) when owner and fence match and the job is
not done: owner and until are cleared, the fence is kept, and the job's attempt
is given back (the claim it ends does not count against max_attempts).
@function db:release
@tparam string id the job
@tparam string owner the holder
@tparam integer fence the token claim returned
@treturn boolean true when released
@treturn[2] boolean false
@treturn[2] string `"missing"`, `"done"`, `"not_owner"` or `"stale_fence"`
@raise `bad argument` for a bad argument; `lease.release: ...` on a database failure
*/
static int run_release(lease_db *db, lb_args *a) {
  return lease_release(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, &a->reason);
}
static const lb_op op_release = {"release", 1, 0, check_id_owner_fence, run_release,
                                 push_outcome};

/* --- claim_next ------------------------------------------------------ */

/* The most jobs one claim_next may take, and one complete_many complete. */
#define BATCH_MAX 1000000

/***
Claim the ready jobs of one queue with claim's rule (fence + 1, owner,
`until = now + ttl`), all in one `BEGIN IMMEDIATE` transaction, in the order
of (priority, due time, enqueue order), smallest first (the due time: `run_at`,
or for a job without, the database's clock mark when it was enqueued or
retried; docs/queue.md).  Ready: not done, not
discarded or cancelled, `until <= now`, run_at nil or `<= now`.  Each job
taken counts an attempt; a job found with a lease that expired unreported
gets the error "lease expired" first, and is discarded instead when that
used up its attempts.
@function db:claim_next
@tparam string owner who takes them (non-empty)
@tparam number now as for claim
@tparam number ttl as for claim
@tparam[opt] integer|table opts how many, 1 to 1000000, or a table
  `{n = integer, queue = string}` (queue default `"default"`)
@treturn string without n: the job's id...
@treturn integer ...its new fence...
@treturn table ...and the job `{id=, fence=, payload=, queue=, priority=,
  attempt=, max_attempts=}`
@treturn[2] nil without n, when no job is handed out...
@treturn[2] string ...`"empty"` (none ready), `"paused"` (db:pause) or
  `"limited"` (at a db:limit)
@treturn[3] table with n: a list of such jobs, up to n (and up to the room
  a limit leaves), in claim order...
@treturn[3] string ...and, when the list is empty, why: `"empty"`, `"paused"`
  or `"limited"`
@raise `bad argument` for a bad argument; `lease.claim_next: ...` on a database failure
*/
static void check_claim_next(lua_State *L, const lb_callee *c, lb_args *a) {
  a->owner = lb_check_string(L, 2, LB_ARG(c, 2, "owner"), 0, &a->owner_len);
  lb_check_time(L, c, 3, &a->now, &a->ttl);
  lb_check_claim_opts(L, c, 5, a);
  a->mem = lua_newuserdatauv(L, sizeof(lease_job) * (size_t)(a->n ? a->n : 1), 0);
}
static int run_claim_next(lease_db *db, lb_args *a) {
  return lease_claim_next(db, a->queue, a->queue_len, a->owner, a->owner_len, a->now, a->ttl,
                          a->n ? a->n : 1, (lease_job *)a->mem, &a->found, &a->why);
}
/* Push the a->found jobs taken (a->mem) as claim_next returns them, op
** naming the call in a fence's error. */
static int push_taken(lua_State *L, lb_args *a, const char *op) {
  const lease_job *jobs = a->mem;
  int i;
  if (a->n == 0) {   /* the single form: id, fence | nil, "empty" / "paused" / "limited" */
    if (a->found == 0) {
      lua_pushnil(L);
      lua_pushstring(L, lease_reason_name(a->why));
      return 2;
    }
    lua_pushlstring(L, jobs[0].id, jobs[0].id_len);
    if (!push_fence(L, op, jobs[0].fence)) return -1;
    lua_createtable(L, 0, 7);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "id");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "fence");
    lb_push_job_fields(L, &jobs[0]);
    return 3;
  }
  lua_createtable(L, a->found, 0);
  for (i = 0; i < a->found; i++) {
    lua_createtable(L, 0, 7);
    lua_pushlstring(L, jobs[i].id, jobs[i].id_len);
    lua_setfield(L, -2, "id");
    if (!push_fence(L, op, jobs[i].fence)) return -1;
    lua_setfield(L, -2, "fence");
    lb_push_job_fields(L, &jobs[i]);
    lua_rawseti(L, -2, i + 1);
  }
  if (a->found > 0) return 1;
  lua_pushstring(L, lease_reason_name(a->why));   /* none taken: why */
  return 2;
}
static int push_claim_next(lua_State *L, lb_args *a) { return push_taken(L, a, "claim_next"); }
static const lb_op op_claim_next = {"claim_next", 1, 0, check_claim_next, run_claim_next,
                                    push_claim_next};

/* --- complete_claim_next --------------------------------------------- */

/***
Complete one job and claim the next in one write transaction: exactly
`db:complete(id, owner, fence, now, result)` followed by
`db:claim_next(owner, now, ttl, opts)`, for one commit instead of two (BullMQ's
moveToCompleted with fetchNext).  A refused completion stores nothing and the
claim still runs; a database failure in either step raises and rolls both
back (nothing stored, no job taken).  On PostgreSQL the commit may come in
the round trip that runs both steps, before the results are copied: running
out of memory then raises with both stored.
@function db:complete_claim_next
@tparam string id the job to complete
@tparam string owner its holder, and the owner of the jobs claimed
@tparam integer fence the token its claim returned
@tparam number now finite, caller's unit: complete's and claim's now
@tparam string|nil result any bytes, or nil
@tparam number ttl as for claim
@tparam[opt] integer|table opts as for claim_next
@treturn boolean true when the result was stored, else false...
@treturn string|nil ...nil, or the reason it was refused (as for complete)...
@return ...then what `claim_next(owner, now, ttl, opts)` returns: `id, fence,
  job` | `nil, reason`, or with n a list of jobs (and a reason when empty)
@raise `bad argument` for a bad argument; `lease.complete_claim_next: ...` on
  a database failure (a `[mismatch]` as complete raises it among them)
*/
static void check_complete_claim_next(lua_State *L, const lb_callee *c, lb_args *a) {
  const char *why;
  check_complete(L, c, a);
  a->ttl = lb_check_number(L, 7, LB_ARG(c, 7, "ttl"), 0, -HUGE_VAL, 0);
  if (lease_check_time(a->now, a->ttl, &why))
    lb_error(L, LB_ARG(c, 7, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, 7)));
  lb_check_claim_opts(L, c, 8, a);
  a->mem = lua_newuserdatauv(L, sizeof(lease_job) * (size_t)(a->n ? a->n : 1), 0);
}
static int run_complete_claim_next(lease_db *db, lb_args *a) {
  return lease_complete_claim_next(db, a->id, a->id_len, a->owner, a->owner_len, a->fence,
                                   a->now, a->result, a->result_len, a->queue, a->queue_len,
                                   a->ttl, a->n ? a->n : 1, (lease_job *)a->mem, &a->found,
                                   &a->reason, &a->why);
}
static int push_complete_claim_next(lua_State *L, lb_args *a) {
  int n;
  lua_pushboolean(L, a->reason == LEASE_GRANTED);
  if (a->reason == LEASE_GRANTED) lua_pushnil(L);
  else lua_pushstring(L, lease_reason_name(a->reason));
  n = push_taken(L, a, "complete_claim_next");
  return n < 0 ? -1 : 2 + n;
}
static const lb_op op_complete_claim_next = {"complete_claim_next", 0, 0,
                                             check_complete_claim_next, run_complete_claim_next,
                                             push_complete_claim_next};

/* --- enqueue_many ---------------------------------------------------- */

/***
Enqueue every job in one transaction (enqueue's rule for each).  Every entry
is checked first: a bad entry raises and nothing is inserted.  An entry whose
key is held (by an unfinished job, or by an earlier entry of the list) is
skipped as an existing id is: not inserted, not counted; the others go in.
@function db:enqueue_many
@tparam {string|table,...} list ids (non-empty strings), or tables `{id =
  string, payload =, queue =, priority =, run_at =, max_attempts =, key =}`
  (as enqueue's opts)
@tparam[opt] table opts the defaults of every entry, as enqueue's opts
@treturn integer how many were new
@treturn[2] boolean false when an entry's `after` names a job that does not
  exist or the queue ended (nothing stored), then the reason and that id
  (as enqueue)
@raise `bad argument #1 to 'enqueue_many' (ids[3] must be a non-empty string,
  got 7)` and the like; `lease.enqueue_many: ...` on a database failure
  (nothing inserted)
*/
static int run_enqueue_many(lease_db *db, lb_args *a) {
  a->db = db;
  return lease_enqueue_many(db, (const lease_new_job *)a->mem, a->n, &a->found);
}
static int push_found(lua_State *L, lb_args *a) {
  lua_pushinteger(L, a->found);
  return 1;
}
static int push_enqueued(lua_State *L, lb_args *a) {
  int n = push_refused(L, a, (const lease_new_job *)a->mem);
  return n ? n : push_found(L, a);
}
static const lb_op op_enqueue_many = {"enqueue_many", 1, 0, lb_check_new_jobs, run_enqueue_many,
                                      push_enqueued};

/* --- complete_many --------------------------------------------------- */

/***
Complete many jobs of one owner in one transaction, each exactly as
db:complete would (contract step 6: owner, fence, done and until checked as
it is stored; a refused job keeps its stored result and does not stop the
others).  Every job is checked first: a bad entry raises and nothing is stored.
@function db:complete_many
@tparam string owner the holder of every job
@tparam number now finite, caller's unit
@tparam {table,...} jobs a sequence of at most 1000000 tables `{id = string,
  fence = integer, result = string or nil}`: the shape claim_next(..., n)
  returns, plus a result; fields read raw (no metamethods); a key other
  than those and claim_next's (payload, queue, priority, attempt,
  max_attempts, timeout) is an argument error
@treturn boolean true when every job was stored
@treturn[2] boolean false
@treturn[2] table the position of each refused job in `jobs` mapped to its
  reason word (`"missing"`, `"done"`, `"not_owner"`, `"stale_fence"`, `"expired"`)
@raise `bad argument #3 to 'complete_many' (jobs[2].fence must be an integer,
  got 1.5)`, `(jobs[1] has an unknown key 'reslut')` and the like; `lease.complete_many: ...` on a database failure
  (a `[mismatch]` as complete raises it among them; then nothing is stored)
*/
/* The keys a jobs entry may hold: what claim_next gives a job, and its
** result.  Any other is a mistake (a misspelt result would store none). */
static const char *const job_entry_keys[] = {"id",       "fence",        "result",
                                             "payload",  "queue",        "priority",
                                             "attempt",  "max_attempts", "timeout"};

static void check_job(lua_State *L, const lb_callee *c, int at, int i, lease_result *it) {
  lb_arg field = {c, at, "jobs[%d]", i};
  char name[32];
  if (lua_rawgeti(L, at, i) != LUA_TTABLE) lb_fail(L, -1, &field, "a table");
  snprintf(name, sizeof name, "jobs[%d]", i);
  lb_check_keys(L, &field, -1, job_entry_keys, (int)(sizeof job_entry_keys / sizeof *job_entry_keys),
                name);
  /* fields are read raw; the strings stay alive in the caller's tables */
  lua_pushliteral(L, "id");
  lua_rawget(L, -2);
  field.what = "jobs[%d].id";
  it->id = lb_check_string(L, -1, &field, 0, &it->id_len);
  lua_pushliteral(L, "fence");
  lua_rawget(L, -3);
  field.what = "jobs[%d].fence";
  it->fence = lb_check_integer(L, -1, &field, INT64_MIN, INT64_MAX);
  lua_pushliteral(L, "result");
  lua_rawget(L, -4);
  field.what = "jobs[%d].result";
  it->result = lb_check_string(L, -1, &field, LB_OPTIONAL | LB_EMPTY, &it->result_len);
  lua_pop(L, 4);
}
static void check_complete_many(lua_State *L, const lb_callee *c, lb_args *a) {
  lease_result *items;
  int i, room;
  a->owner = lb_check_string(L, 2, LB_ARG(c, 2, "owner"), 0, &a->owner_len);
  a->now = lb_check_number(L, 3, LB_ARG(c, 3, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->n = lb_check_sequence(L, 4, LB_ARG(c, 4, "jobs"), BATCH_MAX);
  room = a->n ? a->n : 1;
  /* the jobs, then room for their reasons */
  a->mem = lua_newuserdatauv(L, (sizeof *items + sizeof(int)) * (size_t)room, 0);
  items = a->mem;
  for (i = 1; i <= a->n; i++) check_job(L, c, 4, i, &items[i - 1]);
}
static int *complete_many_reasons(lb_args *a) {
  return (int *)(void *)((lease_result *)a->mem + (a->n ? a->n : 1));
}
static int run_complete_many(lease_db *db, lb_args *a) {
  return lease_complete_many(db, a->owner, a->owner_len, a->now, (lease_result *)a->mem, a->n,
                             complete_many_reasons(a), &a->found);
}
static int push_complete_many(lua_State *L, lb_args *a) {
  const int *reasons = complete_many_reasons(a);
  int i;
  if (a->found == a->n) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);   /* false, {[i] = reason} for each refused job */
  lua_createtable(L, 0, a->n - a->found);
  for (i = 0; i < a->n; i++) {
    if (reasons[i] == LEASE_GRANTED) continue;
    lua_pushstring(L, lease_reason_name(reasons[i]));
    lua_rawseti(L, -2, i + 1);
  }
  return 2;
}
static const lb_op op_complete_many = {"complete_many", 1, 0, check_complete_many,
                                       run_complete_many, push_complete_many};

/* --- complete_many_claim_next ---------------------------------------- */

/***
Complete a batch and claim the next in one write transaction: exactly
`db:complete_many(owner, now, jobs)` followed by
`db:claim_next(owner, now, ttl, opts)`, for one commit instead of two.  A
refused job stores nothing and neither it nor the others stop the claim; a
database failure in either step raises and rolls both back (nothing stored,
no job taken).  Every argument is checked first.
@function db:complete_many_claim_next
@tparam string owner the holder of every job, and the owner of the jobs claimed
@tparam number now finite, caller's unit: complete_many's and claim's now
@tparam {table,...} jobs as for complete_many (may be empty: the claim alone)
@tparam number ttl as for claim
@tparam[opt] integer|table opts as for claim_next
@treturn boolean true when every job was stored, else false...
@treturn table|nil ...nil, or the refused positions mapped to their reasons
  (as complete_many)...
@return ...then what `claim_next(owner, now, ttl, opts)` returns: `id, fence,
  job` | `nil, reason`, or with n a list of jobs (and a reason when empty)
@raise `bad argument` for a bad argument; `lease.complete_many_claim_next: ...`
  on a database failure (a `[mismatch]` as complete raises it among them)
*/
static lease_result *fused_items(lb_args *a) {
  return (lease_result *)((lease_job *)a->mem + (a->n ? a->n : 1));
}
static int *fused_reasons(lb_args *a) {
  return (int *)(void *)(fused_items(a) + (a->items ? a->items : 1));
}
static void check_complete_many_claim_next(lua_State *L, const lb_callee *c, lb_args *a) {
  const char *why;
  int i;
  a->owner = lb_check_string(L, 2, LB_ARG(c, 2, "owner"), 0, &a->owner_len);
  a->now = lb_check_number(L, 3, LB_ARG(c, 3, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->items = lb_check_sequence(L, 4, LB_ARG(c, 4, "jobs"), BATCH_MAX);
  a->ttl = lb_check_number(L, 5, LB_ARG(c, 5, "ttl"), 0, -HUGE_VAL, 0);
  if (lease_check_time(a->now, a->ttl, &why))
    lb_error(L, LB_ARG(c, 5, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, 5)));
  lb_check_claim_opts(L, c, 6, a);
  /* the jobs taken, then the completions, then their reasons */
  a->mem = lua_newuserdatauv(L, sizeof(lease_job) * (size_t)(a->n ? a->n : 1) +
                                    (sizeof(lease_result) + sizeof(int)) *
                                        (size_t)(a->items ? a->items : 1), 0);
  for (i = 1; i <= a->items; i++) check_job(L, c, 4, i, &fused_items(a)[i - 1]);
}
static int run_complete_many_claim_next(lease_db *db, lb_args *a) {
  return lease_complete_many_claim_next(db, a->owner, a->owner_len, a->now, fused_items(a),
                                        a->items, fused_reasons(a), &a->reason, a->queue,
                                        a->queue_len, a->ttl, a->n ? a->n : 1,
                                        (lease_job *)a->mem, &a->found, &a->why);
}
static int push_complete_many_claim_next(lua_State *L, lb_args *a) {
  const int *reasons = fused_reasons(a);
  int i, n;
  lua_pushboolean(L, a->reason == a->items);   /* a->reason: how many were stored */
  if (a->reason == a->items) {
    lua_pushnil(L);
  } else {
    lua_createtable(L, 0, a->items - a->reason);
    for (i = 0; i < a->items; i++) {
      if (reasons[i] == LEASE_GRANTED) continue;
      lua_pushstring(L, lease_reason_name(reasons[i]));
      lua_rawseti(L, -2, i + 1);
    }
  }
  n = push_taken(L, a, "complete_many_claim_next");
  return n < 0 ? -1 : 2 + n;
}
static const lb_op op_complete_many_claim_next = {
  "complete_many_claim_next", 0, 0, check_complete_many_claim_next,
  run_complete_many_claim_next, push_complete_many_claim_next};

/* --- jobs ------------------------------------------------------------ */

/***
A page of jobs in enqueue order; read-only.  Each is a table as db:state
returns, plus `seq`, its place in the enqueue order: pass the last seq as
`after` for the next page.
@function db:jobs
@tparam string which `"all"`, `"ready"` (not done, until <= now), `"held"`
  (not done, until > now), `"done"`, or `"blocked"` (not done, holding a value
  another client stored that the engine cannot honour; such a job has a
  `blocked` field saying which)
@tparam number now finite, caller's unit
@tparam[opt=1000] integer limit 1 to 100000
@tparam[opt=0] integer after a seq
@treturn {table,...} the jobs (the contract's fields and `seq`)
@raise `bad argument` for a bad argument; `lease.jobs: ...` on a database failure
*/
/***
The table form of db:jobs: a page of jobs with their queue data, in enqueue
order; read-only.  Each row is as db:state returns it (without `errors`
unless asked), plus `seq` (pass the last as `after`) and `result_size`
(bytes of the result).
@function db:jobs
@tparam table filter `{status = word or nil (all), queue = string or nil
  (all), now = number (default lease.now()), limit = 1..100000 (default
  1000), after = seq (default 0), results = false (leave results out),
  errors = true (add each row's errors)}`; other keys raise
@treturn {table,...} the jobs
@raise `bad argument #1 to 'jobs' (filter.status must be a status word ...)` and
  the like; `lease.jobs: ...` on a database failure
*/
static void check_jobs(lua_State *L, const lb_callee *c, lb_args *a) {
  static const char *const kinds[] = {"all", "ready", "held", "done", "blocked", NULL};
  const char *w = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (lua_type(L, 2) == LUA_TTABLE) {
    lb_check_jobs_table(L, c, a);
    return;
  }
  for (a->which = 0; kinds[a->which] && strcmp(kinds[a->which], w) != 0; a->which++) {}
  if (!kinds[a->which])
    lb_fail(L, 2, LB_ARG(c, 2, "which"), "\"all\", \"ready\", \"held\", \"done\" or \"blocked\"");
  a->now = lb_check_number(L, 3, LB_ARG(c, 3, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->n = (int)lb_opt_integer(L, 4, LB_ARG(c, 4, "limit"), 1, 100000, 1000);
  a->after = lb_opt_integer(L, 5, LB_ARG(c, 5, "after"), INT64_MIN, INT64_MAX, 0);
  a->mem = lua_newuserdatauv(L, sizeof(lease_row) * (size_t)a->n, 0);
  lease_filter_default(&a->filter);
  a->filter.which = a->which;
  a->filter.now = a->now;
  a->filter.after = a->after;
}
static int run_jobs(lease_db *db, lb_args *a) {
  a->db = db;
  return lease_list(db, &a->filter, a->n, (lease_row *)a->mem, &a->found);
}
static int push_jobs(lua_State *L, lb_args *a) {
  const lease_row *rows = a->mem;
  int i;
  lua_createtable(L, a->found, 0);
  for (i = 0; i < a->found; i++) {
    if (!push_row(L, "jobs", &rows[i])) return -1;
    if (a->table_form) {
      lb_push_queue_fields(L, &rows[i], 1);
    } else {
      lua_pushinteger(L, (lua_Integer)rows[i].seq);
      lua_setfield(L, -2, "seq");
    }
    lua_rawseti(L, -2, i + 1);
  }
  if (a->with_errors && !lb_attach_errors(L, a->db, "jobs", 1)) return -1;
  return 1;
}
static const lb_op op_jobs = {"jobs", 0, 0, check_jobs, run_jobs, push_jobs};

/* --- counts ---------------------------------------------------------- */

/***
Count jobs by state (integers; ready, held, done and blocked add up to
total) and by status (the eight status words, adding up to total too);
read-only.
@function db:counts
@tparam number now finite, caller's unit: decides ready versus held
@tparam[opt] string queue count only this queue's jobs (default: all)
@treturn table `{total=, ready=, held=, done=, blocked=, available=, scheduled=,
  running=, retryable=, completed=, discarded=, cancelled=, waiting=}`
@raise `bad argument` for a bad now; `lease.counts: ...` on a database failure
*/
static void check_counts(lua_State *L, const lb_callee *c, lb_args *a) {
  a->now = lb_check_number(L, 2, LB_ARG(c, 2, "now"), LB_FINITE, -HUGE_VAL, 0);
  a->queue = lb_check_string(L, 3, LB_ARG(c, 3, "queue"), LB_OPTIONAL, &a->queue_len);
}
static int run_counts(lease_db *db, lb_args *a) {
  return lease_count(db, a->now, a->queue, a->queue_len, &a->counts);
}
static int push_counts(lua_State *L, lb_args *a) {
  static const char *const names[] = {"total", "ready", "held", "done", "blocked", "available",
                                      "scheduled", "running", "retryable", "completed",
                                      "discarded", "cancelled", "waiting"};
  const lease_counts *n = &a->counts;
  const int64_t values[] = {n->total, n->ready, n->held, n->done, n->blocked, n->available,
                            n->scheduled, n->running, n->retryable, n->completed, n->discarded,
                            n->cancelled, n->waiting};
  size_t i;
  lua_createtable(L, 0, 13);
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    lua_pushinteger(L, (lua_Integer)values[i]);
    lua_setfield(L, -2, names[i]);
  }
  return 1;
}
static const lb_op op_counts = {"counts", 0, 0, check_counts, run_counts, push_counts};

/* --- settings -------------------------------------------------------- */

/***
The connection's settings, read back from the database, not from the options,
and the database's schema version as this handle opened it (an integer: the
engine's, `lease.SCHEMA_VERSION`, after a writable open, which brings an older
database up to it; an older one's own on a read-only handle).
@function db:settings
@treturn table `{journal_mode = "wal", synchronous = "full"|"normal"|"off"|"extra",
  busy_timeout = seconds, schema_version = integer}`
@raise `lease.settings: ...` on a database failure
*/
static int run_settings(lease_db *db, lb_args *a) {
  return lease_read_settings(db, &a->settings);
}
static int push_settings(lua_State *L, lb_args *a) {
  static const char *const sync_names[] = {"off", "normal", "full", "extra"};
  int sync = a->settings.synchronous;
  lua_createtable(L, 0, 4);
  lua_pushstring(L, a->settings.journal_mode);
  lua_setfield(L, -2, "journal_mode");
  lua_pushstring(L, sync >= 0 && sync < (int)(sizeof sync_names / sizeof sync_names[0])
                        ? sync_names[sync] : "?");
  lua_setfield(L, -2, "synchronous");
  lua_pushnumber(L, a->settings.busy_timeout_ms / 1000.0);
  lua_setfield(L, -2, "busy_timeout");
  lua_pushinteger(L, a->settings.schema_version);
  lua_setfield(L, -2, "schema_version");
  return 1;
}
static const lb_op op_settings = {"settings", 0, 0, check_none, run_settings, push_settings};

/* --- server_now ------------------------------------------------------ */

/***
The database's clock: on PostgreSQL the server's `clock_timestamp()`, one
clock for workers on many hosts; on SQLite the local wall clock, as
`lease.now()`.  Seconds since the Unix epoch, with fractions.  No operation
reads a clock: pass it as their `now`.
@function db:server_now
@treturn number seconds
@raise `lease.server_now: ...` on a database failure (on PostgreSQL a lost
  connection: `ioerr`)
*/
static int run_server_now(lease_db *db, lb_args *a) {
  return lease_server_now(db, &a->now);
}
static int push_now(lua_State *L, lb_args *a) {
  lua_pushnumber(L, (lua_Number)a->now);
  return 1;
}
static const lb_op op_server_now = {"server_now", 0, 0, check_none, run_server_now, push_now};

/* Every operation; the path functions are those with has_path. */
static const lb_op *const ops[] = {
  &op_init_db, &op_enqueue, &op_state, &op_claim, &op_renew, &op_complete, &op_release,
  &op_claim_next, &op_complete_claim_next, &op_enqueue_many, &op_complete_many,
  &op_complete_many_claim_next, &op_jobs,
  &op_counts, &op_settings,
  &lb_op_claim_many, &lb_op_fail, &lb_op_retry, &lb_op_cancel, &lb_op_prune,
  &lb_op_with_lease, &lb_op_fence_gate,
  &lb_op_pause, &lb_op_resume, &lb_op_limit, &lb_op_queues, &lb_op_wait,
  &op_server_now, &lb_op_events,
  &lb_op_schedule, &lb_op_unschedule, &lb_op_schedules, &lb_op_tick,
};

/* ===================================================================== */
/* One record, two ways in                                               */
/* ===================================================================== */

/* Run op on db and push its results: how many, or -1 with the error
** message pushed (the caller raises it once the connection is let go). */
static int run_and_push(lua_State *L, const lb_op *op, lease_db *db, lb_args *a) {
  if (op->run(db, a) != LEASE_OK) {
    lb_push_db_error(L, db, op->name);
    return -1;
  }
  return op->push(L, a);
}

/* db:<name>(...): the record is upvalue 1.  The arguments are checked
** (which may allocate) before the call is entered; results are pushed
** inside it. */
static int op_method(lua_State *L) {
  const lb_op *op = lua_touserdata(L, lua_upvalueindex(1));
  lb_callee c = {op->name, 1};
  lb_args a;
  lease_db *db;
  int n;
  check_handle(L, 1);
  memset(&a, 0, sizeof a);
  op->check(L, &c, &a);
  db = enter_handle(L, 1);
  n = run_and_push(L, op, db, &a);
  leave_handle(L, 1);
  if (n < 0) return lua_error(L);
  return n;
}

/*
** lease.<name>(path, ...): check the path and every argument, take the
** state's connection to path (lease_lua_pathcache.c: opened with the
** default options, checked against the file's identity), run the record,
** give the connection back, then return its results or raise its error.
** A bad argument raises before the file is touched (not even created).
** The connection is held by a full userdata during the call, so even an
** error raised by Lua itself (out of memory) leaves it to __gc.
*/
static int op_path(lua_State *L) {
  const lb_op *op = lua_touserdata(L, lua_upvalueindex(1));
  lb_callee c = {op->name, 0};
  const char *path = lb_check_string(L, 1, LB_ARG(&c, 1, "path"), LB_NOZERO, NULL);
  lb_args a;
  lease_db *db;
  int n, base;
  if (op->needs_file && strcmp(path, ":memory:") == 0)
    lb_error(L, LB_ARG(&c, 1, NULL),
             lua_pushfstring(L, "%s needs a database file, not a private in-memory one",
                             op->name));
  memset(&a, 0, sizeof a);
  op->check(L, &c, &a);
  base = lua_gettop(L);
  db = lb_path_take(L, op->name, path);
  n = run_and_push(L, op, db, &a);
  lb_path_give(L, base + 1, n >= 0);
  if (n < 0) return lua_error(L);
  return n;
}

/* ===================================================================== */
/* The path functions (documented here; each is one record's other way in) */
/* ===================================================================== */

/***
Path functions.
Each runs one operation, in its own transaction, as the db
method of the same name does, on a connection to `path` opened with the
default options.  Each Lua state keeps one such connection per file (at most
16, the least recently used closed first) and closes them when it closes;
before each call, a kept connection is checked against the file `path` names
(device and inode), and one whose file was deleted, renamed or replaced is
closed and `path` opened again.  A call that fails with a database error
closes its connection.  They check every argument before touching the file
(a bad argument never creates it) and raise as the method does, plus
`lease.<name>: ...` when the file cannot be opened.
@section path
*/

/***
@function init_db
@tparam string path the database file
@treturn boolean true
@raise see db:init_db
*/
/***
@function enqueue
@tparam string path the database file
@tparam string id
@treturn boolean true, or false, "exists"
@raise see db:enqueue
*/
/***
@function state
@tparam string path the database file
@tparam string id
@treturn table|nil
@raise see db:state
*/
/***
@function claim
@tparam string path the database file
@tparam string id
@tparam string owner
@tparam number now
@tparam number ttl
@treturn integer|nil the fence, or nil and a reason
@raise see db:claim
*/
/***
@function renew
@tparam string path the database file
@tparam string id
@tparam string owner
@tparam integer fence
@tparam number now
@tparam number ttl
@treturn boolean true, or false and a reason
@raise see db:renew
*/
/***
@function complete
@tparam string path the database file
@tparam string id
@tparam string owner
@tparam integer fence
@tparam number now
@tparam[opt] string result
@treturn boolean true, or false and a reason
@raise see db:complete
*/
/***
@function release
@tparam string path the database file
@tparam string id
@tparam string owner
@tparam integer fence
@treturn boolean true, or false and a reason
@raise see db:release
*/
/***
@function claim_next
@tparam string path the database file
@tparam string owner
@tparam number now
@tparam number ttl
@tparam[opt] integer n
@return as db:claim_next
@raise see db:claim_next
*/
/***
@function enqueue_many
@tparam string path the database file
@tparam {string,...} ids
@treturn integer how many were new
@raise see db:enqueue_many
*/
/***
@function complete_many
@tparam string path the database file
@tparam string owner
@tparam number now
@tparam {table,...} jobs
@treturn boolean true, or false and the refused positions
@raise see db:complete_many
*/
/***
@function claim_many
@tparam string path the database file, not ":memory:"
@tparam string id
@tparam {string,...} owners
@tparam number now
@tparam number ttl
@treturn {integer|false,...} as db:claim_many
@raise see db:claim_many; also `bad argument #1 to 'lease.claim_many' (claim_many
  needs a database file, not a private in-memory one)`
*/

/* ===================================================================== */
/* Clock and sleep for workers                                            */
/* ===================================================================== */

/***
Clock and sleep.
@section clock
*/

/***
Wall-clock time in seconds since the Unix epoch, with sub-second precision
(`CLOCK_REALTIME`).  Wall time, not monotonic time, because a lease deadline
is stored in a file that outlives a boot.
@function now
@treturn number seconds
@raise nothing
*/
static int l_now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
  return 1;
}

/***
Monotonic time in seconds (`CLOCK_MONOTONIC`): for measuring how long
something ran within this process (the worker pool's job timeouts), never
for a lease deadline (`lease.now`).  Unaffected by changes to the wall
clock; its zero is arbitrary (usually the boot).
@function monotonic
@treturn number seconds
@raise nothing
*/
static int l_monotonic(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
  return 1;
}

/***
Block the calling thread (only it: other native threads run on) for at least
that long, resuming after signals.
@function sleep
@tparam number seconds finite, >= 0, fractions allowed
@raise `bad argument #1 to 'lease.sleep' (seconds must be a finite number, got nan)`
  and the like for a negative, NaN, infinite or non-number argument
*/
static int l_sleep(lua_State *L) {
  lb_callee c = {"sleep", 0};
  double s = lb_check_number(L, 1, LB_ARG(&c, 1, "seconds"), LB_FINITE, 0, 0);
  struct timespec ts;
  if (s > 1e9) s = 1e9;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec > 999999999L) ts.tv_nsec = 999999999L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
  return 0;
}

/* ===================================================================== */
/* Error messages with tracebacks                                         */
/* ===================================================================== */

/* See lease_lua.h (lua.c's msghandler). */
LEASE_API int lease_lua_traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* ===================================================================== */
/* Embedded Lua modules                                                   */
/* ===================================================================== */

/* See lease_lua_int.h. */
int lease_lua_run_embedded(lua_State *L, int i) {
  const lease_lua_source *src = &lease_lua_sources[i];
  if (luaL_loadbuffer(L, src->code, src->size, src->chunkname) != LUA_OK) return lua_error(L);
  lua_pushstring(L, src->module);
  lua_call(L, 1, 1);
  return 1;
}

/* package.preload loader: run the embedded module whose index is upvalue 1. */
static int load_embedded(lua_State *L) {
  return lease_lua_run_embedded(L, (int)lua_tointeger(L, lua_upvalueindex(1)));
}

/* Set package.preload[m] for every embedded module m. */
static void preload_embedded(lua_State *L) {
  int i;
  lb_pushpreload(L);
  for (i = 0; lease_lua_sources[i].module; i++) {
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, lease_lua_sources[i].module);
  }
  lua_pop(L, 1);
}

/* See lease_lua.h. */
LEASE_API void lease_lua_preload_all(lua_State *L) {
  lb_pushpreload(L);
  lua_pushcfunction(L, luaopen_lease);
  lua_setfield(L, -2, "lease");
  lua_pushcfunction(L, luaopen_lease_thread);
  lua_setfield(L, -2, "lease.thread");
  lua_pop(L, 1);
  preload_embedded(L);
}

/* ===================================================================== */
/* Registration                                                           */
/* ===================================================================== */

static const luaL_Reg module_funcs[] = {
  {"open", l_open},
  {"now", l_now},
  {"monotonic", l_monotonic},
  {"sleep", l_sleep},
  {"backoff", lb_backoff},
  {"cron_next", lb_cron_next},
  {NULL, NULL},
};

static const luaL_Reg db_methods[] = {
  {"close", m_close},
  {"name", m_name},
  {NULL, NULL},
};

static const luaL_Reg db_metamethods[] = {
  {"__gc", m_gc},
  {"__close", m_close_scope},
  {"__tostring", m_tostring},
  {NULL, NULL},
};

/* Set t[op->name] = fn with op as its upvalue, for t at the top. */
static void set_op(lua_State *L, const lb_op *op, lua_CFunction fn) {
  lua_pushlightuserdata(L, (void *)(uintptr_t)op);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, op->name);
}

/***
The module's version, as `LEASE_VERSION` in lease.h: "major.minor.patch".
@field _VERSION
*/

/***
The schema version this build makes and knows (an integer): a writable open
brings an older database up to it; a database of a newer one is refused.
@field SCHEMA_VERSION
*/

/***
The schema's numbered steps, by name (`QUEUE`, `REFENCE`, ..., as
`LEASE_SCHEMA_STEPS` in src/core/lease_schema.h lists them): the version
each step makes, an integer from 1 to `SCHEMA_VERSION`.  A database of
version `SCHEMA_STEPS.NAME - 1` is the layout from before that step.
@field SCHEMA_STEPS
*/

/* See lease_lua.h: require "lease". */
LEASE_API int luaopen_lease(lua_State *L) {
  size_t i;
  luaL_newmetatable(L, DB_MT);
  luaL_setfuncs(L, db_metamethods, 0);
  luaL_newlib(L, db_methods);
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++) set_op(L, ops[i], op_method);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  preload_embedded(L);
  luaL_newlib(L, module_funcs);
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (ops[i]->has_path) set_op(L, ops[i], op_path);
  lua_pushliteral(L, LEASE_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, LEASE_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, LEASE_SCHEMA_VERSION);
  lua_setfield(L, -2, "SCHEMA_VERSION");
  lua_createtable(L, 0, LEASE_SCHEMA_VERSION);
#define LEASE_LUA_STEP_(name)                  \
  lua_pushinteger(L, LEASE__STEP_##name + 1); \
  lua_setfield(L, -2, #name);
  LEASE_SCHEMA_STEPS(LEASE_LUA_STEP_)
#undef LEASE_LUA_STEP_
  lua_setfield(L, -2, "SCHEMA_STEPS");
  lease_lua_process_register(L);   /* pid, hostname, on_signal, signals */
  /* lease.thread: the same table as require "lease.thread" (lease_thread.c) */
  luaL_requiref(L, "lease.thread", luaopen_lease_thread, 0);
  lua_setfield(L, -2, "thread");
  return 1;
}
