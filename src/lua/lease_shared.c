/*
** lease_shared.c: the registry of shareable C objects (lease_shared.h).
** A state holds such an object through a userdata whose metatable carries
** a private key marking it shareable, so a value copy recognises every
** kind without knowing any.
*/
#include <stdint.h>

#include "lease_shared.h"

/* What a shareable userdata holds: one reference to the object. */
typedef struct shared_ud {
  lshared *o;   /* NULL only while being made */
} shared_ud;

/* The address of this variable is the metatable key marking a shareable
** kind (a light userdata: no string another library could also use). */
static const char shared_key = 0;

/* See lease_shared.h. */
void lshared_ref(lshared *o) {
  atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}

/* See lease_shared.h.  acq_rel: the thread that destroys must see every
** write the others made before dropping their references. */
void lshared_unref(lshared *o) {
  if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) o->destroy(o);
}

/* __gc of every shareable userdata: drop this state's reference. */
static int shared_gc(lua_State *L) {
  shared_ud *u = lua_touserdata(L, 1);
  if (u && u->o) {
    lshared_unref(u->o);
    u->o = NULL;
  }
  return 0;
}

/* See lease_shared.h. */
void lshared_metatable(lua_State *L, const lshared_kind *kind) {
  luaL_checkstack(L, 4, NULL);
  if (luaL_newmetatable(L, kind->name)) {
    if (kind->metamethods) luaL_setfuncs(L, kind->metamethods, 0);
    lua_pushcfunction(L, shared_gc);
    lua_setfield(L, -2, "__gc");
    lua_newtable(L);
    luaL_setfuncs(L, kind->methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushlightuserdata(L, (void *)(uintptr_t)&shared_key);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

/* See lease_shared.h. */
void lshared_push(lua_State *L, lshared *o) {
  shared_ud *u;
  lshared_metatable(L, o->kind);
  u = lua_newuserdatauv(L, sizeof *u, 0);
  u->o = NULL;   /* owns nothing until the metatable (and so __gc) is set */
  luaL_setmetatable(L, o->kind->name);
  lshared_ref(o);
  u->o = o;
}

/* See lease_shared.h. */
lshared *lshared_test(lua_State *L, int i) {
  int marked;
  if (lua_type(L, i) != LUA_TUSERDATA || !lua_getmetatable(L, i)) return NULL;
  lua_pushlightuserdata(L, (void *)(uintptr_t)&shared_key);
  lua_rawget(L, -2);
  marked = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return marked ? ((shared_ud *)lua_touserdata(L, i))->o : NULL;
}

/* See lease_shared.h. */
lshared *lshared_check(lua_State *L, int i, const lshared_kind *kind) {
  shared_ud *u = luaL_checkudata(L, i, kind->name);
  if (!u->o) luaL_error(L, "attempt to use an unfinished %s", kind->name);
  return u->o;
}
