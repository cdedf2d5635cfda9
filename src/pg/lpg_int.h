/*
** lpg_int.h: what the PostgreSQL backend's files share beyond lease_int.h.
** Private to src/pg/.  lpg.c owns the connection and its session; the
** functions below give the other files (lpg_tx.c) its connection, its
** error recording and its guarded write, so that they run on the same
** session rules.
*/
#ifndef LPG_INT_H
#define LPG_INT_H

#include "lease_int.h"

#include <libpq-fe.h>

/* The handle's libpq connection (db->conn's). */
PGconn *lpg_pq(lease_db *db);

/* Where lpg_tx.c keeps its state of the handle's connection (NULL when
** opened); lpg_tx_close frees it when the handle closes. */
void **lpg_txstate(lease_db *db);
void lpg_tx_close(lease_db *db);

/* Record on db the failure of a statement (res may be NULL: libpq could not
** send it): the server's message and SQLSTATE, or libpq's.  Returns the
** recorded code. */
int lpg_fail_result(lease_db *db, const PGresult *res);

/* Run sql (no parameters, one or more statements); LEASE_OK or the failure
** recorded. */
int lpg_exec(lease_db *db, const char *sql);

/* Make the connection ready for a call (reset a broken one, roll back a
** transaction a failed call left open).  LEASE_OK or LEASE_IOERR. */
int lpg_ready(lease_db *db);

/* Roll back the open transaction, if any, keeping the recorded error. */
void lpg_rollback(lease_db *db);

/* The guarded write w (renew or complete: lpg_sql.h's statements) in the
** open transaction; *reason as lease.h says. */
int lpg_guarded(lease_db *db, const lease__write *w, int *reason);

/* lpg_tx.c: the backend's fenced side effects (lease_int.h). */
int lpg_with_lease(lease_db *db, lease_tx *tx, int *reason);
int lpg_tx_run(lease_tx *tx, const char *sql, const lease_value *params, int n,
               lease_row_fn *row, void *ctx, int64_t *changes);
int lpg_tx_write(lease_tx *tx, const lease__write *w, int *reason);
int lpg_fence_gate(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                   int64_t fence, int *reason);

#endif
