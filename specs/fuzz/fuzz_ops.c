/*
** fuzz_ops.c: libFuzzer harness driving random operation sequences through
** the C API (src/lease.h) against an in-process model of the contract.
**
** The model is docs/contract/CONTRACT.md steps 2-8 as lease.h words them:
** enqueue inserts or says "exists"; claim takes a job that exists, is not
** done and has until <= now (the boundary now == until is claimable), the
** fence grows by 1; renew and complete need owner and fence to match,
** done = 0 and until > now, release needs owner, fence and done = 0; the
** reasons come in lease.h's order (missing, done, held / missing, done,
** not_owner, stale_fence, expired); claim_next takes the oldest ready jobs
** in enqueue order; claim_many grants exactly one owner of a free job;
** complete_many and enqueue_many act as their single forms, in order;
** complete_claim_next as complete, then claim_next for the same owner.
** Bad arguments (NULL or empty ids and owners, LEASE_NTS, lengths past
** LEASE_MAX_LENGTH, NaN or infinite now, ttl <= 0, now + ttl not past now,
** max < 1, n < 0, an unknown list kind) are LEASE_MISUSE, the message names
** the argument, and nothing in the database changes.
**
** Each input is a program: a sequence of operations, each an opcode byte
** followed by the bytes its arguments consume (see next_* below).  After
** every operation the harness compares what the call returned with the
** model, then the whole table (lease_list) with the model's jobs, field by
** field (owner, until, fence, result, done, enqueue order).  A disagreement
** aborts with "model disagrees" and the input is kept by libFuzzer.
**
** The database is a file on tmpfs ($LEASE_FUZZ_DIR, else /dev/shm, else
** /tmp), made anew for every input, so that claim_many (which needs a file
** other connections can open) runs for real.  It is opened with the
** clock-unit guard off (clock_factor 0): the model has no clock mark, and
** the extreme times the harness picks (2^53, DBL_MAX) would otherwise be
** refused as another time unit; specs/54-clock_spec.lua tests the guard.
**
** Self-check: with LEASE_FUZZ_SELFCHECK=1 in the environment the model is
** deliberately wrong (it treats now == until as still held, the broken
** change of contract step 4).  scripts/fuzz runs the seed corpus so and
** requires a "model disagrees" failure, which shows the comparisons bite.
*/
#include "lease.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ===================================================================== */
/* Failing                                                                */
/* ===================================================================== */

static int op_index;           /* the operation being checked, from 0 */
static const char *op_name = "";

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "fuzz_ops: model disagrees at operation %d (%s), %s:%d: ", \
              op_index, op_name, __FILE__, __LINE__);                      \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
      abort();                                                             \
    }                                                                      \
  } while (0)

/* Stop on a failure of the harness itself (not a disagreement). */
#define REQUIRE(cond, ...)                                       \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "fuzz_ops: harness failure: ");            \
      fprintf(stderr, __VA_ARGS__);                              \
      fputc('\n', stderr);                                       \
      abort();                                                   \
    }                                                            \
  } while (0)

/* ===================================================================== */
/* The model                                                              */
/* ===================================================================== */

#define MAX_JOBS 48
#define MAX_STR 24          /* longest id, owner or result the harness makes */
#define MAX_BATCH 5         /* items in one claim_many, complete_many, enqueue_many */

typedef struct bytes {
  size_t len;
  char b[MAX_STR + 1];
} bytes;

typedef struct mjob {
  bytes id;
  int has_owner;
  bytes owner;
  double until;
  int64_t fence;
  int has_result;
  bytes result;
  int done;
} mjob;

static mjob jobs[MAX_JOBS];    /* in enqueue (rowid) order */
static int njobs;
static int selfcheck;
static int many_calls;         /* claim_many calls in this input: each starts threads */

static int same(const char *a, size_t alen, const char *b, size_t blen) {
  return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static mjob *find(const char *id, size_t len) {
  int i;
  for (i = 0; i < njobs; i++)
    if (same(jobs[i].id.b, jobs[i].id.len, id, len)) return &jobs[i];
  return NULL;
}

/* Held per the contract: until > now.  The self-check breaks it. */
static int held(const mjob *j, double now) {
  return selfcheck ? j->until >= now : j->until > now;
}

/* ===================================================================== */
/* Reading the program                                                    */
/* ===================================================================== */

static const uint8_t *in;
static size_t in_left;
static double clock_now;      /* the program's clock: most times are near it */

static uint8_t next_u8(void) {
  if (!in_left) return 0;
  in_left--;
  return *in++;
}

static uint64_t next_u64(void) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v |= (uint64_t)next_u8() << (8 * i);
  return v;
}

