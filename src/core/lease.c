/*
** lease.c: the core of the public C API (lease.h).  No SQL and no Lua here.
**
** Each public function checks its arguments (a bad one is LEASE_MISUSE,
** with nothing touched), resolves LEASE_NTS lengths, and calls the
** handle's backend (lease_int.h: lease__backend), which runs the operation
** on its storage engine.  The error state of a handle, the code tables and
** their words live here too.
*/
#include "lease.h"
#include "lease_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Code tables: one list each (lease.h, lease_int.h)                      */
/* ===================================================================== */

#define LEASE_WORD_(name, word) word,
static const char *const rc_words[] = {LEASE_RC_MAP(LEASE_WORD_)};
static const char *const reason_words[] = {LEASE_REASON_MAP(LEASE_WORD_)};
#undef LEASE_WORD_

_Static_assert(sizeof rc_words / sizeof rc_words[0] == LEASE__RC_COUNT,
               "one word per result code");
_Static_assert(sizeof reason_words / sizeof reason_words[0] == LEASE__REASON_COUNT,
               "one word per reason");

/* Blocked codes, indexed by code: message and result code. */
static const struct blocked_kind {
  const char *msg;
  int rc;
} blocked_kinds[LEASE__BLOCKED_END] = {
#define LEASE_BLOCKED_ROW_(name, code, rc, msg) [code] = {msg, rc},
  LEASE__BLOCKED_MAP(LEASE_BLOCKED_ROW_)
#undef LEASE_BLOCKED_ROW_
};

#define LEASE_BLOCKED_ONE_(name, code, rc, msg) +1
_Static_assert(LEASE__BLOCKED_END == 1 + (0 LEASE__BLOCKED_MAP(LEASE_BLOCKED_ONE_)),
               "blocked codes run 1, 2, ... without a gap");
#undef LEASE_BLOCKED_ONE_

/* See lease.h. */
const char *lease_errname(int rc) {
  if (rc < 0 || rc >= LEASE__RC_COUNT) return "unknown";
  return rc_words[rc];
}

/* See lease.h. */
const char *lease_reason_name(int reason) {
  if (reason < 0 || reason >= LEASE__REASON_COUNT) return "unknown";
  return reason_words[reason];
}

/* See lease_int.h. */
const char *lease__blocked_msg(int code) {
  if (code <= 0 || code >= LEASE__BLOCKED_END) return NULL;
  return blocked_kinds[code].msg;
}

/* See lease_int.h. */
int lease__blocked_fail(lease_db *db, int code, const char *verb) {
  const char *msg = lease__blocked_msg(code);
  if (!msg) return lease__fail(db, LEASE_ERROR, "internal error: unknown blocked code %d", code);
  return lease__fail(db, blocked_kinds[code].rc, "cannot %s this job: %s", verb, msg);
}

/* ===================================================================== */
/* Error state                                                            */
/* ===================================================================== */

/* Clear the error state at the start of a call. */
static void clear_error(lease_db *db) {
  db->rc = LEASE_OK;
  db->xrc = 0;
  db->errmsg[0] = '\0';
}

/* Replace every occurrence of each of db's secrets in msg (cap bytes) by
** "***".  The message is formatted into a buffer larger than db->errmsg
** and scrubbed before it is cut to size, so no secret is cut in half and
** missed. */
static void scrub(const lease_db *db, char *msg, size_t cap) {
  const char *s;
  if (!db->secrets) return;
  for (s = db->secrets; *s; s += strlen(s) + 1) {
    char out[4 * LEASE__ERRMSG_MAX];
    const char *m = msg;
    size_t n = strlen(s), o = 0;
    if (!strstr(msg, s)) continue;
    while (*m && o + 4 < sizeof out) {
      if (strncmp(m, s, n) == 0) {
        memcpy(out + o, "***", 3);
        o += 3;
        m += n;
      } else {
        out[o++] = *m++;
      }
    }
    out[o] = '\0';
    memcpy(msg, out, o + 1 <= cap ? o + 1 : cap);
    msg[cap - 1] = '\0';
  }
}

