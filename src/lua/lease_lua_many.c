/***
claim_many: one job, many owners at once, on native threads (contract step 8).
@module lease
*/
/*
** lease_lua_many.c: the claim_many record (contract step 8), over the
** core's lease_claim_many (lease_many.c), which runs the threads.  Reached
** as db:claim_many(id, owners, now, ttl) and lease.claim_many(path, id,
** owners, now, ttl) through lease_lua.c's op_method and op_path.
*/
#include <string.h>

#include "lease_lua_int.h"

/*
** Check that owners (at stack index 3) is a non-empty sequence of non-empty
** strings, with no other keys, and return its length.  Raises
** "bad argument #i to '<f>' (owners[k] must be a non-empty string, got ...)"
** naming the first bad position, or saying what is wrong with the table.
*/
static int check_owners(lua_State *L, const lb_callee *c) {
  const lb_arg *a = LB_ARG(c, 3, "owners");
  int n, k;
  if (lua_type(L, 3) != LUA_TTABLE) lb_fail(L, 3, a, "a table of strings");
  n = lb_check_sequence(L, 3, a, INT32_MAX / 4);
  if (n == 0) lb_error(L, a, "owners must be a non-empty sequence of strings, got an empty one");
  for (k = 1; k <= n; k++) {
    lb_arg entry = {c, 3, "owners[%d]", k};
    lua_rawgeti(L, 3, k);
    lb_check_string(L, -1, &entry, 0, NULL);
    lua_pop(L, 1);
  }
  return n;
}

/***
Claim one job for many owners at the same time, each on its own native
thread with its own connection opened with this handle's path and options
(at most 64 threads; more owners queue), released together by a barrier
(contract step 8).  On a missing, done or held job every slot is false.
@function db:claim_many
@within db
@tparam string id the job (non-empty)
@tparam {string,...} owners non-empty strings, at least one; no other keys
@tparam number now as for claim
@tparam number ttl as for claim
@treturn {integer|false,...} as long as owners, in input order: the winner's
  slot holds the new fence, every other slot false
@raise a bad-argument error (naming `owners[k]` for a bad owner) before
  anything runs; `lease.claim_many: ... [misuse]` for a handle on a private
  in-memory or temporary database (each thread would see an empty one of its
  own); `lease.claim_many: <message> [<code>] (file "<path>")` when any
  thread's connection fails (busy past the timeout, readonly...), never false
  for it.
*/
static void check_claim_many(lua_State *L, const lb_callee *c, lb_args *a) {
  const char **owners;
  size_t *lens;
  int64_t *fences;
  char *mem;
  int k;
  a->id = lb_check_string(L, 2, LB_ARG(c, 2, "id"), 0, &a->id_len);
  a->n = check_owners(L, c);
  lb_check_time(L, c, 4, &a->now, &a->ttl);
  /* one block: fences first (8-byte aligned), then pointers, then lengths */
  mem = lua_newuserdatauv(L, (size_t)a->n * (sizeof *owners + sizeof *lens + sizeof *fences), 0);
  a->mem = mem;
  fences = (int64_t *)(void *)mem;
  owners = (const char **)(void *)(fences + a->n);
  lens = (size_t *)(void *)(owners + a->n);
  for (k = 0; k < a->n; k++) {
    lua_rawgeti(L, 3, k + 1);
    owners[k] = lua_tolstring(L, -1, &lens[k]);   /* stays alive: owners holds it */
    lua_pop(L, 1);
  }
}

/* The core runs the claims on its threads. */
static int run_claim_many(lease_db *db, lb_args *a) {
  int64_t *fences = a->mem;
  const char **owners = (const char **)(void *)(fences + a->n);
  size_t *lens = (size_t *)(void *)(owners + a->n);
  return lease_claim_many(db, a->id, a->id_len, owners, lens, (size_t)a->n, a->now, a->ttl,
                          fences, NULL);
}

/* The sequence: the winner's fence, false elsewhere. */
static int push_claim_many(lua_State *L, lb_args *a) {
  const int64_t *fences = a->mem;
  int k;
  lua_createtable(L, a->n, 0);
  for (k = 0; k < a->n; k++) {
    if (fences[k] == 0) lua_pushboolean(L, 0);
#if !LB_INTEGERS
    else if (fences[k] > LB_EXACT_MAX) {
      lua_pushliteral(L, "lease.claim_many: the fence is above 2^53, which this Lua cannot "
                      "hold exactly (its numbers are doubles); the stored row keeps it");
      return -1;
    }
#endif
    else lua_pushinteger(L, (lua_Integer)fences[k]);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* See lease_lua_int.h. */
const lb_op lb_op_claim_many = {"claim_many", 1, 1, check_claim_many, run_claim_many,
                                push_claim_many};
