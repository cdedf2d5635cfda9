/*
** lease_int.h: what the C files of the core share beyond lease.h.
** Not installed, not part of the API: the names carry a double underscore
** (libuv's uv__ convention) so they never look public.
*/
#ifndef LEASE_INT_H
#define LEASE_INT_H

#include "lease.h"

/*
** lease__begin: start a call on db as every public function does: clear
** the error state, then refuse a closed handle.  Returns LEASE_OK, or
** LEASE_MISUSE (db NULL, or closed: the message says so).
*/
int lease__begin(lease_db *db);

/*
** lease__options: the options db was opened with (after defaults were
** applied), so another connection can be opened the same way.
*/
void lease__options(const lease_db *db, lease_options *out);

/*
** lease__set_error: record a failure on db as if the last call had failed
** with result code rc, SQLite's extended code xrc (or 0) and message msg.
** Returns rc.  Used to carry an error from another connection (a
** claim_many worker's) back to the caller's handle.
*/
int lease__set_error(lease_db *db, int rc, int xrc, const char *msg);

/*
** lease__private: 1 when db's database is private to its connection (an
** in-memory or temporary database, however it was named: ":memory:",
** "file::memory:", "file:x?mode=memory", ""), so another connection
** opened on the same path would see a different, empty one.  Else 0.
*/
int lease__private(const lease_db *db);

#endif
