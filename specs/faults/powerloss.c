/*
** specs/faults/powerloss.c: simulated power loss, the way SQLite tests itself
** (its test6.c "crash" VFS): a test-only VFS shim over the default one,
** registered as the default so lease_open uses it, records every write and
** truncation of the database, its -wal and its journal since that file's
** last sync, and at a random one of those I/O events "loses power": the
** writes not yet synced are dropped, or kept, or kept in a random subset,
** or the last one torn, or kept sector by sector at random; then the
** process ends on the spot.  The surviving files are reopened through
** lease_open and checked against a model of the contract.
**
** Usage (the ctest test faults_powerloss runs the defaults):
**   test_powerloss [--losses N] [--ops M] [--workers W] [--seed S] [--dir DIR]
**                  [--only full|normal|lying] [--allow-create-refusal] [--verbose]
**   test_powerloss --replay SEED,AT,MODE,SYNC [--ops M] [--dir DIR]
**     (one trial, as a violation message names it; its files are kept)
**
** Defaults: 1000 losses per phase, 60 operations per workload, 2 worker
** processes running trials side by side, seed from the clock (printed),
** files in $LEASE_TEST_TMP or /tmp.  --allow-create-refusal: a power loss
** inside the very first lease_open of a new file (nothing acknowledged yet)
** after which lease_open refuses the files is counted, not a violation (a
** way to look past such refusals while investigating one).
**
** One power loss is one trial: a child process (fork) opens a fresh
** database through the shim and runs up to M random operations (enqueue,
** claim, renew, complete with results of up to 8 KB, release), checkpoints
** through a second SQLite connection now and then (PASSIVE, FULL, RESTART,
** TRUNCATE) and sometimes closes and reopens its handle (the last close
** checkpoints and deletes the -wal; SQLite's own auto-checkpoint at 1000
** pages is not reached by workloads this short, and runs the same
** checkpoint code).  It records the arguments before each operation and the
** outcome after it, and the shim records each completed sync; the records
** reach the parent through a pipe when the child ends (they stand for what
** callers were told, which the power loss does not erase).  The parent
** replays the outcomes in a model and checks the reopened database:
**   - it passes PRAGMA integrity_check and lease_open accepts it;
**   - its rows equal the model after some prefix of the operations (plus
**     possibly the one that was running): nothing half-applied, nothing
**     out of order;
**   - that prefix holds every operation acknowledged before the last
**     completed sync of the -wal (it depends on no other file: commits go
**     to the -wal, and a checkpoint syncs the -wal before it writes the
**     database); at synchronous FULL, every acknowledged operation;
**   - no job's fence is lower than a fence a claim returned, and a claim
**     after recovery gets the recovered fence + 1.
** A trial that fails any of these is a violation.
**
** Phases:
**   full    N losses at the default options (synchronous FULL): 0 violations.
**   normal  N losses at LEASE_SYNC_NORMAL: 0 violations of the rules above
**           (NORMAL promises only what the last -wal sync covered); the
**           acknowledged operations lost are counted and reported, and at
**           least one must be lost, or the check could not see a loss.
**   lying   max(N/10, 50) losses at FULL with a shim whose sync reports
**           success without making anything durable, and as many at
**           synchronous NORMAL judged by FULL's rule: both must find
**           violations, proving the check sees a broken sync and a
**           lowered synchronous setting.
** Exits 0 when every phase met its requirement, 1 otherwise, 2 on a usage
** error.  Prints one summary line per phase.
**
** Simplifications, each on the side of SQLite's own model: the -shm file is
** left as the crash left it (SQLite rebuilds it from the -wal); creating
** and deleting files is durable at once (SQLite syncs the directory where
** it matters, and deletes the -wal only after a checkpoint made it
** redundant); sector size for tearing is 512 bytes, writes never damage
** bytes outside their own range (the unix VFS claims
** SQLITE_IOCAP_POWERSAFE_OVERWRITE).  The shim does not call the real
** fsync: durability here is the shim's bookkeeping, not the disk's.
*/
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lease.h"

/* ------------------------------------------------------------------------
** Random numbers: splitmix64, seeded per trial so a failure can be rerun.
** ---------------------------------------------------------------------- */

/* The next 64 random bits of the generator whose state is *s. */
static uint64_t rnd64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A random integer in [0, n) (n >= 1). */
static int rnd(uint64_t *s, int n) { return (int)(rnd64(s) % (uint64_t)n); }

/* The result bytes of operation number op of the trial seeded with seed:
** len bytes the parent can regenerate without being sent them. */
static void fill_result(unsigned char *buf, int len, uint64_t seed, int op) {
  uint64_t s = seed * 1000003ULL + (uint64_t)op;
  int i;
  for (i = 0; i < len; i++) buf[i] = (unsigned char)('a' + rnd(&s, 26));
}

/* FNV-1a over n bytes: results are compared by length and hash. */
static uint64_t fnv(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  size_t i;
  for (i = 0; i < n; i++) { h ^= p[i]; h *= 1099511628211ULL; }
  return h;
}

/* ------------------------------------------------------------------------
** The records the child sends to the parent (buffered, and written to the
** pipe in one go when the child ends).
** ---------------------------------------------------------------------- */

enum { R_BEGIN = 1, R_END, R_SYNC, R_CKPT_BEGIN, R_CKPT_END, R_CRASH, R_FAIL, R_OPENED };
enum { OP_ENQUEUE = 1, OP_CLAIM, OP_RENEW, OP_COMPLETE, OP_RELEASE };
/* Which file an I/O event touched. */
enum { F_DB = 1, F_WAL, F_JOURNAL };
/* How unsynced writes fare at the power loss. */
enum { LOSS_DROP, LOSS_KEEP, LOSS_SUBSET, LOSS_TORN, LOSS_SECTORS, LOSS_COUNT };
static const char *const mode_names[LOSS_COUNT] = { "drop", "keep", "subset", "torn", "sectors" };

typedef struct rec {
  int32_t kind;     /* R_* */
  int32_t op;       /* OP_* (R_BEGIN, R_END) */
  int32_t job;      /* job number: id "job<n>" */
  int32_t owner;    /* owner number: "w<n>" */
  int64_t fence;    /* R_BEGIN: fence argument; R_END: fence returned by a claim */
  double now, ttl;  /* R_BEGIN: the time arguments */
  int32_t rlen;     /* R_BEGIN of a complete: result length, -1 for NULL */
  int32_t rc;       /* R_END: result code; R_SYNC, R_CRASH: file kind (F_*) */
  int32_t reason;   /* R_END: reason; R_CRASH: mode (LOSS_*) */
  int32_t extra;    /* R_CRASH: 1 when the loss hit a checkpoint */
  int64_t events;   /* R_CRASH: I/O events before the loss */
} rec;

