/*
** lpg_schedule.c: schedules on PostgreSQL (lease.h, "Schedules"; the SQL:
** lpg_schedule_sql.h), as the SQLite backend's (src/sqlite/lsq_schedule.c):
** a tick reads the due schedules outside any transaction, then in one
** transaction moves each with an UPDATE guarded by next_at still being the
** value read, and enqueues its job only when that UPDATE moved the row.
** The rows are moved in name order, so two ticks lock them in one order.
*/
#include "lpg_int.h"
#include "lpg_schedule_sql.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The longest job id of a tick (lsq_schedule.c's ID_MAX). */
#define ID_MAX (LEASE_SCHEDULE_NAME_MAX + 32)

static PGresult *srun(lease_db *db, int which, const params *p) {
  return lpg_stmt_run(db, which, p);
}

/* See lpg_int.h. */
int lpg_s_temp(lease_db *db) {
  return lpg_exec(db, LPG_S_SQL_TEMP);
}

/* See lease.h: lease_schedule. */
int lpg_s_schedule(lease_db *db, const lease_schedule_spec *s) {
  params p = {0};
  PGresult *res;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, s->name, s->name_len);
  if (s->cron) {
    p_null(&p);
    p_bytes(&p, s->cron, s->cron_len);
  } else {
    p_f8(&p, s->every);
    p_null(&p);
  }
  p_bytes(&p, s->queue, s->queue_len);
  p_bytes(&p, s->payload, s->payload_len);
  p_i8(&p, s->priority);
  p_i8(&p, s->max_attempts);
  p_f8(&p, s->created_at);
  p_f8(&p, s->next_at);
  if (!(res = srun(db, LPG_ST_SCHEDULE_PUT, &p))) return db->rc;
  rc = atoi(PQcmdTuples(res)) == 1 ? LEASE_OK   /* unless a trigger skipped the upsert */
                                   : lease__skipped(db, "schedule of", s->name, s->name_len);
  PQclear(res);
  return rc;
}

/* See lease.h: lease_unschedule. */
int lpg_s_unschedule(lease_db *db, const char *name, size_t name_len, int *found) {
  params p = {0};
  PGresult *res;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, name, name_len);
  if (!(res = srun(db, LPG_ST_SCHEDULE_DELETE, &p))) return db->rc;
  *found = r_i8(res, 0, 1) > 0;
  if (r_i8(res, 0, 0) > 0 && !*found)   /* locked, not deleted: a trigger skipped it */
    rc = lease__skipped(db, "unschedule of", name, name_len);
  PQclear(res);
  return rc;
}

/* Field (row, col) of r as a float8, NaN for NULL. */
static double r_time(const PGresult *r, int row, int col) {
  return PQgetisnull(r, row, col) ? NAN : r_f8(r, row, col);
}

/* Copy the rows of r (LPG_S_SQL_COLUMNS) into out, their strings into
** db->buf.  LEASE_OK or LEASE_NOMEM. */
static int copy_rows(lease_db *db, const PGresult *r, lease_schedule_spec *out, int n) {
  size_t need = 1, at = 0;
  int i, c;
  static const int cols[4] = {0, 2, 3, 4};
  for (i = 0; i < n; i++)
    for (c = 0; c < 4; c++) need += (size_t)PQgetlength(r, i, cols[c]) + 1;
  if (lease__reserve(db, need) != LEASE_OK) return db->rc;
  for (i = 0; i < n; i++) {
    lease_schedule_spec *s = &out[i];
    const char **str[4] = {&s->name, &s->cron, &s->queue, &s->payload};
    size_t *len[4] = {&s->name_len, &s->cron_len, &s->queue_len, &s->payload_len};
    lease_schedule_spec_default(s);
    for (c = 0; c < 4; c++) {
      size_t k = (size_t)PQgetlength(r, i, cols[c]);
      *len[c] = k;
      if (PQgetisnull(r, i, cols[c])) {
        *str[c] = NULL;
        continue;
      }
      if (k) memcpy(db->buf + at, PQgetvalue(r, i, cols[c]), k);
      db->buf[at + k] = '\0';
      *str[c] = db->buf + at;
      at += k + 1;
    }
    if (!s->queue) {
      s->queue = "default";
      s->queue_len = 7;
    }
    s->every = PQgetisnull(r, i, 1) ? 0 : r_f8(r, i, 1);
    s->priority = r_i8(r, i, 5);
    s->max_attempts = r_i8(r, i, 6);
    s->created_at = r_time(r, i, 7);
    s->next_at = r_time(r, i, 8);
    s->last_at = r_time(r, i, 9);
  }
  return LEASE_OK;
}

/* See lease.h: lease_schedules. */
int lpg_s_schedules(lease_db *db, const char *after, size_t after_len, int max,
                    lease_schedule_spec *out, int *count) {
  params p = {0};
  PGresult *res;
  int rc = lpg_ready(db), n;
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, after ? after : "", after ? after_len : 0);
  p_i4(&p, max);
  if (!(res = srun(db, LPG_ST_SCHEDULE_LIST, &p))) return db->rc;
  n = PQntuples(res);
  if ((rc = copy_rows(db, res, out, n)) == LEASE_OK) *count = n;
  PQclear(res);
  return rc;
}

/* A due schedule, what the tick computed for it, and whether its job went in. */
typedef struct due {
  lease_schedule_spec s;
  double tick, next;
  int added;
} due;

