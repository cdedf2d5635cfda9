/*
** lsq_schedule.c: schedules on SQLite (lease.h, "Schedules"), the table
** lease_schedules (its SQL: lsq_schedule_sql.h; made by the schema step
** SCHEDULES, lsq_schema_sql.h).  A tick reads the due schedules outside
** any transaction (most ticks find none and take no lock: such a tick only
** checks its now against the clock mark), then moves each in one write
** transaction with an UPDATE guarded by next_at still being the value
** read, and enqueues its job only when that UPDATE moved the
** row: of several handles that read the same due row, one enqueues.
*/
#include "lsq.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The longest job id of a tick: a name, "@", a tick as "%.17g" or an integer. */
#define ID_MAX (LEASE_SCHEDULE_NAME_MAX + 32)

/* Prepare text on the connection the handle writes through now (the
** group's leader's inside a shared transaction).  NULL on failure, recorded. */
static sqlite3_stmt *prepare(lease_db *db, const char *text) {
  sqlite3_stmt *st = NULL;
  int src = sqlite3_prepare_v2(LSQ(db)->sql, text, -1, &st, NULL);
  if (src != SQLITE_OK) {
    lsq_fail(db, LSQ(db)->sql, src);
    return NULL;
  }
  return st;
}

/* Run st (no rows expected) inside a write body and finalize it.
** LEASE_OK or the failure recorded. */
static int run_final(lease_db *db, sqlite3_stmt *st) {
  int src = sqlite3_step(st), rc = LEASE_OK;
  if (src != SQLITE_DONE) rc = lsq_fail(db, LSQ(db)->sql, src);
  sqlite3_finalize(st);
  return rc;
}

/* ===================================================================== */
/* Writes                                                                 */
/* ===================================================================== */

/* Write body of lsq_s_schedule: ctx the checked schedule. */
static int put_body(lease_db *db, void *ctx) {
  const lease_schedule_spec *s = ctx;
  sqlite3_stmt *st = prepare(db, LSQ_SQL_SCHEDULE_PUT);
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, s->name, s->name_len);
  if (s->cron) {
    sqlite3_bind_null(st, 2);
    lsq_bind_bytes(st, 3, s->cron, s->cron_len);
  } else {
    sqlite3_bind_double(st, 2, s->every);
    sqlite3_bind_null(st, 3);
  }
  lsq_bind_bytes(st, 4, s->queue, s->queue_len);
  if (s->payload) sqlite3_bind_blob(st, 5, s->payload, (int)s->payload_len, SQLITE_STATIC);
  else sqlite3_bind_null(st, 5);
  sqlite3_bind_int64(st, 6, s->priority);
  sqlite3_bind_int64(st, 7, s->max_attempts);
  sqlite3_bind_double(st, 8, s->created_at);
  sqlite3_bind_double(st, 9, s->next_at);
  if (run_final(db, st) != LEASE_OK) return db->rc;
  /* one row, unless another client's trigger skipped the insert */
  if (sqlite3_changes(LSQ(db)->sql) != 1)
    return lease__skipped(db, "schedule of", s->name, s->name_len);
  return LEASE_OK;
}

/* See lease.h: lease_schedule. */
int lsq_s_schedule(lease_db *db, const lease_schedule_spec *s) {
  lease_schedule_spec copy = *s;
  return lsq_write_txn(db, put_body, &copy);
}

typedef struct delete_ctx {
  const char *name;
  size_t name_len;
  int found;
} delete_ctx;

/* Write body of lsq_s_unschedule: a delete that changed no row of a
** schedule still there (LSQ_SQL_SCHEDULE_AT, next_at NULL) was skipped by
** another client's trigger, a failure. */
static int delete_body(lease_db *db, void *ctx) {
  delete_ctx *d = ctx;
  sqlite3_stmt *st = prepare(db, LSQ_SQL_SCHEDULE_DELETE);
  int src;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, d->name, d->name_len);
  if (run_final(db, st) != LEASE_OK) return db->rc;
  if ((d->found = sqlite3_changes(LSQ(db)->sql) > 0)) return LEASE_OK;
  if (!(st = prepare(db, LSQ_SQL_SCHEDULE_AT))) return db->rc;
  lsq_bind_bytes(st, 1, d->name, d->name_len);
  src = sqlite3_step(st);
  sqlite3_finalize(st);
  if (src == SQLITE_DONE) return LEASE_OK;
  if (src != SQLITE_ROW) return lsq_fail(db, LSQ(db)->sql, src);
  return lease__skipped(db, "unschedule of", d->name, d->name_len);
}