static int out_fd = -1;   /* the child's end of the pipe */
static rec *outbuf;       /* the child's records, sent in one go when it ends */
static int outn, outcap;

/* Send the buffered records to the parent (child side, at its end).  They
** model what callers were told, which a power loss of the database's
** machine does not erase. */
static void flush_records(void) {
  const char *p = (const char *)outbuf;
  size_t left = (size_t)outn * sizeof *outbuf;
  while (left > 0) {
    ssize_t n = write(out_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(5);
    p += n;
    left -= (size_t)n;
  }
  outn = 0;
}

/* Record one event for the parent (child side). */
static void emit(const rec *r) {
  if (outn == outcap) {
    int cap = outcap ? outcap * 2 : 1024;
    rec *b = realloc(outbuf, (size_t)cap * sizeof *b);
    if (!b) _exit(6);
    outbuf = b;
    outcap = cap;
  }
  outbuf[outn++] = *r;
}

/* ------------------------------------------------------------------------
** The shim VFS.  Every write, truncation and sync of a tracked file (the
** database, its -wal, a rollback journal) is one I/O event; the power loss
** happens just before event number crash_at.
** ---------------------------------------------------------------------- */

/* One unsynced change of a file: enough to undo it and to redo it. */
typedef struct pl_entry {
  int trunc;                 /* 1: truncation to off; 0: write of len bytes at off */
  int64_t off;
  int len;
  int64_t oldsize;           /* the file size before the change */
  unsigned char *oldb;       /* the bytes it replaced (write: [off, min(off+len, oldsize));
                                truncation: [off, oldsize)) */
  int oldlen;
  unsigned char *newb;       /* the bytes written */
} pl_entry;

/* A tracked file by name: its changes since its last sync. */
typedef struct pl_track {
  char path[512];
  int kind;                  /* F_* */
  pl_entry *log;
  int n, cap;
} pl_track;

#define MAX_TRACKS 16
static pl_track tracks[MAX_TRACKS];
static int ntracks;

static sqlite3_vfs *real_vfs;     /* the default VFS the shim wraps */
static int64_t events;            /* I/O events so far */
static int64_t crash_at;          /* the event before which power is lost */
static int crash_mode;            /* LOSS_* */
static uint64_t crash_rng;        /* decides subsets and tears */
static int lying_sync;            /* self-test: sync reports success, keeps nothing */
static int in_checkpoint;         /* the workload is inside an explicit checkpoint */
static int recording;             /* 0 in the parent: writes pass through, syncs do nothing */

typedef struct pl_file {
  sqlite3_file base;
  sqlite3_file *real;        /* the real VFS's file, allocated after this struct */
  pl_track *t;               /* NULL for files not tracked (temp files) */
} pl_file;

/* The track for path, created when create is set; NULL otherwise. */
static pl_track *find_track(const char *path, int kind, int create) {
  int i;
  for (i = 0; i < ntracks; i++)
    if (strcmp(tracks[i].path, path) == 0) return &tracks[i];
  if (!create || ntracks == MAX_TRACKS || strlen(path) >= sizeof tracks[0].path) return NULL;
  memset(&tracks[ntracks], 0, sizeof tracks[ntracks]);
  snprintf(tracks[ntracks].path, sizeof tracks[ntracks].path, "%s", path);
  tracks[ntracks].kind = kind;
  return &tracks[ntracks++];
}

/* Forget a track's changes: they became durable (sync) or moot (delete). */
static void clear_log(pl_track *t) {
  int i;
  for (i = 0; i < t->n; i++) {
    free(t->log[i].oldb);
    free(t->log[i].newb);
  }
  t->n = 0;
}

/* Append a change to t's log; exits the child when memory runs out. */
static pl_entry *push_entry(pl_track *t) {
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 64;
    pl_entry *l = realloc(t->log, (size_t)cap * sizeof *l);
    if (!l) _exit(6);
    t->log = l;
    t->cap = cap;
  }
  memset(&t->log[t->n], 0, sizeof t->log[0]);
  return &t->log[t->n++];
}

/* pwrite all of n bytes; 0 on success. */
static int pwrite_all(int fd, const unsigned char *p, size_t n, off_t off) {
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
    off += w;
  }
  return 0;
}

/* Redo part of a write: the 512-byte chunks whose bit in keep is set
** (keep NULL: all of it). */
static void redo_write(int fd, const pl_entry *e, const unsigned char *keep) {
  int c, nchunks = (e->len + 511) / 512;
  for (c = 0; c < nchunks; c++) {
    int at = c * 512, n = e->len - at < 512 ? e->len - at : 512;
    if (keep && !keep[c]) continue;
    if (pwrite_all(fd, e->newb + at, (size_t)n, (off_t)(e->off + at)) != 0) _exit(7);
  }
}

/* Rewrite one file as the power loss leaves it: undo every unsynced change
** (newest first), which gives the file as of its last sync, then redo the
** changes that reach the disk under crash_mode. */
static void settle_file(pl_track *t) {
  int fd, i, c;
  if (t->n == 0) return;
  fd = open(t->path, O_RDWR);
  if (fd < 0) return;                       /* deleted: its changes are moot */
  for (i = t->n - 1; i >= 0; i--) {
    const pl_entry *e = &t->log[i];
    if (e->trunc) {
      if (ftruncate(fd, (off_t)e->oldsize) != 0) _exit(7);
      if (e->oldlen > 0 && pwrite_all(fd, e->oldb, (size_t)e->oldlen, (off_t)e->off) != 0) _exit(7);
    } else {
      if (e->oldlen > 0 && pwrite_all(fd, e->oldb, (size_t)e->oldlen, (off_t)e->off) != 0) _exit(7);
      if (ftruncate(fd, (off_t)e->oldsize) != 0) _exit(7);
    }
  }
  for (i = 0; i < t->n; i++) {
    const pl_entry *e = &t->log[i];
    int last = i == t->n - 1, nchunks = (e->len + 511) / 512;
    unsigned char keep[64];               /* writes here are at most a few pages */
    int whole = 0, part = 0;
    switch (crash_mode) {
      case LOSS_DROP: break;
      case LOSS_KEEP: whole = 1; break;
      case LOSS_SUBSET: whole = rnd(&crash_rng, 2); break;
      case LOSS_TORN: whole = !last; part = last; break;
      case LOSS_SECTORS: part = 1; break;
    }
    if (e->trunc) {
      if (whole || (part && rnd(&crash_rng, 2)))
        if (ftruncate(fd, (off_t)e->off) != 0) _exit(7);
      continue;
    }
    if (whole) { redo_write(fd, e, NULL); continue; }
    if (!part) continue;
    if (nchunks > (int)sizeof keep) { if (rnd(&crash_rng, 2)) redo_write(fd, e, NULL); continue; }
    for (c = 0; c < nchunks; c++) keep[c] = (unsigned char)rnd(&crash_rng, 2);
    redo_write(fd, e, keep);
  }
  close(fd);
}

