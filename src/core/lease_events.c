/*
** lease_events.c: the events ledger (lease.h, "The events ledger"): the
** words of its ops, the record every write makes at its outcome inside its
** own transaction (lease__event_add: the backends call it where they know the
** outcome), the amortized pruning, and lease_events, the read.  No SQL
** here: each backend inserts, prunes and reads its table lease_events.
*/
#include "lease.h"
#include "lease_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LEASE_EV_WORD_(name, word) word,
static const char *const event_words[] = {"none", LEASE_EVENT_MAP(LEASE_EV_WORD_)};
#undef LEASE_EV_WORD_

/* See lease.h. */
const char *lease_event_name(int op) {
  if (op <= LEASE_EV_NONE || op >= LEASE_EV_END) return "unknown";
  return event_words[op];
}

/* See lease_int.h. */
int lease__events_on(const lease_db *db) {
  return db->opt.events_keep > 0 && db->be->event != NULL &&
         LEASE_SCHEMA_HAS(db->schema_version, EVENTS) &&
         !(db->opt.flags & LEASE_OPEN_READONLY);
}

/* The prune step for keep: a tenth of it, 1 to LEASE__EVENTS_STEP. */
static int64_t prune_step(int64_t keep) {
  int64_t step = keep / 10;
  if (step < 1) step = 1;
  if (step > LEASE__EVENTS_STEP) step = LEASE__EVENTS_STEP;
  return step;
}

/* See lease_int.h. */
int lease__event_add(lease_db *db, const lease__event *e) {
  int64_t seq = 0, step, upto;
  double cutoff = -HUGE_VAL;
  int rc;
  if (!lease__events_on(db)) return LEASE_OK;
  if ((rc = db->be->event(db, e, &seq)) != LEASE_OK) return rc;
  step = prune_step(db->opt.events_keep);
  if (seq % step != 0) return LEASE_OK;
  upto = seq - db->opt.events_keep + step - 1;
  if (db->opt.events_max_age > 0 && !isnan(e->at)) cutoff = e->at - db->opt.events_max_age;
  if (upto <= 0 && cutoff == -HUGE_VAL) return LEASE_OK;
  return db->be->event_prune(db, upto, cutoff);
}

/* See lease_int.h. */
int lease__event_write(lease_db *db, int op, const lease__write *w, int64_t fence, int reason) {
  lease__event e;
  memset(&e, 0, sizeof e);
  e.op = op;
  e.id = w->id;
  e.id_len = w->id_len;
  e.owner = w->owner;
  e.owner_len = w->owner_len;
  e.has_fence = !(w->op == LEASE__CLAIM && reason != LEASE_GRANTED);
  e.fence = w->op == LEASE__CLAIM ? fence : w->fence;
  e.at = w->op == LEASE__RELEASE ? NAN : w->now;
  e.reason = reason;
  return lease__event_add(db, &e);
}

/* See lease_int.h. */
int lease__event_id(lease_db *db, int op, const char *id, size_t id_len, double at, int reason) {
  lease__event e;
  memset(&e, 0, sizeof e);
  e.op = op;
  e.id = id;
  e.id_len = id_len;
  e.at = at;
  e.reason = reason;
  return lease__event_add(db, &e);
}

/* See lease.h. */
int lease_events(lease_db *db, const lease_event_filter *f, int max, lease_event *out,
                 int *count) {
  LEASE__HOLD(db);
  lease_event_filter g = {NULL, 0, 0};
  int rc = lease__begin(db);
  if (rc != LEASE_OK) return rc;
  if (count) *count = 0;
  if (!out || !count) return lease__fail(db, LEASE_MISUSE, "out and count must not be NULL");
  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");
  if (f) g = *f;
  if (g.id && lease__check_bytes(db, "id", g.id, &g.id_len) != LEASE_OK) return db->rc;
  if (g.since < 0) return lease__fail(db, LEASE_MISUSE, "since must be >= 0");
  if (!db->be->events || !LEASE_SCHEMA_HAS(db->schema_version, EVENTS)) return LEASE_OK;
  return db->be->events(db, &g, max, out, count);
}
