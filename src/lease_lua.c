/*
** lease_lua.c: the `lease` Lua module over the C core (lease.h).
**
** Two faces of one implementation:
**   - the seed's path functions, lease.claim(path, id, ...), each opening its
**     own connection, running one operation and closing it;
**   - the handle API, local db = lease.open(path), db:claim(id, ...), one
**     connection with prepared statements (the fast path).
** In both, arguments sit at the same stack positions (the path or the
** handle is #1, id is #2), so one parser and one executor serve both.
**
** Error idioms (CONTRACT.md, Lua mapping): protocol outcomes are return
** values (nil/false plus a reason word); invalid arguments raise, worded as
** luaL_argerror words them but naming the function even where Lua's debug
** information cannot (arg_error), before the database is touched; database
** failures raise
** "lease.<op>: <SQLite's message> [<code word>] (file "<path>")".
** No SQL in this file.
*/
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lease.h"
#include "lease_lua.h"

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
/* Argument checks                                                        */
/* ===================================================================== */

/* struct callee (who is being called, for argument errors) is in
** lease_lua.h, shared with the module's other C files. */

/* Fill c for the running C function called `name` (a static string), a
** method when is_method.  Only records them: arg_error does the rest. */
void callee_init(lua_State *L, callee *c, const char *name, int is_method) {
  (void)L;
  c->name = name;
  c->is_method = is_method;
}

/* Raise "bad argument #i to '<name>' (<msg>)".  Must run in the C function
** c describes (it is stack level 0): for a method called as db:m(...),
** self is not counted, as in luaL_argerror. */
int arg_error(lua_State *L, const callee *c, int i, const char *msg) {
  lua_Debug ar;
  int shift = 0;
  if (c->is_method && lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.namewhat &&
      strcmp(ar.namewhat, "method") == 0)
    shift = 1;
  return luaL_error(L, "bad argument #%d to '%s%s' (%s)", i - shift, c->is_method ? "" : "lease.",
                    c->name, msg);
}

/* How argument errors name the value at i: "a string", "an empty string",
** the number itself, or its type name. */
const char *arg_got(lua_State *L, int i) {
  if (lua_type(L, i) == LUA_TSTRING) return lua_rawlen(L, i) == 0 ? "an empty string" : "a string";
  if (lua_type(L, i) == LUA_TNUMBER) {
    lua_Number v = lua_tonumber(L, i);
    if (v != v) return "nan";   /* printf would say "-nan" or "nan" by the sign bit */
    return luaL_tolstring(L, i, NULL);
  }
  return luaL_typename(L, i);
}

/* Raise "bad argument #i to '<f>' (<what> must be <kind>, got <value>)". */
int arg_fail(lua_State *L, const callee *c, int i, const char *what, const char *kind) {
  const char *got = arg_got(L, i);
  return arg_error(L, c, i, lua_pushfstring(L, "%s must be %s, got %s", what, kind, got));
}

/* See lease_lua.h. */
void arg_length(lua_State *L, const callee *c, int i, const char *what, size_t len) {
  if (len > LEASE_MAX_LENGTH)
    arg_error(L, c, i, lua_pushfstring(L, "%s must be at most %d bytes, got %I", what,
                                       LEASE_MAX_LENGTH, (lua_Integer)len));
}

/* A non-empty byte string (zero bytes allowed, at most LEASE_MAX_LENGTH
** bytes); numbers are not coerced. */
const char *arg_bytes(lua_State *L, const callee *c, int i, const char *what,
                             size_t *len) {
  if (lua_type(L, i) != LUA_TSTRING || lua_rawlen(L, i) == 0)
    arg_fail(L, c, i, what, "a non-empty string");
  arg_length(L, c, i, what, lua_rawlen(L, i));
  return lua_tolstring(L, i, len);
}

/* See lease_lua.h. */
const char *arg_path(lua_State *L, const callee *c, int i) {
  size_t len;
  const char *p = arg_bytes(L, c, i, "path", &len);
  if (strlen(p) != len) arg_error(L, c, i, "path must not contain zero bytes");
  return p;
}

/* A number (integer or float; strings are not coerced), as a double. */
static double arg_number(lua_State *L, const callee *c, int i, const char *what) {
  if (lua_type(L, i) != LUA_TNUMBER) arg_fail(L, c, i, what, "a number");
  return lua_tonumber(L, i);
}

/* A finite number. */
static double arg_finite(lua_State *L, const callee *c, int i, const char *what) {
  double v = arg_number(L, c, i, what);
  if (!isfinite(v)) arg_fail(L, c, i, what, "a finite number");
  return v;
}

/* now at i and ttl at i + 1, checked together as lease_check_time does. */
void arg_time(lua_State *L, const callee *c, int i, double *now, double *ttl) {
  const char *why;
  int bad;
  *now = arg_number(L, c, i, "now");
  *ttl = arg_number(L, c, i + 1, "ttl");
  bad = lease_check_time(*now, *ttl, &why);
  if (bad) {
    int at = bad == LEASE_ARG_NOW ? i : i + 1;
    arg_error(L, c, at, lua_pushfstring(L, "%s, got %s", why, arg_got(L, at)));
  }
}

