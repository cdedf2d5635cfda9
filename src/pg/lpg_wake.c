/*
** lpg_wake.c: waiting for jobs on PostgreSQL (lease_wait's backend
** members), through LISTEN/NOTIFY.
**
** A write that makes a job claimable (lease__wake, after its commit) sends
** NOTIFY on the channel "lease_wake" with the queue's name in hex as the
** payload (empty: any queue); the server hands it to every session that
** listens, on any host.  A waiting handle LISTENs on its own connection
** (once per session), drops the notifications that came before its mark,
** looks at the due time, then sleeps in poll() on the connection's socket
** until a notification for its queue (or any queue) arrives or the time
** runs out.  Notifications that arrive while the handle runs other
** statements are kept by libpq (PQnotifies) until the next wait reads them.
*/
#include "lpg_int.h"
#include "lpg_sql.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* See lease_int.h.  Sent in a statement of its own (LPG_ST_WAKE) after
** the write's commit; a failure is not the write's (it is stored): the
** error state of db is left as it was, and the waiters find the job at
** their next look. */
void lpg_wake(lease_db *db, const char *queue, size_t queue_len) {
  params p = {0};
  PGresult *res;
  int rc = db->rc, xrc = db->xrc;
  char msg[sizeof db->errmsg];
  if (!LPG(db) || PQstatus(LPG(db)->pg) != CONNECTION_OK) return;
  memcpy(msg, db->errmsg, sizeof msg);
  p_bytes(&p, queue, queue_len);   /* NULL: SQL NULL, any queue */
  if ((res = lpg_stmt_run(db, LPG_ST_WAKE, &p)) != NULL) {
    PQclear(res);
    return;
  }
  db->rc = rc;
  db->xrc = xrc;
  memcpy(db->errmsg, msg, sizeof msg);
}

/* Drop the notifications libpq holds. */
static void drop_notifications(PGconn *pg) {
  PGnotify *n;
  while ((n = PQnotifies(pg)) != NULL) PQfreemem(n);
}

/* See lease_int.h: LISTEN once per session, then the notifications that
** came before now are dropped (the look that follows sees their writes).
** The mark is unused: libpq keeps what arrives after. */
int lpg_wait_mark(lease_db *db, uint64_t *mark) {
  lpg_conn *c = LPG(db);
  int rc = lpg_ready(db);
  *mark = 0;
  if (rc != LEASE_OK) return rc;
  if (!c->listening) {
    if ((rc = lpg_exec(db, "LISTEN " LPG_WAKE_CHANNEL)) != LEASE_OK) return rc;
    c->listening = 1;
  }
  if (!PQconsumeInput(c->pg)) return lpg_fail(db, NULL);
  drop_notifications(c->pg);
  return LEASE_OK;
}

/* Column i of res's row, seconds from now, into *delay when it is later
** (NULL: no later). */
static void later_of(const PGresult *res, int i, double *delay) {
  if (!PQgetisnull(res, 0, i) && r_f8(res, 0, i) > *delay) *delay = r_f8(res, 0, i);
}

/* The later of *delay and the time queue's limits leave room
** (LPG_ST_Q_LIMIT_DUE), when due's row (LPG_ST_Q_DUE's, which reads the
** queue's settings) sets a concurrency or rate limit; now: the server's
** clock as that row read it.  due is cleared. */
static int limits_due(lease_db *db, PGresult *due, const char *queue, size_t queue_len,
                      double now, double *delay) {
  params l = {0};
  PGresult *res;
  int64_t concurrency = r_i8(due, 0, 2), rate = r_i8(due, 0, 3);
  double per = r_f8(due, 0, 4);
  PQclear(due);
  if (concurrency <= 0 && rate <= 0) return LEASE_OK;
  p_bytes(&l, queue, queue_len);
  p_f8(&l, now);
  p_i8(&l, concurrency);
  p_i8(&l, rate);
  p_f8(&l, per);
  if (!(res = lpg_stmt_run(db, LPG_ST_Q_LIMIT_DUE, &l))) return db->rc;
  later_of(res, 0, delay);
  later_of(res, 1, delay);
  PQclear(res);
  return LEASE_OK;
}

/* See lease_int.h: LPG_ST_Q_DUE (lpg_queue_sql.h), then, while a job is
** due at some time, the queue's limits (limits_due). */
int lpg_due(lease_db *db, const char *queue, size_t queue_len, double *delay) {
  params p = {0};
  PGresult *res;
  double now;
  int rc = lpg_ready(db);
  if (rc != LEASE_OK) return rc;
  p_bytes(&p, queue, queue_len);
  if (!(res = lpg_stmt_run(db, LPG_ST_Q_DUE, &p))) return db->rc;
  now = r_f8(res, 0, 1);
  *delay = PQgetisnull(res, 0, 0) ? INFINITY : r_f8(res, 0, 0) - now;
  if (*delay < INFINITY) return limits_due(db, res, queue, queue_len, now, delay);
  PQclear(res);
  return LEASE_OK;
}

/* Whether a notification libpq holds wakes a waiter of the queue whose
** name in hex is want; every one held is dropped. */
static int woken_by(PGconn *pg, const char *want) {
  PGnotify *n;
  int hit = 0;
  while ((n = PQnotifies(pg)) != NULL) {
    if (strcmp(n->relname, LPG_WAKE_CHANNEL) == 0 &&
        (n->extra[0] == '\0' || strcmp(n->extra, want) == 0))
      hit = 1;
    PQfreemem(n);
  }
  return hit;
}

/* See lease_int.h: poll() on the connection's socket. */
int lpg_wait_signal(lease_db *db, const char *queue, size_t queue_len, uint64_t mark,
                    double seconds, int *signalled) {
  static const char hex[] = "0123456789abcdef";
  PGconn *pg = LPG(db)->pg;
  char want[2 * LEASE_QUEUE_MAX + 1];
  double end = now_ms() + seconds * 1e3;
  size_t i;
  (void)mark;
  *signalled = 0;
  for (i = 0; i < queue_len && i < LEASE_QUEUE_MAX; i++) {
    want[2 * i] = hex[(unsigned char)queue[i] >> 4];
    want[2 * i + 1] = hex[(unsigned char)queue[i] & 15];
  }
  want[2 * i] = '\0';
  for (;;) {
    struct pollfd pfd = {PQsocket(pg), POLLIN, 0};
    double left = end - now_ms();
    int n;
    if (woken_by(pg, want)) {
      *signalled = 1;
      return LEASE_OK;
    }
    if (left <= 0) return LEASE_OK;
    n = poll(&pfd, 1, (int)ceil(left));
    if (n < 0 && errno != EINTR) return lease__fail(db, LEASE_IOERR, "poll: %s", strerror(errno));
    if (n > 0 && !PQconsumeInput(pg)) return lpg_fail(db, NULL);
  }
}
