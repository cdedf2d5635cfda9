/***
with_lease and its tx, fence_gate: fenced side effects.
@module lease
*/
/*
** lease_lua_tx.c: the binding of fenced side effects: db:with_lease and
** its tx object (lease.tx), db:fence_gate and lease.fence_gate.  Two
** records (lb_op, lease_lua_int.h) reached like every operation.
**
** with_lease calls the Lua function from inside lease_with_lease's
** callback, protected (lua_pcall), so nothing the function raises jumps
** over the C code that rolls the transaction back.  Everything the
** callback needs on the stack (the function, the message handler, the tx
** userdata) is pushed while the arguments are checked, before the handle
** is entered, so the callback itself allocates nothing outside the
** protected call.  The error is raised again, as it was, once the
** transaction is rolled back and the handle let go.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lease_lua_int.h"

#define TX_MT "lease.tx"

/* Stack slots of db:with_lease while it runs: the arguments (1 the
** handle ... 6 the function), then what check_with_lease pushes. */
enum { WL_FN = 6, WL_STATE = 7, WL_MSGH = 8, WL_TX = 9 };

/* A tx userdata: the transaction while the function runs, else NULL. */
typedef struct ltx {
  lease_tx *tx;
  lease_db *db;
} ltx;

/* The state of one db:with_lease call (a userdata at WL_STATE). */
typedef struct wl_state {
  lua_State *L;
  lease_db *db;
  int raised;   /* 1: the function raised; its error is at the top */
  int nres;     /* how many values it returned (above WL_TX) */
} wl_state;

/* ===================================================================== */
/* The tx object                                                          */
/* ===================================================================== */

/* The open tx at 1; raises when its function has returned. */
static ltx *check_tx(lua_State *L) {
  ltx *t = luaL_checkudata(L, 1, TX_MT);
  if (!t->tx) luaL_error(L, "attempt to use a lease tx after its with_lease function returned");
  return t;
}

/* Raise the handle's last failure as "lease.tx:<op>: ..." (the error is
** pushed first, so nothing is left half done). */
static int tx_error(lua_State *L, ltx *t, const char *op) {
  lb_push_db_error(L, t->db, lua_pushfstring(L, "tx:%s", op));
  return lua_error(L);
}

/* The value at idx as a statement parameter: strings as TEXT with their
** full length (zero bytes kept), integers, floats, booleans as 0 or 1,
** nil as NULL.  Raises for any other type. */
static void to_value(lua_State *L, const lb_callee *c, int idx, lease_value *v) {
  memset(v, 0, sizeof *v);
  switch (lua_type(L, idx)) {
    case LUA_TNIL: v->type = LEASE_TYPE_NULL; break;
    case LUA_TBOOLEAN:
      v->type = LEASE_TYPE_INTEGER;
      v->i = lua_toboolean(L, idx);
      break;
    case LUA_TSTRING:
      v->type = LEASE_TYPE_TEXT;
      v->s = lua_tolstring(L, idx, &v->len);
      break;
    case LUA_TNUMBER: {
#if LB_INTEGERS
      if (lua_isinteger(L, idx)) {
        v->type = LEASE_TYPE_INTEGER;
        v->i = (int64_t)lua_tointeger(L, idx);
        break;
      }
#else
      double d = (double)lua_tonumber(L, idx);
      if (d == floor(d) && fabs(d) <= (double)LB_EXACT_MAX) {
        v->type = LEASE_TYPE_INTEGER;
        v->i = (int64_t)d;
        break;
      }
#endif
      v->type = LEASE_TYPE_FLOAT;
      v->f = (double)lua_tonumber(L, idx);
      break;
    }
    default:
      lb_fail(L, idx, LB_ARG(c, idx, "a parameter"), "a string, number, boolean or nil");
  }
}

/* The sql at 2 and the parameters from 3 on, in a userdata pushed on the
** stack (freed by the collector, also when an error is raised). */
static lease_value *check_statement(lua_State *L, const lb_callee *c, const char **sql, int *n) {
  lease_value *params;
  int i, top = lua_gettop(L);
  *sql = lb_check_string(L, 2, LB_ARG(c, 2, "sql"), LB_NOZERO, NULL);
  *n = top > 2 ? top - 2 : 0;
  params = lua_newuserdatauv(L, (size_t)(*n > 0 ? *n : 1) * sizeof *params, 0);
  for (i = 0; i < *n; i++) to_value(L, c, 3 + i, &params[i]);
  return params;
}

/***
The transaction of db:with_lease, handed to its function.
@type tx
*/

