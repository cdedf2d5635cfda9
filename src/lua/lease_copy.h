/*
** lease_copy.h: copies of Lua values that can cross to another lua_State,
** possibly on another thread (prefix lcopy_).  Internal to the `lease`
** module; used by the threads module (lease_thread.c).  Shareable objects
** inside a value travel as references (lease_shared.h).
*/
#ifndef LEASE_COPY_H
#define LEASE_COPY_H

#include <stddef.h>

#include "lease_shared.h"

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