/* The power loss: settle every tracked file, tell the parent, end the
** process without running any other code of SQLite or the engine. */
static void power_loss(int kind) {
  int i;
  rec r;
  for (i = 0; i < ntracks; i++) settle_file(&tracks[i]);
  memset(&r, 0, sizeof r);
  r.kind = R_CRASH;
  r.rc = kind;
  r.reason = crash_mode;
  r.extra = in_checkpoint || kind == F_DB;
  r.events = events;
  emit(&r);
  flush_records();
  _exit(42);
}

/* Count one I/O event of a tracked file; power is lost before event crash_at. */
static void io_event(const pl_track *t) {
  if (++events >= crash_at) power_loss(t->kind);
}

/* Read bytes [off, off+n) of f into a new buffer (zeros past the end). */
static unsigned char *read_span(sqlite3_file *f, int64_t off, int n) {
  unsigned char *b = calloc(1, (size_t)(n > 0 ? n : 1));
  int rc;
  if (!b) _exit(6);
  if (n <= 0) return b;
  rc = f->pMethods->xRead(f, b, n, off);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) _exit(8);
  return b;
}

/* The file methods below that do not write pass straight through to the
** real file. */
static int pl_close(sqlite3_file *f) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xClose(p->real);
}

static int pl_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xRead(p->real, buf, amt, off);
}

/* A write: one event; remembers the bytes it replaces, then writes through. */
static int pl_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off) {
  pl_file *p = (pl_file *)f;
  sqlite3_int64 size = 0;
  pl_entry *e;
  int rc;
  if (!p->t || !recording) return p->real->pMethods->xWrite(p->real, buf, amt, off);
  io_event(p->t);
  rc = p->real->pMethods->xFileSize(p->real, &size);
  if (rc != SQLITE_OK) return rc;
  e = push_entry(p->t);
  e->off = off;
  e->len = amt;
  e->oldsize = size;
  e->oldlen = off < size ? (int)(size - off < amt ? size - off : amt) : 0;
  e->oldb = read_span(p->real, off, e->oldlen);
  e->newb = malloc((size_t)amt);
  if (!e->newb) _exit(6);
  memcpy(e->newb, buf, (size_t)amt);
  return p->real->pMethods->xWrite(p->real, buf, amt, off);
}

/* A truncation: one event; remembers the tail it cuts off. */
static int pl_truncate(sqlite3_file *f, sqlite3_int64 size) {
  pl_file *p = (pl_file *)f;
  sqlite3_int64 old = 0;
  pl_entry *e;
  int rc;
  if (!p->t || !recording) return p->real->pMethods->xTruncate(p->real, size);
  io_event(p->t);
  rc = p->real->pMethods->xFileSize(p->real, &old);
  if (rc != SQLITE_OK) return rc;
  e = push_entry(p->t);
  e->trunc = 1;
  e->off = size;
  e->oldsize = old;
  e->oldlen = old > size ? (int)(old - size) : 0;
  e->oldb = read_span(p->real, size, e->oldlen);
  return p->real->pMethods->xTruncate(p->real, size);
}

/* A sync: one event; the file's changes so far become durable (unless the
** shim lies), and the parent hears of it. */
static int pl_sync(sqlite3_file *f, int flags) {
  pl_file *p = (pl_file *)f;
  rec r;
  (void)flags;
  if (!p->t || !recording) return SQLITE_OK;
  io_event(p->t);
  if (!lying_sync) clear_log(p->t);
  memset(&r, 0, sizeof r);
  r.kind = R_SYNC;
  r.rc = p->t->kind;
  emit(&r);
  return SQLITE_OK;
}

static int pl_file_size(sqlite3_file *f, sqlite3_int64 *size) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xFileSize(p->real, size);
}
static int pl_lock(sqlite3_file *f, int lock) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xLock(p->real, lock);
}
static int pl_unlock(sqlite3_file *f, int lock) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xUnlock(p->real, lock);
}
static int pl_check_reserved(sqlite3_file *f, int *out) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xCheckReservedLock(p->real, out);
}
static int pl_file_control(sqlite3_file *f, int op, void *arg) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xFileControl(p->real, op, arg);
}
static int pl_sector_size(sqlite3_file *f) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xSectorSize(p->real);
}
static int pl_device_characteristics(sqlite3_file *f) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xDeviceCharacteristics(p->real);
}
static int pl_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, pp);
}
static int pl_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}
static void pl_shm_barrier(sqlite3_file *f) {
  pl_file *p = (pl_file *)f;
  p->real->pMethods->xShmBarrier(p->real);
}
static int pl_shm_unmap(sqlite3_file *f, int del) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xShmUnmap(p->real, del);
}
static int pl_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xFetch(p->real, off, amt, pp);
}
static int pl_unfetch(sqlite3_file *f, sqlite3_int64 off, void *ptr) {
  pl_file *p = (pl_file *)f;
  return p->real->pMethods->xUnfetch(p->real, off, ptr);
}

static const sqlite3_io_methods pl_methods = {
  3, pl_close, pl_read, pl_write, pl_truncate, pl_sync, pl_file_size, pl_lock, pl_unlock,
  pl_check_reserved, pl_file_control, pl_sector_size, pl_device_characteristics,
  pl_shm_map, pl_shm_lock, pl_shm_barrier, pl_shm_unmap, pl_fetch, pl_unfetch
};

/* Open through the real VFS; track the database, -wal and journals. */
static int pl_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
                   int *out_flags) {
  pl_file *p = (pl_file *)f;
  int rc, kind = 0;
  (void)vfs;
  p->real = (sqlite3_file *)(p + 1);
  p->t = NULL;
  rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
  if (rc != SQLITE_OK) {
    p->base.pMethods = NULL;
    return rc;
  }
  if (flags & SQLITE_OPEN_MAIN_DB) kind = F_DB;
  else if (flags & SQLITE_OPEN_WAL) kind = F_WAL;
  else if (flags & SQLITE_OPEN_MAIN_JOURNAL) kind = F_JOURNAL;
  if (kind && name) p->t = find_track(name, kind, 1);
  p->base.pMethods = &pl_methods;
  return SQLITE_OK;
}

