/*
** lease_many.c: claim_many (contract step 8) on native threads.  No Lua.
**
** The contract asks for every owner's claim "at the same time": so each
** worker thread opens its own connection first, then all wait at one start
** barrier, and only then do they claim.  What makes exactly one of them win
** is not this file but lease_claim's single BEGIN IMMEDIATE transaction:
** the barrier only makes sure the race really happens.
**
** At most LEASE_MANY_THREADS threads run; owners beyond that wait in a
** queue (an atomic index into the owners array) that the workers drain.
*/
#include "lease.h"
#include "lease_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* One run of claim_many                                                  */
/* ===================================================================== */

#define MANY_ERRMSG_MAX 512

/* What every worker of one call shares.  Read-only after start except the
** atomics and the fields guarded by mu. */
typedef struct many_run {
  const char *path;                  /* the caller's database file */
  lease_options opt;                 /* and its options */
  const char *id;
  size_t id_len;
  const char *const *owners;
  const size_t *owner_lens;          /* resolved: never LEASE_NTS */
  size_t n;
  double now, ttl;
  int64_t *fences;                   /* n slots, each written by one worker */
  int *reasons;                      /* n slots, each written by one worker */
  atomic_size_t next;                /* the queue: the next owner to claim */
  atomic_int stop;                   /* set once a worker failed */
  pthread_mutex_t mu;                /* guards what follows */
  pthread_cond_t cv;
  size_t started;                    /* workers created (set by the caller) */
  size_t ready;                      /* workers at the start barrier */
  int go;                            /* 1 once the barrier released them */
  size_t err_order;                  /* rank of the recorded error; lower wins */
  int err_rc, err_xrc;
  char err_msg[MANY_ERRMSG_MAX];
} many_run;

/* One worker thread. */
typedef struct many_worker {
  many_run *run;
  pthread_t tid;
} many_worker;

/*
** Record a worker's failure, keeping the one of lowest rank: rank 0 is a
** connection that could not open, 1 + i a failed claim of owner i, so the
** error reported does not depend on which thread happened to fail first.
** Also tells the other workers to take no further owners.
*/
static void many_fail(many_run *run, size_t order, lease_db *h, int rc) {
  pthread_mutex_lock(&run->mu);
  if (order < run->err_order) {
    run->err_order = order;
    run->err_rc = rc;
    run->err_xrc = lease_extended_errcode(h);
    snprintf(run->err_msg, sizeof run->err_msg, "%s", lease_errmsg(h));
  }
  pthread_mutex_unlock(&run->mu);
  atomic_store(&run->stop, 1);
}

/*
** The start barrier, worker side: count this worker as ready and sleep
** until the caller has seen every started worker arrive.  A hand-made
** barrier rather than pthread_barrier_t because its count (the threads
** that really started) is only known after the last pthread_create.
*/
static void many_arrive(many_run *run) {
  pthread_mutex_lock(&run->mu);
  run->ready++;
  pthread_cond_broadcast(&run->cv);
  while (!run->go) pthread_cond_wait(&run->cv, &run->mu);
  pthread_mutex_unlock(&run->mu);
}

/* The start barrier, caller side: wait for the started workers, then let
** them all go at once. */
static void many_release(many_run *run, size_t started) {
  pthread_mutex_lock(&run->mu);
  run->started = started;
  while (run->ready < started) pthread_cond_wait(&run->cv, &run->mu);
  run->go = 1;
  pthread_cond_broadcast(&run->cv);
  pthread_mutex_unlock(&run->mu);
}

/*
** A worker: open its own connection, wait at the barrier, then claim for
** queued owners until none is left or some worker failed.  Arrives at the
** barrier even when its open failed, so the others are never left waiting.
*/
static void *many_worker_main(void *arg) {
  many_worker *w = arg;
  many_run *run = w->run;
  lease_db *h = NULL;
  int rc = lease_open(run->path, &run->opt, &h);
  if (rc != LEASE_OK) many_fail(run, 0, h, h ? rc : LEASE_NOMEM);   /* NULL h: out of memory */
  many_arrive(run);
  while (rc == LEASE_OK && !atomic_load(&run->stop)) {
    size_t i = atomic_fetch_add(&run->next, 1);
    int reason = LEASE_GRANTED;
    int64_t fence = 0;
    if (i >= run->n) break;
    rc = lease_claim(h, run->id, run->id_len, run->owners[i], run->owner_lens[i],
                     run->now, run->ttl, &fence, &reason);
    if (rc != LEASE_OK) {
      many_fail(run, 1 + i, h, rc);
      break;
    }
    run->fences[i] = fence;
    if (run->reasons) run->reasons[i] = reason;
  }
  lease_close(h);
  return NULL;
}