/* A fencing token: an integer number (2.0 counts; 1.5 and "2" do not). */
static int64_t arg_fence(lua_State *L, const callee *c, int i) {
  lua_Integer v = 0;
  int isint = 0;
  if (lua_type(L, i) == LUA_TNUMBER) v = lua_tointegerx(L, i, &isint);
  if (!isint) arg_fail(L, c, i, "fence", "an integer");
  return (int64_t)v;
}

/* The handle at i, open; raises on a closed one (or one being closed). */
static lhandle *check_handle(lua_State *L, int i) {
  lhandle *h = luaL_checkudata(L, i, DB_MT);
  if (!h->db || h->closing) luaL_error(L, "attempt to use a closed lease database");
  return h;
}

/* See lease_lua.h. */
lease_db *lease_lua_enter(lua_State *L, int i) {
  lhandle *h = check_handle(L, i);
  h->inuse++;
  return h->db;
}

/* See lease_lua.h. */
void lease_lua_leave(lua_State *L, int i) {
  lhandle *h = lua_touserdata(L, i);
  if (h->inuse > 0) h->inuse--;
  if (h->inuse == 0 && h->closing) {
    lease_close(h->db);
    h->db = NULL;
    h->closing = 0;
  }
}

/* ===================================================================== */
/* Operations, shared by methods and path functions                      */
/* ===================================================================== */

enum {
  OP_INIT, OP_ENQUEUE, OP_STATE, OP_CLAIM, OP_RENEW, OP_COMPLETE, OP_RELEASE,
  OP_CLAIM_NEXT, OP_ENQUEUE_MANY, OP_COMPLETE_MANY
};

static const char *const op_names[] = {
  "init_db", "enqueue", "state", "claim", "renew", "complete", "release",
  "claim_next", "enqueue_many", "complete_many",
};

/* The most jobs one claim_next may take (its n argument). */
#define CLAIM_NEXT_MAX 1000000

/* The parsed arguments of one operation. */
typedef struct op_args {
  const char *id, *owner, *result;
  size_t id_len, owner_len, result_len;
  int64_t fence;
  double now, ttl;
  int n;                  /* claim_next: how many (0: the single form); enqueue_many,
                             complete_many: count */
  lease_job *jobs;        /* claim_next: room for n jobs (a userdata on the stack) */
  const char **ids;       /* enqueue_many: the ids and their lengths (a userdata) */
  size_t *id_lens;
  lease_result *items;    /* complete_many: the jobs, then room for their reasons (a userdata) */
  int *reasons;
} op_args;