/* See lease_int.h. */
int lease__fail(lease_db *db, int rc, const char *fmt, ...) {
  va_list ap;
  char msg[4 * LEASE__ERRMSG_MAX];
  size_t n;
  db->rc = rc;
  db->xrc = 0;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  scrub(db, msg, sizeof msg);
  n = strlen(msg);
  if (n >= sizeof db->errmsg) n = sizeof db->errmsg - 1;
  memcpy(db->errmsg, msg, n);
  db->errmsg[n] = '\0';
  return rc;
}

/* See lease_int.h. */
int lease__set_error(lease_db *db, int rc, int xrc, const char *msg) {
  lease__fail(db, rc, "%s", msg ? msg : lease_errname(rc));
  db->xrc = xrc;
  return rc;
}

/* See lease_int.h. */
int lease__reserve(lease_db *db, size_t n) {
  if (n > db->bufcap) {
    char *p = realloc(db->buf, n);
    if (!p) return lease__fail(db, LEASE_NOMEM, "out of memory");
    db->buf = p;
    db->bufcap = n;
  }
  return LEASE_OK;
}

/* See lease_int.h. */
lease_db *lease__hold(lease_db *db) {
  if (!db) return NULL;
  return atomic_exchange_explicit(&db->busy, 1, memory_order_acquire) ? NULL : db;
}

/* See lease_int.h. */
void lease__unhold(lease_db **held) {
  if (*held) atomic_store_explicit(&(*held)->busy, 0, memory_order_release);
}

/* Refuse a NULL or closed handle, or one inside a with_lease callback.
** Another thread's call while a callback runs (db->tx set, the flag let
** go) is refused without touching db's error state, which the callback's
** tx calls use.  Evaluates to the code to return. */
#define CHECK_OPEN(db)                                                \
  do {                                                                \
    if (!(db)) return LEASE_MISUSE;                                   \
    if ((db)->tx && !pthread_equal((db)->tx->thread, pthread_self())) return LEASE_MISUSE; \
    clear_error(db);                                                  \
    (db)->clock_now = (db)->clock_lo = (db)->clock_hi = NAN;          \
    (db)->clock_read = 0;                                             \
    (db)->has_dup = 0;                                                \
    (db)->refused = 0;   /* lease_enqueue_refused speaks of the last call */ \
    if (!(db)->conn) return lease__fail((db), LEASE_MISUSE, "the database is closed"); \
    if ((db)->tx) return lease__fail((db), LEASE_MISUSE, "this handle is inside a with_lease " \
                                     "callback: use its tx"); \
  } while (0)

/* The start of every public function on a handle: the busy flag taken
** (LEASE__HOLD), then CHECK_OPEN. */
#define CHECK_DB(db) \
  LEASE__HOLD(db);   \
  CHECK_OPEN(db)

/* See lease_int.h: CHECK_OPEN as a function, for the functions of the
** other files, which take the flag themselves (LEASE__HOLD). */
int lease__begin(lease_db *db) {
  CHECK_OPEN(db);
  return LEASE_OK;
}

/* See lease_int.h. */
void lease__options(const lease_db *db, lease_options *out) { *out = db->opt; }

/* See lease_int.h. */
int lease__private(const lease_db *db) {
  return !db || !db->conn || db->be->is_private(db);
}

/* See lease.h. */
int lease_errcode(const lease_db *db) { return db ? db->rc : LEASE_NOMEM; }

/* See lease.h. */
int lease_extended_errcode(const lease_db *db) { return db ? db->xrc : 0; }

/* See lease.h. */
const char *lease_errmsg(const lease_db *db) {
  if (!db) return "out of memory";
  if (db->rc == LEASE_OK) return "not an error";
  return db->errmsg[0] ? db->errmsg : lease_errname(db->rc);
}

/* See lease.h. */
const char *lease_path(const lease_db *db) { return db && db->path ? db->path : ""; }