/* See lease.h: lease_unschedule. */
int lsq_s_unschedule(lease_db *db, const char *name, size_t name_len, int *found) {
  delete_ctx d = {name, name_len, 0};
  int rc = lsq_write_txn(db, delete_body, &d);
  *found = d.found;
  return rc;
}

/* ===================================================================== */
/* Reads                                                                  */
/* ===================================================================== */

/* Rows read, their strings in one block (offsets until the block is
** final, then pointers: fix_rows). */
typedef struct rows {
  lease_schedule_spec *s;
  size_t (*off)[4];     /* name, cron, queue, payload: offset + 1, 0 for NULL */
  int n;
  char *mem;
  size_t used, cap;
} rows;

/* Append column i of st (len bytes) to r's block; its offset + 1, or 0
** for NULL, into *off.  LEASE_OK or LEASE_NOMEM. */
static int keep_column(lease_db *db, rows *r, sqlite3_stmt *st, int i, size_t *off) {
  const void *p;
  size_t len;
  if (sqlite3_column_type(st, i) == SQLITE_NULL) {
    *off = 0;
    return LEASE_OK;
  }
  p = sqlite3_column_blob(st, i);
  len = (size_t)sqlite3_column_bytes(st, i);
  if (r->used + len + 1 > r->cap) {
    size_t cap = 2 * (r->used + len + 1) + 256;
    char *m = realloc(r->mem, cap);
    if (!m) return lease__fail(db, LEASE_NOMEM, "out of memory");
    r->mem = m;
    r->cap = cap;
  }
  if (len) memcpy(r->mem + r->used, p, len);
  r->mem[r->used + len] = '\0';
  *off = r->used + 1;
  r->used += len + 1;
  return LEASE_OK;
}

/* A column that may be NULL as a double (NaN for NULL). */
static double column_time(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* Read the rows of st (columns LSQ_SQL_SCHEDULE_COLUMNS), at most max,
** into r (r->s and r->off hold max).  LEASE_OK or the failure recorded. */
static int read_rows(lease_db *db, sqlite3_stmt *st, int max, rows *r) {
  int src = SQLITE_DONE, rc;
  while (r->n < max && (src = lsq_step(db, LSQ(db)->sql, st)) == SQLITE_ROW) {
    lease_schedule_spec *s = &r->s[r->n];
    size_t *off = r->off[r->n];
    lease_schedule_spec_default(s);
    if ((rc = keep_column(db, r, st, 0, &off[0])) != LEASE_OK ||
        (rc = keep_column(db, r, st, 2, &off[1])) != LEASE_OK ||
        (rc = keep_column(db, r, st, 3, &off[2])) != LEASE_OK ||
        (rc = keep_column(db, r, st, 4, &off[3])) != LEASE_OK)
      return rc;
    s->name_len = (size_t)sqlite3_column_bytes(st, 0);
    s->every = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 1);
    s->cron_len = (size_t)sqlite3_column_bytes(st, 2);
    s->queue_len = (size_t)sqlite3_column_bytes(st, 3);
    s->payload_len = (size_t)sqlite3_column_bytes(st, 4);
    s->priority = sqlite3_column_int64(st, 5);
    s->max_attempts = sqlite3_column_int64(st, 6);
    s->created_at = column_time(st, 7);
    s->next_at = column_time(st, 8);
    s->last_at = column_time(st, 9);
    r->n++;
  }
  if (r->n < max && src != SQLITE_DONE) return lsq_fail(db, LSQ(db)->sql, src);
  return LEASE_OK;
}