/*
** complete_many's jobs[i] (the table at stack index `at`) into *it: id (a
** non-empty string), fence (an integer) and result (a string or nil).
** Fields are read raw, without metamethods, so every string stays alive in
** the caller's tables, which stay on the stack until the call returns.
** Raises "bad argument #k to '<f>' (jobs[i].<field> must be ..., got ...)".
*/
static void arg_job(lua_State *L, const callee *c, int at, lua_Integer i, lease_result *it) {
  lua_Integer v = 0;
  int isint = 0;
  if (lua_rawgeti(L, at, i) != LUA_TTABLE)
    arg_error(L, c, at, lua_pushfstring(L, "jobs[%I] must be a table, got %s", (LUAI_UACINT)i,
                                        arg_got(L, -1)));
  lua_pushliteral(L, "id");
  if (lua_rawget(L, -2) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
    arg_error(L, c, at, lua_pushfstring(L, "jobs[%I].id must be a non-empty string, got %s",
                                        (LUAI_UACINT)i, arg_got(L, -1)));
  it->id = lua_tolstring(L, -1, &it->id_len);
  lua_pop(L, 1);
  lua_pushliteral(L, "fence");
  if (lua_rawget(L, -2) == LUA_TNUMBER) v = lua_tointegerx(L, -1, &isint);
  if (!isint)
    arg_error(L, c, at, lua_pushfstring(L, "jobs[%I].fence must be an integer, got %s",
                                        (LUAI_UACINT)i, arg_got(L, -1)));
  it->fence = (int64_t)v;
  lua_pop(L, 1);
  lua_pushliteral(L, "result");
  it->result = NULL;
  it->result_len = 0;
  switch (lua_rawget(L, -2)) {
    case LUA_TNIL: break;
    case LUA_TSTRING: it->result = lua_tolstring(L, -1, &it->result_len); break;
    default:
      arg_error(L, c, at, lua_pushfstring(L, "jobs[%I].result must be a string or nil, got %s",
                                          (LUAI_UACINT)i, arg_got(L, -1)));
  }
  lua_pop(L, 2);
}

/*
** Check and convert the arguments of op, starting at stack index 2, before
** anything touches the database.  Raises on a bad argument.
*/
static void parse_args(lua_State *L, const callee *c, int op, op_args *a) {
  memset(a, 0, sizeof *a);
  if (op == OP_INIT) return;
  if (op == OP_CLAIM_NEXT) {
    a->owner = arg_bytes(L, c, 2, "owner", &a->owner_len);
    arg_time(L, c, 3, &a->now, &a->ttl);
    if (!lua_isnoneornil(L, 5)) {
      lua_Integer n = 0;
      int isint = 0;
      if (lua_type(L, 5) == LUA_TNUMBER) n = lua_tointegerx(L, 5, &isint);
      if (!isint || n < 1 || n > CLAIM_NEXT_MAX)
        arg_fail(L, c, 5, "n", "an integer from 1 to 1000000");
      a->n = (int)n;
    }
    a->jobs = lua_newuserdatauv(L, sizeof(lease_job) * (size_t)(a->n ? a->n : 1), 0);
    return;
  }
  if (op == OP_ENQUEUE_MANY) {
    lua_Integer i, n;
    if (!lua_istable(L, 2)) arg_fail(L, c, 2, "ids", "a table");
    n = (lua_Integer)lua_rawlen(L, 2);
    if (n > INT_MAX / 2) arg_error(L, c, 2, "ids has too many entries");
    a->n = (int)n;
    a->ids = lua_newuserdatauv(L, (sizeof(char *) + sizeof(size_t)) * (size_t)(n ? n : 1), 0);
    a->id_lens = (size_t *)(a->ids + (n ? n : 1));
    for (i = 1; i <= n; i++) {
      int t = lua_rawgeti(L, 2, i);
      if (t != LUA_TSTRING || lua_rawlen(L, -1) == 0) {
        const char *got = t == LUA_TSTRING ? "an empty string" : lua_typename(L, t);
        arg_error(L, c, 2, lua_pushfstring(L, "ids[%I] must be a non-empty string, got %s",
                                           (LUAI_UACINT)i, got));
      }
      /* the string stays alive in the ids table, which stays on the stack */
      a->ids[i - 1] = lua_tolstring(L, -1, &a->id_lens[i - 1]);
      if (a->id_lens[i - 1] > LEASE_MAX_LENGTH)
        arg_length(L, c, 2, lua_pushfstring(L, "ids[%I]", (LUAI_UACINT)i), a->id_lens[i - 1]);
      lua_pop(L, 1);
    }
    return;
  }
  if (op == OP_COMPLETE_MANY) {
    lua_Integer i, n;
    size_t each = sizeof(lease_result) + sizeof(int);
    a->owner = arg_bytes(L, c, 2, "owner", &a->owner_len);
    a->now = arg_finite(L, c, 3, "now");
    if (!lua_istable(L, 4)) arg_fail(L, c, 4, "jobs", "a table");
    n = (lua_Integer)lua_rawlen(L, 4);
    if (n > CLAIM_NEXT_MAX) arg_error(L, c, 4, "jobs has more than 1000000 entries");
    a->n = (int)n;
    a->items = lua_newuserdatauv(L, each * (size_t)(n ? n : 1), 0);
    a->reasons = (int *)(a->items + (n ? n : 1));
    for (i = 1; i <= n; i++) arg_job(L, c, 4, i, &a->items[i - 1]);
    return;
  }
  a->id = arg_bytes(L, c, 2, "id", &a->id_len);
  if (op == OP_ENQUEUE || op == OP_STATE) return;
  a->owner = arg_bytes(L, c, 3, "owner", &a->owner_len);
  switch (op) {
    case OP_CLAIM:
      arg_time(L, c, 4, &a->now, &a->ttl);
      break;
    case OP_RENEW:
      a->fence = arg_fence(L, c, 4);
      arg_time(L, c, 5, &a->now, &a->ttl);
      break;
    case OP_COMPLETE:
      a->fence = arg_fence(L, c, 4);
      a->now = arg_finite(L, c, 5, "now");
      if (!lua_isnoneornil(L, 6)) {
        if (lua_type(L, 6) != LUA_TSTRING) arg_fail(L, c, 6, "result", "a string or nil");
        a->result = lua_tolstring(L, 6, &a->result_len);
        arg_length(L, c, 6, "result", a->result_len);
      }
      break;
    case OP_RELEASE:
      a->fence = arg_fence(L, c, 4);
      break;
  }
}

/* Push the Lua error message for the last failure on db during op. */
void push_db_error(lua_State *L, lease_db *db, const char *op) {
  lua_pushfstring(L, "lease.%s: %s [%s] (file \"%s\")", op, lease_errmsg(db),
                  lease_errname(lease_errcode(db)), lease_path(db));
}

/* Push a job row as the table CONTRACT.md describes. */
static void push_row(lua_State *L, const lease_row *row) {
  lua_createtable(L, 0, 6);
  lua_pushlstring(L, row->id, row->id_len);
  lua_setfield(L, -2, "id");
  if (row->owner) {
    lua_pushlstring(L, row->owner, row->owner_len);
    lua_setfield(L, -2, "owner");
  }
  lua_pushnumber(L, row->until);
  lua_setfield(L, -2, "until");
  lua_pushinteger(L, (lua_Integer)row->fence);
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
}

/* Push `ok` as true, or false and the reason word. */
static int push_outcome(lua_State *L, int reason) {
  if (reason == LEASE_GRANTED) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, lease_reason_name(reason));
  return 2;
}

