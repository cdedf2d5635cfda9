/*
** fuzz_open.c: libFuzzer harness for lease_open on arbitrary files.
**
** Each input is written as a database file (and, when its flags say so, a
** -wal file beside it) on a tmpfs directory, then opened with lease_open
** (src/lease.h).  What must hold, from lease_open's documentation and the
** "Hostile files" in docs/guarantees.md:
**   - no crash, no sanitizer report, no hang (libFuzzer's -timeout);
**   - a refused file: a result code of the engine's (not LEASE_OK, not
**     LEASE_MISUSE: the arguments are valid), lease_errcode agrees, the
**     message is not empty; the database file is byte-for-byte as it was;
**     when no -wal was given, no -wal, -shm or -journal is left beside it;
**   - an accepted file: a short sequence of operations (enqueue, claim,
**     state, renew, complete, release, claim_next, count, list) each
**     returns LEASE_OK or a proper error code (never LEASE_MISUSE for valid
**     arguments, always with a message); on a file SQLite's quick_check
**     finds sound, count's total is the sum of its parts; and a read-only
**     handle writes nothing: the file stays byte-for-byte as it was.
** A violation aborts (libFuzzer keeps the input as crash-*).
**
** Input layout: byte 0 holds flags (bit 0: open read-only; bit 1: a -wal
** file follows; bit 2: synchronous NORMAL).  Without a -wal the rest is the
** database file.  With one, bytes 1-4 are the database file's length
** (little-endian, reduced modulo what is left plus one), then the database
** file, then the -wal file.
**
** Directory: $LEASE_FUZZ_DIR, else /dev/shm (else /tmp), in a subdirectory
** per process.
*/
#include "lease.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[512], dbpath[600], walpath[620], shmpath[620], jrnpath[620];
static int verbose;   /* LEASE_FUZZ_VERBOSE=1: print each open's outcome */

/* Stop the run: print what failed; libFuzzer's deadly-signal handler keeps the input. */
#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "fuzz_open: %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                            \
      fputc('\n', stderr);                                     \
      abort();                                                 \
    }                                                          \
  } while (0)

/* Write n bytes to path, creating or truncating it. */
static void write_file(const char *path, const uint8_t *p, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0, "cannot create %s: %s", path, strerror(errno));
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    CHECK(w > 0, "cannot write %s: %s", path, strerror(errno));
    p += w;
    n -= (size_t)w;
  }
  close(fd);
}

/* The whole file at path, malloc'ed, its length in *n; NULL when missing. */
static uint8_t *read_file(const char *path, size_t *n) {
  struct stat st;
  uint8_t *p;
  size_t got = 0;
  int fd = open(path, O_RDONLY);
  *n = 0;
  if (fd < 0) return NULL;
  CHECK(fstat(fd, &st) == 0, "cannot stat %s", path);
  p = malloc((size_t)st.st_size + 1);
  CHECK(p != NULL, "out of memory");
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
    CHECK(r > 0, "cannot read %s", path);
    got += (size_t)r;
  }
  close(fd);
  *n = got;
  return p;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* True when the database file holds exactly the n bytes at p. */
static int same_file(const uint8_t *p, size_t n) {
  size_t m;
  uint8_t *now = read_file(dbpath, &m);
  int same = now && m == n && (n == 0 || memcmp(now, p, n) == 0);
  free(now);
  return same;
}

/* A result code of the engine's that says the file or the system failed. */
static void check_error(lease_db *db, int rc, const char *what) {
  CHECK(rc > LEASE_OK && rc <= LEASE_MISMATCH, "%s: result code %d out of range", what, rc);
  CHECK(rc != LEASE_MISUSE, "%s: misuse for valid arguments: %s", what, lease_errmsg(db));
  if (db) {
    CHECK(lease_errcode(db) == rc, "%s: lease_errcode %d, returned %d", what,
          lease_errcode(db), rc);
    CHECK(lease_errmsg(db)[0] != '\0', "%s: empty message", what);
  }
}

/* An operation's result code: LEASE_OK or a proper error. */
static void check_rc(lease_db *db, int rc, const char *what) {
  if (rc != LEASE_OK) check_error(db, rc, what);
}

/* At exit: remove the files and the directory. */
static void cleanup(void) {
  unlink(dbpath);
  unlink(walpath);
  unlink(shmpath);
  unlink(jrnpath);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *base = getenv("LEASE_FUZZ_DIR");
  (void)argc;
  (void)argv;
  const char *v = getenv("LEASE_FUZZ_VERBOSE");
  verbose = v && strcmp(v, "1") == 0;
  if (!base || !base[0]) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(dir, sizeof dir, "%s/lease-fuzz-open-%ld", base, (long)getpid());
  CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST, "cannot create %s: %s", dir, strerror(errno));
  snprintf(dbpath, sizeof dbpath, "%s/f.db", dir);
  snprintf(walpath, sizeof walpath, "%s-wal", dbpath);
  snprintf(shmpath, sizeof shmpath, "%s-shm", dbpath);
  snprintf(jrnpath, sizeof jrnpath, "%s-journal", dbpath);
  atexit(cleanup);
  return 0;
}

