/*
** lease_shared.h: the registry of shareable C objects (prefix lshared_):
** objects such as barriers and channels that several Lua states, on
** several threads, hold at once.  Internal to the `lease` module; used by
** value copies (lease_copy.c) and by the threads module (lease_thread.c),
** and itself knows neither.
*/
#ifndef LEASE_SHARED_H
#define LEASE_SHARED_H

#include <stdatomic.h>

#include "lease_lua_compat.h"

/*
** A kind of shareable object: its metatable name (__name, "lease.barrier")
** and its methods and metamethods.  lshared_metatable adds __gc (dropping
** the state's reference) and __index (the methods).
*/
typedef struct lshared_kind {
  const char *name;
  const luaL_Reg *methods;
  const luaL_Reg *metamethods;   /* besides __gc and __index; may be NULL */
} lshared_kind;

/*
** The head of every shareable C object.  Each Lua state holding it (one
** userdata per state) and each copy in flight (an lcopy) owns one
** reference; the last lshared_unref destroys it, whatever thread that is.
*/
typedef struct lshared {
  atomic_int refs;
  const lshared_kind *kind;
  void (*destroy)(struct lshared *self);   /* frees the object */
} lshared;

/* lshared_ref: take one more reference to o. */
void lshared_ref(lshared *o);
/* lshared_unref: drop a reference to o; the last one destroys it. */
void lshared_unref(lshared *o);

/* lshared_metatable: create kind's metatable in L unless L has it. */
void lshared_metatable(lua_State *L, const lshared_kind *kind);

/* lshared_push: push a new userdata for o in L (taking a reference),
** creating its kind's metatable in L when it is missing. */
void lshared_push(lua_State *L, lshared *o);

/* lshared_test: the object behind the shareable userdata at i, of any
** kind, or NULL when the value at i is something else. */
lshared *lshared_test(lua_State *L, int i);

/* lshared_check: the object of kind `kind` at i; raises
** "<kind name> expected, got ..." for another value. */
lshared *lshared_check(lua_State *L, int i, const lshared_kind *kind);

#endif