/*
** Run op on db and push its results.  Returns the number of results, or
** -1 with the error message pushed when the database failed (the caller
** raises it, after closing a path function's connection).
*/
static int exec_op(lua_State *L, lease_db *db, int op, const op_args *a) {
  int rc = LEASE_OK, reason = LEASE_GRANTED, found = 0;
  int64_t fence = 0;
  lease_row row;
  switch (op) {
    case OP_INIT:
      rc = lease_init(db);
      break;
    case OP_ENQUEUE:
      rc = lease_enqueue(db, a->id, a->id_len, &reason);
      break;
    case OP_STATE:
      rc = lease_state(db, a->id, a->id_len, &row, &found);
      break;
    case OP_CLAIM:
      rc = lease_claim(db, a->id, a->id_len, a->owner, a->owner_len, a->now, a->ttl,
                       &fence, &reason);
      break;
    case OP_RENEW:
      rc = lease_renew(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now,
                       a->ttl, &reason);
      break;
    case OP_COMPLETE:
      rc = lease_complete(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now,
                          a->result, a->result_len, &reason);
      break;
    case OP_RELEASE:
      rc = lease_release(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, &reason);
      break;
    case OP_CLAIM_NEXT:
      rc = lease_claim_next(db, a->owner, a->owner_len, a->now, a->ttl, a->n ? a->n : 1,
                            a->jobs, &found);
      break;
    case OP_ENQUEUE_MANY:
      rc = lease_enqueue_many(db, a->ids, a->id_lens, a->n, &found);
      break;
    case OP_COMPLETE_MANY:
      rc = lease_complete_many(db, a->owner, a->owner_len, a->now, a->items, a->n, a->reasons,
                               &found);
      break;
  }
  if (rc != LEASE_OK) {
    push_db_error(L, db, op_names[op]);
    return -1;
  }
  switch (op) {
    case OP_INIT:
      lua_pushboolean(L, 1);
      return 1;
    case OP_STATE:
      if (found) push_row(L, &row);
      else lua_pushnil(L);
      return 1;
    case OP_CLAIM:
      if (reason != LEASE_GRANTED) {
        lua_pushnil(L);
        lua_pushstring(L, lease_reason_name(reason));
        return 2;
      }
      lua_pushinteger(L, (lua_Integer)fence);
      return 1;
    case OP_CLAIM_NEXT:
      if (a->n == 0) {   /* the single form: id, fence | nil, "empty" */
        if (found == 0) {
          lua_pushnil(L);
          lua_pushstring(L, lease_reason_name(LEASE_EMPTY));
          return 2;
        }
        lua_pushlstring(L, a->jobs[0].id, a->jobs[0].id_len);
        lua_pushinteger(L, (lua_Integer)a->jobs[0].fence);
        return 2;
      }
      lua_createtable(L, found, 0);
      for (int i = 0; i < found; i++) {
        lua_createtable(L, 0, 2);
        lua_pushlstring(L, a->jobs[i].id, a->jobs[i].id_len);
        lua_setfield(L, -2, "id");
        lua_pushinteger(L, (lua_Integer)a->jobs[i].fence);
        lua_setfield(L, -2, "fence");
        lua_rawseti(L, -2, i + 1);
      }
      return 1;
    case OP_ENQUEUE_MANY:
      lua_pushinteger(L, found);
      return 1;
    case OP_COMPLETE_MANY:
      if (found == a->n) {
        lua_pushboolean(L, 1);
        return 1;
      }
      lua_pushboolean(L, 0);   /* false, {[i] = reason} for each refused job */
      lua_createtable(L, 0, a->n - found);
      for (int i = 0; i < a->n; i++) {
        if (a->reasons[i] == LEASE_GRANTED) continue;
        lua_pushstring(L, lease_reason_name(a->reasons[i]));
        lua_rawseti(L, -2, i + 1);
      }
      return 2;
    default:
      return push_outcome(L, reason);
  }
}

/* Method body: db:<op>(...).  The arguments are parsed (which allocates)
** before the call is entered; results are pushed inside it. */
static int method_op(lua_State *L, int op) {
  lease_db *db;
  op_args a;
  callee c;
  int n;
  check_handle(L, 1);
  callee_init(L, &c, op_names[op], 1);
  parse_args(L, &c, op, &a);
  db = lease_lua_enter(L, 1);
  n = exec_op(L, db, op, &a);
  lease_lua_leave(L, 1);
  if (n < 0) return lua_error(L);
  return n;
}

/* ===================================================================== */
/* Handles                                                                */
/* ===================================================================== */

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