/* An argument string as passed: pointer (maybe NULL) and length (maybe
** LEASE_NTS or past the limit). */
typedef struct arg {
  const char *p;
  size_t len;
  bytes buf;
} arg;

static const char *const pool[] = {
  "a", "b", "a\0", "a\0b", "\0", "job-1", "x\xff\xfe", "A", "w1", "w2", "w\0", "w1 ",
};
static const size_t pool_len[] = {1, 1, 2, 3, 1, 5, 3, 1, 2, 2, 2, 3};
#define NPOOL (sizeof pool / sizeof pool[0])

/*
** Fill *a from the program.  `current` (may be NULL) is the value to reuse
** most often (the job's owner, an existing id), so that operations succeed
** often enough to reach deep states.
*/
static void next_arg(arg *a, const bytes *current) {
  uint8_t sel = next_u8(), lm;
  size_t n, i;
  memset(&a->buf, 0, sizeof a->buf);
  a->p = a->buf.b;
  if (sel % 16 == 0) {
    a->p = NULL;
  } else if (sel % 16 < 8) {
    i = (size_t)(sel % 16 - 1) * 2 + (sel >> 7);
    i %= NPOOL;
    memcpy(a->buf.b, pool[i], pool_len[i]);
    a->buf.len = pool_len[i];
  } else if (sel % 16 < 11) {
    n = next_u8() % 13;
    for (i = 0; i < n; i++) a->buf.b[i] = (char)next_u8();
    a->buf.len = n;
  } else if (current) {
    a->buf = *current;
  } else if (njobs > 0) {
    a->buf = jobs[next_u8() % njobs].id;
  } else {
    a->buf.b[0] = 'a';
    a->buf.len = 1;
  }
  a->buf.b[a->buf.len] = '\0';
  a->len = a->buf.len;
  /* the length: mostly exact; one time in 16 NUL-terminated (LEASE_NTS),
  ** zero, or past the limit (then the engine must not read the bytes) */
  if (sel >> 4 != 15) return;
  lm = next_u8();
  if (lm % 4 == 0) a->len = LEASE_NTS;
  else if (lm % 4 == 1) a->len = 0;
  else if (lm % 4 == 2) a->len = (size_t)LEASE_MAX_LENGTH + 1 + (lm >> 2);
  else a->len = SIZE_MAX - 1 - (lm >> 2);
}

/* What the engine must make of an argument string: 0 when valid (and
** *len resolved), else LEASE_MISUSE with a fragment of the message. */
static int judge(const arg *a, size_t *len, const char **why) {
  if (!a->p) { *why = "must not be NULL"; return LEASE_MISUSE; }
  *len = a->len == LEASE_NTS ? strlen(a->p) : a->len;
  if (*len == 0) { *why = "must not be empty"; return LEASE_MISUSE; }
  if (*len > (size_t)LEASE_MAX_LENGTH) { *why = "bytes, more than"; return LEASE_MISUSE; }
  return 0;
}

static double next_time(void) {
  uint8_t sel = next_u8();
  uint64_t raw;
  double d;
  switch (sel % 32) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return DBL_MAX;
    case 4: return -DBL_MAX;
    case 5: return 0.0;
    case 6: return -0.0;
    case 7: return 5e-324;
    case 8: return 9007199254740992.0;   /* 2^53: + 1 is lost */
    case 9:
      raw = next_u64();
      memcpy(&d, &raw, sizeof d);
      return d;
    default:
      return clock_now + (double)(int8_t)next_u8() / 4.0;
  }
}

static double next_ttl(void) {
  uint8_t sel = next_u8();
  uint64_t raw;
  double d;
  switch (sel % 32) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0;
    case 4: return -1.0;
    case 5: return DBL_MAX;
    case 6: return 5e-324;
    case 7: return 1e-300;
    case 8:
      raw = next_u64();
      memcpy(&d, &raw, sizeof d);
      return d;
    default:
      return (double)(sel >> 5) + 0.5 * (sel % 2) + 1.0;   /* 1 .. 8.5 */
  }
}

/* A fence: mostly the job's own (job may be NULL), sometimes one off or extreme. */
static int64_t next_fence(const mjob *j) {
  uint8_t sel = next_u8();
  int64_t f = j ? j->fence : 1;
  switch (sel % 10) {
    case 0: return f > INT64_MIN ? f - 1 : f;
    case 1: return f < INT64_MAX ? f + 1 : f;
    case 2: return 0;
    case 3: return -1;
    case 4: return INT64_MAX;
    case 5: return INT64_MIN;
    case 6: return (int64_t)next_u64();
    default: return f;
  }
}

