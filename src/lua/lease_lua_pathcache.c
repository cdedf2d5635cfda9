/*
** lease_lua_pathcache.c: the connections of the path functions
** (lease.<name>(path, ...)), kept per Lua state so that a call does not
** open and close one of its own.
**
** Each Lua state (the main one, and each lease.thread's own) has one cache
** in its registry: a full userdata holding up to PC_MAX connections, one
** per path string, each opened with the default options and tagged with
** the identity (st_dev, st_ino) of the file it holds.  Its __gc closes them
** all, so they close when the state closes.
**
** A call takes its path's connection out of the cache (lb_path_take) and
** holds it in a userdata of its own on the stack until it is done
** (lb_path_give), so:
**   - the connection is used only if stat(path) still names the file it
**     holds; otherwise (the file renamed, deleted, or replaced by another)
**     it is closed first and the path opened again, which creates a deleted
**     file as an uncached call would;
**   - an error raised by Lua itself (out of memory) leaves the connection
**     to the holder's __gc instead of in the cache;
**   - a path function called from a finalizer while a call on the same
**     path is running finds no cached connection and opens its own, never
**     the one whose results are being read;
**   - a call that fails with a database error closes its connection rather
**     than returning it, so no connection left in an unknown state (after
**     busy, ioerr, full...) is used again.
** A connection is cached only when it holds a file and stat(path) names
** it: in-memory and temporary databases (":memory:", "") and "file:" URIs
** are opened and closed by each call.
*/
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "lease_lua_int.h"

#define PC_CACHE_KEY "lease.path_cache"         /* the cache's registry key */
#define PC_CACHE_MT "lease.path_connections"   /* the cache's metatable */
#define PC_HOLD_MT "lease.path_connection"     /* a call's holder */
#define PC_MAX 16                              /* connections per state, at most */
#define PC_FDS_EACH 64                         /* one connection per 64 descriptors allowed */

/* One cached connection: NULL db means a free slot. */
typedef struct pc_slot {
  lease_db *db;
  uint64_t dev, ino;      /* the file it holds */
  unsigned long used;     /* the cache's clock at its last use (LRU) */
} pc_slot;

/* A state's cache. */
typedef struct pc_cache {
  pc_slot slot[PC_MAX];
  int cap;                /* how many slots may be used: 1 to PC_MAX */
  unsigned long clock;    /* counts calls that returned a connection */
} pc_cache;

/* A call's connection while it runs: owned by the holder until given back. */
typedef struct pc_hold {
  lease_db *db;
  pc_cache *cache;        /* the state's cache (the registry keeps it alive) */
  uint64_t dev, ino;      /* the file db holds, when keep */
  int keep;               /* 1: return db to the cache after a successful call */
} pc_hold;

/* ===================================================================== */
/* The cache and the holder                                               */
/* ===================================================================== */

/* __gc of the cache: close every connection in it. */
static int cache_gc(lua_State *L) {
  pc_cache *c = luaL_checkudata(L, 1, PC_CACHE_MT);
  int i;
  for (i = 0; i < PC_MAX; i++) {
    lease_close(c->slot[i].db);
    c->slot[i].db = NULL;
  }
  return 0;
}

/* __gc of a holder: close a connection a call did not give back (its
** call ended by an error raised by Lua). */
static int hold_gc(lua_State *L) {
  pc_hold *h = luaL_checkudata(L, 1, PC_HOLD_MT);
  lease_close(h->db);
  h->db = NULL;
  return 0;
}

/* How many connections a state may cache: PC_MAX, fewer when the process
** may open few descriptors (each connection holds three: the file, its
** -wal and its -shm). */
static int cache_cap(void) {
  struct rlimit r;
  rlim_t n;
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return PC_MAX;
  n = r.rlim_cur / PC_FDS_EACH;
  if (n < 1) return 1;
  return n > PC_MAX ? PC_MAX : (int)n;
}