/* Read the options table at i into opt; raises on an unknown key or bad value. */
static void parse_options(lua_State *L, const callee *c, int i, lease_options *opt) {
  lease_options_default(opt);
  if (lua_isnoneornil(L, i)) return;
  if (!lua_istable(L, i)) arg_fail(L, c, i, "options", "a table or nil");
  lua_pushnil(L);
  while (lua_next(L, i)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (key && strcmp(key, "busy_timeout") == 0) {
      double s = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!isfinite(s) || s < 0 || s > 2e6)
        arg_error(L, c, i, "busy_timeout must be a number of seconds from 0 to 2e6");
      opt->busy_timeout_ms = (int)ceil(s * 1000.0);
    } else if (key && strcmp(key, "synchronous") == 0) {
      const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      if (strcmp(v, "full") == 0) opt->synchronous = LEASE_SYNC_FULL;
      else if (strcmp(v, "normal") == 0) opt->synchronous = LEASE_SYNC_NORMAL;
      else arg_error(L, c, i, "synchronous must be \"full\" or \"normal\"");
    } else if (key && (strcmp(key, "readonly") == 0 || strcmp(key, "create") == 0)) {
      int flag = key[0] == 'r' ? LEASE_OPEN_READONLY : LEASE_OPEN_NOCREATE;
      int on;
      if (lua_type(L, -1) != LUA_TBOOLEAN)
        arg_error(L, c, i, lua_pushfstring(L, "%s must be a boolean", key));
      on = lua_toboolean(L, -1);
      if (flag == LEASE_OPEN_NOCREATE) on = !on;
      if (on) opt->flags |= flag;
      else opt->flags &= ~flag;
    } else {
      arg_error(L, c, i, lua_pushfstring(L, "unknown option '%s'",
                                          key ? key : luaL_typename(L, -2)));
    }
    lua_pop(L, 1);
  }
}

/* Open path into a new handle pushed on the stack; raises on failure,
** naming op (the function the user called). */
lease_db *open_handle(lua_State *L, const char *op, const char *path,
                      const lease_options *opt) {
  lhandle *h = new_handle(L);
  lease_db *db = NULL;
  int rc = lease_open(path, opt, &db);
  if (rc != LEASE_OK) {
    if (!db) luaL_error(L, "lease.%s: out of memory [nomem] (file \"%s\")", op, path);
    push_db_error(L, db, op);
    lease_close(db);
    lua_error(L);
  }
  h->db = db;
  return db;
}

/* Close the handle at i if open, or, when calls on it are running (this
** close comes from a finalizer inside one), when the last of them ends.
** Shared by close, __close and the path functions. */
int close_handle(lua_State *L, int i) {
  lhandle *h = luaL_checkudata(L, i, DB_MT);
  if (h->db && h->inuse > 0) {
    h->closing = 1;
  } else if (h->db) {
    lease_close(h->db);
    h->db = NULL;
  }
  return 0;
}

/*
** lease.open(path [, options]) -> lease.db
**   path (string): the database file; created when missing unless
**     options.create is false.
**   options (table, optional): busy_timeout (seconds, default 10),
**     synchronous ("full" default, or "normal"), readonly (boolean),
**     create (boolean, default true).
** Creates the jobs table when missing (contract step 1) and checks an
** existing one.  Raises a bad-argument error for a bad path or option, and
** "lease.open: <message> [<code>] (file "<path>")" when the database cannot
** be opened (cantopen, notadb, schema, busy, readonly...).
*/
static int l_open(lua_State *L) {
  lease_options opt;
  callee c;
  const char *path;
  callee_init(L, &c, "open", 0);
  path = arg_path(L, &c, 1);
  parse_options(L, &c, 2, &opt);
  open_handle(L, "open", path, &opt);
  return 1;
}

/*
** db:close() -> true
** Closes the connection; closing a closed handle does nothing.  Raises
** nothing.  Also the __close and __gc metamethods.
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

/* __tostring: "lease.db (path)" or "lease.db (closed)". */
static int m_tostring(lua_State *L) {
  lhandle *h = luaL_checkudata(L, 1, DB_MT);
  if (h->db && !h->closing) lua_pushfstring(L, "lease.db (%s)", lease_path(h->db));
  else lua_pushliteral(L, "lease.db (closed)");
  return 1;
}

/*
** db:init_db() -> true
** CREATE TABLE IF NOT EXISTS jobs (contract step 1); changes nothing on a
** second call.  Raises "lease.init_db: ..." on a database failure.
*/
static int m_init_db(lua_State *L) { return method_op(L, OP_INIT); }

/*
** db:enqueue(id) -> true | false, "exists"
**   id (string, non-empty, may hold zero bytes).
** Inserts the job in the default state (contract step 2); an existing job
** and its lease stay as they are.  Raises on a bad id or a database failure.
*/
static int m_enqueue(lua_State *L) { return method_op(L, OP_ENQUEUE); }

/*
** db:state(id) -> table | nil
** The stored row (contract step 3): {id=, owner=, until=, fence=, result=,
** done=}; owner and result are nil when NULL, done is a boolean, fence an
** integer, until a float (read it as s["until"]).  A job another client
** left unclaimable also has blocked = "<why>" (and until = NaN when the
** stored until is not a number).  nil when there is no such job.  Raises on a bad id or a database failure.
*/
static int m_state(lua_State *L) { return method_op(L, OP_STATE); }

/*
** db:claim(id, owner, now, ttl) -> fence | nil, "missing"|"done"|"held"
**   id, owner (non-empty strings); now, ttl (numbers, caller's unit):
**   finite, ttl > 0, now + ttl > now.
** Takes the lease until now + ttl when the job exists, is not done and
** until <= now, and returns the new fence (contract step 4, one
** BEGIN IMMEDIATE transaction).  Raises on a bad argument, and on a
** database failure (busy past the timeout, readonly, full, ...).
*/
static int m_claim(lua_State *L) { return method_op(L, OP_CLAIM); }