/* What lease_check_time must say about (now, ttl): 0, or a message fragment. */
static const char *judge_time(double now, double ttl) {
  if (!isfinite(now)) return "now must be a finite number";
  if (isnan(ttl) || !(ttl > 0)) return "ttl must be a number > 0";
  if (!isfinite(ttl)) return "ttl must be finite";
  if (!isfinite(now + ttl) || !(now + ttl > now)) return "now + ttl must be";
  return NULL;
}

/* ===================================================================== */
/* Comparing                                                              */
/* ===================================================================== */

static lease_db *db;
static char dir[512], dbpath[600];

/* A call the model refuses: LEASE_MISUSE, a message naming the argument. */
static void expect_misuse(int rc, const char *what, const char *frag) {
  CHECK(rc == LEASE_MISUSE, "expected misuse (%s %s), got %s: %s", what, frag ? frag : "",
        lease_errname(rc), lease_errmsg(db));
  CHECK(lease_errcode(db) == LEASE_MISUSE, "lease_errcode is %d", lease_errcode(db));
  if (what) CHECK(strstr(lease_errmsg(db), what), "message \"%s\" does not name %s",
                  lease_errmsg(db), what);
  if (frag) CHECK(strstr(lease_errmsg(db), frag), "message \"%s\" does not say \"%s\"",
                  lease_errmsg(db), frag);
}

static void expect_ok(int rc) {
  CHECK(rc == LEASE_OK, "expected ok, got %s: %s", lease_errname(rc), lease_errmsg(db));
}

static void expect_reason(int got, int want) {
  CHECK(got == want, "reason %s, the model says %s", lease_reason_name(got),
        lease_reason_name(want));
}

static void compare_row(const lease_row *r, const mjob *j) {
  CHECK(same(r->id, r->id_len, j->id.b, j->id.len), "id differs");
  CHECK((r->owner != NULL) == j->has_owner, "owner is %s in the database, %s in the model",
        r->owner ? "set" : "NULL", j->has_owner ? "set" : "NULL");
  if (j->has_owner) CHECK(same(r->owner, r->owner_len, j->owner.b, j->owner.len), "owner differs");
  CHECK(r->until == j->until, "until %.17g, the model says %.17g", r->until, j->until);
  CHECK(r->fence == j->fence, "fence %lld, the model says %lld", (long long)r->fence,
        (long long)j->fence);
  CHECK((r->result != NULL) == j->has_result, "result is %s in the database, %s in the model",
        r->result ? "set" : "NULL", j->has_result ? "set" : "NULL");
  if (j->has_result)
    CHECK(same(r->result, r->result_len, j->result.b, j->result.len), "result differs");
  CHECK(r->done == j->done, "done %d, the model says %d", r->done, j->done);
  CHECK(r->blocked == NULL, "the job is blocked: %s", r->blocked);
}

/* The whole table against the model. */
static void compare_all(void) {
  static lease_row rows[MAX_JOBS + 1];
  lease_filter f;
  int count = -1, i, rc;
  const char *saved = op_name;
  op_name = "(table after it)";
  lease_filter_default(&f);
  rc = lease_list(db, &f, MAX_JOBS + 1, rows, &count);
  expect_ok(rc);
  CHECK(count == njobs, "%d jobs in the database, %d in the model", count, njobs);
  for (i = 0; i < count; i++) {
    CHECK(rows[i].seq == i + 1, "job %d has rowid %lld", i, (long long)rows[i].seq);
    compare_row(&rows[i], &jobs[i]);
  }
  op_name = saved;
}

/* ===================================================================== */
/* The operations                                                         */
/* ===================================================================== */

static void do_enqueue(void) {
  arg id;
  size_t len;
  const char *why;
  lease_new_job nj;
  int reason = -1, rc;
  mjob *j;
  next_arg(&id, NULL);
  lease_new_job_default(&nj);
  nj.id = id.p;
  nj.id_len = id.len;
  rc = lease_enqueue(db, &nj, &reason);
  if (judge(&id, &len, &why)) return expect_misuse(rc, "id", why);
  expect_ok(rc);
  j = find(id.p, len);
  expect_reason(reason, j ? LEASE_EXISTS : LEASE_GRANTED);
  if (!j) {
    REQUIRE(njobs < MAX_JOBS, "too many jobs");
    j = &jobs[njobs++];
    memset(j, 0, sizeof *j);
    memcpy(j->id.b, id.p, len);
    j->id.len = len;
  }
}