/* A delete is durable at once; the file's unsynced changes go with it. */
static int pl_delete(sqlite3_vfs *vfs, const char *name, int dirsync) {
  pl_track *t = find_track(name, 0, 0);
  (void)vfs;
  if (t) clear_log(t);
  return real_vfs->xDelete(real_vfs, name, dirsync);
}

/* The VFS methods below pass straight through to the real VFS. */
static int pl_access(sqlite3_vfs *v, const char *n, int flags, int *out) {
  (void)v;
  return real_vfs->xAccess(real_vfs, n, flags, out);
}
static int pl_full_pathname(sqlite3_vfs *v, const char *n, int size, char *out) {
  (void)v;
  return real_vfs->xFullPathname(real_vfs, n, size, out);
}
static void *pl_dlopen(sqlite3_vfs *v, const char *n) {
  (void)v;
  return real_vfs->xDlOpen(real_vfs, n);
}
static void pl_dlerror(sqlite3_vfs *v, int n, char *msg) {
  (void)v;
  real_vfs->xDlError(real_vfs, n, msg);
}
static void (*pl_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void) {
  (void)v;
  return real_vfs->xDlSym(real_vfs, h, sym);
}
static void pl_dlclose(sqlite3_vfs *v, void *h) {
  (void)v;
  real_vfs->xDlClose(real_vfs, h);
}
static int pl_randomness(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  return real_vfs->xRandomness(real_vfs, n, out);
}
static int pl_sleep(sqlite3_vfs *v, int us) {
  (void)v;
  return real_vfs->xSleep(real_vfs, us);
}
static int pl_current_time(sqlite3_vfs *v, double *out) {
  (void)v;
  return real_vfs->xCurrentTime(real_vfs, out);
}
static int pl_last_error(sqlite3_vfs *v, int n, char *msg) {
  (void)v;
  return real_vfs->xGetLastError(real_vfs, n, msg);
}
static int pl_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) {
  (void)v;
  return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static sqlite3_vfs pl_vfs;

/* Register the shim as the default VFS.  The parent's checks run through it
** too, not recording: their syncs are not needed and would cost real
** fsyncs. */
static void install_shim(void) {
  real_vfs = sqlite3_vfs_find(NULL);
  if (!real_vfs || real_vfs->iVersion < 2) exit(9);
  memset(&pl_vfs, 0, sizeof pl_vfs);
  pl_vfs.iVersion = 2;
  pl_vfs.szOsFile = (int)sizeof(pl_file) + real_vfs->szOsFile;
  pl_vfs.mxPathname = real_vfs->mxPathname;
  pl_vfs.zName = "powerloss";
  pl_vfs.xOpen = pl_open;
  pl_vfs.xDelete = pl_delete;
  pl_vfs.xAccess = pl_access;
  pl_vfs.xFullPathname = pl_full_pathname;
  pl_vfs.xDlOpen = pl_dlopen;
  pl_vfs.xDlError = pl_dlerror;
  pl_vfs.xDlSym = pl_dlsym;
  pl_vfs.xDlClose = pl_dlclose;
  pl_vfs.xRandomness = pl_randomness;
  pl_vfs.xSleep = pl_sleep;
  pl_vfs.xCurrentTime = pl_current_time;
  pl_vfs.xGetLastError = pl_last_error;
  pl_vfs.xCurrentTimeInt64 = pl_current_time64;
  if (sqlite3_vfs_register(&pl_vfs, 1) != SQLITE_OK) exit(9);
}

/* ------------------------------------------------------------------------
** The workload (child side).
** ---------------------------------------------------------------------- */

#define MAX_JOBS 24
#define NOWNERS 4

/* Report a failure other than the power loss and end the child. */
static void child_fail(const char *what, int rc, const char *msg) {
  rec r;
  fprintf(stderr, "powerloss: child: %s failed: %s (%d)\n", what, msg ? msg : "?", rc);
  memset(&r, 0, sizeof r);
  r.kind = R_FAIL;
  r.rc = rc;
  emit(&r);
  flush_records();
  _exit(3);
}

/* Open the side connection the workload checkpoints through. */
static sqlite3 *open_side(const char *path, int normal) {
  sqlite3 *c = NULL;
  int rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL);
  if (rc != SQLITE_OK) child_fail("side open", rc, c ? sqlite3_errmsg(c) : NULL);
  sqlite3_busy_timeout(c, 5000);
  rc = sqlite3_exec(c, normal ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL",
                    NULL, NULL, NULL);
  if (rc != SQLITE_OK) child_fail("side pragma", rc, sqlite3_errmsg(c));
  return c;
}