/* Point r's string fields into base (r's block, or a copy of it). */
static void fix_rows(rows *r, const char *base) {
  int i;
  for (i = 0; i < r->n; i++) {
    size_t *off = r->off[i];
    lease_schedule_spec *s = &r->s[i];
    s->name = off[0] ? base + off[0] - 1 : "";
    s->cron = off[1] ? base + off[1] - 1 : NULL;
    s->queue = off[2] ? base + off[2] - 1 : "default";
    if (!off[2]) s->queue_len = 7;
    s->payload = off[3] ? base + off[3] - 1 : NULL;
  }
}

/* 1 when the table lease_schedules exists: the file's schema has the step
** SCHEDULES (lease_schema.h), else, on a handle that may not write to an
** older file, when a writer has made it since (looked up at each call). */
static int have_table(lease_db *db, int *rc) {
  int found = 0;
  *rc = LEASE_OK;
  if (LSQ(db)->version > LEASE__STEP_SCHEDULES) return 1;
  *rc = lsq_query(db, LSQ(db)->sql, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                  "'lease_schedules'", lsq_found, &found);
  return found;
}

/* Read into r (max rows) the schedules text selects, binding ?1 as a
** number (now) when due, else as a text (a name; NULL: ''), and ?2 max. */
static int read_query(lease_db *db, const char *text, int due, const char *key, size_t key_len,
                      double now, int max, rows *r) {
  sqlite3_stmt *st = prepare(db, text);
  int rc;
  if (!st) return db->rc;
  if (due) sqlite3_bind_double(st, 1, now);
  else lsq_bind_bytes(st, 1, key ? key : "", key ? key_len : 0);
  sqlite3_bind_int(st, 2, max);
  rc = read_rows(db, st, max, r);
  sqlite3_finalize(st);
  return rc;
}

/* Allocate r for max rows. */
static int rows_alloc(lease_db *db, rows *r, int max) {
  memset(r, 0, sizeof *r);
  r->s = malloc((size_t)max * sizeof *r->s);
  r->off = malloc((size_t)max * sizeof *r->off);
  if (!r->s || !r->off) return lease__fail(db, LEASE_NOMEM, "out of memory");
  return LEASE_OK;
}

static void rows_free(rows *r) {
  free(r->s);
  free(r->off);
  free(r->mem);
}

/* See lease.h: lease_schedules.  The strings go to db->buf. */
int lsq_s_schedules(lease_db *db, const char *after, size_t after_len, int max,
                    lease_schedule_spec *out, int *count) {
  rows r;
  int rc;
  if (!have_table(db, &rc)) return rc;
  if ((rc = rows_alloc(db, &r, max)) == LEASE_OK)
    rc = read_query(db, LSQ_SQL_SCHEDULE_LIST, 0, after, after_len, 0, max, &r);
  if (rc == LEASE_OK && (rc = lease__reserve(db, r.used + 1)) == LEASE_OK) {
    if (r.used) memcpy(db->buf, r.mem, r.used);
    fix_rows(&r, db->buf);
    memcpy(out, r.s, (size_t)r.n * sizeof *out);
    *count = r.n;
  }
  rows_free(&r);
  return rc;
}

/* ===================================================================== */
/* Tick                                                                   */
/* ===================================================================== */

typedef struct tick_ctx {
  rows *r;
  double now;
  double *tick, *next;   /* per row: lease__schedule_due's */
  int *added;            /* per row: 1 when its job was inserted */
} tick_ctx;

/* After a move of s that changed no row, inside the tick's write
** transaction: LEASE_OK when another tick moved s first (its next_at is
** no longer the one read), else LEASE_MISMATCH recorded (another client's
** trigger skipped the move). */
static int moved_by_another(lease_db *db, const lease_schedule_spec *s) {
  sqlite3_stmt *st = prepare(db, LSQ_SQL_SCHEDULE_AT);
  int src;
  if (!st) return db->rc;
  lsq_bind_bytes(st, 1, s->name, s->name_len);
  sqlite3_bind_double(st, 2, s->next_at);
  src = sqlite3_step(st);
  sqlite3_finalize(st);
  if (src == SQLITE_DONE) return LEASE_OK;
  if (src != SQLITE_ROW) return lsq_fail(db, LSQ(db)->sql, src);
  return lease__skipped(db, "tick's move of schedule", s->name, s->name_len);
}