static void do_state(void) {
  arg id;
  size_t len;
  const char *why;
  lease_row row;
  int found = -1, rc;
  mjob *j;
  next_arg(&id, NULL);
  rc = lease_state(db, id.p, id.len, NAN, &row, &found);
  if (judge(&id, &len, &why)) return expect_misuse(rc, "id", why);
  expect_ok(rc);
  j = find(id.p, len);
  CHECK(found == (j != NULL), "found %d, the model %s the job", found, j ? "has" : "lacks");
  if (j) compare_row(&row, j);
}

/* Claim's rule on one model job (contract step 4), shared by claim and claim_many. */
static int model_claim(mjob *j, const char *owner, size_t owner_len, double now, double ttl) {
  if (!j) return LEASE_MISSING;
  if (j->done) return LEASE_DONE;
  if (held(j, now)) return LEASE_HELD;
  j->has_owner = 1;
  memcpy(j->owner.b, owner, owner_len);
  j->owner.len = owner_len;
  j->until = now + ttl;
  j->fence++;
  return LEASE_GRANTED;
}

static void do_claim(void) {
  arg id, owner;
  size_t len, olen;
  const char *why, *twhy;
  double now, ttl;
  int64_t fence = -7;
  int reason = -1, rc, want;
  mjob *j;
  next_arg(&id, NULL);
  next_arg(&owner, NULL);
  now = next_time();
  ttl = next_ttl();
  rc = lease_claim(db, id.p, id.len, owner.p, owner.len, now, ttl, &fence, &reason);
  if (judge(&id, &len, &why)) return expect_misuse(rc, "id", why);
  if (judge(&owner, &olen, &why)) return expect_misuse(rc, "owner", why);
  if ((twhy = judge_time(now, ttl))) return expect_misuse(rc, NULL, twhy);
  expect_ok(rc);
  j = find(id.p, len);
  want = model_claim(j, owner.p, olen, now, ttl);
  expect_reason(reason, want);
  CHECK(fence == (want == LEASE_GRANTED ? j->fence : 0), "fence %lld returned",
        (long long)fence);
}

/* The reason renew, complete or release (which = 0, 1, 2) of j by owner
** with fence at now gets (contract steps 5-7). */
static int model_reason(const mjob *j, const char *owner, size_t olen, int64_t fence, double now,
                        int which) {
  if (!j) return LEASE_MISSING;
  if (j->done) return LEASE_DONE;
  if (!j->has_owner || !same(j->owner.b, j->owner.len, owner, olen)) return LEASE_NOT_OWNER;
  if (j->fence != fence) return LEASE_STALE_FENCE;
  if (which < 2 && !(j->until > now)) return LEASE_EXPIRED;
  return LEASE_GRANTED;
}

/* A granted complete of j: done, with result (NULL for SQL NULL). */
static void model_complete(mjob *j, const char *result, size_t rlen) {
  j->done = 1;
  j->has_result = result != NULL;
  j->result.len = result ? rlen : 0;
  if (result) memcpy(j->result.b, result, rlen);
}

/* Renew, complete and release: which = 0, 1, 2. */
static void do_write(int which) {
  static const char *const names[] = {"renew", "complete", "release"};
  arg id, owner, result;
  size_t len, olen, rlen = 0;
  const char *why, *twhy;
  double now = 0, ttl = 1;
  int64_t fence;
  int reason = -1, rc, want, null_result = 0;
  mjob *j;
  op_name = names[which];
  next_arg(&id, NULL);
  j = (id.p && id.len != LEASE_NTS && id.len <= MAX_STR) ? find(id.p, id.len) : NULL;
  next_arg(&owner, j && j->has_owner ? &j->owner : NULL);
  fence = next_fence(j);
  if (which < 2) now = next_time();
  if (which == 0) ttl = next_ttl();
  if (which == 1) {
    next_arg(&result, NULL);
    null_result = result.p == NULL;
  }
  if (which == 0)
    rc = lease_renew(db, id.p, id.len, owner.p, owner.len, fence, now, ttl, &reason);
  else if (which == 1)
    rc = lease_complete(db, id.p, id.len, owner.p, owner.len, fence, now, result.p, result.len,
                        &reason);
  else
    rc = lease_release(db, id.p, id.len, owner.p, owner.len, fence, &reason);
  if (judge(&id, &len, &why)) return expect_misuse(rc, "id", why);
  if (judge(&owner, &olen, &why)) return expect_misuse(rc, "owner", why);
  if (which == 0 && (twhy = judge_time(now, ttl))) return expect_misuse(rc, NULL, twhy);
  if (which == 1 && !isfinite(now)) return expect_misuse(rc, "now", "finite");
  if (which == 1 && !null_result) {
    rlen = result.len == LEASE_NTS ? strlen(result.p) : result.len;
    if (rlen > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, "result", "bytes, more than");
  }
  expect_ok(rc);
  j = find(id.p, len);
  want = model_reason(j, owner.p, olen, fence, now, which);
  expect_reason(reason, want);
  if (want != LEASE_GRANTED) return;
  if (which == 0) {
    j->until = now + ttl;
  } else if (which == 1) {
    model_complete(j, null_result ? NULL : result.p, rlen);
  } else {
    j->has_owner = 0;
    j->owner.len = 0;
    j->until = 0;
  }
}