/* Run the trial's operations; never returns (the power loss ends it). */
static void child_run(const char *path, const lease_options *opt, uint64_t seed, int nops) {
  static const char *const ckpt_sql[] = {
    "PRAGMA wal_checkpoint(PASSIVE)", "PRAGMA wal_checkpoint(FULL)",
    "PRAGMA wal_checkpoint(RESTART)", "PRAGMA wal_checkpoint(TRUNCATE)"
  };
  uint64_t s = seed;
  lease_db *db = NULL;
  sqlite3 *side = NULL;
  int normal = opt->synchronous == LEASE_SYNC_NORMAL;
  int njobs = 0, i, rc, reason;
  int holder[MAX_JOBS], done[MAX_JOBS];
  int64_t hfence[MAX_JOBS];
  double now = 1000.0;
  unsigned char *buf = malloc(8192);
  char id[32], owner[32];
  if (!buf) _exit(6);
  memset(holder, 0, sizeof holder);
  memset(done, 0, sizeof done);
  memset(hfence, 0, sizeof hfence);
  rc = lease_open(path, opt, &db);
  if (rc != LEASE_OK) child_fail("lease_open", rc, lease_errmsg(db));
  {
    rec o;
    memset(&o, 0, sizeof o);
    o.kind = R_OPENED;
    emit(&o);
  }
  side = open_side(path, normal);
  for (i = 0; i < nops; i++) {
    rec b, e;
    lease_new_job nj;
    int active = 0, k, choice;
    for (k = 0; k < njobs; k++) active += !done[k];
    /* now and then: a checkpoint, or a fresh handle */
    choice = rnd(&s, 100);
    if (choice < 5) {
      memset(&b, 0, sizeof b);
      b.kind = R_CKPT_BEGIN;
      emit(&b);
      in_checkpoint = 1;
      rc = sqlite3_exec(side, ckpt_sql[rnd(&s, 4)], NULL, NULL, NULL);
      in_checkpoint = 0;
      if (rc != SQLITE_OK) child_fail("checkpoint", rc, sqlite3_errmsg(side));
      b.kind = R_CKPT_END;
      emit(&b);
    } else if (choice < 7) {
      sqlite3_close(side);
      lease_close(db);
      db = NULL;
      rc = lease_open(path, opt, &db);
      if (rc != LEASE_OK) child_fail("lease_open again", rc, lease_errmsg(db));
      side = open_side(path, normal);
    }
    memset(&b, 0, sizeof b);
    b.kind = R_BEGIN;
    b.rlen = -1;
    b.now = now;
    b.ttl = (double)(1 + rnd(&s, 4)) * 0.5;
    b.owner = rnd(&s, NOWNERS);
    if (njobs < MAX_JOBS && (active < 3 || rnd(&s, 20) == 0)) {
      b.op = OP_ENQUEUE;
      b.job = rnd(&s, 8) == 0 && njobs > 0 ? rnd(&s, njobs) : njobs;
    } else {
      int r = rnd(&s, 100);
      b.job = rnd(&s, njobs);
      b.op = r < 40 ? OP_CLAIM : r < 60 ? OP_RENEW : r < 80 ? OP_COMPLETE : OP_RELEASE;
      if (b.op != OP_CLAIM) {
        /* mostly the holder's own token; sometimes a stale or wrong one */
        int wrong = rnd(&s, 5) == 0;
        b.owner = holder[b.job] >= 0 && !wrong ? holder[b.job] : rnd(&s, NOWNERS);
        b.fence = hfence[b.job] - (wrong && rnd(&s, 2) ? 1 : 0);
      }
      if (b.op == OP_COMPLETE) b.rlen = rnd(&s, 10) == 0 ? -1 : rnd(&s, 8192);
    }
    emit(&b);
    snprintf(id, sizeof id, "job%d", b.job);
    snprintf(owner, sizeof owner, "w%d", b.owner);
    memset(&e, 0, sizeof e);
    e.kind = R_END;
    e.op = b.op;
    e.job = b.job;
    switch (b.op) {
      case OP_ENQUEUE:
        lease_new_job_default(&nj);
        nj.id = id;
        nj.id_len = LEASE_NTS;
        rc = lease_enqueue(db, &nj, &reason);
        if (rc == LEASE_OK && b.job == njobs) {
          holder[njobs] = -1;
          hfence[njobs] = 0;
          done[njobs] = 0;
          njobs++;
        }
        break;
      case OP_CLAIM:
        rc = lease_claim(db, id, LEASE_NTS, owner, LEASE_NTS, b.now, b.ttl, &e.fence, &reason);
        if (rc == LEASE_OK && reason == LEASE_GRANTED) {
          holder[b.job] = b.owner;
          hfence[b.job] = e.fence;
        }
        break;
      case OP_RENEW:
        rc = lease_renew(db, id, LEASE_NTS, owner, LEASE_NTS, b.fence, b.now, b.ttl, &reason);
        break;
      case OP_COMPLETE:
        if (b.rlen >= 0) fill_result(buf, b.rlen, seed, i);
        rc = lease_complete(db, id, LEASE_NTS, owner, LEASE_NTS, b.fence, b.now,
                            b.rlen >= 0 ? (const char *)buf : NULL,
                            b.rlen >= 0 ? (size_t)b.rlen : 0, &reason);
        if (rc == LEASE_OK && reason == LEASE_GRANTED) done[b.job] = 1;
        break;
      default:
        rc = lease_release(db, id, LEASE_NTS, owner, LEASE_NTS, b.fence, &reason);
        if (rc == LEASE_OK && reason == LEASE_GRANTED) holder[b.job] = -1;
        break;
    }
    if (rc != LEASE_OK) child_fail("operation", rc, lease_errmsg(db));
    e.rc = rc;
    e.reason = reason;
    emit(&e);
    now += (double)rnd(&s, 5) * 0.25;
  }
  /* the workload ran to its end: the power goes now */
  power_loss(F_DB);
}

/* ------------------------------------------------------------------------
** The model (parent side): the contract's state of every job.
** ---------------------------------------------------------------------- */

typedef struct mjob {
  int exists, owner, done, rlen;   /* owner -1: NULL; rlen -1: NULL result */
  double until;
  int64_t fence;
  uint64_t rhash;
} mjob;

typedef struct mstate { mjob j[MAX_JOBS]; } mstate;

/* Apply operation op (record b, operation number opno) to *m; returns 1
** when the contract grants it, and the new fence of a granted claim. */
static int model_apply(mstate *m, const rec *b, int opno, uint64_t seed, int64_t *fence) {
  mjob *j = &m->j[b->job];
  *fence = 0;
  switch (b->op) {
    case OP_ENQUEUE:
      if (j->exists) return 0;
      memset(j, 0, sizeof *j);
      j->exists = 1;
      j->owner = -1;
      j->rlen = -1;
      return 1;
    case OP_CLAIM:
      if (!j->exists || j->done || j->until > b->now) return 0;
      j->fence++;
      j->owner = b->owner;
      j->until = b->now + b->ttl;
      *fence = j->fence;
      return 1;
    case OP_RENEW:
      if (!j->exists || j->done || j->owner != b->owner || j->fence != b->fence ||
          !(j->until > b->now))
        return 0;
      j->until = b->now + b->ttl;
      return 1;
    case OP_COMPLETE:
      if (!j->exists || j->done || j->owner != b->owner || j->fence != b->fence ||
          !(j->until > b->now))
        return 0;
      j->done = 1;
      j->rlen = b->rlen;
      if (b->rlen >= 0) {
        unsigned char *buf = malloc((size_t)b->rlen + 1);
        if (!buf) abort();
        fill_result(buf, b->rlen, seed, opno);
        j->rhash = fnv(buf, (size_t)b->rlen);
        free(buf);
      }
      return 1;
    default:
      if (!j->exists || j->done || j->owner != b->owner || j->fence != b->fence) return 0;
      j->owner = -1;
      j->until = 0;
      return 1;
  }
}

/* 1 when the two states are the same. */
static int same_state(const mstate *a, const mstate *b) {
  int k;
  for (k = 0; k < MAX_JOBS; k++) {
    const mjob *x = &a->j[k], *y = &b->j[k];
    if (x->exists != y->exists) return 0;
    if (!x->exists) continue;
    if (x->owner != y->owner || x->done != y->done || x->rlen != y->rlen ||
        x->until != y->until || x->fence != y->fence)
      return 0;
    if (x->rlen >= 0 && x->rhash != y->rhash) return 0;
  }
  return 1;
}