/* Write body of lsq_s_tick: for each due row, the guarded move, and the
** job only when the move took (moved_by_another when it did not). */
static int tick_body(lease_db *db, void *ctx) {
  tick_ctx *t = ctx;
  sqlite3_stmt *st = prepare(db, LSQ_SQL_SCHEDULE_MOVE);
  int i, rc = LEASE_OK;
  if (!st) return db->rc;
  for (i = 0; i < t->r->n && rc == LEASE_OK; i++) {
    const lease_schedule_spec *s = &t->r->s[i];
    lease_new_job j;
    char id[ID_MAX];
    int src;
    t->added[i] = 0;
    sqlite3_bind_double(st, 1, t->next[i]);
    sqlite3_bind_double(st, 2, t->tick[i]);
    lsq_bind_bytes(st, 3, s->name, s->name_len);
    sqlite3_bind_double(st, 4, s->next_at);
    src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE) {
      rc = lsq_fail(db, LSQ(db)->sql, src);
      break;
    }
    if (sqlite3_changes(LSQ(db)->sql) != 1) {
      rc = moved_by_another(db, s);
      continue;
    }
    lease_new_job_default(&j);
    j.id = id;
    j.id_len = (size_t)lease__schedule_job_id(s, t->tick[i], id, sizeof id);
    j.payload = s->payload;
    j.payload_len = s->payload_len;
    j.queue = s->queue;
    j.queue_len = s->queue_len;
    j.priority = s->priority;
    j.max_attempts = s->max_attempts;
    rc = lsq_q_enqueue_in(db, &j, 1, &t->added[i]);
  }
  sqlite3_finalize(st);
  return rc;
}

/* See lease.h: lease_tick. */
int lsq_s_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
               int *more) {
  tick_ctx t;
  rows r;
  size_t need = 0, at = 0;
  int i, k, rc;
  char id[ID_MAX];
  if (!have_table(db, &rc)) return rc;
  memset(&t, 0, sizeof t);
  if ((rc = rows_alloc(db, &r, max)) != LEASE_OK) goto done;
  if ((rc = read_query(db, LSQ_SQL_SCHEDULE_DUE, 1, NULL, 0, now, max, &r)) != LEASE_OK) goto done;
  *more = r.n == max;
  if (r.n == 0) {
    rc = lsq_clock_checked(db);
    goto done;
  }
  fix_rows(&r, r.mem);
  t.r = &r;
  t.now = now;
  t.tick = malloc((size_t)r.n * sizeof *t.tick);
  t.next = malloc((size_t)r.n * sizeof *t.next);
  t.added = calloc((size_t)r.n, sizeof *t.added);
  if (!t.tick || !t.next || !t.added) {
    rc = lease__fail(db, LEASE_NOMEM, "out of memory");
    goto done;
  }
  for (i = 0; i < r.n; i++) {
    int e = lease__schedule_due(&r.s[i], now, &t.tick[i], &t.next[i]);
    if (e) {
      rc = lease__schedule_due_failed(db, &r.s[i], now, e);
      goto done;
    }
  }
  if ((rc = lsq_write_txn(db, tick_body, &t)) != LEASE_OK) goto done;
  for (i = 0; i < r.n; i++)
    if (t.added[i]) need += (size_t)lease__schedule_job_id(&r.s[i], t.tick[i], id, sizeof id) + 1;
  if ((rc = lease__reserve(db, need + 1)) != LEASE_OK) goto done;
  for (i = 0, k = 0; i < r.n; i++) {
    int len;
    if (!t.added[i]) continue;
    len = lease__schedule_job_id(&r.s[i], t.tick[i], db->buf + at, need + 1 - at);
    ids[k] = db->buf + at;
    id_lens[k++] = (size_t)len;
    at += (size_t)len + 1;
  }
  *count = k;
done:
  free(t.tick);
  free(t.next);
  free(t.added);
  rows_free(&r);
  return rc;
}
