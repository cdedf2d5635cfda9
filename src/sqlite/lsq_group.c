/*
** lsq_group.c: group commit.  Handles of one process that write to the
** same database file share their transactions' commits, so that one sync
** of the file (synchronous FULL) serves several writers.
**
** The registry: one lsq_group per database file (device and inode) and
** per setting that changes what a commit means (synchronous, the VFS),
** reference-counted by the handles that joined it (lsq_group_join at open,
** lsq_group_leave at close).  Read-only handles, private (in-memory,
** temporary) databases, anything that is not a regular file, and handles
** opened with LEASE_OPEN_NO_GROUP_COMMIT never join.
**
** A write (lsq_write_txn) of a handle in a group with other members queues
** a request {db, body, ctx}.  When no member is leading, the request at the
** head of the queue leads: it waits a little for the writers the last
** batch served (gather), then on its own connection it takes the write lock
** (BEGIN IMMEDIATE, waiting no longer than its caller's busy timeout
** allows), then takes every request queued by then as one batch, runs each
** request's body inside a SAVEPOINT of its own, commits once, and then
** hands each caller its outcome.  Requests that arrive meanwhile wait for
** the next batch, which one of them leads.  So:
**   - no caller gets an outcome before the COMMIT that stored its write
**     returned (durable at the group's synchronous setting);
**   - a body that refuses or fails is rolled back to its savepoint: only
**     its caller sees the failure, the others of the batch commit;
**   - a failing COMMIT is every caller's failure (nothing of the batch is
**     stored), and so is a failure that makes SQLite roll back the whole
**     transaction (then the requests still to run get a new transaction);
**   - a request still queued when its caller's busy timeout runs out is
**     withdrawn with LEASE_BUSY, as a wait for the lock would end; once a
**     leader has taken it into its transaction (the lock is held then) it
**     waits for that transaction's end.
** A body runs with its caller's handle (errors, db->buf and the caller's
** ctx stay the caller's) but on the leader's connection: the leader lends
** its lsq_conn to the caller's handle (db->conn) for the body, and gives it
** back before the caller is woken.  The caller is blocked meanwhile, and the
** hand-over runs under the group's mutex, so both threads see the same
** handle state.  A batch of one is today's transaction exactly (no
** savepoint), and a handle alone in its group never queues.
*/
#include "lsq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Where a request stands. */
enum { REQ_QUEUED, REQ_TAKEN, REQ_DONE };

/* One write waiting for, or inside, a group's transaction.  Lives on its
** caller's stack for the duration of lsq_write_txn. */
typedef struct lsq_request {
  lease_db *db;
  lsq_body *body;
  void *ctx;
  int rc;                     /* the outcome, once REQ_DONE */
  int state;                  /* REQ_* (under the group's mutex) */
  struct lsq_request *next;   /* the queue, or the batch */
} lsq_request;

/* The writers of one file in this process (see the file's comment). */
struct lsq_group {
  dev_t dev;
  ino_t ino;
  int synchronous;
  const void *vfs;
  int refs;                   /* handles joined (under registry_mu) */
  pthread_mutex_t mu;
  pthread_cond_t cv;          /* signalled when a batch ends or a request leaves */
  pthread_cond_t arrive;      /* signalled when a request is queued */
  lsq_request *head, *tail;   /* requests queued, in arrival order */
  int queued;                 /* how many */
  int leading;                /* 1 while a member runs a batch */
  int last_batch;             /* requests in the last batch */
  double last_hold_ms;        /* how long the last batch held the write lock */
  struct lsq_group *next;     /* the registry's list */
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static lsq_group *registry;

/* Milliseconds on the monotonic clock. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ===================================================================== */
/* The registry                                                           */
/* ===================================================================== */

/* A new group for the key, or NULL when memory or a mutex ran out. */
static lsq_group *group_new(dev_t dev, ino_t ino, int synchronous, const void *vfs) {
  lsq_group *g = calloc(1, sizeof *g);
  pthread_condattr_t ca;
  if (!g) return NULL;
  g->dev = dev;
  g->ino = ino;
  g->synchronous = synchronous;
  g->vfs = vfs;
  if (pthread_mutex_init(&g->mu, NULL) != 0) {
    free(g);
    return NULL;
  }
  if (pthread_condattr_init(&ca) != 0) goto fail;
  if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
      pthread_cond_init(&g->cv, &ca) != 0) {
    pthread_condattr_destroy(&ca);
    goto fail;
  }
  if (pthread_cond_init(&g->arrive, &ca) != 0) {
    pthread_cond_destroy(&g->cv);
    pthread_condattr_destroy(&ca);
    goto fail;
  }
  pthread_condattr_destroy(&ca);
  return g;
fail:
  pthread_mutex_destroy(&g->mu);
  free(g);
  return NULL;
}