static int next_count(void) {
  uint8_t sel = next_u8();
  switch (sel % 8) {
    case 0: return 0;
    case 1: return -1;
    case 2: return INT_MIN;
    default: return sel % 8 - 2;   /* 1..5 */
  }
}

/* claim_next's rule on the model for owner at now: got and count are
** what the engine returned. */
static void model_claim_next(const char *owner, size_t olen, double now, double ttl, int max,
                             const lease_job *got, int count) {
  int i, n = 0;
  for (i = 0; i < njobs && n < max; i++) {
    mjob *j = &jobs[i];
    if (j->done || held(j, now)) continue;
    model_claim(j, owner, olen, now, ttl);
    CHECK(n < count, "claim_next took %d jobs, the model more", count);
    CHECK(same(got[n].id, got[n].id_len, j->id.b, j->id.len), "job %d taken is not the model's", n);
    CHECK(got[n].fence == j->fence, "job %d: fence %lld, the model says %lld", n,
          (long long)got[n].fence, (long long)j->fence);
    n++;
  }
  CHECK(count == n, "claim_next took %d jobs, the model %d", count, n);
}

static void do_claim_next(void) {
  arg owner;
  size_t olen;
  const char *why, *twhy;
  double now, ttl;
  lease_job got[MAX_BATCH];
  int max, count = -1, rc, reason = -1;
  next_arg(&owner, NULL);
  now = next_time();
  ttl = next_ttl();
  max = next_count();
  rc = lease_claim_next(db, NULL, 0, owner.p, owner.len, now, ttl, max, got, &count, &reason);
  if (max < 1) return expect_misuse(rc, "max", NULL);
  if (judge(&owner, &olen, &why)) return expect_misuse(rc, "owner", why);
  if ((twhy = judge_time(now, ttl))) return expect_misuse(rc, NULL, twhy);
  expect_ok(rc);
  expect_reason(reason, count > 0 ? LEASE_GRANTED : LEASE_EMPTY);
  model_claim_next(owner.p, olen, now, ttl, max, got, count);
}

/* complete_claim_next: complete's rule, then claim_next's for the same
** owner at the same now, as one call; its arguments judged in that order. */
static void do_complete_claim_next(void) {
  arg id, owner, result;
  size_t len, olen, rlen = 0;
  const char *why, *twhy;
  double now, ttl;
  int64_t fence;
  lease_job got[MAX_BATCH];
  int reason = -1, rc, want, max, count = -1;
  mjob *j;
  next_arg(&id, NULL);
  j = (id.p && id.len != LEASE_NTS && id.len <= MAX_STR) ? find(id.p, id.len) : NULL;
  next_arg(&owner, j && j->has_owner ? &j->owner : NULL);
  fence = next_fence(j);
  now = next_time();
  next_arg(&result, NULL);
  ttl = next_ttl();
  max = next_count();
  rc = lease_complete_claim_next(db, id.p, id.len, owner.p, owner.len, fence, now, result.p,
                                 result.len, NULL, 0, ttl, max, got, &count, &reason, NULL);
  if (judge(&id, &len, &why)) return expect_misuse(rc, "id", why);
  if (judge(&owner, &olen, &why)) return expect_misuse(rc, "owner", why);
  if (!isfinite(now)) return expect_misuse(rc, "now", "finite");
  if (result.p) {
    rlen = result.len == LEASE_NTS ? strlen(result.p) : result.len;
    if (rlen > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, "result", "bytes, more than");
  }
  if (max < 1) return expect_misuse(rc, "max", NULL);
  if ((twhy = judge_time(now, ttl))) return expect_misuse(rc, NULL, twhy);
  expect_ok(rc);
  j = find(id.p, len);
  want = model_reason(j, owner.p, olen, fence, now, 1);
  expect_reason(reason, want);
  if (want == LEASE_GRANTED) model_complete(j, result.p, rlen);
  model_claim_next(owner.p, olen, now, ttl, max, got, count);
}

