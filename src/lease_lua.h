/*
** lease_lua.h: what the C parts of the `lease` Lua module share.
** The core (lease.h) knows nothing of Lua; this header is the binding's.
*/
#ifndef LEASE_LUA_H
#define LEASE_LUA_H

#include <lua.h>

#include "lease.h"

/*
** luaopen_lease: the `lease` module (require "lease").  Returns 1: the
** module table.  See lease_lua.c for every function's contract.
*/
LEASE_API int luaopen_lease(lua_State *L);

/*
** lease_lua_checkdb: the open lease_db behind the lease.db handle at stack
** index i.  Raises "lease.db expected" for another value and "attempt to
** use a closed lease database" for a closed handle.
*/
lease_db *lease_lua_checkdb(lua_State *L, int i);

/* One Lua module of lua/, embedded by cmake/embed_lua.cmake. */
typedef struct lease_lua_source {
  const char *module;     /* "lease.pool" */
  const char *chunkname;  /* "@lua/lease/pool.lua", for tracebacks */
  const char *code;
  size_t size;
} lease_lua_source;

/* The embedded modules, ended by an entry whose module is NULL. */
extern const lease_lua_source lease_lua_sources[];

/*
** lease_lua_preload: set package.preload[m] for every embedded module m,
** so require finds them with no LUA_PATH.  Returns nothing; raises only on
** a memory error.
*/
void lease_lua_preload(lua_State *L);

#endif