/***
Run one SQL statement inside the with_lease transaction.
@function tx:exec
@tparam string sql one statement, `?` parameters
@param ... one value per parameter: strings (bound as TEXT with their full
  length, zero bytes kept), integers, floats, booleans (1 or 0), nil (NULL)
@treturn integer the rows it inserted, updated or deleted
@raise `lease.tx:exec: statement refused: ... [misuse]` for a statement that
  would begin, commit or roll back, ATTACH or DETACH, set a pragma, or write
  the engine's tables (`jobs`, `lease_fences`); `... [misuse]` for more than
  one statement or a wrong parameter count; SQLite's error otherwise
  (`[constraint]`, `[error]`...); `bad argument` for a parameter of another
  type; `attempt to use a lease tx after its with_lease function returned`.
  On PostgreSQL `?` becomes $1, $2 ... ($n is taken as it is), and SET,
  RESET, DISCARD, COPY, LISTEN, UNLISTEN, DDL naming the engine's tables and
  statements creating a temporary object (SELECT ... INTO TEMP too) are
  refused too (docs/side-effects.md)
*/
static int tx_exec(lua_State *L) {
  lb_callee c = {"exec", 1};
  ltx *t = check_tx(L);
  const char *sql;
  int n;
  int64_t changes = 0;
  lease_value *params = check_statement(L, &c, &sql, &n);
  if (lease_tx_exec(t->tx, sql, params, n, &changes) != LEASE_OK) return tx_error(L, t, "exec");
  lua_pushinteger(L, (lua_Integer)changes);
  return 1;
}

/* Row callback of tx:rows: append a table {column = value} to the list
** at the top of the stack (NULL columns are absent). */
static int on_row(void *ctx, int ncols, const char *const *names, const lease_value *v) {
  lua_State *L = ctx;
  int i;
  lua_createtable(L, 0, ncols);
  for (i = 0; i < ncols; i++) {
    switch (v[i].type) {
      case LEASE_TYPE_INTEGER: lua_pushinteger(L, (lua_Integer)v[i].i); break;
      case LEASE_TYPE_FLOAT: lua_pushnumber(L, (lua_Number)v[i].f); break;
      case LEASE_TYPE_TEXT: case LEASE_TYPE_BLOB: lua_pushlstring(L, v[i].s, v[i].len); break;
      default: continue;
    }
    lua_setfield(L, -2, names[i]);
  }
  lua_rawseti(L, -2, (int)lua_rawlen(L, -2) + 1);
  return LEASE_OK;
}

/* The iterator of tx:rows: upvalue 1 the rows, upvalue 2 the next index. */
static int rows_next(lua_State *L) {
  lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
  lua_rawgeti(L, lua_upvalueindex(1), (int)i);
  lua_pushinteger(L, i + 1);
  lua_replace(L, lua_upvalueindex(2));
  return 1;
}

/***
Run one SQL statement inside the with_lease transaction and iterate its
rows: `for row in tx:rows("SELECT ...", ...) do ... end`.  The rows are read
before the loop starts.
@function tx:rows
@tparam string sql one statement, `?` parameters
@param ... its parameters, as for tx:exec
@treturn function an iterator giving one table per row, keyed by column
  name (a NULL column is absent; integers, floats, strings for TEXT and BLOB)
@raise as tx:exec
*/
static int tx_rows(lua_State *L) {
  lb_callee c = {"rows", 1};
  ltx *t = check_tx(L);
  const char *sql;
  int n;
  lease_value *params = check_statement(L, &c, &sql, &n);
  lua_newtable(L);
  if (lease_tx_query(t->tx, sql, params, n, on_row, L) != LEASE_OK) return tx_error(L, t, "rows");
  lua_pushinteger(L, 1);
  lua_pushcclosure(L, rows_next, 2);
  return 1;
}

/* Push true, or false and the reason word. */
static int push_reason(lua_State *L, int reason) {
  lua_pushboolean(L, reason == LEASE_GRANTED);
  if (reason == LEASE_GRANTED) return 1;
  lua_pushstring(L, lease_reason_name(reason));
  return 2;
}

/***
Complete the held job inside the transaction (contract step 6, the guarded
write of db:complete, at with_lease's `now`): stored only when the
transaction commits, that is when the function returns.
@function tx:complete
@tparam[opt] string result any bytes, or nil
@treturn boolean true when stored
@treturn[2] boolean false
@treturn[2] string a reason, as for db:complete
@raise `lease.tx:complete: ...` on a database failure; as tx:exec after the
  function returned
*/
static int tx_complete(lua_State *L) {
  lb_callee c = {"complete", 1};
  ltx *t = check_tx(L);
  size_t len = 0;
  const char *result = lb_check_string(L, 2, LB_ARG(&c, 2, "result"), LB_OPTIONAL | LB_EMPTY, &len);
  int reason = LEASE_GRANTED;
  if (lease_tx_complete(t->tx, result, len, &reason) != LEASE_OK)
    return tx_error(L, t, "complete");
  return push_reason(L, reason);
}