/* ------------------------------------------------------------------------
** One trial (parent side).
** ---------------------------------------------------------------------- */

typedef struct tally {
  int losses, violations, errors, lost_trials, fence_trials, max_lost, ckpt_losses;
  int refused;               /* losses inside the first lease_open whose files it then refused */
  int modes[LOSS_COUNT];
  long acked, lost;
  int64_t events_max;
} tally;

static int verbose;
static int keep_files;          /* --replay: leave the files for a look */
static int allow_create_refusal;   /* --allow-create-refusal: see main */
static int expect_violations;   /* the lying phase: violations are the point */

/* Remove the database and every file SQLite keeps beside it. */
static void remove_files(const char *path) {
  static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
  char p[600];
  size_t k;
  for (k = 0; k < sizeof sfx / sizeof sfx[0]; k++) {
    snprintf(p, sizeof p, "%s%s", path, sfx[k]);
    unlink(p);
  }
}

/* The number n of a name "<prefix><n>" given as (p, len) bytes, or -1 when
** it is not one (NULL, too long, other bytes): a database that survived a
** broken sync may hold anything, a NULL id included. */
static int name_number(const char *p, size_t len, const char *prefix) {
  char buf[32];
  size_t k = strlen(prefix), i;
  int n = 0;
  if (!p || len <= k || len >= sizeof buf) return -1;
  memcpy(buf, p, len);
  buf[len] = 0;
  if (strncmp(buf, prefix, k) != 0) return -1;
  for (i = k; i < len; i++) {
    if (buf[i] < '0' || buf[i] > '9' || n > 100000) return -1;
    n = n * 10 + (buf[i] - '0');
  }
  return n;
}

/* Read the recovered database into *m through the public API; 0 on success. */
static int read_state(lease_db *db, mstate *m, char *why, size_t whylen) {
  lease_row rows[MAX_JOBS + 1];
  lease_filter f;
  int n = 0, i, rc;
  memset(m, 0, sizeof *m);
  lease_filter_default(&f);   /* every job, from the start */
  rc = lease_list(db, &f, MAX_JOBS + 1, rows, &n);
  if (rc != LEASE_OK) {
    snprintf(why, whylen, "lease_list: %s", lease_errmsg(db));
    return -1;
  }
  for (i = 0; i < n; i++) {
    int k = name_number(rows[i].id, rows[i].id_len, "job"), o;
    mjob *j;
    if (k < 0 || k >= MAX_JOBS || m->j[k].exists) {
      snprintf(why, whylen, "unexpected row %.*s", rows[i].id ? (int)rows[i].id_len : 6,
               rows[i].id ? rows[i].id : "(NULL)");
      return -1;
    }
    j = &m->j[k];
    j->exists = 1;
    o = name_number(rows[i].owner, rows[i].owner_len, "w");
    j->owner = rows[i].owner ? (o >= 0 ? o : -2) : -1;
    j->until = rows[i].until;
    j->fence = rows[i].fence;
    j->done = rows[i].done;
    j->rlen = rows[i].result ? (int)rows[i].result_len : -1;
    if (rows[i].result) j->rhash = fnv((const unsigned char *)rows[i].result, rows[i].result_len);
  }
  return 0;
}

/* PRAGMA integrity_check through a plain SQLite connection; 0 when "ok". */
static int integrity_ok(const char *path, char *why, size_t whylen) {
  sqlite3 *c = NULL;
  sqlite3_stmt *st = NULL;
  int ok = -1, rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(c, "PRAGMA integrity_check", -1, &st, NULL);
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *r = (const char *)sqlite3_column_text(st, 0);
    if (r && strcmp(r, "ok") == 0 && sqlite3_step(st) == SQLITE_DONE) ok = 0;
    else snprintf(why, whylen, "integrity_check: %s", r ? r : "(null)");
  } else {
    snprintf(why, whylen, "integrity_check: %s", c ? sqlite3_errmsg(c) : "cannot open");
  }
  sqlite3_finalize(st);
  sqlite3_close(c);
  return ok;
}