/*
** db:renew(id, owner, fence, now, ttl) -> true | false, reason
**   fence (integer); the rest as for claim.
** Extends the lease to now + ttl when owner and fence match, the job is not
** done and until > now (contract step 5).  Reasons: "missing", "done",
** "not_owner", "stale_fence", "expired".  Raises as claim does.
*/
static int m_renew(lua_State *L) { return method_op(L, OP_RENEW); }

/*
** db:complete(id, owner, fence, now [, result]) -> true | false, reason
**   now (finite number); result (string, may hold zero bytes, or nil).
** Stores result and done under the current lease only (contract step 6);
** otherwise the stored result stays.  Reasons as for renew.  Raises on a
** bad argument or a database failure.
*/
static int m_complete(lua_State *L) { return method_op(L, OP_COMPLETE); }

/*
** db:release(id, owner, fence) -> true | false, reason
** Clears owner and until, keeping the fence, when owner and fence match and
** the job is not done (contract step 7).  Reasons: "missing", "done",
** "not_owner", "stale_fence".  Raises on a bad argument or a database failure.
*/
static int m_release(lua_State *L) { return method_op(L, OP_RELEASE); }

/*
** db:settings() -> table
** {journal_mode = "wal", synchronous = "full"|"normal"|"off"|"extra",
**  busy_timeout = seconds}, read back from SQLite, not from the options.
** Raises "lease.settings: ..." on a database failure.
*/
static int m_settings(lua_State *L) {
  static const char *const sync_names[] = {"off", "normal", "full", "extra"};
  lease_db *db = lease_lua_enter(L, 1);
  lease_settings s;
  int rc = lease_read_settings(db, &s);
  if (rc != LEASE_OK) push_db_error(L, db, "settings");
  lease_lua_leave(L, 1);
  if (rc != LEASE_OK) return lua_error(L);
  lua_createtable(L, 0, 3);
  lua_pushstring(L, s.journal_mode);
  lua_setfield(L, -2, "journal_mode");
  lua_pushstring(L, s.synchronous >= 0 && s.synchronous <= 3 ? sync_names[s.synchronous] : "?");
  lua_setfield(L, -2, "synchronous");
  lua_pushnumber(L, s.busy_timeout_ms / 1000.0);
  lua_setfield(L, -2, "busy_timeout");
  return 1;
}

/*
** db:claim_next(owner, now, ttl [, n]) -> id, fence | nil, "empty"
** db:claim_next(owner, now, ttl, n) -> { {id=, fence=}, ... }
**   owner (non-empty string); now, ttl as for claim; n (integer, 1 to
**   1000000, optional).
** Claims the oldest-enqueued ready jobs (not done, until <= now) with
** claim's rule (fence + 1, owner, until = now + ttl), all in one
** BEGIN IMMEDIATE transaction.  Without n: the one job, or nil, "empty".
** With n: a sequence of up to n jobs, oldest first, empty when none is
** ready.  Raises on a bad argument and on a database failure.
*/
static int m_claim_next(lua_State *L) { return method_op(L, OP_CLAIM_NEXT); }

/*
** db:enqueue_many(ids) -> integer
**   ids (sequence of non-empty strings).
** Enqueues every id in one transaction (enqueue's rule for each) and
** returns how many were new.  Every id is checked first: a bad entry
** raises "bad argument #1 to 'enqueue_many' (ids[3] must be ...)" and
** nothing is inserted.  Raises on a database failure (nothing inserted).
*/
static int m_enqueue_many(lua_State *L) { return method_op(L, OP_ENQUEUE_MANY); }

/*
** db:complete_many(owner, now, jobs) -> true | false, refused
**   owner (non-empty string); now (finite number); jobs (sequence of
**   tables {id = string, fence = integer, result = string or nil}: the
**   shape claim_next(..., n) returns, plus a result; fields read raw).
** Completes every job in one transaction, each exactly as db:complete
** would (contract step 6: owner, fence, done and until checked as it is
** stored; a refused job keeps its stored result and does not stop the
** others).  true when every job was stored; otherwise false and a table
** mapping the position of each refused job in `jobs` to its reason word
** ("missing", "done", "not_owner", "stale_fence", "expired").  Every
** job is checked first: a bad entry raises "bad argument #3 to
** 'complete_many' (jobs[2].fence must be an integer, got 1.5)" and nothing
** is stored.  Raises on a database failure (then nothing is stored).
*/
static int m_complete_many(lua_State *L) { return method_op(L, OP_COMPLETE_MANY); }

