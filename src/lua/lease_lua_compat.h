/*
** lease_lua_compat.h: one place for the differences between the Lua
** versions the module builds for: 5.4 (the default), 5.3, 5.1 and LuaJIT
** 2.1 (the 5.1 API).  The binding's C files include this instead of
** <lua.h> and <lauxlib.h>, then write the 5.4 API.
**
** For 5.1 and LuaJIT, Debian's lua-compat53 (compat-5.3.h, in the include
** directory of lua5.1) supplies the 5.3 API: lua_rawgeti returning the
** type, lua_tointegerx, luaL_tolstring, luaL_testudata, luaL_requiref, ...
** Its functions are compiled in as statics.  What it does not cover is
** here: the 5.4 user-value userdata, and whether numbers have an integer
** subtype.
*/
#ifndef LEASE_LUA_COMPAT_H
#define LEASE_LUA_COMPAT_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#if LUA_VERSION_NUM < 503
#  if defined(__GNUC__)
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wshadow"
#    pragma GCC diagnostic ignored "-Wcast-qual"
#    pragma GCC diagnostic ignored "-Wunused-function"
#  endif
#  include <compat-5.3.h>
#  if defined(__GNUC__)
#    pragma GCC diagnostic pop
#  endif
#endif

#ifndef LUA_LOADED_TABLE
#  define LUA_LOADED_TABLE "_LOADED"   /* the registry's table of loaded modules */
#endif

#if LUA_VERSION_NUM < 504
/* No user values: the module's userdata never use them. */
#  define lua_newuserdatauv(L, size, nuv) ((void)(nuv), lua_newuserdata((L), (size)))
#endif

/*
** LB_INTEGERS: 1 when Lua numbers have an integer subtype (5.3 and 5.4),
** so a fencing token travels exactly up to 2^63-1.  0 on 5.1 and LuaJIT:
** numbers are doubles, exact only up to 2^53, and the binding refuses a
** fence beyond that instead of rounding it.
*/
#if LUA_VERSION_NUM >= 503
#  define LB_INTEGERS 1
#else
#  define LB_INTEGERS 0
#endif

/*
** lb_pushpreload: push package.preload, the table require looks in first.
** 5.3 and 5.4 keep it in the registry; 5.1 only as a field of package.
*/
static inline void lb_pushpreload(lua_State *L) {
#if LUA_VERSION_NUM >= 503
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
#else
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_getsubtable(L, -1, LUA_LOADLIBNAME);
  luaL_getsubtable(L, -1, "preload");
  lua_replace(L, -3);
  lua_pop(L, 1);
#endif
}

/* The largest integer every Lua number holds exactly: 2^53. */
#define LB_EXACT_MAX ((int64_t)1 << 53)

#endif