/*
** True when SQLite's PRAGMA quick_check finds the accepted file sound.
** lease_open does not read every page (it would cost a scan per open), so
** it accepts some corrupt files; on those an operation may fail with
** LEASE_CORRUPT, or read a row no sound file can hold (a NULL done, which
** no count category takes), so count's sum is checked on sound files only.
*/
static int sound_file(void) {
  sqlite3 *c = NULL;
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (sqlite3_open_v2(dbpath, &c, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(c, "PRAGMA quick_check", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 0);
    ok = t && strcmp((const char *)t, "ok") == 0 && sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  sqlite3_close(c);
  return ok;
}

/* Operations on an accepted file; every one must succeed or fail properly. */
static void exercise(lease_db *db, int sound) {
  int reason = -1, found = 0, count = 0;
  int64_t fence = 0;
  lease_new_job job;
  lease_filter f;
  lease_row row, rows[4];
  lease_job jobs[2];
  lease_counts counts;
  lease_new_job_default(&job);
  job.id = "fz";
  job.id_len = LEASE_NTS;
  lease_filter_default(&f);
  f.now = 2e9;
  check_rc(db, lease_enqueue(db, &job, &reason), "enqueue");
  check_rc(db, lease_claim(db, "fz", 2, "w", 1, 1e9, 10, &fence, &reason), "claim");
  check_rc(db, lease_state(db, "fz", 2, 1e9, &row, &found), "state");
  check_rc(db, lease_renew(db, "fz", 2, "w", 1, fence, 1e9 + 1, 10, &reason), "renew");
  check_rc(db, lease_complete(db, "fz", 2, "w", 1, fence, 1e9 + 2, "r", 1, &reason), "complete");
  check_rc(db, lease_release(db, "fz", 2, "w", 1, fence, &reason), "release");
  check_rc(db, lease_claim_next(db, NULL, 0, "w", 1, 2e9, 10, 2, jobs, &count, NULL), "claim_next");
  check_rc(db, lease_count(db, 2e9, NULL, 0, &counts), "count");
  if (sound && lease_count(db, 2e9, NULL, 0, &counts) == LEASE_OK)
    CHECK(counts.total == counts.ready + counts.held + counts.done + counts.blocked,
          "count: total %lld is not the sum of its parts", (long long)counts.total);
  check_rc(db, lease_list(db, &f, 4, rows, &count), "list");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lease_options opt;
  lease_db *db = NULL;
  const uint8_t *file, *wal = NULL;
  size_t file_len, wal_len = 0;
  int flags, rc;
  if (size < 1) return 0;
  flags = data[0];
  file = data + 1;
  file_len = size - 1;
  if (flags & 2) {
    uint32_t n;
    if (size < 5) return 0;
    n = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
        (uint32_t)data[4] << 24;
    file = data + 5;
    file_len = n % (size - 5 + 1);
    wal = file + file_len;
    wal_len = size - 5 - file_len;
  }
  unlink(dbpath);
  unlink(walpath);
  unlink(shmpath);
  unlink(jrnpath);
  write_file(dbpath, file, file_len);
  if (wal) write_file(walpath, wal, wal_len);

  lease_options_default(&opt);
  opt.busy_timeout_ms = 0;   /* nobody else holds a lock: never wait */
  if (flags & 1) opt.flags = LEASE_OPEN_READONLY;
  if (flags & 4) opt.synchronous = LEASE_SYNC_NORMAL;
  rc = lease_open(dbpath, &opt, &db);
  CHECK(db != NULL, "lease_open gave no handle (rc %d)", rc);
  if (verbose)
    fprintf(stderr, "fuzz_open: %zu-byte file%s%s: %s%s%s\n", file_len, wal ? " with a -wal" : "",
            flags & 1 ? ", read-only" : "", lease_errname(rc), rc ? ": " : "",
            rc ? lease_errmsg(db) : "");
  if (rc != LEASE_OK) {
    check_error(db, rc, "lease_open");
    lease_close(db);
    CHECK(same_file(file, file_len), "refused (%s) but the file changed", lease_errname(rc));
    if (!wal) {
      CHECK(!exists(walpath), "refused (%s) but %s was left", lease_errname(rc), walpath);
      CHECK(!exists(shmpath), "refused (%s) but %s was left", lease_errname(rc), shmpath);
      CHECK(!exists(jrnpath), "refused (%s) but %s was left", lease_errname(rc), jrnpath);
    }
    return 0;
  }
  CHECK(lease_errcode(db) == LEASE_OK, "opened, yet lease_errcode is %d", lease_errcode(db));
  exercise(db, sound_file());
  lease_close(db);
  if ((flags & 1) && !wal)
    CHECK(same_file(file, file_len), "a read-only handle changed the file");
  return 0;
}