/* See lease.h. */
const char *lease_name(const lease_db *db) { return db && db->name ? db->name : ""; }

/* ===================================================================== */
/* Argument checks                                                        */
/* ===================================================================== */

/*
** Refuse a string longer than the connection can store (SQLite's
** SQLITE_LIMIT_LENGTH, 10^9 bytes in Debian's build).  Checked before the
** backend sees it: SQLite's bind refuses such a string and leaves the
** parameter NULL, so unchecked a result would be stored as NULL and
** reported stored.  what: how the message names the argument.
*/
static int check_length(lease_db *db, const char *what, size_t len) {
  size_t limit = db->be->max_length(db);
  if (len > limit)
    return lease__fail(db, LEASE_MISUSE, "%s is %zu bytes, more than %s's limit of %zu", what, len,
                       db->be->name, limit);
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__check_bytes(lease_db *db, const char *what, const char *s, size_t *len) {
  if (!s) return lease__fail(db, LEASE_MISUSE, "%s must not be NULL", what);
  if (*len == LEASE_NTS) *len = strlen(s);
  if (*len == 0) return lease__fail(db, LEASE_MISUSE, "%s must not be empty", what);
  return check_length(db, what, *len);
}

/* lease__check_bytes for item i (0-based) of a list, named by its 1-based position. */
static int check_item(lease_db *db, const char *what, int i, const char *s, size_t *len) {
  char name[48];
  snprintf(name, sizeof name, "%s %d", what, i + 1);
  return lease__check_bytes(db, name, s, len);
}

/* Resolve and check an optional result (NULL stays NULL). */
static int check_result(lease_db *db, const char *what, const char *s, size_t *len) {
  if (!s) {
    *len = 0;
    return LEASE_OK;
  }
  if (*len == LEASE_NTS) *len = strlen(s);
  return check_length(db, what, *len);
}

/* See lease.h.  The sum check catches a ttl too small to change a huge now
** (and an overflow to infinity), so a lease always ends after it starts. */
int lease_check_time(double now, double ttl, const char **why) {
  const char *msg = NULL;
  int arg = 0;
  if (!isfinite(now)) { arg = LEASE_ARG_NOW; msg = "now must be a finite number"; }
  else if (isnan(ttl) || !(ttl > 0)) { arg = LEASE_ARG_TTL; msg = "ttl must be a number > 0"; }
  else if (!isfinite(ttl)) { arg = LEASE_ARG_TTL; msg = "ttl must be finite"; }
  else if (!isfinite(now + ttl) || !(now + ttl > now)) {
    arg = LEASE_ARG_TTL;
    msg = "now + ttl must be a finite number greater than now";
  }
  if (why) *why = msg;
  return arg;
}

/* Fill *w for op with id and owner checked, and the time pair when ttl is
** used (claim, renew). */
static int check_write(lease_db *db, lease__write *w, lease__op op, const char *id,
                       size_t id_len, const char *owner, size_t owner_len) {
  memset(w, 0, sizeof *w);
  w->op = op;
  if (lease__check_bytes(db, "id", id, &id_len)) return db->rc;
  if (lease__check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  w->id = id;
  w->id_len = id_len;
  w->owner = owner;
  w->owner_len = owner_len;
  return LEASE_OK;
}

/* Check (now, ttl) into w->now and w->until. */
static int check_time(lease_db *db, lease__write *w, double now, double ttl) {
  const char *msg;
  if (lease_check_time(now, ttl, &msg)) return lease__fail(db, LEASE_MISUSE, "%s", msg);
  w->now = now;
  w->until = now + ttl;
  db->clock_now = now;
  return LEASE_OK;
}

/* Check that now is finite into w->now. */
static int check_now(lease_db *db, lease__write *w, double now) {
  if (!isfinite(now)) return lease__fail(db, LEASE_MISUSE, "now must be a finite number");
  w->now = now;
  db->clock_now = now;
  return LEASE_OK;
}

/* ===================================================================== */
/* Opening and closing                                                    */
/* ===================================================================== */

/* See lease.h. */
void lease_options_default(lease_options *opt) {
  if (!opt) return;
  opt->busy_timeout_ms = 10000;
  opt->synchronous = LEASE_SYNC_FULL;
  opt->flags = 0;
  opt->clock_factor = LEASE_CLOCK_FACTOR;
  opt->events_keep = 0;
  opt->events_max_age = 0;
}

/* Refuse options lease.h does not allow. */
static int check_options(lease_db *db, const lease_options *opt) {
  if (opt->busy_timeout_ms < 0)
    return lease__fail(db, LEASE_MISUSE, "busy_timeout_ms must be >= 0");
  if (opt->synchronous != LEASE_SYNC_FULL && opt->synchronous != LEASE_SYNC_NORMAL)
    return lease__fail(db, LEASE_MISUSE,
                       "synchronous must be LEASE_SYNC_FULL or LEASE_SYNC_NORMAL");
  if (opt->flags & ~(LEASE_OPEN_READONLY | LEASE_OPEN_NOCREATE | LEASE_OPEN_NO_GROUP_COMMIT))
    return lease__fail(db, LEASE_MISUSE, "unknown open flags");
  if (!(opt->clock_factor == 0 || (opt->clock_factor > 1 && isfinite(opt->clock_factor))))
    return lease__fail(db, LEASE_MISUSE, "clock_factor must be 0 (no check) or a finite number > 1");
  if (opt->events_keep < 0)
    return lease__fail(db, LEASE_MISUSE, "events_keep must be >= 0 (0: no events)");
  if (!(opt->events_max_age == 0 || (opt->events_max_age > 0 && isfinite(opt->events_max_age))))
    return lease__fail(db, LEASE_MISUSE, "events_max_age must be 0 (no age bound) or a finite number > 0");
  return LEASE_OK;
}

/* 1 when now and mark are both plausible clocks (at least
** LEASE__CLOCK_FLOOR) and off from each other by factor (> 1; 0: never). */
static int clock_off(double now, double mark, double factor) {
  if (factor == 0 || !(now >= LEASE__CLOCK_FLOOR) || !(mark >= LEASE__CLOCK_FLOOR)) return 0;
  return now >= mark * factor || mark >= now * factor;
}

/* Record the refusal of time t, argument what ("now", "run_at"), against
** mark by factor. */
static int clock_refused(lease_db *db, const char *what, double t, double mark, double factor) {
  return lease__fail(db, LEASE_MISUSE,
                     "%s %.17g is off by a factor of %g or more from the database's clock mark "
                     "%.17g (the highest now it has seen): another time unit? (the option "
                     "clock_factor widens the check, clock_check = false turns it off)",
                     what, t, factor, mark);
}

/* The factor a time besides now is checked by (lease_int.h:
** LEASE__CLOCK_ALSO_FACTOR). */
static double also_factor(const lease_db *db) {
  return fmax(db->opt.clock_factor, LEASE__CLOCK_ALSO_FACTOR);
}

/* The time noted by lease__clock_also that is off from mark (the least or
** the greatest: the others lie between them), else NAN. */
static double also_off(const lease_db *db, double mark) {
  double f = also_factor(db);
  if (isnan(db->clock_lo)) return NAN;
  if (clock_off(db->clock_lo, mark, f)) return db->clock_lo;
  if (clock_off(db->clock_hi, mark, f)) return db->clock_hi;
  return NAN;
}

/* See lease_int.h. */
void lease__clock_also(lease_db *db, const char *what, double t) {
  if (db->opt.clock_factor == 0 || !(t >= LEASE__CLOCK_FLOOR) || !isfinite(t)) return;
  db->clock_what = what;
  if (isnan(db->clock_lo) || t < db->clock_lo) db->clock_lo = t;
  if (isnan(db->clock_hi) || t > db->clock_hi) db->clock_hi = t;
}

/* See lease_int.h. */
int lease__clock_due(const lease_db *db, int version) {
  if (!LEASE_SCHEMA_HAS(version, CLOCK) || (db->opt.flags & LEASE_OPEN_READONLY)) return 0;
  if (!isnan(db->clock_now) || db->clock_read) return 1;
  return !isnan(db->clock_lo) && (isnan(db->clock_mark) || !isnan(also_off(db, db->clock_mark)));
}

/* 1 when a write at now is to store it as the new mark: now is past the
** mark by more than a step (LEASE__CLOCK_STEP of it, at least 1).  No mark
** counts as 0, the time the jobs made before there was one are due from,
** so the first mark is above it and a job made later never goes before
** them (a first now below 1 stores none). */
static int clock_moves(double now, double mark) {
  double m = isnan(mark) ? 0 : mark;
  return now > m + fmax(1.0, fabs(m) * LEASE__CLOCK_STEP);
}

/* See lease_int.h.  A mark that is not finite (another client stored
** -Inf or +Inf, or a text either backend reads as one) counts as none, as
** a mark that is not a number does: the write stores its now over it.
** Kept, -Inf would never move (-Inf plus its step is NaN) and would leave
** the check off for good; +Inf would refuse every now as another unit. */
int lease__clock(lease_db *db, double mark, int *move) {
  double now = db->clock_now, off;
  *move = 0;
  if (!isfinite(mark)) mark = NAN;
  db->clock_mark = mark;
  /* now first: a call whose now is in another unit is told so, not of
  ** its run_at in the same unit */
  if (!isnan(now) && clock_off(now, mark, db->opt.clock_factor))
    return clock_refused(db, "now", now, mark, db->opt.clock_factor);
  if (!isnan(off = also_off(db, mark)))
    return clock_refused(db, db->clock_what, off, mark, also_factor(db));
  if (isnan(now)) return LEASE_OK;
  *move = clock_moves(now, mark);
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__clock_settled(const lease_db *db) {
  double now = db->clock_now, mark = db->clock_mark;
  if (!isnan(also_off(db, mark))) return 0;
  if (isnan(now)) return 1;
  return !clock_off(now, mark, db->opt.clock_factor) && !clock_moves(now, mark);
}

/* See lease_int.h. */
void lease__clear_error(lease_db *db) { clear_error(db); }

/* Refuse (recorded) a finite now off from mark by the handle's factor;
** LEASE_OK otherwise.  Checks only: reads and moves nothing. */
static int now_checked(lease_db *db, double now, double mark) {
  if (isfinite(now) && clock_off(now, mark, db->opt.clock_factor))
    return clock_refused(db, "now", now, mark, db->opt.clock_factor);
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__clock_cached(lease_db *db, double now) {
  return now_checked(db, now, db->clock_mark);
}

/* See lease_int.h. */
int lease__clock_in_tx(lease_db *db, double now, double stepped) {
  double mark = db->clock_mark;
  if (isnan(mark) || stepped > mark) mark = stepped;
  return now_checked(db, now, mark);
}

/* See lease.h.  A PostgreSQL connection string goes to the PostgreSQL
** backend, any other path to SQLite's, as is. */
int lease_open(const char *path, const lease_options *opt, lease_db **out) {
  lease_db *db;
  size_t n;
  int rc;
  if (!out) return LEASE_MISUSE;
  *out = db = calloc(1, sizeof *db);
  if (!db) return LEASE_NOMEM;
  db->be = lease__pg_path(path) ? &lease__pg : &lease__sqlite;
  if (!path) return lease__fail(db, LEASE_MISUSE, "path must not be NULL");
  n = strlen(path);
  if (!(db->path = malloc(n + 1))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  memcpy(db->path, path, n + 1);
  if (db->be != &lease__pg) db->name = db->path;
  else if ((rc = lease__pg_redact(db)) != LEASE_OK) return rc;
  if (opt) db->opt = *opt;
  else lease_options_default(&db->opt);
  db->clock_now = db->clock_mark = db->clock_lo = db->clock_hi = NAN;
  if ((rc = check_options(db, &db->opt)) != LEASE_OK) return rc;
  if ((rc = db->be->open(db)) != LEASE_OK) {
    db->be->close(db);
    return rc;
  }
  clear_error(db);
  return LEASE_OK;
}

/* See lease.h. */
int lease_close(lease_db *db) {
  if (!db) return LEASE_OK;
  db->be->close(db);
  if (db->name != db->path) free(db->name);
  free(db->secrets);
  free(db->path);
  free(db->buf);
  free(db->dup);
  free(db);
  return LEASE_OK;
}

/* See lease_int.h. */
int lease__duplicate(lease_db *db, const char *id, size_t id_len) {
  if (id_len + 1 > db->dup_cap) {
    char *p = realloc(db->dup, id_len + 1);
    if (!p) return lease__fail(db, LEASE_NOMEM, "out of memory");
    db->dup = p;
    db->dup_cap = id_len + 1;
  }
  if (id_len) memcpy(db->dup, id, id_len);
  db->dup[id_len] = '\0';
  db->dup_len = id_len;
  db->has_dup = 1;
  return LEASE_OK;
}

/* See lease.h. */
const char *lease_duplicate_id(const lease_db *db, size_t *len) {
  int has = db && db->has_dup;
  if (len) *len = has ? db->dup_len : 0;
  return has ? db->dup : NULL;
}

/* ===================================================================== */
/* The operations                                                         */
/* ===================================================================== */

/* See lease.h (contract step 1). */
int lease_init(lease_db *db) {
  CHECK_DB(db);
  return db->be->init(db);
}

/* See lease.h (contract step 4). */
int lease_claim(lease_db *db, const char *id, size_t id_len, const char *owner,
                size_t owner_len, double now, double ttl, int64_t *fence, int *reason) {
  lease__write w;
  CHECK_DB(db);
  if (fence) *fence = 0;
  if (!fence) return lease__fail(db, LEASE_MISUSE, "fence must not be NULL: a claim granted hands it out");
  if (check_write(db, &w, LEASE__CLAIM, id, id_len, owner, owner_len)) return db->rc;
  if (check_time(db, &w, now, ttl)) return db->rc;
  return db->be->write(db, &w, fence, reason);
}

/* See lease.h (contract step 5). */
int lease_renew(lease_db *db, const char *id, size_t id_len, const char *owner,
                size_t owner_len, int64_t fence, double now, double ttl, int *reason) {
  lease__write w;
  CHECK_DB(db);
  if (check_write(db, &w, LEASE__RENEW, id, id_len, owner, owner_len)) return db->rc;
  if (check_time(db, &w, now, ttl)) return db->rc;
  w.fence = fence;
  return db->be->write(db, &w, NULL, reason);
}

/* See lease_int.h: complete's arguments checked into *w. */
int lease__check_complete(lease_db *db, lease__write *w, const char *id, size_t id_len,
                          const char *owner, size_t owner_len, int64_t fence, double now,
                          const char *result, size_t result_len) {
  if (check_write(db, w, LEASE__COMPLETE, id, id_len, owner, owner_len)) return db->rc;
  if (check_now(db, w, now)) return db->rc;
  if (check_result(db, "result", result, &result_len)) return db->rc;
  w->fence = fence;
  w->result = result;
  w->result_len = result_len;
  return LEASE_OK;
}

/* See lease.h (contract step 6). */
int lease_complete(lease_db *db, const char *id, size_t id_len, const char *owner,
                   size_t owner_len, int64_t fence, double now, const char *result,
                   size_t result_len, int *reason) {
  lease__write w;
  int why = LEASE_GRANTED;
  CHECK_DB(db);
  if (lease__check_complete(db, &w, id, id_len, owner, owner_len, fence, now, result,
                            result_len))
    return db->rc;
  if (db->be->write(db, &w, NULL, &why) != LEASE_OK) return db->rc;
  /* a slot of a limited queue is free: its waiters look */
  if (why == LEASE_GRANTED) lease__wake_limited(db);
  if (reason) *reason = why;
  return LEASE_OK;
}

/* See lease.h (contract step 7). */
int lease_release(lease_db *db, const char *id, size_t id_len, const char *owner,
                  size_t owner_len, int64_t fence, int *reason) {
  lease__write w;
  int why = LEASE_GRANTED;
  CHECK_DB(db);
  if (check_write(db, &w, LEASE__RELEASE, id, id_len, owner, owner_len)) return db->rc;
  w.fence = fence;
  if (db->be->write(db, &w, NULL, &why) != LEASE_OK) return db->rc;
  /* the job is claimable at once: its waiters look */
  if (why == LEASE_GRANTED) lease__wake(db, NULL, 0);
  if (reason) *reason = why;
  return LEASE_OK;
}

/* See lease_int.h: complete_many's arguments checked into *w. */
int lease__check_complete_many(lease_db *db, lease__write *w, const char *owner,
                               size_t owner_len, double now, const lease_result *items, int n,
                               int *stored) {
  int i;
  if (stored) *stored = 0;
  if (n < 0 || (n > 0 && !items)) return lease__fail(db, LEASE_MISUSE, "items must hold n entries");
  memset(w, 0, sizeof *w);
  w->op = LEASE__COMPLETE;
  if (lease__check_bytes(db, "owner", owner, &owner_len)) return db->rc;
  if (check_now(db, w, now)) return db->rc;
  w->owner = owner;
  w->owner_len = owner_len;
  for (i = 0; i < n; i++) {
    size_t len = items[i].id_len, rlen = items[i].result_len;
    char what[32];
    if (check_item(db, "id", i, items[i].id, &len)) return db->rc;
    snprintf(what, sizeof what, "result %d", i + 1);
    if (check_result(db, what, items[i].result, &rlen)) return db->rc;
  }
  return LEASE_OK;
}

/* See lease.h (contract step 6, for many jobs in one transaction).  Every
** item is checked before the backend writes anything. */
int lease_complete_many(lease_db *db, const char *owner, size_t owner_len, double now,
                        const lease_result *items, int n, int *reasons, int *stored) {
  lease__write w;
  int kept = 0;
  CHECK_DB(db);
  if (lease__check_complete_many(db, &w, owner, owner_len, now, items, n, stored)) return db->rc;
  if (n == 0) return LEASE_OK;
  if (db->be->complete_many(db, &w, items, n, reasons, &kept) != LEASE_OK) return db->rc;
  /* slots of a limited queue are free: its waiters look */
  if (kept > 0) lease__wake_limited(db);
  if (stored) *stored = kept;
  return LEASE_OK;
}

/* See lease.h. */
int lease_read_settings(lease_db *db, lease_settings *out) {
  CHECK_DB(db);
  if (!out) return lease__fail(db, LEASE_MISUSE, "out must not be NULL");
  memset(out, 0, sizeof *out);
  out->busy_timeout_ms = db->opt.busy_timeout_ms;
  out->schema_version = db->schema_version;
  return db->be->settings(db, out);
}

/* See lease.h. */
int lease_file_id(lease_db *db, uint64_t *dev, uint64_t *ino) {
  if (dev) *dev = 0;
  if (ino) *ino = 0;
  CHECK_DB(db);
  if (!dev || !ino) return lease__fail(db, LEASE_MISUSE, "dev and ino must not be NULL");
  if (!db->be->file_id)
    return lease__fail(db, LEASE_ERROR, "lease_file_id is not supported by the %s backend: it "
                       "holds no file", db->be->name);
  return db->be->file_id(db, dev, ino);
}

/* See lease.h. */
int lease_server_now(lease_db *db, double *out) {
  CHECK_DB(db);
  if (!out) return lease__fail(db, LEASE_MISUSE, "out must not be NULL");
  *out = 0;
  return db->be->server_now(db, out);
}