/***
Renew the held job inside the transaction (contract step 5, db:renew's
guarded write): `until = now + ttl`, stored only when the transaction
commits.
@function tx:renew
@tparam number ttl seconds (caller's unit), finite, > 0
@tparam[opt] number now the time; with_lease's `now` when nil
@treturn boolean true when extended
@treturn[2] boolean false
@treturn[2] string a reason, as for db:renew
@raise `bad argument` for a bad ttl or now; `lease.tx:renew: now N is off
  by a factor of ...` for a now of another unit than the database's clock
  mark (the clock check); `lease.tx:renew: ...` on a database failure
*/
static int tx_renew(lua_State *L) {
  lb_callee c = {"renew", 1};
  ltx *t = check_tx(L);
  double ttl = lb_check_number(L, 2, LB_ARG(&c, 2, "ttl"), 0, -HUGE_VAL, 0);
  double now = lb_check_number(L, 3, LB_ARG(&c, 3, "now"), LB_OPTIONAL | LB_FINITE, -HUGE_VAL,
                               NAN);
  const char *why;
  int reason = LEASE_GRANTED;
  if (isnan(now)) now = lease_tx_now(t->tx);
  if (lease_check_time(now, ttl, &why) == LEASE_ARG_TTL)
    return lb_error(L, LB_ARG(&c, 2, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, 2)));
  if (lease_tx_renew(t->tx, now, ttl, &reason) != LEASE_OK) return tx_error(L, t, "renew");
  return push_reason(L, reason);
}

/* The resource at 2 and fence at 3 of a gate call. */
static const char *check_gate(lua_State *L, const lb_callee *c, size_t *len, int64_t *fence) {
  const char *r = lb_check_string(L, 2, LB_ARG(c, 2, "resource"), 0, len);
  *fence = lb_check_integer(L, 3, LB_ARG(c, 3, "fence"), 0, INT64_MAX);
  return r;
}

/***
The fence gate inside the transaction (see db:fence_gate): stored only when
the transaction commits.
@function tx:fence_gate
@tparam string resource
@tparam integer fence >= 0
@treturn boolean true when it passed
@treturn[2] boolean false
@treturn[2] string `"stale_fence"`
@raise as db:fence_gate
*/
static int tx_fence_gate(lua_State *L) {
  lb_callee c = {"fence_gate", 1};
  ltx *t = check_tx(L);
  size_t len;
  int64_t fence;
  const char *r = check_gate(L, &c, &len, &fence);
  int reason = LEASE_GRANTED;
  if (lease_tx_fence_gate(t->tx, r, len, fence, &reason) != LEASE_OK)
    return tx_error(L, t, "fence_gate");
  return push_reason(L, reason);
}

/* __tostring of a tx. */
static int tx_tostring(lua_State *L) {
  ltx *t = luaL_checkudata(L, 1, TX_MT);
  lua_pushfstring(L, "lease.tx (%s)", t->tx ? "open" : "ended");
  return 1;
}

static const luaL_Reg tx_methods[] = {
  {"exec", tx_exec},
  {"rows", tx_rows},
  {"complete", tx_complete},
  {"renew", tx_renew},
  {"fence_gate", tx_fence_gate},
  {NULL, NULL},
};

/* Push a new tx userdata (its metatable made on first use). */
static ltx *new_tx(lua_State *L) {
  ltx *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->tx = NULL;
  t->db = NULL;
  if (luaL_newmetatable(L, TX_MT)) {
    luaL_newlib(L, tx_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, tx_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
  return t;
}

/* ===================================================================== */
/* db:with_lease                                                          */
/* ===================================================================== */

/* Message handler of the protected call: a string error gets the
** traceback of where it was raised; any other error value is kept as it
** is (a table error stays a table). */
static int with_traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg && lua_type(L, 1) == LUA_TSTRING) luaL_traceback(L, L, msg, 1);
  else lua_settop(L, 1);
  return 1;
}

/* lease_with_lease's callback: call the function at WL_FN with the tx,
** protected.  Its results stay on the stack above WL_TX; a raise leaves
** its error there and rolls back. */
static int call_fn(lease_tx *tx, void *ctx) {
  wl_state *st = ctx;
  lua_State *L = st->L;
  ltx *t = lua_touserdata(L, WL_TX);
  int status;
  t->tx = tx;
  t->db = st->db;
  lua_pushvalue(L, WL_FN);
  lua_pushvalue(L, WL_TX);
  status = lua_pcall(L, 1, LUA_MULTRET, WL_MSGH);
  t->tx = NULL;
  if (status != LUA_OK) {
    st->raised = 1;
    return LEASE_ERROR;
  }
  st->nres = lua_gettop(L) - WL_TX;
  return LEASE_OK;
}

