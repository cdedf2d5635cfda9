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
** later, when its writer has synced it and moves the WAL index header in
** the -shm, so a look right after the change may miss it: the watcher
** signals a changed stamp at the look that saw it and at the next
** LSQ_WAKE_SETTLE looks, 0.25, 0.5, 1, 2, ... ms apart, for about half a
** second.  One waiter of the file in this process, the watcher, stat()s
** the files every LEASE_WAKE_CHECK_MS while the database is busy (an
** interval that grows to LSQ_WAKE_QUIET_MS while nothing changes) and
** signals the others when they changed: two system calls per look for
** the whole process, no lock taken (PRAGMA data_version would take the
** -shm's locks each time).  The
** -shm is never opened here: closing any descriptor of a file drops every
** POSIX lock this process holds on it, SQLite's included, and another
** process would then take the -shm for unused and truncate it under this
** one's mapping.  A checkpoint changes the files too: that costs a look,
** never a missed write.
** On Linux the watcher does not sleep its interval blind: it sleeps in
** ppoll() on inotify watches of the database file and its -wal (a commit's
** write to either ends the sleep at once, and the look follows; the
** watches are open only while there is a watcher) and
** on an eventfd that this process's own signals
** ring while a watcher sleeps; the interval stays, as the longest sleep,
** for files whose changes inotify does not report (a network file
** system).  A waiter woken by a write it cannot see yet (the writer still
** syncing its frames) finds the writer's lock in its claim, which waits
** for the commit, or the second signal of the change.
** A wait is thus: the mark (the counter and the files' stamp) read before
** the caller's look at the due time, then sleeps (the watcher's of its
** interval) until the counter or the stamp moved past the mark, or the
** time ran out; a signal sent between the look and the sleep is
** never missed.
*/
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE   /* ppoll */
#endif
#include "lsq.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#define LSQ_WAKE_NOTIFY 1
#else
#define LSQ_WAKE_NOTIFY 0
#endif

/* The waiters of one file in this process (see the file's comment). */
struct lsq_waiters {
  dev_t dev;
  ino_t ino;
  int refs;                   /* handles joined (under registry_mu) */
  pthread_mutex_t mu;
  pthread_cond_t cv;          /* broadcast with each signal */
  uint64_t signals;           /* signals sent (under mu) */
  uint64_t stamp;             /* the files' stamp as a watcher last read it (under mu) */
  int settle;                 /* looks left that signal again after a change (under mu) */
  double last_look_ms;        /* when the watcher last read the stamp, monotonic (under mu) */
  double last_change_ms;      /* when a read found the stamp changed (under mu) */
  int watching;               /* 1 while a waiter is the watcher (under mu) */
  double every_ms;            /* the watcher's interval now, 0 for the shortest (under mu) */
  char *files[2];             /* the database file's name and its -wal's, NULL when inotify is off */
  int notify_fd;              /* inotify instance, opened at the first watch, else -1 (under mu) */
  int notify_wd[2];           /* its watches of files while a watcher has them, else -1 (under mu) */
  int bell_fd;                /* eventfd rung by signals while a watcher polls, -1 when none */
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

/* How many looks after a change of the files signal again (watch_files):
** the first 0.25 ms after the change, each next one twice as far up to
** LSQ_WAKE_QUIET_MS, the last about half a second after it: a writer whose
** sync is slow, on a loaded machine, makes its commit visible tens of
** milliseconds after its frames, and a look later than that must still
** come. */
#define LSQ_WAKE_SETTLE 12

/* The shortest time between two looks a write's notice (inotify) starts,
** milliseconds, once the files keep changing: under a stream of another
** process's commits the watcher looks at a change, at its settling looks
** 0.25, 0.75 and 1.75 ms later (LSQ_WAKE_SAME_MS), then a gap after the
** last of them, four looks (each a wake-up of every waiter) per 6.75 ms. */
#define LSQ_WAKE_GAP_MS 5

/* A change of the files seen less than this after the look that saw the
** last change, milliseconds, is more of one commit's writes (its frames go
** to the -wal in several writes, which a look between them sees as two
** changes), not a stream of commits: the settling looks go on (at the
** first one's pace, or faster) instead of waiting out the gap, which
** would put the look after the commit becomes visible a gap later. */
#define LSQ_WAKE_SAME_MS 1
static pthread_once_t check_once = PTHREAD_ONCE_INIT;

/* Whether the watcher sleeps in ppoll() on an inotify watch: 1 unless the
** environment variable LEASE_WAKE_NOTIFY is "0" (read once per process:
** for a file system whose changes inotify does not report truly). */
static int notify_on = 1;

/* Read the environment's LEASE_WAKE_CHECK_MS into check_every_ms and
** LEASE_WAKE_NOTIFY into notify_on. */
static void read_check_every(void) {
  const char *s = getenv("LEASE_WAKE_CHECK_MS"), *n = getenv("LEASE_WAKE_NOTIFY");
  char *end;
  double v;
  if (n && strcmp(n, "0") == 0) notify_on = 0;
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

/* ms milliseconds (at least 0) as a timespec: a monotonic time for
** pthread_cond_timedwait on a CLOCK_MONOTONIC condition variable, or a
** timeout for ppoll. */
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

/* Free w->files and set them NULL: inotify off for the file. */
static void files_forget(lsq_waiters *w) {
  free(w->files[0]);
  free(w->files[1]);
  w->files[0] = w->files[1] = NULL;
}

/* Keep the names of the database file `name` and of its -wal `wal` in
** w->files, for the inotify watches a watcher opens (notify_watch), with
** w's bell_fd beside them; files stay NULL and bell_fd -1 (a watcher then
** sleeps its interval) where inotify is off or memory runs out. */
static void notify_open(lsq_waiters *w, const char *name, const char *wal) {
  w->notify_fd = w->notify_wd[0] = w->notify_wd[1] = w->bell_fd = -1;
  w->files[0] = w->files[1] = NULL;
  pthread_once(&check_once, read_check_every);
#if LSQ_WAKE_NOTIFY
  if (notify_on && wal) {
    w->files[0] = strdup(name);
    w->files[1] = strdup(wal);
    if (!w->files[0] || !w->files[1] ||
        (w->bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
      files_forget(w);
  }
#else
  (void)name;
  (void)wal;
#endif
}

#if LSQ_WAKE_NOTIFY
/* 1 while w has an inotify watch (under w->mu). */
static int notify_watched(const lsq_waiters *w) {
  return w->notify_wd[0] >= 0 || w->notify_wd[1] >= 0;
}
#endif

/* Under w->mu, as a waiter becomes the watcher: watch w->files, the
** database file and its -wal, for writes into w->notify_fd (the inotify
** instance, opened at the first watch and kept until the registry's entry
** goes: closing one waits in the kernel for a grace period, milliseconds
** on some, which every wait would pay with the mutex held).  The files, not
** their directory: the first watch of a directory makes the kernel walk
** every name it has cached in it, milliseconds in a directory that has
** held many files, which every wait would pay; and it would notice every
** other file's writes.  A -wal that is not there (a file in
** rollback-journal mode) is not watched: its writes go to the database
** file.  When another client switches such a file to WAL while a watcher
** sleeps, the switch's write of the database file's header wakes it; the
** commits after that are seen at its looks until the next watcher
** watches the -wal.  The watches live only while a watcher sleeps on them: the
** kernel queues a notice for every write to a watched file, a cost each of
** this process's commits would pay whether any handle waits or
** not.  Returns 1 when it made a watch (the caller then looks at the files:
** a write before the watch sends no notice), 0 when there is none (the
** watcher sleeps its interval). */
static int notify_watch(lsq_waiters *w) {
#if LSQ_WAKE_NOTIFY
  char buf[4096];
  int i;
  if (!w->files[0] || notify_watched(w)) return 0;
  if (w->notify_fd < 0 && (w->notify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
    files_forget(w);   /* out of instances or descriptors: the interval from now on */
    return 0;
  }
  while (read(w->notify_fd, buf, sizeof buf) > 0) {}   /* an earlier watch's notices */
  for (i = 0; i < 2; i++) w->notify_wd[i] = inotify_add_watch(w->notify_fd, w->files[i], IN_MODIFY);
  return notify_watched(w);
#else
  (void)w;
  return 0;
#endif
}

/* Under w->mu, as the watcher leaves: remove its watches. */
static void notify_unwatch(lsq_waiters *w) {
  int i;
  for (i = 0; i < 2; i++) {
#if LSQ_WAKE_NOTIFY
    if (w->notify_wd[i] >= 0) inotify_rm_watch(w->notify_fd, w->notify_wd[i]);
#endif
    w->notify_wd[i] = -1;
  }
}

/* Close what notify_open and notify_watch opened. */
static void notify_close(lsq_waiters *w) {
  notify_unwatch(w);
  if (w->notify_fd >= 0) close(w->notify_fd);
  if (w->bell_fd >= 0) close(w->bell_fd);
  files_forget(w);
}

/* A new entry for the file `name`, or NULL when memory or a mutex ran out. */
static lsq_waiters *waiters_new(dev_t dev, ino_t ino, sqlite3_filename name) {
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
  notify_open(w, name, sqlite3_filename_wal(name));
  return w;
fail:
  pthread_mutex_destroy(&w->mu);
  free(w);
  return NULL;
}

static uint64_t files_stamp(lease_db *db);

/* See lsq.h. */
void lsq_wake_join(lease_db *db) {
  lsq_conn *c = LSQ(db);
  sqlite3_filename name;
  struct stat st;
  lsq_waiters *w;
  if (!c || !c->sql || c->waiters) return;
  name = sqlite3_db_filename(c->sql, "main");
  if (!name || !name[0] || stat(name, &st) != 0 || !S_ISREG(st.st_mode)) return;
  pthread_mutex_lock(&registry_mu);
  for (w = registry; w; w = w->next)
    if (w->dev == st.st_dev && w->ino == st.st_ino) break;
  if (!w && (w = waiters_new(st.st_dev, st.st_ino, name)) != NULL) {
    /* the files as they are now: a watcher's first look then signals a
    ** write made since, not the files merely being there */
    w->stamp = files_stamp(db);
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
** nothing: the file's last handle takes the entry out of the registry and
** frees it once the registry's mutex is let go, as closing the inotify
** instance waits in the kernel (notify_watch), which every other file's
** join and leave would wait through. */
void lsq_wake_leave(lease_db *db) {
  lsq_conn *c = LSQ(db);
  lsq_waiters *w, **p;
  int last;
  if (!c || !(w = c->waiters)) return;
  c->waiters = NULL;
  pthread_mutex_lock(&registry_mu);
  last = --w->refs == 0;
  if (last) {
    for (p = &registry; *p != w; p = &(*p)->next) {}
    *p = w->next;
  }
  pthread_mutex_unlock(&registry_mu);
  if (last) {
    notify_close(w);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
  }
}

/* Under w->mu: wake a watcher asleep in ppoll() (its sleep is not on the
** condition variable).  The count stays until the watcher reads it, so a
** ring before it sleeps ends that sleep at once. */
static void ring(lsq_waiters *w) {
  uint64_t one = 1;
  ssize_t n;
  if (!w->watching || w->bell_fd < 0) return;
  n = write(w->bell_fd, &one, sizeof one);   /* EAGAIN: rung already */
  (void)n;
}

/* Sleep the watcher, w->mu held on entry and on return, until until_ms
** (monotonic) or a write inotify reports or a ring: in ppoll() (whose
** timeout is finer than poll()'s millisecond: the settling looks are a
** quarter of one apart) with the mutex released when w has a watch
** (notify_watched), else on the condition variable.
** Returns 1 when the time ran out (or a write woke it: the caller looks at
** the files either way), 0 when only a signal may have come. */
static int watcher_sleep(lsq_waiters *w, double until_ms) {
  struct timespec ts;
#if LSQ_WAKE_NOTIFY
  if (notify_watched(w)) {
    struct pollfd fds[2];
    char buf[4096];
    double left = until_ms - now_ms(), next = w->last_look_ms + LSQ_WAKE_GAP_MS;
    fds[0].fd = w->notify_fd;
    fds[1].fd = w->bell_fd;
    fds[0].events = fds[1].events = POLLIN;
    pthread_mutex_unlock(&w->mu);
    ts = at_ms(left > 0 ? left : 0);
    if (ppoll(fds, 2, &ts, NULL) > 0) {
      int written = (fds[0].revents & POLLIN) != 0, rung = (fds[1].revents & POLLIN) != 0;
      while (read(w->notify_fd, buf, sizeof buf) > 0) {}
      while (read(w->bell_fd, buf, sizeof(uint64_t)) > 0) {}
      /* a notice right after the last look waits out the gap (a ring does not) */
      if (written && !rung && (left = (next < until_ms ? next : until_ms) - now_ms()) > 0) {
        ts = at_ms(left);
        ppoll(fds + 1, 1, &ts, NULL);
      }
    }
    pthread_mutex_lock(&w->mu);
    return 1;
  }
#endif
  ts = at_ms(until_ms);
  return pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT;
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
  ring(w);
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

/* Step st (its parameters bound) to its one row; a failure recorded on
** db, st reset.  Returns LEASE_OK with st on its row, or the failure. */
static int one_row(lease_db *db, sqlite3_stmt *st) {
  int src = lsq_step(db, LSQ(db)->sql, st);
  if (src == SQLITE_ROW) return LEASE_OK;
  lsq_fail(db, LSQ(db)->sql, src == SQLITE_DONE ? SQLITE_ERROR : src);
  sqlite3_reset(st);
  return db->rc;
}

/* Column i of st's row, seconds from now, into *delay when it is later
** (NULL: no later). */
static void later_of(sqlite3_stmt *st, int i, double *delay) {
  if (sqlite3_column_type(st, i) != SQLITE_NULL && sqlite3_column_double(st, i) > *delay)
    *delay = sqlite3_column_double(st, i);
}

/* The later of *delay and the time queue's limits leave room
** (LSQ_SQL_Q_LIMIT_DUE), when st's row (LSQ_SQL_Q_DUE's, which reads the
** queue's settings) sets a concurrency or rate limit; now as the due
** look's.  st is reset. */
static int limits_due(lease_db *db, sqlite3_stmt *st, const char *queue, size_t queue_len,
                      double now, double *delay) {
  int64_t concurrency = sqlite3_column_int64(st, 1), rate = sqlite3_column_int64(st, 2);
  double per = sqlite3_column_double(st, 3);
  sqlite3_reset(st);
  if (concurrency <= 0 && rate <= 0) return LEASE_OK;
  if (!(st = lsq_stmt(db, LSQ_ST_Q_LIMIT_DUE))) return db->rc;
  sqlite3_bind_text(st, 1, queue, (int)queue_len, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, now);
  sqlite3_bind_int64(st, 3, concurrency);
  sqlite3_bind_int64(st, 4, rate);
  sqlite3_bind_double(st, 5, per);
  if (one_row(db, st) != LEASE_OK) return db->rc;
  later_of(st, 0, delay);
  later_of(st, 1, delay);
  sqlite3_reset(st);
  return LEASE_OK;
}

/* See lease_int.h: LSQ_SQL_Q_DUE at the local wall clock (lease_server_now's),
** then, while a job is due at some time, the queue's limits (limits_due). */
int lsq_due(lease_db *db, const char *queue, size_t queue_len, double *delay) {
  sqlite3_stmt *st = lsq_stmt(db, LSQ_ST_Q_DUE);
  struct timespec ts;
  double now;
  if (!st) return db->rc;
  clock_gettime(CLOCK_REALTIME, &ts);
  now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  sqlite3_bind_text(st, 1, queue, (int)queue_len, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, now);
  if (one_row(db, st) != LEASE_OK) return db->rc;
  *delay = sqlite3_column_type(st, 0) == SQLITE_NULL ? INFINITY : sqlite3_column_double(st, 0);
  if (*delay < INFINITY) return limits_due(db, st, queue, queue_len, now, delay);
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
** and signal every waiter (another process wrote).  The commit seen on the
** files becomes visible only once its writer has synced it and moved the
** -shm's header, which no file change shows: so the LSQ_WAKE_SETTLE looks
** after a change signal again, 0.25, 0.5, 1, ... ms apart, and a waiter whose
** look came too early looks again soon.  Else the interval grows by half,
** up to LSQ_WAKE_QUIET_MS.  Those are the watcher's timed looks (timed 1);
** a waiter's look as it starts (timed 0) acts only on a change: each
** waiter a settling look woke comes back, and were its look one of them,
** a few waiters would use the settling looks up within a millisecond,
** before a commit that waits for its sync becomes visible.  Returns the
** stamp. */
static uint64_t watch_files(lease_db *db, lsq_waiters *w, int timed) {
  uint64_t s = files_stamp(db);
  double quiet = check_every_ms > LSQ_WAKE_QUIET_MS ? check_every_ms : LSQ_WAKE_QUIET_MS;
  double now;
  if (!timed && s == w->stamp) return s;
  now = w->last_look_ms = now_ms();
  if (s != w->stamp || w->settle > 0) {
    /* the first look after a change comes 0.25 ms later, or a gap later
    ** when the one before was as recent (the files keep changing); a
    ** change right after one is more of its writes (LSQ_WAKE_SAME_MS) */
    if (s != w->stamp && now - w->last_change_ms >= LSQ_WAKE_SAME_MS) {
      w->every_ms = now - w->last_change_ms < LSQ_WAKE_GAP_MS ? LSQ_WAKE_GAP_MS / 2.0 : 0.125;
      w->last_change_ms = now;
    } else if (s != w->stamp) {
      /* a signal (lsq_wake) may have set the interval to 0, a waiter's
      ** look doubled it: the settling pace, never slower than the gap */
      w->every_ms = fmin(fmax(w->every_ms, 0.125), LSQ_WAKE_GAP_MS / 2.0);
    }
    w->settle = s != w->stamp ? LSQ_WAKE_SETTLE : w->settle - 1;
    w->stamp = s;
    w->every_ms *= 2;
    w->signals++;
    pthread_cond_broadcast(&w->cv);
  } else {
    w->every_ms = (w->every_ms > 0 ? w->every_ms : check_every_ms) * 1.5;
  }
  if (w->every_ms > quiet) w->every_ms = quiet;
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
    if (watch_files(db, w, 0) != c->files_stamp) *signalled = 1;   /* another process wrote */
    /* a signal this read sent for writes the mark already saw is not one */
    if (before == mark) mark = w->signals;
    if (w->signals != mark) *signalled = 1;
  }
  while (!*signalled) {
    double now = now_ms(), every = w->every_ms > 0 ? w->every_ms : check_every_ms;
    struct timespec ts;
    if (now >= end) break;
    if (!w->watching) {
      watcher = w->watching = 1;
      /* a write before the watch sends no notice: a stamp moved since the
      ** last look is one; the settling looks keep their times */
      if (notify_watch(w) && files_stamp(db) != w->stamp) {
        watch_files(db, w, 0);
        if (w->signals != mark) *signalled = 1;
        continue;
      }
    }
    if (watcher) {
      if (watcher_sleep(w, now + every < end ? now + every : end)) watch_files(db, w, 1);
    } else {
      ts = at_ms(end);
      pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    if (w->signals != mark) *signalled = 1;
  }
  if (watcher) {
    w->watching = 0;
    notify_unwatch(w);
    pthread_cond_broadcast(&w->cv);   /* another waiter takes the role */
  }
  pthread_mutex_unlock(&w->mu);
  return LEASE_OK;
}