/* Run one power loss and judge it.  full: every acknowledged operation
** must survive.  Returns 0 when the trial ran (judged into *t), -1 on a
** harness error. */
static int trial(const char *path, int normal, int lying, int full, uint64_t seed, int nops,
                 int64_t crash_point, int mode, tally *t) {
  int fds[2], status = 0, nrec = 0, cap = 0, k;
  rec *recs = NULL, r;
  pid_t pid;
  lease_options opt;
  char why[300] = "";
  lease_options_default(&opt);
  if (normal) opt.synchronous = LEASE_SYNC_NORMAL;
  remove_files(path);
  if (pipe(fds) != 0) return -1;
  fflush(NULL);
  pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    out_fd = fds[1];
    recording = 1;
    crash_at = crash_point;
    crash_mode = mode;
    crash_rng = seed ^ 0x5eedULL;
    lying_sync = lying;
    child_run(path, &opt, seed, nops);
    _exit(4);
  }
  close(fds[1]);
  for (;;) {
    /* a record may arrive in pieces: fill it whole */
    size_t have = 0;
    while (have < sizeof r) {
      ssize_t n = read(fds[0], (char *)&r + have, sizeof r - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      have += (size_t)n;
    }
    if (have == 0) break;
    if (have != sizeof r) { close(fds[0]); waitpid(pid, NULL, 0); free(recs); return -1; }
    if (nrec == cap) {
      rec *g;
      cap = cap ? cap * 2 : 1024;
      g = realloc(recs, (size_t)cap * sizeof *g);
      if (!g) abort();
      recs = g;
    }
    recs[nrec++] = r;
  }
  close(fds[0]);
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 42 || nrec == 0 ||
      recs[nrec - 1].kind != R_CRASH) {
    fprintf(stderr, "powerloss: seed %llu: the child did not end in a power loss (status %d)\n",
            (unsigned long long)seed, status);
    t->errors++;
    free(recs);
    return -1;
  }
  {
    /* Replay the acknowledged operations in the model, keeping the state
    ** after each; note the operations done before the last -wal sync. */
    mstate *snap = malloc((size_t)(nops + 2) * sizeof *snap), got;
    int nacked = 0, inflight = 0, required = 0, opno = 0, match = -1, violation = 0, opened = 0;
    int skip = 0;   /* an allowed refusal: nothing more to check */
    int64_t given[MAX_JOBS];
    const rec *open_op = NULL;
    lease_db *db = NULL;
    if (!snap) abort();
    memset(&snap[0], 0, sizeof snap[0]);
    memset(given, 0, sizeof given);
    for (k = 0; k < nrec; k++) {
      const rec *x = &recs[k];
      if (x->kind == R_BEGIN) { open_op = x; continue; }
      if (x->kind == R_OPENED) opened = 1;
      if (x->kind == R_SYNC && x->rc == F_WAL) required = nacked;
      if (x->kind != R_END) continue;
      {
        int64_t f;
        int granted;
        snap[opno + 1] = snap[opno];
        granted = model_apply(&snap[opno + 1], open_op, opno, seed, &f);
        if (granted != (x->reason == LEASE_GRANTED) || (granted && f != x->fence)) {
          snprintf(why, sizeof why, "op %d: the engine and the model disagree", opno);
          violation = 1;
        }
        if (open_op->op == OP_CLAIM && granted && f > given[open_op->job]) given[open_op->job] = f;
        opno++;
        nacked++;
        open_op = NULL;
      }
    }
    if (open_op) {
      int64_t f;
      snap[nacked + 1] = snap[nacked];
      model_apply(&snap[nacked + 1], open_op, opno, seed, &f);
      inflight = 1;
    }
    if (full) required = nacked;
    t->losses++;
    t->modes[mode]++;
    t->acked += nacked;
    if (recs[nrec - 1].extra) t->ckpt_losses++;
    if (recs[nrec - 1].events > t->events_max) t->events_max = recs[nrec - 1].events;
    /* Recover and read what survived. */
    if (!violation) {
      k = lease_open(path, &opt, &db);
      if (k != LEASE_OK) {
        snprintf(why, sizeof why, "lease_open after the loss%s: %s",
                 opened ? "" : " inside the first lease_open", lease_errmsg(db));
        violation = 1;
        if (!opened) {
          t->refused++;
          if (allow_create_refusal) skip = 1;
        }
      } else if (read_state(db, &got, why, sizeof why) != 0) {
        violation = 1;
      }
    }
    if (skip) violation = 0;
    if (!violation && !skip) {
      for (k = nacked + inflight; k >= 0 && match < 0; k--)
        if (same_state(&snap[k], &got)) match = k;
      if (match < 0) {
        snprintf(why, sizeof why, "the database matches no prefix of the %d operations", nacked);
        violation = 1;
      } else if (match < required) {
        snprintf(why, sizeof why, "%d operations survived, %d were durable", match, required);
        violation = 1;
      }
    }
    if (!skip && (!violation || match >= 0)) {
      int lost = match >= 0 && match < nacked ? nacked - match : 0, fence_lost = 0;
      for (k = 0; k < MAX_JOBS && match >= 0; k++)
        if (given[k] > (got.j[k].exists ? got.j[k].fence : 0)) fence_lost = 1;
      t->lost += lost;
      if (lost) t->lost_trials++;
      if (lost > t->max_lost) t->max_lost = lost;
      if (fence_lost) t->fence_trials++;
      if (fence_lost && full && !violation) {
        snprintf(why, sizeof why, "a fence a claim returned is gone");
        violation = 1;
      }
    }
    /* A claim after recovery: the next fence is the recovered one + 1. */
    if (!violation && !skip && db) {
      for (k = 0; k < MAX_JOBS; k++) {
        int64_t f = 0;
        int reason = -1;
        char id[32];
        if (!got.j[k].exists || got.j[k].done) continue;
        snprintf(id, sizeof id, "job%d", k);
        if (lease_claim(db, id, LEASE_NTS, "after", LEASE_NTS, 1e9, 1, &f, &reason) != LEASE_OK ||
            reason != LEASE_GRANTED || f != got.j[k].fence + 1) {
          snprintf(why, sizeof why, "claim after recovery: %s, reason %d, fence %lld",
                   lease_errmsg(db), reason, (long long)f);
          violation = 1;
        }
        break;
      }
    }
    lease_close(db);
    if (!violation && !skip && integrity_ok(path, why, sizeof why) != 0) violation = 1;
    if (violation) {
      t->violations++;
      if (verbose || (!expect_violations && t->violations <= 3))
        fprintf(stderr, "powerloss: violation (--replay %llu,%lld,%s,%s --ops %d): %s\n",
                (unsigned long long)seed, (long long)crash_point, mode_names[mode],
                lying ? "lying" : normal ? "normal" : "full", nops, why);
    }
    free(snap);
  }
  free(recs);
  if (!keep_files) remove_files(path);
  return 0;
}

/* Add the tally u into t. */
static void add_tally(tally *t, const tally *u) {
  int m;
  t->losses += u->losses;
  t->violations += u->violations;
  t->errors += u->errors;
  t->lost_trials += u->lost_trials;
  t->fence_trials += u->fence_trials;
  t->ckpt_losses += u->ckpt_losses;
  t->refused += u->refused;
  t->acked += u->acked;
  t->lost += u->lost;
  if (u->max_lost > t->max_lost) t->max_lost = u->max_lost;
  if (u->events_max > t->events_max) t->events_max = u->events_max;
  for (m = 0; m < LOSS_COUNT; m++) t->modes[m] += u->modes[m];
}

/* Run n power losses of one kind into *t, on `workers` processes at once;
** 0 unless the harness failed.  Loss number i (from 1) draws its workload
** seed, its I/O event and its mode from seed0 and i alone, so the result
** does not depend on how the losses are spread over the workers. */
static int phase(const char *path, int normal, int lying, int full, uint64_t seed0, int n,
                 int nops, int workers, tally *t) {
  uint64_t s = seed0;
  int64_t span;
  int w, bad = 0;
  pid_t pids[16];
  int fds[16];
  memset(t, 0, sizeof *t);
  /* The first loss comes at the end of the workload: it measures how many
  ** I/O events a workload has, so the others can fall anywhere in it. */
  if (trial(path, normal, lying, full, rnd64(&s), nops, INT64_MAX, LOSS_DROP, t) != 0) return -1;
  span = t->events_max + t->events_max / 5 + 1;
  if (workers > 16) workers = 16;
  for (w = 0; w < workers; w++) {
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    pids[w] = fork();
    if (pids[w] < 0) return -1;
    if (pids[w] == 0) {
      /* a worker: losses w+1, w+1+workers, ... on its own file */
      tally u;
      char wpath[600];
      int i, rc = 0;
      close(p[0]);
      memset(&u, 0, sizeof u);
      snprintf(wpath, sizeof wpath, "%s.%d", path, w);
      for (i = 1 + w; i < n && rc == 0; i += workers) {
        uint64_t si = seed0 ^ ((uint64_t)i * 0xd1b54a32d192ed03ULL), seed = rnd64(&si);
        int64_t at = 1 + (int64_t)(rnd64(&si) % (uint64_t)span);
        rc = trial(wpath, normal, lying, full, seed, nops, at, rnd(&si, LOSS_COUNT), &u);
      }
      if (rc != 0) {
        fprintf(stderr, "powerloss: the harness failed at loss %d of phase seed %llu\n", i - workers,
                (unsigned long long)seed0);
        u.errors++;
      }
      if (write(p[1], &u, sizeof u) != (ssize_t)sizeof u) _exit(1);
      _exit(0);
    }
    close(p[1]);
    fds[w] = p[0];
  }
  for (w = 0; w < workers; w++) {
    tally u;
    int status = 0;
    ssize_t got = read(fds[w], &u, sizeof u);
    close(fds[w]);
    waitpid(pids[w], &status, 0);
    if (got != (ssize_t)sizeof u || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "powerloss: worker %d ended with status %d\n", w, status);
      bad = 1;
    }
    else add_tally(t, &u);
  }
  return bad || t->errors ? -1 : 0;
}