/* ===================================================================== */
/* The call                                                               */
/* ===================================================================== */

/*
** Check every argument before a thread starts, as lease_claim does, and
** fill lens with the resolved owner lengths.  Returns LEASE_OK or records
** LEASE_MISUSE on db.
*/
static int many_check(lease_db *db, const char *id, size_t *id_len,
                      const char *const *owners, const size_t *owner_lens, size_t n,
                      double now, double ttl, const int64_t *fences, size_t *lens) {
  const char *why;
  char name[48];
  size_t i;
  int rc;
  if (!fences) return lease__set_error(db, LEASE_MISUSE, 0, "fences must not be NULL");
  if (!owners) return lease__set_error(db, LEASE_MISUSE, 0, "owners must not be NULL");
  if (n == 0) return lease__set_error(db, LEASE_MISUSE, 0, "owners must not be empty");
  if ((rc = lease__check_bytes(db, "id", id, id_len)) != LEASE_OK) return rc;
  for (i = 0; i < n; i++) {
    /* Every owner, its length included, is checked before any thread
    ** starts: a refused argument must leave the job as it was. */
    snprintf(name, sizeof name, "owners[%zu]", i);
    lens[i] = owner_lens ? owner_lens[i] : LEASE_NTS;
    if ((rc = lease__check_bytes(db, name, owners[i], &lens[i])) != LEASE_OK) return rc;
  }
  if (lease_check_time(now, ttl, &why)) return lease__set_error(db, LEASE_MISUSE, 0, why);
  /* Each worker opens the file anew: a private database would be a
  ** different, empty one per connection. */
  if (lease__private(db))
    return lease__set_error(db, LEASE_MISUSE, 0,
                            "claim_many needs a database file that other connections can "
                            "open, not a private temporary or in-memory database");
  return LEASE_OK;
}

/* See lease.h (contract step 8). */
int lease_claim_many(lease_db *db, const char *id, size_t id_len,
                     const char *const *owners, const size_t *owner_lens, size_t n,
                     double now, double ttl, int64_t *fences, int *reasons) {
  LEASE__HOLD(db);
  many_run run;
  many_worker *workers;
  size_t *lens, nthreads, started, i;
  sigset_t all, old;
  int rc;
  if ((rc = lease__begin(db)) != LEASE_OK) return rc;
  if (n > 0 && n <= SIZE_MAX / sizeof *lens) lens = malloc(n * sizeof *lens);
  else lens = NULL;
  if (n > 0 && !lens) return lease__set_error(db, LEASE_NOMEM, 0, "out of memory");
  rc = many_check(db, id, &id_len, owners, owner_lens, n, now, ttl, fences, lens);
  if (rc != LEASE_OK) {
    free(lens);
    return rc;
  }
  for (i = 0; i < n; i++) {
    fences[i] = 0;
    if (reasons) reasons[i] = LEASE_GRANTED;
  }
  nthreads = n < LEASE_MANY_THREADS ? n : LEASE_MANY_THREADS;
  workers = calloc(nthreads, sizeof *workers);
  if (!workers) {
    free(lens);
    return lease__set_error(db, LEASE_NOMEM, 0, "out of memory");
  }

  memset(&run, 0, sizeof run);
  run.path = lease_path(db);
  lease__options(db, &run.opt);
  run.id = id;
  run.id_len = id_len;
  run.owners = owners;
  run.owner_lens = lens;
  run.n = n;
  run.now = now;
  run.ttl = ttl;
  run.fences = fences;
  run.reasons = reasons;
  atomic_init(&run.next, 0);
  atomic_init(&run.stop, 0);
  run.err_order = SIZE_MAX;
  pthread_mutex_init(&run.mu, NULL);
  pthread_cond_init(&run.cv, NULL);

  /* Workers block every signal, so a signal meant for the program (SIGINT
  ** in the host) reaches the calling thread, as before the call. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (started = 0; started < nthreads; started++) {
    workers[started].run = &run;
    if (pthread_create(&workers[started].tid, NULL, many_worker_main, &workers[started]) != 0)
      break;   /* run with the workers we have: the queue serves them all */
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  many_release(&run, started);
  for (i = 0; i < started; i++) pthread_join(workers[i].tid, NULL);

  if (started == 0) rc = lease__set_error(db, LEASE_NOMEM, 0, "could not start a thread");
  else if (run.err_order != SIZE_MAX)
    rc = lease__set_error(db, run.err_rc, run.err_xrc, run.err_msg);
  pthread_cond_destroy(&run.cv);
  pthread_mutex_destroy(&run.mu);
  free(workers);
  free(lens);
  return rc;
}
