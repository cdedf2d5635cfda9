/*
** lsq_wake.c: waiting for jobs on SQLite (lease_wait's backend members).
**
** The registry: one lsq_waiters per database file (device and inode) in
** this process, reference-counted by every handle on a regular file
** (lsq_wake_join at open, lsq_wake_leave at close), read-only ones
** included.  It holds a counter of the wake signals sent, under a mutex,
** and a condition variable broadcast with each: a write that makes a job
** claimable (lease__wake, after its commit) moves the counter, and every
** waiter on the file in this process wakes at once.
**
** Other processes' writes are seen on the files: a commit appends to the
** -wal (or, without WAL, writes the database file), which changes its size
** or modification time.  In WAL mode the commit becomes visible a moment
** later, when its writer moves the WAL index header in the -shm, so a look
** right after the change may miss it: the watcher signals a changed stamp
** twice, at the look that saw it and at the next one.  One waiter of the
** file in this process, the watcher, stat()s the files every
** LEASE_WAKE_CHECK_MS while the database is busy (an interval that grows
** to LSQ_WAKE_QUIET_MS while nothing changes) and signals the others when
** they changed: two system calls per look for the whole process, no lock
** taken (PRAGMA data_version would take the -shm's locks each time).  The
** -shm is never opened here: closing any descriptor of a file drops every
** POSIX lock this process holds on it, SQLite's included, and another
** process would then take the -shm for unused and truncate it under this
** one's mapping.  A checkpoint changes the files too: that costs a look,
** never a missed write.
** A wait is thus: the mark (the counter and the files' stamp) read before
** the caller's look at the due time, then sleeps (the watcher's of its
** interval) until the counter or the stamp moved past the mark, or the
** time ran out; a signal sent between the look and the sleep is
** never missed.
*/
#include "lsq.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

/* The waiters of one file in this process (see the file's comment). */
struct lsq_waiters {
  dev_t dev;
  ino_t ino;
  int refs;                   /* handles joined (under registry_mu) */
  pthread_mutex_t mu;
  pthread_cond_t cv;          /* broadcast with each signal */
  uint64_t signals;           /* signals sent (under mu) */
  uint64_t stamp;             /* the files' stamp as a watcher last read it (under mu) */
  int settle;                 /* 1 after a look that saw the stamp change (under mu) */
  int watching;               /* 1 while a waiter is the watcher (under mu) */
  double every_ms;            /* the watcher's interval now, 0 for the shortest (under mu) */
  struct lsq_waiters *next;   /* the registry's list */
};

/* The registry: every file's waiters, and the mutex of the list and of
** each entry's refs. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static lsq_waiters *registry;

/* How often the watcher looks at the files, milliseconds:
** LEASE_WAKE_CHECK_MS, or the environment variable of that name when it
** holds a number from 1 to 3600000 (read once per process). */
static double check_every_ms = LEASE_WAKE_CHECK_MS;

/* The longest interval of the watcher, milliseconds: it grows by half
** from check_every_ms with each look that finds the files as they were,
** up to this, and goes back with each write seen or signalled. */
#define LSQ_WAKE_QUIET_MS 100
static pthread_once_t check_once = PTHREAD_ONCE_INIT;

/* Read the environment's LEASE_WAKE_CHECK_MS into check_every_ms. */
static void read_check_every(void) {
  const char *s = getenv("LEASE_WAKE_CHECK_MS");
  char *end;
  double v;
  if (!s || !*s) return;
  v = strtod(s, &end);
  if (*end == '\0' && v >= 1 && v <= 3600000) check_every_ms = v;
}

/* Milliseconds on the monotonic clock. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The monotonic time ms (milliseconds) as a timespec for
** pthread_cond_timedwait on a CLOCK_MONOTONIC condition variable. */
static struct timespec at_ms(double ms) {
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

/* A new entry for the file, or NULL when memory or a mutex ran out. */
static lsq_waiters *waiters_new(dev_t dev, ino_t ino) {
  lsq_waiters *w = calloc(1, sizeof *w);
  pthread_condattr_t ca;
  if (!w) return NULL;
  w->dev = dev;
  w->ino = ino;
  if (pthread_mutex_init(&w->mu, NULL) != 0) {
    free(w);
    return NULL;
  }
  if (pthread_condattr_init(&ca) != 0) goto fail;
  if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&w->cv, &ca) != 0) {
    pthread_condattr_destroy(&ca);
    goto fail;
  }
  pthread_condattr_destroy(&ca);
  return w;