static void do_claim_many(void) {
  arg id, owners[MAX_BATCH];
  const char *ptrs[MAX_BATCH];
  size_t lens[MAX_BATCH], len, olen[MAX_BATCH];
  int64_t fences[MAX_BATCH];
  int reasons[MAX_BATCH], rc, want, winner = -1;
  const char *twhy;
  double now, ttl;
  size_t n, i;
  mjob *j;
  next_arg(&id, NULL);
  n = next_u8() % (MAX_BATCH + 1);
  for (i = 0; i < n; i++) {
    next_arg(&owners[i], NULL);
    ptrs[i] = owners[i].p;
    lens[i] = owners[i].len;
  }
  now = next_time();
  ttl = next_ttl();
  rc = lease_claim_many(db, id.p, id.len, ptrs, lens, n, now, ttl, fences, reasons);
  if (n == 0) return expect_misuse(rc, "owners", "empty");
  /* lease.h: every argument is checked before any thread starts: the id,
  ** then each owner in order (NULL, empty, too long), then the times. */
  if (!id.p) return expect_misuse(rc, "id", "NULL");
  len = id.len == LEASE_NTS ? strlen(id.p) : id.len;
  if (len == 0) return expect_misuse(rc, "id", "empty");
  if (len > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, "id", "bytes, more than");
  for (i = 0; i < n; i++) {
    if (!owners[i].p) return expect_misuse(rc, "owners[", "NULL");
    olen[i] = owners[i].len == LEASE_NTS ? strlen(owners[i].p) : owners[i].len;
    if (olen[i] == 0) return expect_misuse(rc, "owners[", "empty");
    if (olen[i] > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, "owners[", "bytes, more than");
  }
  if ((twhy = judge_time(now, ttl))) return expect_misuse(rc, NULL, twhy);
  expect_ok(rc);
  j = find(id.p, len);
  for (i = 0; i < n; i++) {
    if (reasons[i] == LEASE_GRANTED) {
      CHECK(winner < 0, "owners %d and %d both granted", winner, (int)i);
      winner = (int)i;
    } else {
      CHECK(fences[i] == 0, "owner %d refused (%s) but given fence %lld", (int)i,
            lease_reason_name(reasons[i]), (long long)fences[i]);
    }
  }
  if (winner >= 0) {
    want = model_claim(j, owners[winner].p, olen[winner], now, ttl);
    expect_reason(LEASE_GRANTED, want);
    CHECK(fences[winner] == j->fence, "winner's fence %lld, the model says %lld",
          (long long)fences[winner], (long long)j->fence);
    for (i = 0; i < n; i++)
      if ((int)i != winner) expect_reason(reasons[i], LEASE_HELD);
  } else {
    want = model_claim(j, "", 0, now, ttl);
    CHECK(want != LEASE_GRANTED, "nobody was granted a free job");
    for (i = 0; i < n; i++) expect_reason(reasons[i], want);
  }
}

