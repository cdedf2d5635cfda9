/*
** lease_lua_args.c: the binding's argument checks, one per kind of value
** (string, integer, number, the now/ttl pair, a sequence), each with its
** bounds.  Every operation, the threads and the module functions use them,
** so one value is refused with the same words wherever it is passed.
**
** Errors read as luaL_argerror's do, but name the function even where
** Lua's debug information cannot (pcall(db.claim, db, ...)):
**   bad argument #4 to 'claim' (ttl must be a number > 0, got 0)
** Entries of a table argument are counted from 1: "ids[3]", "jobs[2].fence".
*/
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lease_lua_int.h"

/* Push the name of a (formatting an entry's "ids[%d]" with its k). */
static const char *arg_name(lua_State *L, const lb_arg *a) {
  if (a->k > 0) return lua_pushfstring(L, a->what, a->k);
  return a->what;
}

/* See lease_lua_int.h. */
int lb_error(lua_State *L, const lb_arg *a, const char *msg) {
  lua_Debug ar;
  int shift = 0;
  if (a->c->is_method && lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.namewhat &&
      strcmp(ar.namewhat, "method") == 0)
    shift = 1;
  return luaL_error(L, "bad argument #%d to '%s%s' (%s)", a->pos - shift,
                    a->c->is_method ? "" : "lease.", a->c->name, msg);
}

/* See lease_lua_int.h. */
const char *lb_got(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING)
    return lua_rawlen(L, idx) == 0 ? "an empty string" : "a string";
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Number v = lua_tonumber(L, idx);
    if (v != v) return "nan";   /* printf would say "-nan" or "nan" by the sign bit */
    return luaL_tolstring(L, idx, NULL);
  }
  return luaL_typename(L, idx);
}

/* Raise "... (<what> must be <kind>, got <got>)". */
static int fail_got(lua_State *L, const lb_arg *a, const char *kind, const char *got) {
  const char *name = arg_name(L, a);
  return lb_error(L, a, lua_pushfstring(L, "%s must be %s, got %s", name, kind, got));
}

/* See lease_lua_int.h. */
int lb_fail(lua_State *L, int idx, const lb_arg *a, const char *kind) {
  return fail_got(L, a, kind, lb_got(L, idx));
}

/* See lease_lua_int.h. */
const char *lb_check_string(lua_State *L, int idx, const lb_arg *a, int flags, size_t *len) {
  size_t n;
  const char *s;
  if (lua_isnoneornil(L, idx) && (flags & LB_OPTIONAL)) {
    if (len) *len = 0;
    return NULL;
  }
  if (lua_type(L, idx) != LUA_TSTRING || (!(flags & LB_EMPTY) && lua_rawlen(L, idx) == 0))
    lb_fail(L, idx, a, (flags & LB_OPTIONAL) ? "a string or nil" : "a non-empty string");
  s = lua_tolstring(L, idx, &n);
  if (n > LEASE_MAX_LENGTH) {
    char got[32];
    snprintf(got, sizeof got, "%zu", n);
    lb_error(L, a, lua_pushfstring(L, "%s must be at most %d bytes, got %s", arg_name(L, a),
                                   LEASE_MAX_LENGTH, got));
  }
  if ((flags & LB_NOZERO) && strlen(s) != n)
    lb_error(L, a, lua_pushfstring(L, "%s must not contain zero bytes", arg_name(L, a)));
  if (len) *len = n;
  return s;
}

/* Write bound v as errors show it: 2^31-1, 2^53, 2^63-1 by name. */
static void bound_text(char *buf, size_t size, int64_t v) {
  if (v == INT32_MAX) snprintf(buf, size, "2^31-1");
  else if (v == LB_EXACT_MAX) snprintf(buf, size, "2^53");
  else if (v == INT64_MAX) snprintf(buf, size, "2^63-1");
  else snprintf(buf, size, "%" PRId64, v);
}

/* Raise "<what> must be an integer[ from min to max | >= min][ or nil], got ...":
** every bound in the words, whichever one failed.  The value is named
** before anything is pushed, so idx may be relative or past the top. */
static int64_t integer_fail(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max,
                            int optional) {
  const char *got = lb_got(L, idx);
  const char *kind = "an integer";
  char lo[24], hi[24];
  bound_text(lo, sizeof lo, min);
  bound_text(hi, sizeof hi, max);
  if (max != INT64_MAX) kind = lua_pushfstring(L, "an integer from %s to %s", lo, hi);
  else if (min != INT64_MIN) kind = lua_pushfstring(L, "an integer >= %s", lo);
  if (optional) kind = lua_pushfstring(L, "%s or nil", kind);
  fail_got(L, a, kind, got);
  return 0;
}