/*
** db:jobs(which, now [, limit [, after]]) -> { job, ... }
**   which (string): "all", "ready" (not done, until <= now), "held" (not
**     done, until > now), "done", or "blocked" (not done, but holding a
**     value another client stored that the engine cannot honour; such a
**     job has a `blocked` field saying which); now (number, caller's unit); limit
**     (integer 1..100000, default 1000); after (integer seq, default 0).
** A page of jobs in enqueue order: each a table as db:state returns, plus
** `seq`, its place in the enqueue order; pass the last seq as `after` for
** the next page.  Read-only.  Raises on a bad argument or database failure.
*/
static int m_jobs(lua_State *L) {
  static const char *const kinds[] = {"all", "ready", "held", "done", "blocked", NULL};
  lease_db *db;
  callee c;
  const char *w;
  int which, n = 0, i, limit = 1000;
  lua_Integer after = 0;
  double now;
  lease_row *rows;
  int64_t *seqs;
  check_handle(L, 1);
  callee_init(L, &c, "jobs", 1);
  w = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  for (which = 0; kinds[which] && strcmp(kinds[which], w) != 0; which++) {}
  if (!kinds[which])
    arg_fail(L, &c, 2, "which", "\"all\", \"ready\", \"held\", \"done\" or \"blocked\"");
  now = arg_finite(L, &c, 3, "now");
  if (!lua_isnoneornil(L, 4)) {
    lua_Integer v = 0;
    int isint = 0;
    if (lua_type(L, 4) == LUA_TNUMBER) v = lua_tointegerx(L, 4, &isint);
    if (!isint || v < 1 || v > 100000) arg_fail(L, &c, 4, "limit", "an integer from 1 to 100000");
    limit = (int)v;
  }
  if (!lua_isnoneornil(L, 5)) {
    int isint = 0;
    if (lua_type(L, 5) == LUA_TNUMBER) after = lua_tointegerx(L, 5, &isint);
    if (!isint) arg_fail(L, &c, 5, "after", "an integer");
  }
  rows = lua_newuserdatauv(L, (sizeof *rows + sizeof *seqs) * (size_t)limit, 0);
  seqs = (int64_t *)(rows + limit);
  db = lease_lua_enter(L, 1);   /* the rows point into the handle's buffer */
  if (lease_list(db, which, now, (int64_t)after, limit, rows, seqs, &n) != LEASE_OK) {
    push_db_error(L, db, "jobs");
    lease_lua_leave(L, 1);
    return lua_error(L);
  }
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    push_row(L, &rows[i]);
    lua_pushinteger(L, (lua_Integer)seqs[i]);
    lua_setfield(L, -2, "seq");
    lua_rawseti(L, -2, i + 1);
  }
  lease_lua_leave(L, 1);
  return 1;
}

/*
** db:counts(now) -> {total=, ready=, held=, done=, blocked=}
**   now (number, caller's unit): decides ready versus held.
** Counts jobs by state (integers; they add up to total).  Read-only.  Raises on a bad argument or
** a database failure.
*/
static int m_counts(lua_State *L) {
  lease_db *db;
  lease_counts k;
  callee c;
  double now;
  int rc;
  check_handle(L, 1);
  callee_init(L, &c, "counts", 1);
  now = arg_finite(L, &c, 2, "now");
  db = lease_lua_enter(L, 1);
  rc = lease_count(db, now, &k);
  if (rc != LEASE_OK) push_db_error(L, db, "counts");
  lease_lua_leave(L, 1);
  if (rc != LEASE_OK) return lua_error(L);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)k.total);
  lua_setfield(L, -2, "total");
  lua_pushinteger(L, (lua_Integer)k.ready);
  lua_setfield(L, -2, "ready");
  lua_pushinteger(L, (lua_Integer)k.held);
  lua_setfield(L, -2, "held");
  lua_pushinteger(L, (lua_Integer)k.done);
  lua_setfield(L, -2, "done");
  lua_pushinteger(L, (lua_Integer)k.blocked);
  lua_setfield(L, -2, "blocked");
  return 1;
}

/* ===================================================================== */
/* Path functions (the seed's signatures)                                 */
/* ===================================================================== */

/*
** lease.<op>(path, ...): check the arguments, open path with the default
** options, run op, close, then return the results or raise the error.
** The handle is a full userdata, so even an error raised by Lua itself
** (out of memory) leaves the connection to __gc rather than leaking it.
*/
static int path_op(lua_State *L, int op) {
  const char *path;
  op_args a;
  callee c;
  lease_db *db;
  int n, base;
  callee_init(L, &c, op_names[op], 0);
  path = arg_path(L, &c, 1);
  parse_args(L, &c, op, &a);
  base = lua_gettop(L);
  db = open_handle(L, op_names[op], path, NULL);
  n = exec_op(L, db, op, &a);
  close_handle(L, base + 1);
  if (n < 0) return lua_error(L);
  return n;
}