/* qsort: by name. */
static int by_name(const void *a, const void *b) {
  const lease_schedule_spec *x = &((const due *)a)->s, *y = &((const due *)b)->s;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(x->name, y->name, n);
  return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* After a move of s that changed no row: LEASE_OK when another tick moved
** s first (its next_at, read anew, is no longer the one read before),
** else LEASE_MISMATCH recorded (another client's trigger skipped the
** move). */
static int moved_by_another(lease_db *db, const lease_schedule_spec *s) {
  params p = {0};
  PGresult *res;
  int still;
  p_bytes(&p, s->name, s->name_len);
  p_f8(&p, s->next_at);
  if (!(res = srun(db, LPG_ST_SCHEDULE_AT, &p))) return db->rc;
  still = PQntuples(res) > 0;
  PQclear(res);
  if (!still) return LEASE_OK;
  return lease__skipped(db, "tick's move of schedule", s->name, s->name_len);
}

/* The write transaction of a tick: each move, and its job when it moved
** (moved_by_another when it did not). */
static int tick_body(lease_db *db, due *d, int n) {
  int i;
  for (i = 0; i < n; i++) {
    params p = {0};
    PGresult *res;
    lease_new_job j;
    char id[ID_MAX];
    int moved;
    p_f8(&p, d[i].next);
    p_f8(&p, d[i].tick);
    p_bytes(&p, d[i].s.name, d[i].s.name_len);
    p_f8(&p, d[i].s.next_at);
    if (!(res = srun(db, LPG_ST_SCHEDULE_MOVE, &p))) return db->rc;
    moved = atoi(PQcmdTuples(res)) == 1;
    PQclear(res);
    if (!moved) {
      if (moved_by_another(db, &d[i].s) != LEASE_OK) return db->rc;
      continue;
    }
    lease_new_job_default(&j);
    j.id = id;
    j.id_len = (size_t)lease__schedule_job_id(&d[i].s, d[i].tick, id, sizeof id);
    j.payload = d[i].s.payload;
    j.payload_len = d[i].s.payload_len;
    j.queue = d[i].s.queue;
    j.queue_len = d[i].s.queue_len;
    j.priority = d[i].s.priority;
    j.max_attempts = d[i].s.max_attempts;
    if (lpg_q_enqueue_in(db, &j, 1, &d[i].added) != LEASE_OK) return db->rc;
  }
  return LEASE_OK;
}

/* See lease.h: lease_tick. */
int lpg_s_tick(lease_db *db, double now, int max, const char **ids, size_t *id_lens, int *count,
               int *more) {
  params p = {0};
  PGresult *res;
  lease_schedule_spec *rows = NULL;
  due *d = NULL;
  char id[ID_MAX];
  size_t need = 1, at = 0;
  int rc = lpg_ready(db), n, i, k = 0;
  if (rc != LEASE_OK) return rc;
  p_f8(&p, now);
  p_i4(&p, max);
  if (!(res = srun(db, LPG_ST_SCHEDULE_DUE, &p))) return db->rc;
  n = PQntuples(res);
  *more = n == max;
  if (n == 0) {
    PQclear(res);
    return LEASE_OK;
  }
  rows = malloc((size_t)n * sizeof *rows);
  d = malloc((size_t)n * sizeof *d);
  if (!rows || !d) rc = lease__fail(db, LEASE_NOMEM, "out of memory");
  if (rc == LEASE_OK) rc = copy_rows(db, res, rows, n);
  PQclear(res);
  /* the rows' strings live in db->buf: copy them out before it is reused */
  if (rc == LEASE_OK) {
    size_t bytes = 0;
    char *mem;
    for (i = 0; i < n; i++)
      bytes += rows[i].name_len + rows[i].cron_len + rows[i].queue_len + rows[i].payload_len + 4;
    if (!(mem = malloc(bytes + 1))) rc = lease__fail(db, LEASE_NOMEM, "out of memory");
    for (i = 0; rc == LEASE_OK && i < n; i++) {
      const char **str[4] = {&rows[i].name, &rows[i].cron, &rows[i].queue, &rows[i].payload};
      size_t lens[4] = {rows[i].name_len, rows[i].cron_len, rows[i].queue_len,
                        rows[i].payload_len};
      int c, e;
      for (c = 0; c < 4; c++) {
        if (!*str[c]) continue;
        memcpy(mem + at, *str[c], lens[c]);
        mem[at + lens[c]] = '\0';
        *str[c] = mem + at;
        at += lens[c] + 1;
      }
      d[i].s = rows[i];
      d[i].added = 0;
      if ((e = lease__schedule_due(&d[i].s, now, &d[i].tick, &d[i].next)) != 0)
        rc = lease__schedule_due_failed(db, &d[i].s, now, e);
    }
    if (rc == LEASE_OK) {
      qsort(d, (size_t)n, sizeof *d, by_name);
      rc = lpg_exec(db, "BEGIN");
      if (rc == LEASE_OK) rc = tick_body(db, d, n);
      if (rc == LEASE_OK) rc = lpg_exec(db, "COMMIT");
      if (rc != LEASE_OK) lpg_rollback(db);
    }
    if (rc == LEASE_OK) {
      for (i = 0; i < n; i++)
        if (d[i].added) need += (size_t)lease__schedule_job_id(&d[i].s, d[i].tick, id, sizeof id) + 1;
      rc = lease__reserve(db, need);
      at = 0;
      for (i = 0; rc == LEASE_OK && i < n; i++) {
        int len;
        if (!d[i].added) continue;
        len = lease__schedule_job_id(&d[i].s, d[i].tick, db->buf + at, need - at);
        ids[k] = db->buf + at;
        id_lens[k++] = (size_t)len;
        at += (size_t)len + 1;
      }
      if (rc == LEASE_OK) *count = k;
    }
    free(mem);
  }
  free(rows);
  free(d);
  return rc;
}