static void do_complete_many(void) {
  arg owner, ids[MAX_BATCH], results[MAX_BATCH];
  lease_result items[MAX_BATCH];
  int reasons[MAX_BATCH], n, i, rc, stored = -1, want_stored = 0, n_sel;
  size_t olen, rlen[MAX_BATCH], idlen[MAX_BATCH];
  const char *why;
  char what[32];
  double now;
  next_arg(&owner, NULL);
  now = next_time();
  n_sel = next_u8();
  n = n_sel % 8 == 7 ? -1 : n_sel % (MAX_BATCH + 1);
  for (i = 0; i < n; i++) {
    mjob *j;
    next_arg(&ids[i], NULL);
    j = ids[i].p && ids[i].len <= MAX_STR ? find(ids[i].p, ids[i].len) : NULL;
    items[i].id = ids[i].p;
    items[i].id_len = ids[i].len;
    items[i].fence = next_fence(j);
    next_arg(&results[i], NULL);
    items[i].result = results[i].p;
    items[i].result_len = results[i].len;
  }
  rc = lease_complete_many(db, owner.p, owner.len, now, n_sel & 0x80 && n == 0 ? NULL : items,
                           n, reasons, &stored);
  if (n < 0) return expect_misuse(rc, "items", NULL);
  if (judge(&owner, &olen, &why)) return expect_misuse(rc, "owner", why);
  if (!isfinite(now)) return expect_misuse(rc, "now", "finite");
  for (i = 0; i < n; i++) {
    snprintf(what, sizeof what, "id %d", i + 1);
    if (judge(&ids[i], &idlen[i], &why)) return expect_misuse(rc, what, why);
    rlen[i] = 0;
    if (results[i].p) {
      rlen[i] = results[i].len == LEASE_NTS ? strlen(results[i].p) : results[i].len;
      snprintf(what, sizeof what, "result %d", i + 1);
      if (rlen[i] > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, what, "bytes, more than");
    }
  }
  expect_ok(rc);
  for (i = 0; i < n; i++) {
    mjob *j = find(items[i].id, idlen[i]);
    int want;
    if (!j) want = LEASE_MISSING;
    else if (j->done) want = LEASE_DONE;
    else if (!j->has_owner || !same(j->owner.b, j->owner.len, owner.p, olen)) want = LEASE_NOT_OWNER;
    else if (j->fence != items[i].fence) want = LEASE_STALE_FENCE;
    else if (!(j->until > now)) want = LEASE_EXPIRED;
    else want = LEASE_GRANTED;
    expect_reason(reasons[i], want);
    if (want == LEASE_GRANTED) {
      want_stored++;
      j->done = 1;
      j->has_result = results[i].p != NULL;
      j->result.len = rlen[i];
      if (rlen[i]) memcpy(j->result.b, results[i].p, rlen[i]);
    }
  }
  CHECK(stored == want_stored, "stored %d, the model %d", stored, want_stored);
}

static void do_enqueue_many(void) {
  arg ids[MAX_BATCH];
  lease_new_job nj[MAX_BATCH];
  size_t len;
  int n, i, rc, inserted = -1, want = 0, n_sel;
  char what[32];
  n_sel = next_u8();
  n = n_sel % 8 == 7 ? -1 : n_sel % (MAX_BATCH + 1);
  for (i = 0; i < n; i++) {
    next_arg(&ids[i], NULL);
    lease_new_job_default(&nj[i]);
    nj[i].id = ids[i].p;
    nj[i].id_len = ids[i].len;
  }
  if (njobs + (n > 0 ? n : 0) > MAX_JOBS) return;
  rc = lease_enqueue_many(db, nj, n, &inserted);
  if (n < 0) return expect_misuse(rc, "jobs", NULL);
  for (i = 0; i < n; i++) {
    snprintf(what, sizeof what, "job %d: id", i + 1);
    if (!ids[i].p) return expect_misuse(rc, what, "NULL");
    len = ids[i].len == LEASE_NTS ? strlen(ids[i].p) : ids[i].len;
    if (len == 0) return expect_misuse(rc, what, "empty");
    if (len > (size_t)LEASE_MAX_LENGTH) return expect_misuse(rc, "id", "bytes, more than");
  }
  expect_ok(rc);
  for (i = 0; i < n; i++) {
    len = ids[i].len == LEASE_NTS ? strlen(ids[i].p) : ids[i].len;
    if (!find(ids[i].p, len)) {
      mjob *j = &jobs[njobs++];
      memset(j, 0, sizeof *j);
      memcpy(j->id.b, ids[i].p, len);
      j->id.len = len;
      want++;
    }
  }
  CHECK(inserted == want, "inserted %d, the model %d", inserted, want);
}

static void do_count(void) {
  lease_counts c;
  int64_t ready = 0, hld = 0, done = 0;
  double now = next_time();
  int i, rc = lease_count(db, now, NULL, 0, &c);
  if (isnan(now)) return expect_misuse(rc, "now", NULL);
  expect_ok(rc);
  for (i = 0; i < njobs; i++) {
    if (jobs[i].done) done++;
    else if (held(&jobs[i], now)) hld++;
    else ready++;
  }
  CHECK(c.total == njobs && c.ready == ready && c.held == hld && c.done == done && c.blocked == 0,
        "counts %lld/%lld/%lld/%lld/%lld (total/ready/held/done/blocked), the model %d/%lld/%lld/%lld/0",
        (long long)c.total, (long long)c.ready, (long long)c.held, (long long)c.done,
        (long long)c.blocked, njobs, (long long)ready, (long long)hld, (long long)done);
}