/* The integer at idx within min..max, or raise (optional: nil was allowed). */
static int64_t check_integer(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max,
                             int optional) {
  lua_Integer v = 0;
  int isint = 0;
  if (lua_type(L, idx) == LUA_TNUMBER) {
#if LB_INTEGERS
    v = lua_tointegerx(L, idx, &isint);
#else
    /* a double: exact only within +-2^53; beyond, it may be rounded already */
    lua_Number d = lua_tonumber(L, idx);
    if (d == floor(d) && fabs(d) <= (lua_Number)LB_EXACT_MAX) {
      v = (lua_Integer)d;
      isint = 1;
    } else if (d == floor(d) && isfinite(d)) {
      lb_fail(L, idx, a, "an integer of at most 2^53 (this Lua has no integer subtype)");
    }
#endif
  }
  if (!isint || (int64_t)v < min || (int64_t)v > max)
    return integer_fail(L, idx, a, min, max, optional);
  return (int64_t)v;
}

/* See lease_lua_int.h. */
int64_t lb_check_integer(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max) {
  return check_integer(L, idx, a, min, max, 0);
}

/* See lease_lua_int.h. */
int64_t lb_opt_integer(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max,
                       int64_t def) {
  if (lua_isnoneornil(L, idx)) return def;
  return check_integer(L, idx, a, min, max, 1);
}

/*
** Raise "<what> must be a number[ of seconds][ or nil], got ..." for a value
** that is not a number, and "<what> must be a [finite ]number[ of seconds]
** [>= min][ or nil], got ..." for one out of bounds.  The value is named
** before anything is pushed, so idx may be relative or past the top.
*/
static void number_fail(lua_State *L, int idx, const lb_arg *a, int flags, double min) {
  int isnum = lua_type(L, idx) == LUA_TNUMBER;
  const char *got = lb_got(L, idx);
  const char *kind = (flags & LB_FINITE) && isnum ? "a finite number" : "a number";
  if (flags & LB_SECONDS) kind = lua_pushfstring(L, "%s of seconds", kind);
  if (min > -HUGE_VAL && isnum) {
    char lo[32];
    snprintf(lo, sizeof lo, "%g", min);
    kind = lua_pushfstring(L, "%s >= %s", kind, lo);
  }
  if (flags & LB_OPTIONAL) kind = lua_pushfstring(L, "%s or nil", kind);
  fail_got(L, a, kind, got);
}

/* See lease_lua_int.h. */
double lb_check_number(lua_State *L, int idx, const lb_arg *a, int flags, double min,
                       double def) {
  double v;
  if ((flags & LB_OPTIONAL) && lua_isnoneornil(L, idx)) return def;
  if (lua_type(L, idx) != LUA_TNUMBER) number_fail(L, idx, a, flags, min);
  v = (double)lua_tonumber(L, idx);
  if (((flags & LB_FINITE) && !isfinite(v)) || v < min) number_fail(L, idx, a, flags, min);
  return v;
}

/* See lease_lua_int.h. */
void lb_check_time(lua_State *L, const lb_callee *c, int idx, double *now, double *ttl) {
  const char *why;
  int bad, at;
  *now = lb_check_number(L, idx, LB_ARG(c, idx, "now"), 0, -HUGE_VAL, 0);
  *ttl = lb_check_number(L, idx + 1, LB_ARG(c, idx + 1, "ttl"), 0, -HUGE_VAL, 0);
  bad = lease_check_time(*now, *ttl, &why);
  if (bad) {
    at = bad == LEASE_ARG_NOW ? idx : idx + 1;
    lb_error(L, LB_ARG(c, at, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, at)));
  }
}

/* See lease_lua_int.h. */
int lb_check_sequence(lua_State *L, int idx, const lb_arg *a, int max) {
  size_t n;
  if (!lua_istable(L, idx)) lb_fail(L, idx, a, "a table");
  idx = lua_absindex(L, idx);
  n = lua_rawlen(L, idx);
  if (n > (size_t)max)
    lb_error(L, a, lua_pushfstring(L, "%s has more than %d entries", arg_name(L, a), max));
  /* any key outside 1..n would be an entry silently left out */
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_Number key = lua_type(L, -2) == LUA_TNUMBER ? lua_tonumber(L, -2) : 0;
    if (!(key >= 1 && key <= (lua_Number)n && key == (lua_Number)(int64_t)key))
      lb_error(L, a, lua_pushfstring(L, "%s must be a sequence, but has key %s beside 1..%d",
                                     arg_name(L, a), luaL_tolstring(L, -2, NULL), (int)n));
    lua_pop(L, 1);
  }
  return (int)n;
}
