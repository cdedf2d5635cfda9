/*
** lease_lua_many.c: claim_many for Lua (contract step 8), over the core's
** lease_claim_many (lease_many.c), which runs the threads.
**
**   lease.claim_many(path, id, owners, now, ttl)   path function
**   db:claim_many(id, owners, now, ttl)            handle method
**
** Both check every argument first, as claim does, then run the claims on
** native threads and return a sequence as long as owners: the winner's
** slot holds its fence, every other slot false (CONTRACT.md, Lua mapping).
** Database failures raise; they never come back as false.
*/
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "lease.h"
#include "lease_lua.h"

/*
** Check that owners (at stack index i) is a non-empty sequence of non-empty
** strings, with no other keys, and return its length.  Raises
** "bad argument #i to '<f>' (owners[k] must be a non-empty string, got ...)"
** naming the first bad position, or saying what is wrong with the table.
*/
static size_t check_owners(lua_State *L, const callee *c, int i) {
  size_t n, k;
  if (lua_type(L, i) != LUA_TTABLE) arg_fail(L, c, i, "owners", "a table of strings");
  n = lua_rawlen(L, i);
  if (n == 0) arg_error(L, c, i, "owners must be a non-empty sequence of strings, got an empty one");
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, i, (lua_Integer)k);
    if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
      arg_error(L, c, i, lua_pushfstring(L, "owners[%I] must be a non-empty string, got %s",
                                         (lua_Integer)k, arg_got(L, lua_gettop(L))));
    if (lua_rawlen(L, -1) > LEASE_MAX_LENGTH)
      arg_length(L, c, i, lua_pushfstring(L, "owners[%I]", (lua_Integer)k), lua_rawlen(L, -1));
    lua_pop(L, 1);
  }
  /* Any key outside 1..n would be an owner silently left out. */
  lua_pushnil(L);
  while (lua_next(L, i)) {
    int isint = 0;
    lua_Integer key = lua_tointegerx(L, -2, &isint);
    if (lua_type(L, -2) != LUA_TNUMBER || !isint || key < 1 || (lua_Unsigned)key > n)
      arg_error(L, c, i, lua_pushfstring(L, "owners must be a sequence, but has key %s "
                                         "beside 1..%I", luaL_tolstring(L, -2, NULL),
                                         (lua_Integer)n));
    lua_pop(L, 1);
  }
  return n;
}

/*
** The shared body: db is an open path function's connection, or NULL for
** the method, whose handle (at stack index 1) is entered once the arguments
** are parsed (see lease_lua_enter).  The id is at stack index 2 and owners,
** now, ttl follow.  Arrays live in a userdata, so a raised error frees them.
** Pushes the result sequence and returns 1, or pushes the message
** "lease.claim_many: ..." of a database failure and returns -1 (the caller
** raises it, after closing a path function's connection).
*/
static int claim_many(lua_State *L, const callee *c, lease_db *db) {
  int entered = db == NULL;   /* a method: enter the handle at 1 after parsing */
  int rc;
  const char *id, **owners;
  size_t id_len, n, k, *lens;
  int64_t *fences;
  double now, ttl;
  char *mem;
  id = arg_bytes(L, c, 2, "id", &id_len);
  n = check_owners(L, c, 3);
  arg_time(L, c, 4, &now, &ttl);
  if (n > ((size_t)-1) / (sizeof *owners + sizeof *lens + sizeof *fences))
    return luaL_error(L, "lease.claim_many: too many owners");
  /* one block: fences first (8-byte aligned), then pointers, then lengths */
  mem = lua_newuserdatauv(L, n * (sizeof *owners + sizeof *lens + sizeof *fences), 0);
  fences = (int64_t *)(void *)mem;
  owners = (const char **)(void *)(mem + n * sizeof *fences);
  lens = (size_t *)(void *)(mem + n * (sizeof *fences + sizeof *owners));
  for (k = 0; k < n; k++) {
    lua_rawgeti(L, 3, (lua_Integer)k + 1);
    owners[k] = lua_tolstring(L, -1, &lens[k]);   /* stays alive: owners holds it */
    lua_pop(L, 1);
  }
  if (entered) db = lease_lua_enter(L, 1);
  rc = lease_claim_many(db, id, id_len, owners, lens, n, now, ttl, fences, NULL);
  if (rc != LEASE_OK) {
    push_db_error(L, db, "claim_many");
    if (entered) lease_lua_leave(L, 1);
    return -1;
  }
  if (entered) lease_lua_leave(L, 1);
  lua_createtable(L, (int)(n < 0x7fffffff ? n : 0), 0);
  for (k = 0; k < n; k++) {
    if (fences[k] != 0) lua_pushinteger(L, (lua_Integer)fences[k]);
    else lua_pushboolean(L, 0);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 1;
}

/*
** db:claim_many(id, owners, now, ttl) -> { fence | false, ... }
**   id (string, non-empty); owners (sequence of non-empty strings, at
**   least one; no other keys); now, ttl (numbers, caller's unit) as for
**   claim.
** Claims job id for every owner at the same time, each on its own native
** thread with its own connection opened with this handle's path and
** options (at most 64 threads; more owners queue), released together by a
** barrier (contract step 8).  Returns a sequence as long as owners, in
** input order: the winner's slot holds the new fence, every other slot
** false.  On a missing, done or held job every slot is false.
** Raises a bad-argument error (naming owners[k] for a bad owner) before
** anything runs; "attempt to use a closed lease database";
** "lease.claim_many: ... [misuse]" for a handle on a private in-memory or
** temporary database (each thread would see an empty one of its own); and
** "lease.claim_many: <message> [<code>] (file "<path>")"
** when any thread's connection fails (busy past the timeout, readonly, ...),
** never false for it.
*/
int m_claim_many(lua_State *L) {
  callee c;
  lease_lua_checkdb(L, 1);
  callee_init(L, &c, "claim_many", 1);
  /* a private database (":memory:", "file::memory:", "") is refused by the
  ** core, as a "lease.claim_many: ... [misuse]" error naming the handle's file */
  if (claim_many(L, &c, NULL) < 0) return lua_error(L);
  return 1;
}

/*
** lease.claim_many(path, id, owners, now, ttl) -> { fence | false, ... }
**   path (string): the database file, opened with the default options.
** As db:claim_many, through a connection of its own that is closed before
** returning.  Raises as db:claim_many does, and "lease.open: ..." when the
** file cannot be opened.
*/
int l_claim_many(lua_State *L) {
  const char *path;
  callee c;
  lease_db *db;
  int base, n;
  callee_init(L, &c, "claim_many", 0);
  path = arg_path(L, &c, 1);
  if (strcmp(path, ":memory:") == 0)
    arg_error(L, &c, 1, "claim_many needs a database file, not a private in-memory one");
  /* check every argument before opening anything, as path_op does */
  arg_bytes(L, &c, 2, "id", NULL);
  check_owners(L, &c, 3);
  {
    double now, ttl;
    arg_time(L, &c, 4, &now, &ttl);
  }
  base = lua_gettop(L);
  db = open_handle(L, "claim_many", path, NULL);
  n = claim_many(L, &c, db);
  close_handle(L, base + 1);
  if (n < 0) return lua_error(L);
  return n;
}
