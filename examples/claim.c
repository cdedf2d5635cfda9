/*
** examples/claim.c: the C API in one page.  Built by CMake as
** build/example_claim; by hand:
**   cc -Isrc examples/claim.c build/liblease.a -lsqlite3 -lm -pthread -o claim
** Usage: example_claim [database-path]   (default jobs.db)
*/
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "lease.h"

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "jobs.db";
  double now = (double)time(NULL);   /* the caller's clock: seconds here */
  lease_db *db;
  lease_new_job job;
  int64_t fence;
  int why;
  if (lease_open(path, NULL, &db) != LEASE_OK) {
    fprintf(stderr, "%s: %s\n", path, lease_errmsg(db));
    lease_close(db);
    return 1;
  }
  lease_new_job_default(&job);   /* no payload, queue "default", ... */
  job.id = "job-1";
  job.id_len = LEASE_NTS;
  lease_enqueue(db, &job, &why);   /* why: LEASE_GRANTED, or LEASE_EXISTS */
  if (lease_claim(db, "job-1", LEASE_NTS, "worker-1", LEASE_NTS, now, 30.0, &fence, &why) != LEASE_OK) {
    fprintf(stderr, "%s [%s]\n", lease_errmsg(db), lease_errname(lease_errcode(db)));
  } else if (why != LEASE_GRANTED) {
    printf("not claimed: %s\n", lease_reason_name(why));
  } else {
    printf("claimed job-1 with fence %lld\n", (long long)fence);
    /* ... the work ... then store the result under the same lease */
    if (lease_complete(db, "job-1", LEASE_NTS, "worker-1", LEASE_NTS, fence, now + 1.0,
                       "42", LEASE_NTS, &why) == LEASE_OK && why == LEASE_GRANTED)
      printf("completed\n");
    else
      printf("not completed: %s\n", why == LEASE_GRANTED ? lease_errmsg(db) : lease_reason_name(why));
  }
  lease_close(db);
  return 0;
}
