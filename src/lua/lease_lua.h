/*
** lease_lua.h: the public face of the `lease` Lua module for programs that
** embed Lua.  A Lua interpreter loads the module with require "lease"; a
** program with a lua_State of its own can open it through these calls.
** Everything else the module's C files share is in lease_lua_int.h.
*/
#ifndef LEASE_LUA_H
#define LEASE_LUA_H

#include <lua.h>

#include "lease.h"

/*
** luaopen_lease: the `lease` module (require "lease").  Returns 1: the
** module table (lease.open, the path functions, lease.thread, _VERSION).
** Raises only on a memory error.
*/
LEASE_API int luaopen_lease(lua_State *L);

/*
** luaopen_lease_thread: the `lease.thread` module (require "lease.thread"),
** also reachable as require("lease").thread.  Returns 1: the module table.
** Raises only on a memory error.
*/
LEASE_API int luaopen_lease_thread(lua_State *L);

/*
** lease_lua_preload_all: set package.preload for lease, lease.thread and
** every Lua module embedded in the C module (lease.pool, lease.cli...), so a
** fresh state requires them with no LUA_PATH or LUA_CPATH.  Returns nothing;
** raises only on a memory error.
*/
LEASE_API void lease_lua_preload_all(lua_State *L);

/*
** lease_lua_traceback: a message handler for lua_pcall, as lua.c's
** msghandler: the error message (a string, or one made by __tostring, or
** "(error object is a T value)") followed by a traceback.  Returns 1.
*/
LEASE_API int lease_lua_traceback(lua_State *L);

#endif