/* See lsq.h. */
void lsq_group_join(lease_db *db) {
  lsq_conn *c = LSQ(db);
  const char *name;
  sqlite3_vfs *vfs = NULL;
  struct stat st;
  lsq_group *g;
  if (!c || !c->sql || c->group) return;
  if (db->opt.flags & (LEASE_OPEN_READONLY | LEASE_OPEN_NO_GROUP_COMMIT)) return;
  if (sqlite3_db_readonly(c->sql, "main") != 0) return;
  name = sqlite3_db_filename(c->sql, "main");
  if (!name || !name[0] || stat(name, &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (sqlite3_file_control(c->sql, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK) return;
  pthread_mutex_lock(&registry_mu);
  for (g = registry; g; g = g->next)
    if (g->dev == st.st_dev && g->ino == st.st_ino && g->synchronous == db->opt.synchronous &&
        g->vfs == (const void *)vfs)
      break;
  if (!g && (g = group_new(st.st_dev, st.st_ino, db->opt.synchronous, vfs)) != NULL) {
    g->next = registry;
    registry = g;
  }
  if (g) {
    g->refs++;
    c->group = g;
  }
  pthread_mutex_unlock(&registry_mu);
}

/* See lsq.h.  A handle leaves only between its own calls, so none of its
** requests is queued: the group's last member frees it. */
void lsq_group_leave(lease_db *db) {
  lsq_conn *c = LSQ(db);
  lsq_group *g, **p;
  if (!c || !(g = c->group)) return;
  c->group = NULL;
  pthread_mutex_lock(&registry_mu);
  if (--g->refs == 0) {
    for (p = &registry; *p != g; p = &(*p)->next) {}
    *p = g->next;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    pthread_cond_destroy(&g->arrive);
    free(g);
  }
  pthread_mutex_unlock(&registry_mu);
}

/* How many handles share g (read under its lock: a handle joining later
** only makes a lone write take the shared path next time). */
static int group_refs(lsq_group *g) {
  int n;
  pthread_mutex_lock(&registry_mu);
  n = g->refs;
  pthread_mutex_unlock(&registry_mu);
  return n;
}

/* ===================================================================== */
/* One transaction                                                        */
/* ===================================================================== */

/* The savepoint statements, in lsq_conn's savepoint[] order. */
static const char *const savepoint_sql[3] = {
  "SAVEPOINT lsq_write", "RELEASE lsq_write", "ROLLBACK TO lsq_write"
};
enum { SP_BEGIN, SP_RELEASE, SP_UNDO };

/* Run savepoint statement `which` on db's (lent) connection; LEASE_OK or
** the failure, recorded on db. */
static int savepoint_run(lease_db *db, int which) {
  lsq_conn *c = LSQ(db);
  int src;
  if (!c->savepoint[which]) {
    src = sqlite3_prepare_v3(c->sql, savepoint_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                             &c->savepoint[which], NULL);
    if (src != SQLITE_OK) {
      lsq_fail(db, c->sql, src);
      sqlite3_finalize(c->savepoint[which]);
      c->savepoint[which] = NULL;
      return db->rc;
    }
  }
  src = sqlite3_step(c->savepoint[which]);
  if (src != SQLITE_DONE) lsq_fail(db, c->sql, src);
  sqlite3_reset(c->savepoint[which]);
  return src == SQLITE_DONE ? LEASE_OK : db->rc;
}

/* See lsq.h; clocked: lsq_clock first, inside the savepoint. */
static int run_in_savepoint(lease_db *db, int clocked, lsq_body *body, void *ctx) {
  int rc = savepoint_run(db, SP_BEGIN);
  if (rc != LEASE_OK) return rc;
  if ((rc = clocked ? lsq_clock(db) : LEASE_OK) == LEASE_OK && (rc = body(db, ctx)) == LEASE_OK)
    rc = savepoint_run(db, SP_RELEASE);
  if (rc != LEASE_OK && !sqlite3_get_autocommit(LSQ(db)->sql)) {
    /* keep the body's error: save it across the undo's statements */
    int xrc = db->xrc;
    char msg[LEASE__ERRMSG_MAX];
    memcpy(msg, db->errmsg, sizeof msg);
    if (savepoint_run(db, SP_UNDO) != LEASE_OK || savepoint_run(db, SP_RELEASE) != LEASE_OK)
      lsq_rollback(db);   /* the savepoint is in doubt: give up the whole transaction */
    lease__set_error(db, rc, xrc, msg);
  }
  return rc;
}

/* See lsq.h. */
int lsq_savepoint(lease_db *db, lsq_body *body, void *ctx) {
  return run_in_savepoint(db, 0, body, ctx);
}

/* The body of a write alone: the transaction is open; commit, or roll back
** on failure. */
static int finish_alone(lease_db *db, lsq_body *body, void *ctx) {
  int rc = lsq_clock(db);
  if (rc == LEASE_OK) rc = body(db, ctx);
  if (rc == LEASE_OK) rc = lsq_run(db, LSQ_ST_COMMIT);
  if (rc != LEASE_OK) lsq_rollback(db);
  return rc;
}

/* A write in a transaction of its own: BEGIN IMMEDIATE, body, COMMIT. */
static int write_alone(lease_db *db, lsq_body *body, void *ctx) {
  int rc = lsq_run(db, LSQ_ST_BEGIN);
  if (rc != LEASE_OK) return rc;
  return finish_alone(db, body, ctx);
}

/* Give q's handle the leader's connection lc (a no-op for the leader's own
** request); returns the handle's own connection for lend_back. */
static void *lend(lsq_request *q, lsq_conn *lc) {
  void *own = q->db->conn;
  q->db->conn = lc;
  return own;
}

static void lend_back(lsq_request *q, void *own) { q->db->conn = own; }

/* Copy from's failure (code, backend code, message) onto to's handle. */
static int copy_failure(lsq_request *to, const lease_db *from) {
  return to->rc = lease__set_error(to->db, from->rc, from->xrc, from->errmsg);
}

/*
** Run the bodies of a batch of two or more requests on the leader's
** connection lc, whose transaction is open: each in its own savepoint.
** Sets each request's rc.  When SQLite ends the transaction itself (a
** failure it cannot undo by statement), the requests that had succeeded in
** it lose their writes and get that failure; the ones still to run go on
** in a new transaction.  Returns the first request of the transaction
** still open (NULL when none is).
*/
static lsq_request *run_bodies(lsq_request *batch, lsq_conn *lc) {
  lsq_request *q, *first = batch, *p;
  void *own;
  for (q = batch; q; q = q->next) {
    own = lend(q, lc);
    if (sqlite3_get_autocommit(lc->sql)) {
      first = q;   /* a new transaction after one SQLite ended */
      q->rc = lsq_run(q->db, LSQ_ST_BEGIN);
    } else {
      q->rc = LEASE_OK;
    }
    if (q->rc == LEASE_OK) q->rc = run_in_savepoint(q->db, 1, q->body, q->ctx);
    if (q->rc != LEASE_OK && sqlite3_get_autocommit(lc->sql)) {
      for (p = first; p != q; p = p->next)
        if (p->rc == LEASE_OK) copy_failure(p, q->db);
      first = q->next;
    }
    lend_back(q, own);
  }
  return sqlite3_get_autocommit(lc->sql) ? NULL : first;
}

/*
** End the open transaction of a batch on the leader's own handle (the
** batch's head): COMMIT when a request from `first` on succeeded, else
** ROLLBACK.  A failing COMMIT is the outcome of every request whose write
** it would have stored; the leader's handle keeps its own request's error
** when that request had failed already.
*/
static void commit_batch(lsq_request *batch, lsq_request *first) {
  lease_db *leader = batch->db;
  lsq_request *p;
  int xrc = leader->xrc, rc = leader->rc, own_rc = batch->rc;
  char msg[LEASE__ERRMSG_MAX];
  for (p = first; p && p->rc != LEASE_OK; p = p->next) {}
  if (!p) {
    lsq_rollback(leader);
    return;
  }
  memcpy(msg, leader->errmsg, sizeof msg);
  if (lsq_run(leader, LSQ_ST_COMMIT) == LEASE_OK) return;
  lsq_rollback(leader);
  for (p = first; p; p = p->next)
    if (p->rc == LEASE_OK) {
      if (p->db == leader) p->rc = leader->rc;
      else copy_failure(p, leader);
    }
  if (own_rc != LEASE_OK) lease__set_error(leader, rc, xrc, msg);
}

/* ===================================================================== */
/* Leading and following                                                  */
/* ===================================================================== */

/* Remove r from g's queue (under g->mu). */
static void unqueue(lsq_group *g, lsq_request *r) {
  lsq_request **p, *prev = NULL;
  for (p = &g->head; *p && *p != r; prev = *p, p = &(*p)->next) {}
  if (!*p) return;
  *p = r->next;
  if (g->tail == r) g->tail = prev;
  r->next = NULL;
  g->queued--;
}

/* The deadline as the condition variables' clock (CLOCK_MONOTONIC) reads it. */
static struct timespec to_timespec(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1e3);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  if (ts.tv_nsec < 0) ts.tv_nsec = 0;
  return ts;
}

/*
** Before taking the write lock, a leader whose queue holds fewer requests
** than the last batch had waits a little for the rest (g->mu held): the
** writers the last batch served are likely on their way back, and each
** that makes it saves a commit of its own.  The wait ends when they are
** all there, after half as long as the last batch held the lock (at most
** LSQ_GROUP_WAIT_MAX_MS), or at the leader's own deadline.  Where commits
** are cheap (synchronous NORMAL), so is the wait.
*/
#define LSQ_GROUP_WAIT_MAX_MS 2.0
static void gather(lsq_group *g, double deadline_ms) {
  double until = g->last_hold_ms / 2;
  struct timespec ts;
  if (g->queued >= g->last_batch || until <= 0) return;
  if (until > LSQ_GROUP_WAIT_MAX_MS) until = LSQ_GROUP_WAIT_MAX_MS;
  until += now_ms();
  if (until > deadline_ms) until = deadline_ms;
  ts = to_timespec(until);
  while (g->queued < g->last_batch && now_ms() < until)
    if (pthread_cond_timedwait(&g->arrive, &g->mu, &ts) == ETIMEDOUT) break;
}

/*
** Lead one batch (g->mu held on entry and on return; r is the head of the
** queue and no one leads).  Gathers, takes the write lock on r's own
** connection, waiting at most until deadline_ms, then every request queued
** by then; runs them (run_bodies and commit_batch, or a transaction of its
** own for a batch of one), and marks each done only after its transaction
** ended.  Notes the batch's size and how long it held the lock (gather).
*/
static void lead(lsq_group *g, lsq_request *r, double deadline_ms) {
  lease_db *db = r->db;
  lsq_conn *lc = LSQ(db);
  lsq_request *batch, *q;
  int timeout = lc->busy_timeout_ms, rc, n = 0;
  double left, held;
  g->leading = 1;
  gather(g, deadline_ms);
  pthread_mutex_unlock(&g->mu);
  left = deadline_ms - now_ms();
  lc->busy_timeout_ms = left <= 0 ? 0 : left < timeout ? (int)left + 1 : timeout;
  rc = lsq_run(db, LSQ_ST_BEGIN);
  lc->busy_timeout_ms = timeout;
  held = now_ms();
  pthread_mutex_lock(&g->mu);
  if (rc != LEASE_OK) {
    unqueue(g, r);
    r->rc = rc;
    r->state = REQ_DONE;
  } else {
    batch = g->head;   /* r first */
    g->head = g->tail = NULL;
    g->queued = 0;
    for (q = batch; q; q = q->next, n++) q->state = REQ_TAKEN;
    pthread_mutex_unlock(&g->mu);
    if (!batch->next) {
      batch->rc = finish_alone(db, batch->body, batch->ctx);
    } else {
      q = run_bodies(batch, lc);
      if (q) commit_batch(batch, q);
    }
    held = now_ms() - held;
    pthread_mutex_lock(&g->mu);
    for (q = batch; q; q = q->next) q->state = REQ_DONE;
    g->last_batch = n;
    g->last_hold_ms = held;
  }
  g->leading = 0;
  pthread_cond_broadcast(&g->cv);
}

/* A write of a handle in a group with other members: queue, then lead or
** wait (see the file's comment). */
static int group_write(lsq_group *g, lease_db *db, lsq_body *body, void *ctx) {
  lsq_request r;
  double deadline = now_ms() + LSQ(db)->busy_timeout_ms;
  struct timespec until = to_timespec(deadline);
  memset(&r, 0, sizeof r);
  r.db = db;
  r.body = body;
  r.ctx = ctx;
  r.state = REQ_QUEUED;
  pthread_mutex_lock(&g->mu);
  if (g->tail) g->tail->next = &r;
  else g->head = &r;
  g->tail = &r;
  g->queued++;
  pthread_cond_signal(&g->arrive);
  while (r.state != REQ_DONE) {
    if (r.state == REQ_QUEUED && !g->leading && g->head == &r) {
      lead(g, &r, deadline);
    } else if (r.state == REQ_QUEUED && now_ms() >= deadline) {
      unqueue(g, &r);
      r.rc = lease__fail(db, LEASE_BUSY, "database is locked");
      db->xrc = SQLITE_BUSY;
      r.state = REQ_DONE;
      pthread_cond_broadcast(&g->cv);   /* the next in line may lead now */
    } else if (r.state == REQ_QUEUED) {
      pthread_cond_timedwait(&g->cv, &g->mu, &until);
    } else {
      pthread_cond_wait(&g->cv, &g->mu);
    }
  }
  pthread_mutex_unlock(&g->mu);
  return r.rc;
}

/* See lsq.h.  A handle alone in its group, or not in one, or whose own
** connection is inside a transaction already, writes alone. */
int lsq_write_txn(lease_db *db, lsq_body *body, void *ctx) {
  lsq_conn *c = LSQ(db);
  if (c->group && sqlite3_get_autocommit(c->sql) && group_refs(c->group) > 1)
    return group_write(c->group, db, body, ctx);
  return write_alone(db, body, ctx);
}