/* lease.init_db(path) -> true.  See db:init_db. */
static int l_init_db(lua_State *L) { return path_op(L, OP_INIT); }
/* lease.enqueue(path, id) -> true | false, "exists".  See db:enqueue. */
static int l_enqueue(lua_State *L) { return path_op(L, OP_ENQUEUE); }
/* lease.state(path, id) -> table | nil.  See db:state. */
static int l_state(lua_State *L) { return path_op(L, OP_STATE); }
/* lease.claim(path, id, owner, now, ttl) -> fence | nil, reason.  See db:claim. */
static int l_claim(lua_State *L) { return path_op(L, OP_CLAIM); }
/* lease.renew(path, id, owner, fence, now, ttl) -> true | false, reason.  See db:renew. */
static int l_renew(lua_State *L) { return path_op(L, OP_RENEW); }
/* lease.complete(path, id, owner, fence, now [, result]) -> true | false, reason. */
static int l_complete(lua_State *L) { return path_op(L, OP_COMPLETE); }
/* lease.release(path, id, owner, fence) -> true | false, reason.  See db:release. */
static int l_release(lua_State *L) { return path_op(L, OP_RELEASE); }
/* lease.claim_next(path, owner, now, ttl [, n]).  See db:claim_next. */
static int l_claim_next(lua_State *L) { return path_op(L, OP_CLAIM_NEXT); }
/* lease.enqueue_many(path, ids) -> integer.  See db:enqueue_many. */
static int l_enqueue_many(lua_State *L) { return path_op(L, OP_ENQUEUE_MANY); }
/* lease.complete_many(path, owner, now, jobs) -> true | false, refused.  See db:complete_many. */
static int l_complete_many(lua_State *L) { return path_op(L, OP_COMPLETE_MANY); }

/* ===================================================================== */
/* Clock and sleep for workers                                            */
/* ===================================================================== */

/*
** lease.now() -> number
** Wall-clock time in seconds since the Unix epoch, as a float with
** sub-second precision (CLOCK_REALTIME).  Wall time, not monotonic time,
** because a lease deadline is stored in a file that outlives a boot: a
** monotonic clock restarts near zero after a reboot, and every stored
** `until` would then look far in the future.  Raises nothing.
*/
static int l_now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
  return 1;
}

/*
** lease.sleep(seconds) -> nothing
**   seconds (number, finite, >= 0; fractions allowed).
** Blocks the calling thread (only it: other native threads run on) for at
** least that long, resuming after signals.  Raises a bad-argument error for
** a negative, NaN, infinite or non-number argument.
*/
static int l_sleep(lua_State *L) {
  callee c;
  double s;
  struct timespec ts;
  callee_init(L, &c, "sleep", 0);
  s = arg_finite(L, &c, 1, "seconds");
  if (s < 0) arg_fail(L, &c, 1, "seconds", "a number >= 0");
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
int lease_lua_traceback(lua_State *L) {
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

/* See lease_lua.h. */
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

/* See lease_lua.h. */
void lease_lua_preload_all(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_lease);
  lua_setfield(L, -2, "lease");
  lua_pushcfunction(L, luaopen_lease_thread);
  lua_setfield(L, -2, "lease.thread");
  lua_pop(L, 1);
  lease_lua_preload(L);
}

/* See lease_lua.h. */
void lease_lua_preload(lua_State *L) {
  int i;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (i = 0; lease_lua_sources[i].module; i++) {
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, lease_lua_sources[i].module);
  }
  lua_pop(L, 1);
}

/* ===================================================================== */
/* Registration                                                           */
/* ===================================================================== */

static const luaL_Reg module_funcs[] = {
  {"open", l_open},
  {"init_db", l_init_db},
  {"enqueue", l_enqueue},
  {"state", l_state},
  {"claim", l_claim},
  {"renew", l_renew},
  {"complete", l_complete},
  {"release", l_release},
  {"claim_next", l_claim_next},
  {"enqueue_many", l_enqueue_many},
  {"complete_many", l_complete_many},
  {"now", l_now},
  {"sleep", l_sleep},
  {"claim_many", l_claim_many},   /* lease_lua_many.c */
  {NULL, NULL},
};

static const luaL_Reg db_methods[] = {
  {"close", m_close},
  {"init_db", m_init_db},
  {"enqueue", m_enqueue},
  {"state", m_state},
  {"claim", m_claim},
  {"renew", m_renew},
  {"complete", m_complete},
  {"release", m_release},
  {"claim_next", m_claim_next},
  {"enqueue_many", m_enqueue_many},
  {"complete_many", m_complete_many},
  {"jobs", m_jobs},
  {"counts", m_counts},
  {"settings", m_settings},
  {"claim_many", m_claim_many},   /* lease_lua_many.c */
  {NULL, NULL},
};

static const luaL_Reg db_metamethods[] = {
  {"__index", NULL},   /* set to the method table below */
  {"__gc", m_gc},
  {"__close", m_close_scope},
  {"__tostring", m_tostring},
  {NULL, NULL},
};

/* See lease_lua.h. */
void lease_lua_checkdb(lua_State *L, int i) {
  check_handle(L, i);
}

/*
** luaopen_lease: require "lease".  Returns the module table: open and the
** seed's path functions, plus `version` and `thread`.
*/
LEASE_API int luaopen_lease(lua_State *L) {
  luaL_newmetatable(L, DB_MT);
  luaL_setfuncs(L, db_metamethods, 0);
  luaL_newlib(L, db_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lease_lua_preload(L);
  luaL_newlib(L, module_funcs);
  lua_pushliteral(L, LEASE_VERSION);
  lua_setfield(L, -2, "version");
  /* lease.thread: the same table as require "lease.thread" (lease_thread.c) */
  luaL_requiref(L, "lease.thread", luaopen_lease_thread, 0);
  lua_setfield(L, -2, "thread");
  return 1;
}
