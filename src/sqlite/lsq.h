/*
** lsq.h: the SQLite backend's internal header, shared by its files
** (lsq_conn.c: errors, waiting, statements; lsq_open.c: opening and the
** file and schema checks; lsq_ops.c: the operations).  Every name carries
** the prefix lsq_.  The core reaches the backend only through
** lease__sqlite (lease_int.h).
*/
#ifndef LSQ_H
#define LSQ_H

#include "lease_int.h"
#include "lsq_sql.h"

#include <sqlite3.h>

/* The cached statements, from lsq_sql.h's list. */
enum {
#define LSQ_ST_ENUM_(name, sql) LSQ_ST_##name,
  LSQ_STATEMENT_MAP(LSQ_ST_ENUM_)
#undef LSQ_ST_ENUM_
  LSQ_ST_COUNT
};

/* A connection: db->conn of a handle whose backend is SQLite's. */
typedef struct lsq_conn {
  sqlite3 *sql;                     /* NULL until opened */
  sqlite3_stmt *stmt[LSQ_ST_COUNT]; /* prepared on first use */
  int busy_timeout_ms;              /* how long a wait for a lock lasts */
  double busy_since;                /* monotonic ms when the current wait began */
  int waiting;                      /* 1 while lsq_step's own wait owns busy_since */
  int handler_calls;                /* busy handler calls during the current step */
  int gave_up;                      /* the busy handler gave up during the current step */
  int indexed;                      /* lease_jobs_pending exists (set by the schema check) */
  int wal_given;                    /* the file came with a -wal holding frames */
} lsq_conn;

/* The connection of db. */
#define LSQ(db) ((lsq_conn *)(db)->conn)

/*
** lsq_fail: record on db a failure that SQLite reported on connection
** `sql` (may be NULL) with code src: the engine's code (LEASE_FULL for an
** I/O error whose errno says the storage would not grow), SQLite's message
** and extended code.  Must run before anything else touches `sql`.
** Returns the recorded code.
*/
int lsq_fail(lease_db *db, sqlite3 *sql, int src);

/* lsq_busy_handler: SQLite's busy handler for db's connection (arg is db). */
int lsq_busy_handler(void *arg, int count);

/*
** lsq_step: sqlite3_step(st), waiting out locks SQLite reports without
** calling the busy handler (see lsq_conn.c), up to the busy timeout.
** Returns SQLite's code of the last step.
*/
int lsq_step(lease_db *db, sqlite3 *sql, sqlite3_stmt *st);

/* lsq_stmt: db's cached statement `which`, prepared on first use; NULL on
** failure (recorded on db). */
sqlite3_stmt *lsq_stmt(lease_db *db, int which);

/* lsq_run: step the cached statement `which`, which returns no row
** (BEGIN, COMMIT...), and reset it.  LEASE_OK or the failure recorded. */
int lsq_run(lease_db *db, int which);

/* lsq_rollback: roll back whatever transaction is open, keeping the
** recorded error. */
void lsq_rollback(lease_db *db);

/* A row callback of lsq_query: LEASE_OK to go on, LSQ_STOP to stop with
** success, or a failure already recorded on db (stops, and is returned). */
typedef int lsq_row_fn(lease_db *db, sqlite3_stmt *st, void *ctx);
#define LSQ_STOP (-1)

/*
** lsq_query: prepare sql on connection `sql`, step through its rows calling
** row(db, st, ctx) on each (row may be NULL: rows are skipped), finalize.
** The statement is prepared and run again when SQLite reports a lock it
** did not wait out itself, before the first row, up to the busy timeout
** (lsq_step).  Returns LEASE_OK or the recorded failure.
*/
int lsq_query(lease_db *db, sqlite3 *sql, const char *text, lsq_row_fn *row, void *ctx);

/* lsq_exec: lsq_query on db's own connection, rows skipped. */
int lsq_exec(lease_db *db, const char *text);

/* lsq_open: the backend's open (lease__backend.open): lsq_open.c. */
int lsq_open(lease_db *db);

/* lsq_close: finalize the statements and close the connection. */
void lsq_close(lease_db *db);

/* lsq_file_id: the backend's file_id (lease_file_id): lsq_open.c. */
int lsq_file_id(lease_db *db, uint64_t *dev, uint64_t *ino);

#endif