/* The state's cache, created on first use; leaves the stack as it was. */
static pc_cache *get_cache(lua_State *L) {
  pc_cache *c;
  lua_getfield(L, LUA_REGISTRYINDEX, PC_CACHE_KEY);
  c = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (c) return c;
  c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->cap = cache_cap();
  if (luaL_newmetatable(L, PC_CACHE_MT)) {
    lua_pushcfunction(L, cache_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, PC_CACHE_KEY);
  return c;
}

/* Push a new, empty holder on the stack. */
static pc_hold *new_hold(lua_State *L, pc_cache *c) {
  pc_hold *h = lua_newuserdatauv(L, sizeof *h, 0);
  memset(h, 0, sizeof *h);
  h->cache = c;
  if (luaL_newmetatable(L, PC_HOLD_MT)) {
    lua_pushcfunction(L, hold_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return h;
}

/* ===================================================================== */
/* Finding, checking and keeping connections                              */
/* ===================================================================== */

/* The slot of c holding a connection to path, or -1. */
static int find_slot(const pc_cache *c, const char *path) {
  int i;
  for (i = 0; i < PC_MAX; i++)
    if (c->slot[i].db && strcmp(lease_path(c->slot[i].db), path) == 0) return i;
  return -1;
}

/* 1 when stat(path) names the file (dev, ino). */
static int names_file(const char *path, uint64_t dev, uint64_t ino) {
  struct stat st;
  return stat(path, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

/* After opening h->db on path: keep it for later calls when it holds a
** file (lease_file_id: not an in-memory or temporary database) and stat()
** of path names that very file (not so for a "file:" URI, nor when the
** path was replaced while it was opened). */
static void identify(pc_hold *h, const char *path) {
  h->keep = lease_file_id(h->db, &h->dev, &h->ino) == LEASE_OK && names_file(path, h->dev, h->ino);
}

/* See lease_lua_int.h. */
lease_db *lb_path_take(lua_State *L, const char *op, const char *path) {
  pc_cache *c = get_cache(L);
  pc_hold *h = new_hold(L, c);
  lease_db *db = NULL;
  int i = find_slot(c, path), rc;
  if (i >= 0) {
    pc_slot *s = &c->slot[i];
    h->db = s->db;
    h->dev = s->dev;
    h->ino = s->ino;
    s->db = NULL;
    if (names_file(path, h->dev, h->ino)) {
      h->keep = 1;
      return h->db;
    }
    /* The file moved away: close before opening what the path names now. */
    lease_close(h->db);
    h->db = NULL;
  }
  rc = lease_open(path, NULL, &db);
  h->db = db;   /* the holder closes it, also when pushing the error fails */
  if (rc != LEASE_OK) {
    if (!db) luaL_error(L, "lease.%s: out of memory [nomem]", op);
    lb_push_db_error(L, db, op);
    lease_close(db);
    h->db = NULL;
    lua_error(L);
  }
  identify(h, path);
  return db;
}

/* See lease_lua_int.h.  Uses no Lua function: nothing here can raise. */
void lb_path_give(lua_State *L, int idx, int ok) {
  pc_hold *h = lua_touserdata(L, idx);
  pc_cache *c = h->cache;
  lease_db *db = h->db;
  pc_slot *s = NULL;
  int i;
  h->db = NULL;
  if (!db) return;
  if (!ok || !h->keep || find_slot(c, lease_path(db)) >= 0) {
    /* failed, not a file, or a nested call cached this path meanwhile */
    lease_close(db);
    return;
  }
  for (i = 0; i < c->cap; i++) {
    if (!c->slot[i].db) {
      s = &c->slot[i];
      break;
    }
    if (!s || c->slot[i].used < s->used) s = &c->slot[i];
  }
  if (s->db) lease_close(s->db);   /* all in use: the least recently used goes */
  s->db = db;
  s->dev = h->dev;
  s->ino = h->ino;
  s->used = ++c->clock;
}