fail:
  pthread_mutex_destroy(&w->mu);
  free(w);
  return NULL;
}

/* See lsq.h. */
void lsq_wake_join(lease_db *db) {
  lsq_conn *c = LSQ(db);
  const char *name;
  struct stat st;
  lsq_waiters *w;
  if (!c || !c->sql || c->waiters) return;
  name = sqlite3_db_filename(c->sql, "main");
  if (!name || !name[0] || stat(name, &st) != 0 || !S_ISREG(st.st_mode)) return;
  pthread_mutex_lock(&registry_mu);
  for (w = registry; w; w = w->next)
    if (w->dev == st.st_dev && w->ino == st.st_ino) break;
  if (!w && (w = waiters_new(st.st_dev, st.st_ino)) != NULL) {
    w->next = registry;
    registry = w;
  }
  if (w) {
    w->refs++;
    c->waiters = w;
  }
  pthread_mutex_unlock(&registry_mu);
}

/* See lsq.h.  A handle leaves between its own calls, so it waits on
** nothing: the file's last handle frees the entry. */
void lsq_wake_leave(lease_db *db) {
  lsq_conn *c = LSQ(db);
  lsq_waiters *w, **p;
  if (!c || !(w = c->waiters)) return;
  c->waiters = NULL;
  pthread_mutex_lock(&registry_mu);
  if (--w->refs == 0) {
    for (p = &registry; *p != w; p = &(*p)->next) {}
    *p = w->next;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
  }
  pthread_mutex_unlock(&registry_mu);
}

/* See lease_int.h: every waiter on the file in this process wakes and
** looks (the queue is not told apart: each looks at its own). */
void lsq_wake(lease_db *db, const char *queue, size_t queue_len) {
  lsq_waiters *w = LSQ(db)->waiters;
  (void)queue;
  (void)queue_len;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->signals++;
  w->every_ms = 0;   /* the database is busy: look often again */
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* Mix one file's size and modification time into the stamp h (a file
** that is not there adds nothing). */
static uint64_t stamp_file(uint64_t h, const char *name) {
  struct stat st;
  if (!name || stat(name, &st) != 0) return h;
  h = (h ^ (uint64_t)st.st_size) * 1099511628211u;
  h = (h ^ (uint64_t)st.st_mtim.tv_sec) * 1099511628211u;
  return (h ^ (uint64_t)st.st_mtim.tv_nsec) * 1099511628211u;
}

/* The stamp of db's files: the database's and its -wal's size and
** modification time; 0 for a database that is no file. */
static uint64_t files_stamp(lease_db *db) {
  sqlite3_filename name = sqlite3_db_filename(LSQ(db)->sql, "main");
  if (!name || !name[0]) return 0;
  return stamp_file(stamp_file(14695981039346656037u, name), sqlite3_filename_wal(name));
}

/* See lease_int.h: the counter of signals (0 on a handle outside the
** registry), and the files' stamp kept on the connection for wait_signal. */
int lsq_wait_mark(lease_db *db, uint64_t *mark) {
  lsq_conn *c = LSQ(db);
  lsq_waiters *w = c->waiters;
  *mark = 0;
  if (w) {
    pthread_mutex_lock(&w->mu);
    *mark = w->signals;
    pthread_mutex_unlock(&w->mu);
  }
  c->files_stamp = files_stamp(db);
  return LEASE_OK;
}

