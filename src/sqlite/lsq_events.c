/*
** lsq_events.c: the events ledger in the SQLite backend (lease.h, "The
** events ledger"; the SQL: lsq_queue_sql.h, LSQ_SQL_EVENT_*).  The core
** (src/core/lease_events.c) calls add and prune inside the transaction of
** the write being recorded (a body of lsq_write_txn, on the connection
** running it); read is a plain read.
*/
#include "lsq.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Bind a byte string, SQL NULL for s NULL. */
static void bind_opt(sqlite3_stmt *st, int i, const char *s, size_t len) {
  if (s) sqlite3_bind_text(st, i, s, (int)len, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

/* See lease_int.h: lease__backend.event. */
int lsq_event(lease_db *db, const lease__event *e, int64_t *seq) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_EVENT_ADD);
  int src;
  if (!st) return db->rc;
  if (isnan(e->at)) sqlite3_bind_null(st, 1);
  else sqlite3_bind_double(st, 1, e->at);
  sqlite3_bind_int(st, 2, e->op);
  bind_opt(st, 3, e->id, e->id_len);
  bind_opt(st, 4, e->queue, e->queue_len);
  bind_opt(st, 5, e->owner, e->owner_len);
  if (e->has_fence) sqlite3_bind_int64(st, 6, e->fence);
  else sqlite3_bind_null(st, 6);
  sqlite3_bind_int(st, 7, e->reason);
  src = sqlite3_step(st);
  if (src != SQLITE_DONE) {
    lsq_fail(db, LSQ(db)->sql, src);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return db->rc;
  }
  *seq = sqlite3_last_insert_rowid(LSQ(db)->sql);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);   /* drop the pointers to the caller's bytes */
  if (sqlite3_changes(LSQ(db)->sql) != 1)   /* another client's trigger skipped the insert */
    return lease__skipped(db, "the ledger's event of", e->id ? e->id : "", e->id ? e->id_len : 0);
  return LEASE_OK;
}

/* See lease_int.h: lease__backend.event_prune. */
int lsq_event_prune(lease_db *db, int64_t upto, double cutoff) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_EVENT_PRUNE);
  int src;
  if (!st) return db->rc;
  sqlite3_bind_int64(st, 1, upto);
  sqlite3_bind_double(st, 2, cutoff);
  src = sqlite3_step(st);
  if (src != SQLITE_DONE) lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? LEASE_OK : db->rc;
}

/* Append column col of st to db->buf at *used; its offset + 1 (0 for
** NULL) and length, or 0 with *failed set (LEASE_NOMEM recorded). */
static size_t keep_text(lease_db *db, sqlite3_stmt *st, int col, size_t *len, size_t *used,
                        int *failed) {
  const unsigned char *p = sqlite3_column_text(st, col);
  size_t n, at = *used;
  *len = 0;
  if (!p) return 0;
  n = (size_t)sqlite3_column_bytes(st, col);
  if (lease__reserve(db, at + n + 1) != LEASE_OK) {
    *failed = 1;
    return 0;
  }
  memcpy(db->buf + at, p, n);
  db->buf[at + n] = '\0';
  *used = at + n + 1;
  *len = n;
  return at + 1;
}

/* The pointer of an offset from keep_text. */
static const char *kept(lease_db *db, const char *off) {
  return off ? db->buf + ((uintptr_t)off - 1) : NULL;
}

/* See lease_int.h: lease__backend.events. */
int lsq_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out,
               int *count) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_EVENT_READ);
  size_t used = 0;
  int src, n = 0, i, failed = 0;
  if (!st) return db->rc;
  sqlite3_bind_int64(st, 1, f->since);
  bind_opt(st, 2, f->id, f->id_len);
  sqlite3_bind_int(st, 3, max);
  src = lsq_step(db, LSQ(db)->sql, st);
  while (src == SQLITE_ROW && n < max && !failed) {
    lease_event *e = &out[n++];
    memset(e, 0, sizeof *e);
    e->seq = sqlite3_column_int64(st, 0);
    e->at = sqlite3_column_double(st, 1);
    e->op = sqlite3_column_int(st, 2);
    e->id = (const char *)(uintptr_t)keep_text(db, st, 3, &e->id_len, &used, &failed);
    e->queue = (const char *)(uintptr_t)keep_text(db, st, 4, &e->queue_len, &used, &failed);
    e->owner = (const char *)(uintptr_t)keep_text(db, st, 5, &e->owner_len, &used, &failed);
    e->has_fence = sqlite3_column_type(st, 6) != SQLITE_NULL;
    e->fence = sqlite3_column_int64(st, 6);
    e->reason = sqlite3_column_int(st, 7);
    src = sqlite3_step(st);
  }
  if (failed) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return db->rc;
  }
  if (src == SQLITE_ROW) src = SQLITE_DONE;
  if (src != SQLITE_DONE) lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (src != SQLITE_DONE) return db->rc;
  for (i = 0; i < n; i++) {
    out[i].id = kept(db, out[i].id);
    out[i].queue = kept(db, out[i].queue);
    out[i].owner = kept(db, out[i].owner);
  }
  *count = n;
  return LEASE_OK;
}