/* One summary line for a phase. */
static void report(const char *name, const tally *t, double secs) {
  int m;
  printf("powerloss %s: %d losses (", name, t->losses);
  for (m = 0; m < LOSS_COUNT; m++) printf("%s%s %d", m ? ", " : "", mode_names[m], t->modes[m]);
  printf("; %d during a checkpoint), %ld operations acknowledged, %ld lost in %d losses"
         " (at most %d in one), fences lost in %d, refused after a loss inside the first"
         " lease_open %d, violations %d, %.1f s\n",
         t->ckpt_losses, t->acked, t->lost, t->lost_trials, t->max_lost, t->fence_trials,
         t->refused, t->violations, secs);
  fflush(stdout);
}

/* Seconds since an arbitrary start. */
static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int losses = 1000, nops = 60, workers = 2, i, fail = 0;
  uint64_t seed = (uint64_t)time(NULL);
  const char *dir = getenv("LEASE_TEST_TMP"), *only = NULL, *replay = NULL;
  char path[512];
  tally t;
  double t0;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--verbose") == 0) { verbose = 1; continue; }
    if (strcmp(a, "--allow-create-refusal") == 0) { allow_create_refusal = 1; continue; }
    if (!v) goto usage;
    if (strcmp(a, "--losses") == 0) losses = atoi(v);
    else if (strcmp(a, "--ops") == 0) nops = atoi(v);
    else if (strcmp(a, "--workers") == 0) workers = atoi(v);
    else if (strcmp(a, "--seed") == 0) seed = strtoull(v, NULL, 10);
    else if (strcmp(a, "--dir") == 0) dir = v;
    else if (strcmp(a, "--only") == 0) only = v;
    else if (strcmp(a, "--replay") == 0) replay = v;
    else goto usage;
    i++;
  }
  if (losses < 1 || nops < 1 || nops > 100000 || workers < 1 || workers > 16) goto usage;
  if (only && strcmp(only, "full") && strcmp(only, "normal") && strcmp(only, "lying")) goto usage;
  if (!dir || !*dir) dir = "/tmp";
  /* Keep freed heap instead of returning it to the system after every
  ** trial: each loss forks, and a heap that shrinks and grows again costs
  ** page faults in every child. */
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mkdir(dir, 0777);
  install_shim();
  snprintf(path, sizeof path, "%s/powerloss-%ld.db", dir, (long)getpid());
  if (replay) {
    /* one trial as a violation message names it: SEED,AT,MODE,SYNC with
    ** SYNC full, normal or lying (FULL with the sync that lies) */
    unsigned long long rs = 0;
    long long at = 0;
    char mode[16] = "", sync[16] = "full";
    int m;
    if (sscanf(replay, "%llu,%lld,%15[a-z],%15[a-z]", &rs, &at, mode, sync) < 3) goto usage;
    for (m = 0; m < LOSS_COUNT && strcmp(mode, mode_names[m]) != 0; m++) {}
    if (m == LOSS_COUNT) goto usage;
    memset(&t, 0, sizeof t);
    verbose = keep_files = 1;
    if (trial(path, strcmp(sync, "normal") == 0, strcmp(sync, "lying") == 0,
              strcmp(sync, "normal") != 0, rs, nops, at, m, &t) != 0)
      return 1;
    printf("powerloss: replay %s: %s; files kept at %s\n", replay,
           t.violations ? "violation" : "ok", path);
    return t.violations ? 1 : 0;
  }
  printf("powerloss: seed %llu, %d operations per workload\n", (unsigned long long)seed, nops);

  if (!only || strcmp(only, "full") == 0) {
    t0 = seconds();
    if (phase(path, 0, 0, 1, seed, losses, nops, workers, &t) != 0) fail = 1;
    report("full", &t, seconds() - t0);
    if (t.violations || t.errors) fail = 1;
  }
  if (!only || strcmp(only, "normal") == 0) {
    t0 = seconds();
    if (phase(path, 1, 0, 0, seed + 1, losses, nops, workers, &t) != 0) fail = 1;
    report("normal", &t, seconds() - t0);
    if (t.violations || t.errors) fail = 1;
    if (t.lost_trials == 0) {
      printf("powerloss normal: no acknowledged operation was lost, so the check never saw a loss\n");
      fail = 1;
    }
  }
  if (!only || strcmp(only, "lying") == 0) {
    int n = losses / 10 > 50 ? losses / 10 : 50;
    expect_violations = 1;
    t0 = seconds();
    if (phase(path, 0, 1, 1, seed + 2, n, nops, workers, &t) != 0) fail = 1;
    report("lying", &t, seconds() - t0);
    if (t.violations == 0) {
      printf("powerloss lying: a sync that makes nothing durable went unnoticed\n");
      fail = 1;
    }
    t0 = seconds();
    if (phase(path, 1, 0, 1, seed + 3, n, nops, workers, &t) != 0) fail = 1;
    report("normal-as-full", &t, seconds() - t0);
    if (t.violations == 0) {
      printf("powerloss normal-as-full: synchronous NORMAL passed FULL's check\n");
      fail = 1;
    }
    expect_violations = 0;
  }
  printf("powerloss: %s\n", fail ? "FAILED" : "ok");
  return fail;
usage:
  fprintf(stderr, "usage: test_powerloss [--losses N] [--ops M] [--seed S] [--dir DIR]"
                  " [--only full|normal|lying] [--verbose] [--replay SEED,AT,MODE,SYNC]\n");
  return 2;
}