/***
Run a function inside one write transaction that holds the lease: the
worker's own rows commit only while its lease holds.  The lease is checked
exactly as db:complete checks it (owner, fence, not done, `until > now`);
only then `fn(tx)` runs.  When `fn` returns, everything it wrote commits at
once (one commit); when it raises, everything rolls back and the error is
raised again (a string with its traceback).  While `fn` runs, the handle
itself refuses every other call (`[misuse]`): use `tx`.  `fn` must not
yield.
@function db:with_lease
@within db
@tparam string id the job
@tparam string owner the holder
@tparam integer fence the token claim returned
@tparam number now the time, caller's unit, finite
@tparam function fn called as `fn(tx)` (see tx:exec, tx:rows,
  tx:complete, tx:renew, tx:fence_gate); `tx` cannot be used after it returns
@treturn boolean true when fn ran and its work committed
@return ... fn's results
@treturn[2] boolean false: the lease was refused, fn never ran, nothing changed
@treturn[2] string `"missing"`, `"done"`, `"not_owner"`, `"stale_fence"` or `"expired"`
@raise fn's error, after the rollback; `bad argument` before anything runs;
  `lease.with_lease: ...` on a database failure (also when the commit fails:
  nothing is stored)
*/
static void check_with_lease(lua_State *L, const lb_callee *c, lb_args *a) {
  wl_state *st;
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "id"), 0, &a->id_len);
  a->owner = lb_check_string(L, 3, LB_ARG(c, 3, "owner"), 0, &a->owner_len);
  a->fence = lb_check_integer(L, 4, LB_ARG(c, 4, "fence"), INT64_MIN, INT64_MAX);
  a->now = lb_check_number(L, 5, LB_ARG(c, 5, "now"), LB_FINITE, -HUGE_VAL, 0);
  if (lua_type(L, WL_FN) != LUA_TFUNCTION) lb_fail(L, WL_FN, LB_ARG(c, WL_FN, "fn"), "a function");
  lua_settop(L, WL_FN);
  luaL_checkstack(L, 8, "lease.with_lease");
  st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st);
  st->L = L;
  lua_pushcfunction(L, with_traceback);
  new_tx(L);
  a->mem = st;
}
static int run_with_lease(lease_db *db, lb_args *a) {
  wl_state *st = a->mem;
  int rc;
  st->db = db;
  rc = lease_with_lease(db, a->id, a->id_len, a->owner, a->owner_len, a->fence, a->now, call_fn,
                        st, &a->reason);
  return st->raised ? LEASE_OK : rc;
}
static int push_with_lease(lua_State *L, lb_args *a) {
  wl_state *st = a->mem;
  if (st->raised) return -1;   /* fn's error is at the top */
  if (a->reason != LEASE_GRANTED) return push_reason(L, a->reason);
  lua_pushboolean(L, 1);
  lua_replace(L, WL_TX);
  return st->nres + 1;
}

/* See lease_lua_int.h. */
const lb_op lb_op_with_lease = {"with_lease", 0, 0, check_with_lease, run_with_lease,
                                push_with_lease};

/* ===================================================================== */
/* db:fence_gate                                                          */
/* ===================================================================== */

/***
The fencing check for another resource (a storage service receiving writes
tagged with a fence): keeps, per resource name, the largest fence that
passed, in the table `lease_fences` (created on first use, beside or
without the jobs table).  A smaller fence is refused and nothing is
stored; an equal or larger one passes and is stored.  One statement in one
write transaction.  Also a path function: `lease.fence_gate(path, resource,
fence)`.
@function db:fence_gate
@within db
@tparam string resource the resource's name (non-empty)
@tparam integer fence >= 0
@treturn boolean true when it passed
@treturn[2] boolean false
@treturn[2] string `"stale_fence"`
@raise `bad argument` for a bad resource or fence; `lease.fence_gate: ...`
  on a database failure (nothing stored), `[mismatch]` when another
  client's trigger skipped the gate's write (nothing stored)
*/
static void check_fence_gate(lua_State *L, const lb_callee *c, lb_args *a) {
  a->id = check_gate(L, c, &a->id_len, &a->fence);
}
static int run_fence_gate(lease_db *db, lb_args *a) {
  return lease_fence_gate(db, a->id, a->id_len, a->fence, &a->reason);
}
static int push_fence_gate(lua_State *L, lb_args *a) {
  return push_reason(L, a->reason);
}

/* See lease_lua_int.h. */
const lb_op lb_op_fence_gate = {"fence_gate", 1, 0, check_fence_gate, run_fence_gate,
                                push_fence_gate};

/***
@function fence_gate
@within path
@tparam string path the database file
@tparam string resource
@tparam integer fence
@treturn boolean true, or false, "stale_fence"
@raise see db:fence_gate
*/