static void do_list(void) {
  static lease_row rows[MAX_JOBS + 1];
  lease_filter f;
  int which = next_u8() % 7 - 1, max, count = -1, rc, i, n = 0;
  double now = next_time();
  uint8_t a = next_u8();
  int64_t after = a == 255 ? INT64_MIN : a == 254 ? INT64_MAX : (int64_t)(a % 64) - 2;
  max = next_count();
  if (max > 0) max = max * 3 + 1;   /* 4..16 */
  lease_filter_default(&f);
  f.which = which;
  f.now = now;
  f.after = after;
  rc = lease_list(db, &f, max, rows, &count);
  if (which < LEASE_LIST_ALL || which > LEASE_LIST_BLOCKED) return expect_misuse(rc, "kind", NULL);
  if (max < 1) return expect_misuse(rc, "max", NULL);
  if (isnan(now)) return expect_misuse(rc, "now", NULL);
  expect_ok(rc);
  for (i = 0; i < njobs && n < max; i++) {
    const mjob *j = &jobs[i];
    int in_kind;
    if (i + 1 <= after) continue;
    switch (which) {
      case LEASE_LIST_READY: in_kind = !j->done && !held(j, now); break;
      case LEASE_LIST_HELD: in_kind = !j->done && held(j, now); break;
      case LEASE_LIST_DONE: in_kind = j->done; break;
      case LEASE_LIST_BLOCKED: in_kind = 0; break;
      default: in_kind = 1;
    }
    if (!in_kind) continue;
    CHECK(n < count, "list gave %d rows, the model more", count);
    CHECK(rows[n].seq == i + 1, "row %d: seq %lld, the model %d", n, (long long)rows[n].seq,
          i + 1);
    compare_row(&rows[n], j);
    n++;
  }
  CHECK(count == n, "list gave %d rows, the model %d", count, n);
}

/* ===================================================================== */
/* The harness                                                            */
/* ===================================================================== */

static void remove_db(void) {
  static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
  char p[640];
  size_t i;
  for (i = 0; i < sizeof tails / sizeof tails[0]; i++) {
    snprintf(p, sizeof p, "%s%s", dbpath, tails[i]);
    unlink(p);
  }
}

/* At exit: remove the database files and the directory. */
static void cleanup(void) {
  if (db) lease_close(db);
  db = NULL;
  remove_db();
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *base = getenv("LEASE_FUZZ_DIR"), *sc = getenv("LEASE_FUZZ_SELFCHECK");
  (void)argc;
  (void)argv;
  selfcheck = sc && strcmp(sc, "1") == 0;
  if (!base || !base[0]) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(dir, sizeof dir, "%s/lease-fuzz-ops-%ld", base, (long)getpid());
  REQUIRE(mkdir(dir, 0700) == 0 || errno == EEXIST, "cannot create %s: %s", dir, strerror(errno));
  snprintf(dbpath, sizeof dbpath, "%s/ops.db", dir);
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lease_options opt;
  int rc;
  in = data;
  in_left = size;
  njobs = 0;
  many_calls = 0;
  clock_now = 100;
  remove_db();
  lease_options_default(&opt);
  opt.synchronous = LEASE_SYNC_NORMAL;   /* tmpfs: durability is not what is tested */
  opt.clock_factor = 0;   /* the clock-unit guard is outside the model (spec 54 tests it) */
  rc = lease_open(dbpath, &opt, &db);
  REQUIRE(rc == LEASE_OK, "cannot open %s: %s", dbpath, lease_errmsg(db));
  for (op_index = 0; in_left > 0 && op_index < 256; op_index++) {
    uint8_t op = next_u8();
    switch (op % 16) {
      case 0: case 13: op_name = "enqueue"; if (njobs < MAX_JOBS) do_enqueue(); break;
      case 1: op_name = "state"; do_state(); break;
      case 2: case 3: op_name = "claim"; do_claim(); break;
      case 4: do_write(0); break;
      case 5: do_write(1); break;
      case 6: do_write(2); break;
      case 7: op_name = "claim_next"; do_claim_next(); break;
      case 8: op_name = "claim_many"; if (many_calls++ < 2) do_claim_many(); break;
      case 9: op_name = "complete_many"; do_complete_many(); break;
      case 10: op_name = "enqueue_many"; do_enqueue_many(); break;
      case 11: op_name = "count"; do_count(); break;
      case 12: op_name = "list"; do_list(); break;
      case 15: op_name = "complete_claim_next"; do_complete_claim_next(); break;
      default: op_name = "tick"; clock_now += (double)(next_u8() % 8) / 2.0; break;
    }
    compare_all();
  }
  lease_close(db);
  db = NULL;
  return 0;
}
