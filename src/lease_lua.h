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
** lease_lua_checkdb: check that the value at stack index i is an open
** lease.db handle.  Raises "lease.db expected" for another value and
** "attempt to use a closed lease database" for a closed handle.
*/
void lease_lua_checkdb(lua_State *L, int i);

/*
** lease_lua_enter: enter a call on the open lease.db handle at stack index
** i and return its connection, valid until the matching lease_lua_leave
** even if a finalizer closes the handle meanwhile (the close waits).  Raises
** like lease_lua_checkdb.  Enter after parsing arguments; push results
** before leaving; leave before raising a database error.
*/
lease_db *lease_lua_enter(lua_State *L, int i);

/* lease_lua_leave: end a call entered by lease_lua_enter on the handle at i,
** finishing a close that was asked for during it. */
void lease_lua_leave(lua_State *L, int i);

/* ===================================================================== */
/* Shared by the module's C files (defined in lease_lua.c)               */
/* ===================================================================== */

/*
** Who is being called, for argument errors: the name users wrote
** ("claim" for db:claim, "lease.claim" for the path function) and whether
** it was called as a method (then, as in luaL_argerror, self is not
** counted).  Naming the function ourselves keeps the name even when Lua's
** debug information has none, as in pcall(db.claim, db, ...).  Nothing is
** looked up or formatted until an error is raised: every call fills one,
** and asking Lua how a method was called costs more than a claim's own
** argument checks.
*/
typedef struct callee {
  const char *name;   /* a static string, without "lease." */
  int is_method;
} callee;

/* callee_init: fill c for the running C function `name` (a static
** string; "lease." is prepended in messages unless is_method), a method
** when is_method. */
void callee_init(lua_State *L, callee *c, const char *name, int is_method);
/* arg_error: raise "bad argument #i to '<name>' (<msg>)". */
int arg_error(lua_State *L, const callee *c, int i, const char *msg);
/* arg_got: how errors name the value at i ("a string", "nil", "42"...). */
const char *arg_got(lua_State *L, int i);
/* arg_fail: raise "bad argument #i to '<f>' (<what> must be <kind>, got <value>)". */
int arg_fail(lua_State *L, const callee *c, int i, const char *what, const char *kind);
/* arg_bytes: the non-empty string at i (zero bytes allowed), or raise. */
const char *arg_bytes(lua_State *L, const callee *c, int i, const char *what, size_t *len);
/* arg_length: raise "bad argument #i to '<f>' (<what> must be at most
** LEASE_MAX_LENGTH bytes, got <len>)" for a longer string. */
void arg_length(lua_State *L, const callee *c, int i, const char *what, size_t len);
/* arg_path: the database path at i: a non-empty string without zero bytes
** (the C API takes a C string, which would end at the first), or raise. */
const char *arg_path(lua_State *L, const callee *c, int i);
/* arg_time: now at i and ttl at i + 1, checked as lease_check_time does, or raise. */
void arg_time(lua_State *L, const callee *c, int i, double *now, double *ttl);
/* push_db_error: push "lease.<op>: <message> [<code>] (file "<path>")" for db's last failure. */
void push_db_error(lua_State *L, lease_db *db, const char *op);
/* open_handle: push a new lease.db handle open on path, or raise "lease.<op>: ...". */
lease_db *open_handle(lua_State *L, const char *op, const char *path, const lease_options *opt);
/* close_handle: close the lease.db handle at i if it is open. */
int close_handle(lua_State *L, int i);

/* ===================================================================== */
/* Defined in the module's other C files                                  */
/* ===================================================================== */

/* lease.claim_many and db:claim_many (lease_lua_many.c, contract step 8). */
int l_claim_many(lua_State *L);
int m_claim_many(lua_State *L);

/*
** luaopen_lease_thread: require "lease.thread" (lease_thread.c), also
** reachable as require("lease").thread.  Returns 1: the module table.
*/
LEASE_API int luaopen_lease_thread(lua_State *L);

/*
** lease_lua_traceback: a message handler for lua_pcall, as lua.c's
** msghandler: the error message (a string, or one made by __tostring, or
** "(error object is a T value)") followed by a traceback.  Returns 1.
*/
int lease_lua_traceback(lua_State *L);

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
** lease_lua_run_embedded: compile and run embedded module i (an index into
** lease_lua_sources) as require would a file, passing its name; returns 1
** with the module's value pushed.  Raises a syntax or runtime error.  The
** generated luaopen_lease_<name> functions call it.
*/
int lease_lua_run_embedded(lua_State *L, int i);

/*
** lease_lua_preload_all: set package.preload for lease, lease.thread and
** every embedded module, as a fresh state (the host's, a thread's) needs
** them.  Raises only on a memory error.
*/
void lease_lua_preload_all(lua_State *L);

/*
** lease_lua_preload: set package.preload[m] for every embedded module m,
** so require finds them with no LUA_PATH.  Returns nothing; raises only on
** a memory error.
*/
void lease_lua_preload(lua_State *L);

#endif
