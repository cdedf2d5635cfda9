/*
** lease_thread.h: what lease_thread.c (threads, barriers, channels) and
** lease_copy.c (copying values between Lua states) share.  Internal to the
** `lease` module.
*/
#ifndef LEASE_THREAD_H
#define LEASE_THREAD_H

#include <stdatomic.h>
#include <stddef.h>

#include <lua.h>

/* ===================================================================== */
/* Shareable objects: barriers and channels                               */
/* ===================================================================== */

/* The kinds of shareable object, and their metatable names (__name). */
enum { LSHARED_BARRIER = 0, LSHARED_CHANNEL = 1, LSHARED_KINDS };
#define BARRIER_MT "lease.barrier"
#define CHANNEL_MT "lease.channel"

/*
** The head of every shareable C object.  Each Lua state holding it (one
** userdata per state) and each copy in flight (an lcopy) owns one
** reference; the last lshared_unref destroys it, whatever thread that is.
*/
typedef struct lshared {
  atomic_int refs;
  int kind;                                   /* LSHARED_BARRIER, ... */
  void (*destroy)(struct lshared *self);      /* frees the object */
} lshared;

/* lshared_ref: take one more reference to o. */
void lshared_ref(lshared *o);
/* lshared_unref: drop a reference to o; the last one destroys it. */
void lshared_unref(lshared *o);
/* lshared_test: the object behind the barrier or channel userdata at i,
** or NULL when the value at i is something else. */
lshared *lshared_test(lua_State *L, int i);
/* lshared_push: push a new userdata for o in L (taking a reference),
** creating the kind's metatable in L when it is missing. */
void lshared_push(lua_State *L, lshared *o);

/* ===================================================================== */
/* Copies of Lua values that can cross to another state (lease_copy.c)    */
/* ===================================================================== */

/* How deep tables may nest in a copied value. */
#define LCOPY_MAXDEPTH 200

/*
** A sequence of Lua values encoded into plain memory (malloc, not any
** state's allocator), with the references it holds to shareable objects.
** Made in one state, read into another, possibly on another thread.
*/
typedef struct lcopy {
  char *data;
  size_t len, cap;
  lshared **refs;          /* one reference held per entry */
  size_t nrefs, refcap;
  int count;               /* how many values */
} lcopy;

/*
** lcopy_encode: copy the values at stack indices first..last of L into a
** new lcopy.  On success returns it (owned by the caller: lcopy_free) and
** sets *bad to 0.  When a value cannot be copied, returns NULL, sets *bad
** to its position counted from 1 (first is 1) and pushes the message
** "cannot copy <what>[ at t<path>]" (t stands for that value).  Raises
** only on memory errors (leaving nothing behind).
*/
lcopy *lcopy_encode(lua_State *L, int first, int last, int *bad);

/*
** lcopy_decode: push the values of m onto L; returns how many.  Raises on
** memory errors; m is not consumed (the caller frees it).
*/
int lcopy_decode(lua_State *L, const lcopy *m);

/* lcopy_free: free m and drop the references it holds.  m may be NULL. */
void lcopy_free(lcopy *m);

/*
** lcopy_newbox: push a userdata box holding an lcopy pointer (NULL at
** first) and return the slot.  Whatever the slot holds when the box is
** collected is freed, so a Lua error raised while a copy is in use cannot
** leak it.  Make the box before taking ownership of a copy, then put the
** copy in the slot.
*/
lcopy **lcopy_newbox(lua_State *L);

#endif