/* See lease_int.h: LSQ_SQL_Q_DUE at the local wall clock (lease_server_now's). */
int lsq_due(lease_db *db, const char *queue, size_t queue_len, double *delay) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_DUE);
  struct timespec ts;
  int src;
  if (!st) return db->rc;
  clock_gettime(CLOCK_REALTIME, &ts);
  sqlite3_bind_text(st, 1, queue, (int)queue_len, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
  src = lsq_step(db, LSQ(db)->sql, st);
  if (src != SQLITE_ROW) {
    lsq_fail(db, LSQ(db)->sql, src);
    sqlite3_reset(st);
    return db->rc;
  }
  *delay = sqlite3_column_type(st, 0) == SQLITE_NULL ? INFINITY : sqlite3_column_double(st, 0);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* Sleep ms milliseconds (> 0). */
static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1e3);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* The wait of a handle outside the registry: the files' stamp read every
** LEASE_WAKE_CHECK_MS. */
static int wait_alone(lease_db *db, double end, int *signalled) {
  for (;;) {
    double now = now_ms();
    if (files_stamp(db) != LSQ(db)->files_stamp) {
      *signalled = 1;
      return LEASE_OK;
    }
    if (now >= end) return LEASE_OK;
    sleep_ms(end - now < check_every_ms ? end - now : check_every_ms);
  }
}

/* Under w->mu: read the files' stamp; when it moved past w->stamp, keep it
** and signal every waiter (another process wrote), and the watcher's
** interval goes back to the shortest; the look after such a change signals
** once more (the commit seen on the files may have become visible only
** since); else the interval grows by half, up to LSQ_WAKE_QUIET_MS.
** Returns the stamp. */
static uint64_t watch_files(lease_db *db, lsq_waiters *w) {
  uint64_t s = files_stamp(db);
  if (s != w->stamp || w->settle) {
    w->settle = s != w->stamp;
    w->stamp = s;
    w->signals++;
    w->every_ms = 0;
    pthread_cond_broadcast(&w->cv);
  } else {
    double quiet = check_every_ms > LSQ_WAKE_QUIET_MS ? check_every_ms : LSQ_WAKE_QUIET_MS;
    w->every_ms = (w->every_ms > 0 ? w->every_ms : check_every_ms) * 1.5;
    if (w->every_ms > quiet) w->every_ms = quiet;
  }
  return s;
}

/*
** See lease_int.h.  One waiter of the file at a time is its watcher: it
** sleeps in slices of its interval (w->every_ms) and reads the files' stamp after
** each (watch_files), which signals every waiter when another process
** wrote; the others sleep until a signal or their end.  The stamp is read
** under the mutex, once more as each waiter starts (against its own mark,
** and against w->stamp), so between the watchers' reads no write goes
** unseen; a watcher that leaves hands the role on (broadcast).
*/
int lsq_wait_signal(lease_db *db, const char *queue, size_t queue_len, uint64_t mark,
                    double seconds, int *signalled) {
  lsq_conn *c = LSQ(db);
  lsq_waiters *w = c->waiters;
  double end = now_ms() + seconds * 1e3;
  int watcher = 0;
  (void)queue;
  (void)queue_len;
  *signalled = 0;
  pthread_once(&check_once, read_check_every);
  if (!w) return wait_alone(db, end, signalled);
  pthread_mutex_lock(&w->mu);
  {
    uint64_t before = w->signals;
    if (watch_files(db, w) != c->files_stamp) *signalled = 1;   /* another process wrote */
    /* a signal this read sent for writes the mark already saw is not one */
    if (before == mark) mark = w->signals;
    if (w->signals != mark) *signalled = 1;
  }
  while (!*signalled) {
    double now = now_ms(), every = w->every_ms > 0 ? w->every_ms : check_every_ms;
    struct timespec ts;
    if (now >= end) break;
    if (!w->watching) watcher = w->watching = 1;
    ts = at_ms(watcher && now + every < end ? now + every : end);
    if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT && watcher) watch_files(db, w);
    if (w->signals != mark) *signalled = 1;
  }
  if (watcher) {
    w->watching = 0;
    pthread_cond_broadcast(&w->cv);   /* another waiter takes the role */
  }
  pthread_mutex_unlock(&w->mu);
  return LEASE_OK;
}
