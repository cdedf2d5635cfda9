-- specs/mutation/mutants.lua: the broken changes the spec suite must catch.
--
-- Each mutant is one exact search-and-replace on the real source: `from`
-- must occur exactly once in `file`, so a refactor that makes a mutant stale
-- fails the run loudly instead of letting it pass.  A mutant that needs
-- several edits of one file lists them as edits = {{from=, to=}, ...}.
-- `fn` names the definition the text is in (a C function, macro or braced
-- table, a Lua function: regions.lua), where the runner looks it up, so a
-- mutant whose code moved or was renamed is reported as such (an edit may
-- carry its own fn).  `run.lua --check` says which mutants no longer apply
-- and which name no fn, and what theirs would be.
-- `step` is the contract step (CONTRACT.md) for the seed's eight, "own" for
-- ours.  `hint` names the spec file tried first (the whole suite runs when
-- it does not kill).
--
-- Left out on purpose, because it is equivalent (no behaviour changes, so
-- no spec can kill it): "BEGIN DEFERRED" for "BEGIN IMMEDIATE".  Every
-- write transaction here opens with its guarded UPDATE, which takes the
-- write lock before reading, through the busy handler, just as IMMEDIATE
-- does; the SELECT that explains a refusal runs after it, under the lock.
-- (Measured: the whole suite passes with it.)  The slip that matters, a
-- check read before the lock is taken, is claim-read-then-write-without-lock.
-- Also "claim-next-takes-done-jobs" (done = 0 dropped from claim_next's
-- candidates): a trigger keeps lease_queue.state = 1 for every done job, so
-- the index filter state = 0 already leaves them out, and a done job that
-- slipped through would still be refused by claim's own guarded UPDATE in
-- the same transaction; the slip that matters, a candidate filter that lets
-- ended jobs through ahead of a ready one, is claim-next-takes-ended-jobs.
-- Also claim_next's "fence = ?5" in LSQ_SQL_Q_CLAIM_FREE dropped: the fence
-- was read by the candidates' query in the same write transaction, with
-- nothing written between, so the guard cannot fail; it is there so the
-- fence handed out (the one read + 1) is the one stored whatever happens.
-- Also complete_many's fields read through metatables (lua_gettable for
-- lua_rawget in check_job): an entry with a metatable is refused before
-- its fields are read (lb_check_plain), and a plain table reads the same
-- either way.
-- Also "pg-claim-next-id-order": PostgreSQL's claim_next returns its jobs
-- through a final SELECT ... ORDER BY of the claim order (lpg_queue_sql.h),
-- so there is no sort of RETURNING's rows left to skip.
-- Also the keyword form's plain password value taken off in
-- lease__pg_raw_secrets (src/pg/lpg_path.c): a string libpq parses has the
-- same value added decoded, and libpq echoes no value of a keyword string
-- it cannot parse, only the word after a space (secret-keyword-rest-kept).
-- Also, on PostgreSQL, a session the server ends between a pipeline's last
-- result and its sync (lpg.c: pipeline_read's error in place of the sync,
-- a statement with no result, lpg_pipeline_end): libpq stops short of the
-- sync and refuses to leave pipeline mode, and these guards report that as
-- a lost connection (ioerr) rather than the next statement's "not allowed
-- in pipeline mode" (error), so lease.pool opens the connection again.  No
-- spec can place the server's end there: spec 29's rounds of terminated
-- connections met it once in a full run (a worker's error), which is how
-- it was found.
-- Also "wake-limited-discard-no-signal" (no wake of a limited queue's
-- waiters after a fail that discards): on PostgreSQL the trigger
-- lease_jobs_sooner (schema step 23) wakes them at the fail's until = 0,
-- and on SQLite spec 57's waiter in its own process, its files' look made
-- rare and its watch off, still woke within a second of such a fail
-- without it (a cause not yet found); the spec stays.
return {
  -- The seed's broken changes (CONTRACT.md's table) ---------------------
  {
    name = "seed-1-create-not-idempotent", step = "1", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CREATE_JOBS",
    from = [["CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "]],
    to = [["CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, "]],
    hint = "specs/01-init_spec.lua",
  },
  {
    name = "seed-2-insert-or-replace", step = "2", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_ENQUEUE",
    from = [["INSERT OR IGNORE INTO jobs(id, fence) VALUES (?1, coalesce(?2, 0))"]],
    to = [["INSERT OR REPLACE INTO jobs(id, fence) VALUES (?1, coalesce(?2, 0))"]],
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "seed-3-state-empty-table", step = "3", file = "src/lua/lease_lua.c",
    fn = "push_state",
    from = "  if (!a->found) {\n    lua_pushnil(L);\n    return 1;",
    to = "  if (!a->found) {\n    lua_newtable(L);\n    return 1;",
    hint = "specs/03-state_spec.lua",
  },
  {
    name = "seed-4-claim-boundary-held", step = "4", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND done = 0 AND until < ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "seed-5-renew-revives-at-boundary", step = "5", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RENEW",
    from = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until >= ?4" \]=],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "seed-6-complete-done-ge-0", step = "6", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE_GUARD",
    from = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \]=],
    to = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done >= 0 AND until > ?4"    \]=],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "seed-7-release-resets-fence", step = "7", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RELEASE",
    from = [["UPDATE jobs SET owner = NULL, until = 0"]],
    to = [["UPDATE jobs SET owner = NULL, until = 0, fence = 0"]],
    hint = "specs/07-release_spec.lua",
  },

  {
    name = "seed-8-claim-many-first-owner-only", step = "8", file = "src/core/lease_many.c",
    fn = "many_worker_main",
    from = "    if (i >= run->n) break;",
    to = "    if (i >= 1) break;",
    hint = "specs/08-claim_many_spec.lua",
  },

  -- Our own: plausible slips a maintainer could make ---------------------
  {
    name = "complete-without-owner-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE_GUARD",
    from = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \]=],
    to = [=[  "id = ?1 AND fence = ?3 AND done = 0 AND until > ?4"    \]=],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "complete-without-fence-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE_GUARD",
    from = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \]=],
    to = [=[  "id = ?1 AND owner = ?2 AND done = 0 AND until > ?4"    \]=],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "complete-without-deadline-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE_GUARD",
    from = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \]=],
    to = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND ?4 = ?4"    \]=],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "renew-without-fence-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RENEW",
    from = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND done = 0 AND until > ?4" \]=],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-without-owner-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RENEW",
    from = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-without-deadline-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RENEW",
    from = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND ?4 = ?4" \]=],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-on-done-job", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RENEW",
    from = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done >= 0 AND until > ?4" \]=],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "release-without-owner-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RELEASE",
    from = [=[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0"
]=],
    to = [=[" WHERE id = ?1 AND fence = ?3 AND done = 0"
]=],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-without-fence-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RELEASE",
    from = [=[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0"
]=],
    to = [=[" WHERE id = ?1 AND owner = ?2 AND done = 0"
]=],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-of-done-job", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RELEASE",
    from = [=[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0"
]=],
    to = [=[" WHERE id = ?1 AND owner = ?2 AND fence = ?3"
]=],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-keeps-deadline", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_RELEASE",
    from = [["UPDATE jobs SET owner = NULL, until = 0"]],
    to = [["UPDATE jobs SET owner = NULL"]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "claim-without-done-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND until <= ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-without-held-check", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND done = 0 AND ?3 = ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-ignores-ttl", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "bind_write",
    from = [=[      sqlite3_bind_double(st, 3, w->now);
      sqlite3_bind_double(st, 4, w->until);]=],
    to = [=[      sqlite3_bind_double(st, 3, w->now);
      sqlite3_bind_double(st, 4, w->now);]=],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-returns-old-fence", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [=[" RETURNING fence"
]=],
    to = [=[" RETURNING fence - 1"
]=],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "blocked-ignores-fence-max", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_BLOCKED_OF",
    from = [=[" WHEN " t "fence >= 9223372036854775807 THEN 3"]=],
    to = [=[" WHEN " t "fence > 9223372036854775807 THEN 3"]=],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "blocked-ignores-until-type", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_BLOCKED_OF",
    from = [=[" WHEN typeof(" t "until) NOT IN ('integer', 'real') THEN 4 ELSE 0 END)"]=],
    to = [=[" ELSE 0 END)"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "claim-without-blocked-guard", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [=[  " AND " LSQ_SQL_BLOCKED " = 0"                                         \
  " RETURNING fence"]=],
    to = [=[  " RETURNING fence"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "complete-without-blocked-guard", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE_GUARD",
    from = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \
  " AND " LSQ_SQL_BLOCKED " = 0"]=],
    to = [=[  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "claim-next-without-blocked-guard", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [=[" AND j.done = 0 AND j.until <= ?2 AND " LSQ_SQL_BLOCKED_OF("j.") " = 0"]=],
    to = [=[" AND j.done = 0 AND j.until <= ?2"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "counts-ready-includes-blocked", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_TALLY",
    from = [[" total(done = 0 AND b = 0 AND until <= ?1) AS ready,"]],
    to = [[" total(done = 0 AND until <= ?1) AS ready,"]],
    hint = "specs/25-hostile_values_spec.lua",
  },
  -- values another client stored, read as the engine's SQL reads them,
  -- and writes another client's trigger skipped
  {
    name = "state-done-read-raw", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_FULL_ROW",
    from = [=[  " j.done <> 0, j.b, q.payload,]=],
    to = [=[  " j.done, j.b, q.payload,]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "claim-paused-read-raw", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_SETTINGS",
    from = [=["SELECT paused <> 0, coalesce(concurrency, 0),]=],
    to = [=["SELECT paused, coalesce(concurrency, 0),]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "queues-paused-read-raw", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_QUEUES",
    from = [=[coalesce(s.paused <> 0, 0)]=],
    to = [=[coalesce(s.paused, 0)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "retry-skipped-reopen-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if ((rc = run_one(db, reopen, "retry's reopen of", x->id, x->id_len)) != LEASE_OK) return rc;]=],
    to = [=[  if ((rc = run_once(db, reopen)) != LEASE_OK) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "retry-ended-queue-row-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if (!f.done && (f.qstate == LEASE__Q_OPEN || f.qstate == LEASE__Q_WAITING)) return LEASE_OK;]=],
    to = [=[  if (!f.done || (f.qstate == LEASE__Q_OPEN || f.qstate == LEASE__Q_WAITING)) return LEASE_OK;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "cancel-skipped-end-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "cancel_body",
    from = [=[  if ((rc = run_one(db, end, "cancel of", x->id, x->id_len)) != LEASE_OK) return rc;]=],
    to = [=[  if ((rc = run_once(db, end)) != LEASE_OK) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "expiry-skipped-discard-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_expired",
    from = [=[  if ((rc = run_one(db, end, "a claim's discard of", w->id, w->id_len)) != LEASE_OK) return rc;]=],
    to = [=[  if ((rc = run_once(db, end)) != LEASE_OK) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "enqueue-skipped-insert-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = [=[      if ((rc = insert_ignored(db, j->id, j->id_len)) != LEASE_OK) return rc;]=],
    to = [=[      if ((rc = insert_ignored(db, j->id, j->id_len)) != LEASE_OK) lease__clear_error(db);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- an id that is there (not inserted again) taken for a skipped insert
    name = "enqueue-existing-id-refused", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "insert_ignored",
    from = [=[  if (there) return LEASE_OK;]=],
    to = [=[  if (0) return LEASE_OK;]=],
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "tick-skipped-move-unseen", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "tick_body",
    from = [=[      rc = moved_by_another(db, s);]=],
    to = [=[      if (moved_by_another(db, s) != LEASE_OK) lease__clear_error(db);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a schedule another tick moved first taken for a skipped move
    name = "tick-move-by-another-refused", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "moved_by_another",
    from = [=[  if (src == SQLITE_DONE) return LEASE_OK;]=],
    to = [=[  if (0) return LEASE_OK;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "pg-enqueue-skip-unchecked", step = "own", file = "src/pg/lpg_queue.c",
    fn = "enqueue_jobs", backend = "pg",
    from = [=[    if (!added && !held && (rc = lpg_enqueue_missing(db, j, 1)) != LEASE_OK) return rc;]=],
    to = [=[    if (0 && !added && !held && (rc = lpg_enqueue_missing(db, j, 1)) != LEASE_OK) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-enqueue-batch-skip-unchecked", step = "own", file = "src/pg/lpg_many.c",
    fn = "lpg_enqueue_run", backend = "pg",
    from = [=[  if ((PQntuples(res) < n && lpg_enqueue_missing(db, jobs, n) != LEASE_OK) ||]=],
    to = [=[  if ((PQntuples(res) < 0 && lpg_enqueue_missing(db, jobs, n) != LEASE_OK) ||]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a batch's INSERT outside a transaction: the jobs it added stay when
    -- the check that follows fails
    name = "pg-enqueue-batch-outside-transaction", step = "own", file = "src/pg/lpg_many.c",
    fn = "lpg_enqueue_run", backend = "pg",
    from = [=[  *began = PQtransactionStatus(LPG(db)->pg) == PQTRANS_IDLE;]=],
    to = [=[  *began = 0;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- an id that is there taken for one whose insert was skipped
    name = "pg-enqueue-existing-id-refused", step = "own", file = "src/pg/lpg_many.c",
    fn = "lpg_enqueue_missing", backend = "pg",
    from = [=[  if (rc == LEASE_OK && PQntuples(res) > 0)]=],
    to = [=[  if (rc == LEASE_OK && PQntuples(res) >= 0)]=],
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    -- a result field read whatever the result holds: past its rows, a
    -- NULL, a field of another width
    name = "pg-result-field-unchecked", step = "own", file = "src/pg/lpg_int.h",
    fn = "r_be", backend = "pg",
    from = [=[  if (PQgetlength(r, row, col) != bytes || PQgetisnull(r, row, col)) return 0;]=],
    to = [=[  if (0) return 0;]=],
    c_hint = "test_pg_wire",
  },
  {
    name = "pg-event-skip-unchecked", step = "own", file = "src/pg/lpg_events.c",
    fn = "lpg_event", backend = "pg",
    from = [=[  if (PQntuples(res) != 1) {   /* another client's trigger skipped the insert */]=],
    to = [=[  if (PQntuples(res) < 0) {   /* another client's trigger skipped the insert */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "event-skip-unchecked", step = "own", file = "src/sqlite/lsq_events.c",
    fn = "lsq_event",
    from = [=[  if (sqlite3_changes(LSQ(db)->sql) != 1)   /* another client's trigger skipped the insert */]=],
    to = [=[  if (sqlite3_changes(LSQ(db)->sql) < 0)   /* another client's trigger skipped the insert */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "fail-skipped-error-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "fail_body",
    from = [=[  rc = run_one(db, add, "fail's error record of", w->id, w->id_len);]=],
    to = [=[  rc = run_once(db, add);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "fail-skipped-state-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "fail_body",
    from = [=[  if ((rc = run_one(db, set, "fail's queue state of", w->id, w->id_len)) != LEASE_OK ||]=],
    to = [=[  if ((rc = run_once(db, set)) != LEASE_OK ||]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-fail-skipped-error-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "fail_body", backend = "pg",
    from = [=[  rc = r_i8(res, 0, 11) == 1 ? LEASE_OK
                             : lease__skipped(db, "fail's error record of", w->id, w->id_len);]=],
    to = [=[  rc = LEASE_OK;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-fail-skipped-state-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "fail_body", backend = "pg",
    from = [=[  rc = atoi(PQcmdTuples(res)) == 1 ? LEASE_OK
                                   : lease__skipped(db, "fail's queue state of", w->id, w->id_len);]=],
    to = [=[  rc = LEASE_OK;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a complete stores the job done and leaves its queue row open: never
    -- pruned, the jobs after it never opened
    name = "complete-skipped-queue-row-unseen", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_guarded_step",
    from = [=[  if (changed && w->op == LEASE__COMPLETE && !queued && (src = queue_row_left(db, w)) != LEASE_OK)]=],
    to = [=[  if (0 && changed && w->op == LEASE__COMPLETE && !queued && (src = queue_row_left(db, w)) != LEASE_OK)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-complete-skipped-queue-row-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  LPG_SQL_HELD_REPORT_FROM(one, "(SELECT count(*) FROM u) / CASE WHEN EXISTS (SELECT 1 FROM f)" \]=],
    to = [=[  LPG_SQL_HELD_REPORT_FROM(one, "(SELECT count(*) FROM u) / CASE WHEN true" \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a complete of a job another client inserted (no queue row) fails
    name = "pg-complete-skipped-queue-row-rowless", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[                       " THEN 1 WHEN EXISTS (SELECT 1 FROM u) AND (SELECT seen FROM q)" \]=],
    to = [=[                       " THEN 1 WHEN EXISTS (SELECT 1 FROM u) AND true" \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-complete-many-skipped-queue-row-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " THEN g.seen AND g.id IN (SELECT id FROM u) AND g.id NOT IN (SELECT id FROM f)"  \]=],
    to = [=[  " THEN false"  \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-complete-many-skipped-queue-row-ignored", step = "own", file = "src/pg/lpg_many.c",
    fn = "batch_body", backend = "pg",
    from = [=[    if (r_bool(res, i, 10)) {   /* its queue row not written */]=],
    to = [=[    if (0) {   /* its queue row not written */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-complete-skipped-queue-row-unnamed", step = "own", file = "src/pg/lpg.c",
    fn = "guarded", backend = "pg",
    from = [=[    return w->op == LEASE__COMPLETE ? lpg_skipped_as(db, "complete's queue row of", w->id, w->id_len)]=],
    to = [=[    return 0 ? lpg_skipped_as(db, "complete's queue row of", w->id, w->id_len)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-ccn-skipped-queue-row-unnamed", step = "own", file = "src/pg/lpg_queue.c",
    fn = "ccn_pipelined", backend = "pg",
    from = [=[    return lpg_skipped_as(db, "complete's queue row of", wc->id, wc->id_len);   /* the only one dividing */]=],
    to = [=[    return rc;   /* the only one dividing */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-skipped-as-any-failure", step = "own", file = "src/pg/lpg.c",
    fn = "lpg_skipped_as", backend = "pg",
    from = [=[  if (!lpg_failed_with(db, "22012")) return db->rc;]=],
    to = [=[  if (0) return db->rc;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "skipped-not-mismatch", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__skipped",
    from = [=[  return lease__fail(db, LEASE_MISMATCH, "%s%s%.*s changed no row (a trigger?): nothing stored",]=],
    to = [=[  return lease__fail(db, LEASE_ERROR, "%s%s%.*s changed no row (a trigger?): nothing stored",]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "schedule-skipped-unseen", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "put_body",
    from = [=[  if (sqlite3_changes(LSQ(db)->sql) != 1)]=],
    to = [=[  if (0)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "unschedule-skipped-unseen", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "delete_body",
    from = [=[  if (src == SQLITE_DONE) return LEASE_OK;]=],
    to = [=[  if (1) return LEASE_OK;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- the unschedule's look finds no schedule: a skipped delete is missing
    name = "schedule-at-null-next", step = "own", file = "src/sqlite/lsq_schedule_sql.h",
    fn = "LSQ_SQL_SCHEDULE_AT",
    from = [=[next_at = coalesce(?2, next_at)"]=],
    to = [=[next_at = ?2"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-schedule-skipped-unseen", step = "own", file = "src/pg/lpg_schedule.c",
    fn = "lpg_s_schedule", backend = "pg",
    from = [=[  rc = atoi(PQcmdTuples(res)) == 1 ? LEASE_OK   /* unless a trigger skipped the upsert */]=],
    to = [=[  rc = 1 ? LEASE_OK   /* unless a trigger skipped the upsert */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-unschedule-skipped-unseen", step = "own", file = "src/pg/lpg_schedule.c",
    fn = "lpg_s_unschedule", backend = "pg",
    from = [=[  if (r_i8(res, 0, 0) > 0 && !*found)   /* locked, not deleted: a trigger skipped it */]=],
    to = [=[  if (0 && !*found)   /* locked, not deleted: a trigger skipped it */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a schedule not there is taken for a skipped delete
    name = "pg-unschedule-lock-uncounted", step = "own", file = "src/pg/lpg_schedule_sql.h",
    fn = "LPG_SQL_SCHEDULE_DELETE", backend = "pg",
    from = [=[" RETURNING 1) SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM d)"]=],
    to = [=[" RETURNING 1) SELECT 1::int8, (SELECT count(*) FROM d)"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "record-claims-skipped-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "record_claims",
    from = [=[  if ((rc = run_once(db, st)) != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == n) return rc;]=],
    to = [=[  if ((rc = run_once(db, st)) != LEASE_OK || 1) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-record-claims-skipped-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "claim_under", backend = "pg",
    from = [=[    rc = atoi(PQcmdTuples(res)) == *count   /* unless a trigger skipped some */]=],
    to = [=[    rc = 1   /* unless a trigger skipped some */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "gate-skipped-unseen", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "gate_body",
    from = [=[  return g->reason == LEASE_GRANTED ? LEASE_OK : gate_refused(db, g);]=],
    to = [=[  return g->reason == LEASE_GRANTED || 1 ? LEASE_OK : gate_refused(db, g);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- the gate's row left unwritten (so unlocked) taken for a refusal
    name = "gate-skipped-equal-refused", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "LSQ_TX_SQL_GATE_STORED",
    from = [=[  "SELECT 1 FROM lease_fences WHERE resource = ?1 AND (?2 >= fence) IS NOT 1"]=],
    to = [=[  "SELECT 1 FROM lease_fences WHERE resource = ?1 AND (?2 > fence) IS NOT 1"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-gate-skipped-unseen", step = "own", file = "src/pg/lpg_tx.c",
    fn = "lpg_fence_gate", backend = "pg",
    from = [=[  if (rc == LEASE_OK && *reason != LEASE_GRANTED) rc = gate_refused(db, vals, lens, fence);]=],
    to = [=[  if (0 && rc == LEASE_OK && *reason != LEASE_GRANTED) rc = gate_refused(db, vals, lens, fence);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-gate-skipped-equal-refused", step = "own", file = "src/pg/lpg_tx.c",
    fn = "gate_refused", backend = "pg",
    from = [=[  larger = PQntuples(res) == 1 && r_i8(res, 0, 0) > fence;]=],
    to = [=[  larger = PQntuples(res) == 1 && r_i8(res, 0, 0) >= fence;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a job that would not wait for its parents could run before them
    name = "dep-skipped-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "add_deps",
    from = [=[    if (sqlite3_changes(LSQ(db)->sql) == 1) continue;]=],
    to = [=[    if (1) continue;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "dep-there-any-edge", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_DEP_THERE",
    from = [=["SELECT 1 FROM lease_deps WHERE child = ?1 AND parent = " LSQ_SQL_DEP_PARENT]=],
    to = [=["SELECT 1 FROM lease_deps WHERE child = child OR parent = " LSQ_SQL_DEP_PARENT]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "dep-wait-skipped-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "add_deps",
    from = [=[  if ((rc = run_once(db, wait)) != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == 1) return rc;]=],
    to = [=[  if ((rc = run_once(db, wait)) != LEASE_OK || 1) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "retry-wait-skipped-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if (sqlite3_changes(LSQ(db)->sql) == 0 &&
      (rc = wait_written(db, "retry's wait of", x->id, x->id_len)) != LEASE_OK)]=],
    to = [=[  if (0 &&
      (rc = wait_written(db, "retry's wait of", x->id, x->id_len)) != LEASE_OK)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a job whose parents all completed is taken for a skipped wait
    name = "dep-unwaited-without-pending", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_DEP_UNWAITED",
    from = [=[  " AND state = " LEASE__Q_OPEN_S " AND " LSQ_SQL_DEP_PENDING("lease_queue", "")]=],
    to = [=[  " AND state = " LEASE__Q_OPEN_S]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-dep-skipped-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "add_deps", backend = "pg",
    from = [=[    if (atoi(PQcmdTuples(res)) == 0 && edge_there(db, &q, j->id, j->id_len) != LEASE_OK) {]=],
    to = [=[    if (0 && edge_there(db, &q, j->id, j->id_len) != LEASE_OK) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-dep-there-any-edge", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_DEP_THERE", backend = "pg",
    from = [=["SELECT 1 FROM lease_deps WHERE child = $1 AND parent = $2"]=],
    to = [=["SELECT 1 FROM lease_deps WHERE child = $1 OR parent = $2"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-wait-skipped-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "wait_again", backend = "pg",
    from = [=[  skipped = !r_bool(res, 0, 0) && r_bool(res, 0, 1);]=],
    to = [=[  skipped = !r_bool(res, 0, 0) && 0;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-dep-wait-check-any-job", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_DEP_WAIT", backend = "pg",
    from = [=[  " SELECT EXISTS (SELECT 1 FROM w), EXISTS (SELECT 1 FROM lease_queue WHERE "     \]=],
    to = [=[  " SELECT EXISTS (SELECT 1 FROM w), EXISTS (SELECT 1 FROM lease_queue WHERE id = $1 OR "     \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "expiry-skipped-error-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_expired",
    from = [=[  rc = run_one(db, add, "a claim's error record of", w->id, w->id_len);]=],
    to = [=[  rc = run_once(db, add);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-claim-next-error-skipped-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "claim_rounds", backend = "pg",
    from = [=[      if ((PQgetisnull(res, i, 1) && !r_bool(res, i, 12)) || r_bool(res, i, 13)) {]=],
    to = [=[      if ((PQgetisnull(res, i, 1) && !r_bool(res, i, 12)) || 0) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-claim-next-error-unreported", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_", backend = "pg",
    from = [=[  " x.lapsed AND NOT EXISTS (SELECT 1 FROM e WHERE e.id = x.id)" extra                              \]=],
    to = [=[  " false" extra                              \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-claim-error-skipped-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_CLAIM", backend = "pg",
    from = [=[                 " OR EXISTS (SELECT 1 FROM u)) AND NOT EXISTS (SELECT 1 FROM e)"  \]=],
    to = [=[                 " OR EXISTS (SELECT 1 FROM u)) AND false"  \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-claim-error-unnamed", step = "own", file = "src/pg/lpg.c",
    fn = "guarded", backend = "pg",
    from = [=[           : w->op == LEASE__CLAIM  ? lpg_skipped_as(db, "a claim's error record of", w->id, w->id_len)]=],
    to = [=[           : 0 ? lpg_skipped_as(db, "a claim's error record of", w->id, w->id_len)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a retried job's attempts would not start again
    name = "retry-reset-skipped-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if (sqlite3_changes(LSQ(db)->sql) == 0 && (rc = reset_skipped(db, x)) != LEASE_OK) return rc;]=],
    to = [=[  if (0 && (rc = reset_skipped(db, x)) != LEASE_OK) return rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- complete_claim_next's one round trip commits a claim whose lapsed
    -- lease's error record was not stored
    name = "pg-ccn-keeping-error-unseen", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_KEEPING_", backend = "pg",
    from = [=[                        " OR (x.lapsed AND NOT EXISTS (SELECT 1 FROM e WHERE e.id = x.id)) THEN 0 ELSE 1 END", limit)]=],
    to = [=[                        " OR false THEN 0 ELSE 1 END", limit)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- an edge's insert that failed is taken for one that stored
    name = "deps-insert-failure-ignored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "add_deps",
    from = [=[    if (rc != LEASE_OK) return rc;
    if (sqlite3_changes(LSQ(db)->sql) == 1) continue;]=],
    to = [=[    if (0) return rc;
    if (sqlite3_changes(LSQ(db)->sql) == 1) continue;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a queue row another client deleted while the complete waited is
    -- taken for a skipped write
    name = "pg-complete-deleted-row-skipped", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  " FOR UPDATE) s ON true),"                                                          \]=],
    to = [=[  ") s ON true),"                                                          \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete reads no queue row that another client added during its
    -- wait: the job counts as open
    name = "pg-complete-added-queue-row-missed", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  " q AS (SELECT coalesce(s.state, (SELECT n.state FROM lease_queue_now(j.id) n), "   \]=],
    to = [=[  " q AS (SELECT coalesce(s.state, NULL, "   \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- tx:complete's failure on the server ends the caller's transaction
    name = "pg-tx-complete-no-savepoint", step = "own", file = "src/pg/lpg_tx.c",
    fn = "lpg_tx_write", backend = "pg",
    from = [=[  if (w->op != LEASE__COMPLETE) return note_end(tx, lpg_guarded(tx->db, w, reason));]=],
    to = [=[  if (1) return note_end(tx, lpg_guarded(tx->db, w, reason));]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-tx-complete-no-rollback", step = "own", file = "src/pg/lpg_tx.c",
    fn = "lpg_tx_write", backend = "pg",
    from = [=[  if (rc != LEASE_OK && PQstatus(pg) == CONNECTION_OK && PQtransactionStatus(pg) != PQTRANS_IDLE)]=],
    to = [=[  if (0 && PQstatus(pg) == CONNECTION_OK && PQtransactionStatus(pg) != PQTRANS_IDLE)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- each table entry of a batch keeps its after list on the Lua stack (in
    -- a table of its own, left there), not in the batch's one table: a
    -- batch with more such entries than the stack has room for overflows it
    name = "after-lists-on-stack", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "lb_check_new_jobs",
    from = [=[        read_job_fields(L, c, 2, -1, i, entry_names, &jobs[i - 1], 1, anchor);]=],
    to = [=[        lua_newtable(L);
        lua_insert(L, -2);
        anchor = lua_gettop(L) - 1;
        read_job_fields(L, c, 2, -1, i, entry_names, &jobs[i - 1], 1, anchor);]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a job enqueued without its queue row is never claimed
    name = "enqueue-unqueued-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = [=[  return e->added ? all_queued(db, first) : LEASE_OK;]=],
    to = [=[  return e->added && 0 ? all_queued(db, first) : LEASE_OK;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "enqueue-unqueued-from-last", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = [=[    if (!e->added) first = sqlite3_last_insert_rowid(LSQ(db)->sql);]=],
    to = [=[    first = sqlite3_last_insert_rowid(LSQ(db)->sql);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "enqueue-unqueued-after-first", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_UNQUEUED",
    from = [=[" WHERE jobs.rowid >= ?1 AND]=],
    to = [=[" WHERE jobs.rowid > ?1 AND]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- the enqueue's check looks at the jobs only with another client's
    -- trigger on jobs or lease_queue, or the engine's own gone
    name = "enqueue-unqueued-never-looked", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FOREIGN_TRIGGERS",
    from = [=["SELECT 1 WHERE EXISTS (SELECT 1 FROM sqlite_master"]=],
    to = [=["SELECT 1 WHERE 0 AND EXISTS (SELECT 1 FROM sqlite_master"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "enqueue-unqueued-foreign-trigger-unseen", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FOREIGN_TRIGGERS",
    from = [=[  " WHERE type = 'trigger' AND (name, tbl_name)"                         \]=],
    to = [=[  " WHERE type = 'trigger' AND tbl_name = 'lease_queue' AND (name, tbl_name)"                         \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "enqueue-unqueued-own-trigger-dropped", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FOREIGN_TRIGGERS",
    from = [=[  " OR NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger'"    \]=],
    to = [=[  " OR 0 AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger'"    \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  -- Left out: lsq_rollback forgetting the look at the triggers.  It
  -- matters only when a look was made under a change of the schema that
  -- the same transaction made and then gave up (a limit's index and an
  -- enqueue in one group commit, lost at its COMMIT) and another client's
  -- change then brings the same cookie back: no spec can arrange that.
  {
    -- the look at the triggers is kept past a change of the schema that
    -- another client made: its trigger is not seen by a handle that had
    -- enqueued before
    name = "enqueue-triggers-cookie-ignored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "foreign_triggers",
    from = [=[  if (!c->triggers_known || c->triggers_cookie != cookie) {]=],
    to = [=[  if (!c->triggers_known) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-enqueue-unqueued-unseen", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_ENQUEUE", backend = "pg",
    from = [=[  " AND NOT EXISTS (SELECT 1 FROM q) THEN 0 ELSE 1 END, (SELECT id FROM h)"]=],
    to = [=[  " AND false THEN 0 ELSE 1 END, (SELECT id FROM h)"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-enqueue-unqueued-unnamed", step = "own", file = "src/pg/lpg_queue.c",
    fn = "enqueue_jobs", backend = "pg",
    from = [=[      return lpg_skipped_as(db, "enqueue's queue row of", j->id, j->id_len);]=],
    to = [=[      return db->rc;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-batch-unqueued-unseen", step = "own", file = "src/pg/lpg_many.c",
    fn = "lpg_enqueue_run", backend = "pg",
    from = [=[      (PQntuples(res) > 0 && all_queued(db, which, jobs, n, res) != LEASE_OK)) {]=],
    to = [=[      (0 && all_queued(db, which, jobs, n, res) != LEASE_OK)) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a job inserted without its queue row is reported as one that existed
    name = "pg-enqueue-data-queued-only", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_ENQUEUE_DATA", backend = "pg",
    from = [=[  " SELECT f.k FROM i JOIN f ON f.id = i.id"]=],
    to = [=[  " SELECT f.k FROM f JOIN q ON q.id = f.id"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-complete-many-queue-rows-uncounted", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " CASE WHEN (SELECT count(*) FROM f) < (SELECT count(*) FROM u WHERE u.seen)"    \]=],
    to = [=[  " CASE WHEN (SELECT count(*) FROM f) < 0"    \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a batch enqueue takes a BEFORE INSERT trigger on lease_queue for none
    name = "pg-unqueued-trigger-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_UNQUEUED", backend = "pg",
    from = [=[  " AND tgtype & 7 = 7 AND tgname <> 'lease_guard_rows')"                         \]=],
    to = [=[  " AND tgtype & 7 = 8 AND tgname <> 'lease_guard_rows')"                         \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-unqueued-rule-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_UNQUEUED", backend = "pg",
    from = [=[  " OR EXISTS (SELECT 1 FROM pg_rewrite WHERE ev_class = 'lease_queue'::regclass)" \]=],
    to = [=[  " OR false" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-unqueued-uncounted", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_UNQUEUED", backend = "pg",
    from = [=[  " THEN (SELECT CASE WHEN count(*) < cardinality($1::bytea[]) THEN (SELECT t.id"  \]=],
    to = [=[  " THEN (SELECT CASE WHEN count(*) < 0 THEN (SELECT t.id"  \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "prune-skipped-floor-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "raise_floor",
    from = [=[  return run_one(db, st, "prune's raise of the fence floor", NULL, 0);]=],
    to = [=[  return run_once(db, st);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-prune-skipped-floor-unseen", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_PRUNE", backend = "pg",
    from = [=[  " SELECT id, 1 / CASE WHEN EXISTS (SELECT 1 FROM f)"                              \]=],
    to = [=[  " SELECT id, 1 / CASE WHEN true"                              \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a prune of jobs that never took a fence raises no floor, and is no
    -- skipped raise
    name = "pg-prune-floor-check-without-fence", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_PRUNE", backend = "pg",
    from = [=[  " OR NOT EXISTS (SELECT 1 FROM d WHERE fence > 0) THEN 1 ELSE 0 END FROM d"]=],
    to = [=[  " OR false THEN 1 ELSE 0 END FROM d"]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-prune-skipped-floor-unnamed", step = "own", file = "src/pg/lpg_queue.c",
    fn = "lpg_q_prune", backend = "pg",
    from = [=[    if (lpg_failed_with(db, "22012")) {   /* the floor's raise was skipped */]=],
    to = [=[    if (0) {   /* the floor's raise was skipped */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-retry-skip-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_RETRY", backend = "pg",
    from = [=[  " OR (EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM r)) THEN 1 ELSE 0 END"   \]=],
    to = [=[  " OR (EXISTS (SELECT 1 FROM u) OR EXISTS (SELECT 1 FROM r)) THEN 1 ELSE 0 END"   \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-cancel-skip-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CANCEL", backend = "pg",
    from = [=[  " AND NOT EXISTS (SELECT 1 FROM u) THEN 0 ELSE 1 END"                             \]=],
    to = [=[  " AND false THEN 0 ELSE 1 END"                             \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-admin-skip-unnamed", step = "own", file = "src/pg/lpg_queue.c",
    fn = "admin_once", backend = "pg",
    from = [=[    if (lpg_failed_with(db, "22012")) {   /* a write the rules granted was skipped */]=],
    to = [=[    if (0) {   /* a write the rules granted was skipped */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-control-skip-unchecked", step = "own", file = "src/pg/lpg_queue.c",
    fn = "control_body", backend = "pg",
    from = [=[  if (atoi(PQcmdTuples(res)) != 1) {   /* the upsert writes its row unless a trigger skips it */]=],
    to = [=[  if (0) {   /* the upsert writes its row unless a trigger skips it */]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-tick-skipped-move-unseen", step = "own", file = "src/pg/lpg_schedule.c",
    fn = "tick_body", backend = "pg",
    from = [=[      if (moved_by_another(db, &d[i].s) != LEASE_OK) return db->rc;]=],
    to = [=[      if (moved_by_another(db, &d[i].s) != LEASE_OK) lease__clear_error(db);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "pg-tick-move-by-another-refused", step = "own", file = "src/pg/lpg_schedule.c",
    fn = "moved_by_another", backend = "pg",
    from = [=[  if (!still) return LEASE_OK;]=],
    to = [=[  if (still < 0) return LEASE_OK;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "enqueue-skipped-data-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = [=[    rc = run_one(db, data, "enqueue's queue data of", j->id, j->id_len);]=],
    to = [=[    rc = run_once(db, data);]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "control-skipped-settings-unseen", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "control_body",
    from = [=[  if (rc == LEASE_OK && sqlite3_changes(LSQ(db)->sql) != 1)]=],
    to = [=[  if (rc == LEASE_OK && sqlite3_changes(LSQ(db)->sql) > 1)]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "clock-infinite-mark-kept", step = "own", file = "src/core/lease.c",
    fn = "lease__clock",
    from = "  if (!isfinite(mark)) mark = NAN;\n",
    to = "",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "claim-reason-held-for-done", step = "own", file = "src/core/lease_rules.c",
    fn = "ended_reason",
    from = [=[  if (f->done) return LEASE_DONE;]=],
    to = [=[  if (f->done) return LEASE_HELD;]=],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "reason-not-owner-as-stale-fence", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = [=[*reason = LEASE_NOT_OWNER;]=],
    to = [=[*reason = LEASE_STALE_FENCE;]=],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "enqueue-always-true", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_enqueue",
    from = [=[n == 1 ? LEASE_GRANTED
              : db->has_dup ? LEASE_DUPLICATE : LEASE_EXISTS]=],
    to = [=[LEASE_GRANTED]=],
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "result-bound-with-strlen", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_complete",
    from = "  a->result = lb_check_string(L, 6, LB_ARG(c, 6, \"result\"), LB_OPTIONAL | LB_EMPTY,\n                              &a->result_len);",
    to = "  a->result = lb_check_string(L, 6, LB_ARG(c, 6, \"result\"), LB_OPTIONAL | LB_EMPTY,\n                              &a->result_len);\n  if (a->result) a->result_len = strlen(a->result);",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "id-bound-with-strlen", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_string",
    from = "  if (len) *len = n;\n  return s;",
    to = "  if (len) *len = strlen(s);\n  return s;",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "fence-type-check-removed", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_id_owner_fence",
    from = "  a->fence = lb_check_integer(L, 4, LB_ARG(c, 4, \"fence\"), INT64_MIN, INT64_MAX);",
    to = "  a->fence = (int64_t)lua_tonumber(L, 4);",
    hint = "specs/11-bad_input_spec.lua",
  },
  -- A list argument has no key outside 1..n (an entry there would be
  -- left out), and a complete_many entry no key claim_next does not give
  {
    name = "sequence-keys-unchecked", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_sequence",
    from = "    if (!(key >= 1 && key <= (lua_Number)n && key == (lua_Number)(int64_t)key))",
    to = "    if (0 && !(key >= 1 && key <= (lua_Number)n && key == (lua_Number)(int64_t)key))",
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "sequence-keys-past-the-end", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_sequence",
    from = "    if (!(key >= 1 && key <= (lua_Number)n && key == (lua_Number)(int64_t)key))",
    to = "    if (!(key >= 1 && key == (lua_Number)(int64_t)key))",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-entry-keys-unchecked", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_job",
    from = "  lb_check_keys(L, &field, -1, job_entry_keys,",
    to = "  if (0) lb_check_keys(L, &field, -1, job_entry_keys,",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "time-check-left-to-the-core", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_time",
    from = "  bad = lease_check_time(*now, *ttl, &why);\n  if (bad) {",
    to = "  bad = lease_check_time(*now, *ttl, &why);\n  if (0) {",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "synchronous-normal-by-default", step = "own", file = "src/core/lease.c",
    fn = "lease_options_default",
    from = "  opt->synchronous = LEASE_SYNC_FULL;",
    to = "  opt->synchronous = LEASE_SYNC_NORMAL;",
    hint = "specs/13-interop_spec.lua",
  },
  {
    name = "busy-reported-as-held", step = "own", file = "src/lua/lease_lua.c",
    fn = "run_and_push",
    from = "  if (op->run(db, a) != LEASE_OK) {\n    lb_push_db_error(L, db, op->name);",
    to = "  int rc_ = op->run(db, a);\n  if (rc_ == LEASE_BUSY) {\n    lua_pushnil(L);\n    lua_pushliteral(L, \"held\");\n    return 2;\n  }\n  if (rc_ != LEASE_OK) {\n    lb_push_db_error(L, db, op->name);",
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "busy-handler-gives-up-at-once", step = "own", file = "src/sqlite/lsq_conn.c",
    fn = "lsq_busy_handler",
    from = [=[  if (c->busy_timeout_ms > 0 && wait_turn(c, count)) return 1;]=],
    to = [=[  if (c->busy_timeout_ms < 0 && wait_turn(c, count)) return 1;]=],
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "schema-types-not-compared", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "on_column",
    from = [=[  if (!type || strcasecmp(type, c->type) != 0)]=],
    to = [=[  if (!type)]=],
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "wal-before-schema-check", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_open",
    from = [=[  rc = check_file(db, &precheck);
  if (rc == LEASE_OK && precheck) rc = check_schema_immutable(db, &missing);
  else if (rc == LEASE_OK) rc = check_schema(db, c->sql, &missing);]=],
    to = [=[  rc = check_file(db, &precheck);
  if (rc == LEASE_OK) rc = set_pragmas(db);
  if (rc == LEASE_OK && precheck) rc = check_schema_immutable(db, &missing);
  else if (rc == LEASE_OK) rc = check_schema(db, c->sql, &missing);]=],
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "state-done-as-number", step = "own", file = "src/lua/lease_lua.c",
    fn = "push_row",
    from = "  lua_pushboolean(L, row->done);",
    to = "  lua_pushinteger(L, row->done);",
    hint = "specs/03-state_spec.lua",
  },
  {
    name = "gc-does-not-close", step = "own", file = "src/lua/lease_lua.c",
    fn = "m_gc",
    from = "static int m_gc(lua_State *L) {\n  lhandle *h = luaL_checkudata(L, 1, DB_MT);",
    to = "static int m_gc(lua_State *L) {\n  lhandle *h = luaL_checkudata(L, 1, DB_MT);\n  if (h) return 0;",
    hint = "specs/10-handle_spec.lua",
  },
  {
    name = "close-scope-does-not-close", step = "own", file = "src/lua/lease_lua.c",
    fn = "m_close_scope",
    from = "static int m_close_scope(lua_State *L) {\n  return close_handle(L, 1);",
    to = "static int m_close_scope(lua_State *L) {\n  (void)L;\n  return 0;",
    hint = "specs/10-handle_54_spec.lua",
  },
  {
    name = "path-function-leaves-connection-open", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "cache_gc",
    from = "    lease_close(c->slot[i].db);\n    c->slot[i].db = NULL;",
    to = "    c->slot[i].db = NULL;",
    hint = "specs/10-handle_spec.lua",
  },
  {
    name = "claim-next-boundary-held", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [=[" AND j.done = 0 AND j.until <= ?2 AND "]=],
    to = [=[" AND j.done = 0 AND j.until < ?2 AND "]=],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-next-id-order", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [[" ORDER BY q.priority, q.due_at, q.seq LIMIT ?3"]],
    to = [[" ORDER BY q.priority, q.due_at, q.id LIMIT ?3"]],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-next-unsorted-result", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_run",
    from = "  *count = x->n;\n  return LEASE_OK;",
    to = "  for (i = 0; i < x->n / 2; i++) { lease_job j_ = x->jobs[i]; x->jobs[i] = x->jobs[x->n - 1 - i]; x->jobs[x->n - 1 - i] = j_; }\n  *count = x->n;\n  return LEASE_OK;",
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-read-then-write-without-lock", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "sq_write",
    from = [=[  if ((rc = lsq_write_txn(db, write_body, &x)) != LEASE_OK) return rc;]=],
    to = [=[  if (w->op == LEASE__CLAIM) {
    sqlite3_stmt *q_ = NULL;
    int held_ = 1;
    sqlite3_prepare_v2(LSQ(db)->sql, "SELECT done <> 0 OR until > ?2 FROM jobs WHERE id = ?1", -1, &q_, NULL);
    lsq_bind_bytes(q_, 1, w->id, w->id_len);
    sqlite3_bind_double(q_, 2, w->now);
    if (sqlite3_step(q_) == SQLITE_ROW) held_ = sqlite3_column_int(q_, 0);
    sqlite3_finalize(q_);
    if (held_) { if (reason) *reason = LEASE_HELD; return LEASE_OK; }
    q_ = NULL;
    sqlite3_prepare_v2(LSQ(db)->sql, "UPDATE jobs SET owner = ?2, until = ?4, fence = fence + 1 WHERE id = ?1 AND ?3 = ?3 RETURNING fence", -1, &q_, NULL);
    bind_write(q_, w);
    if (sqlite3_step(q_) == SQLITE_ROW && fence) *fence = sqlite3_column_int64(q_, 0);
    sqlite3_finalize(q_);
    if (reason) *reason = LEASE_GRANTED;
    return LEASE_OK;
  }
  if ((rc = lsq_write_txn(db, write_body, &x)) != LEASE_OK) return rc;]=],
    hint = "specs/08-claim_many_spec.lua",
  },
  {
    name = "claim-many-results-in-wrong-slots", step = "own", file = "src/core/lease_many.c",
    fn = "many_worker_main",
    from = "    run->fences[i] = fence;",
    to = "    run->fences[run->n - 1 - i] = fence;",
    hint = "specs/08-claim_many_spec.lua",
  },
  {
    name = "thread-copy-loses-integer-subtype", step = "own", file = "src/lua/lease_copy.c",
    fn = "enc_value",
    from = "      if (lua_isinteger(L, i)) {\n        lua_Integer v = lua_tointeger(L, i);",
    to = "      if (0) {\n        lua_Integer v = lua_tointeger(L, i);",
    hint = "specs/20-thread_spec.lua",
  },
  {
    name = "barrier-does-not-wait", step = "own", file = "src/lua/lease_thread.c",
    fn = "barrier_wait",
    from = "    while (b->round == round) pthread_cond_wait(&b->cv, &b->mu);",
    to = "    (void)round;",
    hint = "specs/20-thread_spec.lua",
  },
  {
    name = "barrier-true-to-all", step = "own", file = "src/lua/lease_thread.c",
    fn = "barrier_wait",
    from = "  lua_pushboolean(L, serial);",
    to = "  (void)serial;\n  lua_pushboolean(L, 1);",
    hint = "specs/20-thread_spec.lua",
  },
  -- complete_many: the batched complete ---------------------------------
  {
    name = "complete-many-skips-children-of-deps", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_deps_none",
    from = "  *none = src == SQLITE_DONE;",
    to = "  *none = 1;",
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "complete-skips-release-with-children", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_release",
    from = "  if (src == SQLITE_DONE) return LEASE_OK;\n",
    to = "  if (src == SQLITE_ROW) return LEASE_OK;\n",
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "complete-many-keeps-no-deps", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_complete_each",
    from = "  LSQ(db)->no_deps = 0;\n",
    to = "",
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "complete-many-stops-at-first-refused", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_complete_each",
    from = "    if (r == LEASE_GRANTED) done++;\n  }",
    to = "    if (r == LEASE_GRANTED) done++;\n    else break;\n  }",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-commits-each-job", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_complete_each",
    from = [=[    if (r == LEASE_GRANTED) done++;]=],
    to = [=[    if (r == LEASE_GRANTED) done++;
    if ((rc = lsq_run(db, LSQ_ST_COMMIT)) != LEASE_OK || (rc = lsq_run(db, LSQ_ST_BEGIN)) != LEASE_OK) return rc;]=],
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-counts-refused-as-stored", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_complete_each",
    from = "  if (rc == LEASE_OK) *stored = done;",
    to = "  if (rc == LEASE_OK) *stored = n;",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-no-expired-reason", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_complete_each",
    from = [=[    rc = lsq_guarded_step(db, &one, NULL, &r);]=],
    to = [=[    one.now = -HUGE_VAL;
    rc = lsq_guarded_step(db, &one, NULL, &r);]=],
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-empty-id-unchecked", step = "own", file = "src/core/lease.c",
    fn = "lease__check_complete_many",
    from = [=[    if (check_item(db, "id", i, items[i].id, &len)) return db->rc;]=],
    to = [=[    if (items[i].id && (len == LEASE_NTS ? strlen(items[i].id) : len) == 0) continue;
    if (check_item(db, "id", i, items[i].id, &len)) return db->rc;]=],
    hint = "specs/19-complete_many_spec.lua",
    c_hint = "test_core",
  },
  {
    name = "complete-many-fence-unchecked", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_job",
    from = "  it->fence = lb_check_integer(L, -1, &field, INT64_MIN, INT64_MAX);",
    to = "  it->fence = (int64_t)lua_tonumber(L, -1);",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-drops-result", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_job",
    from = "  it->result = lb_check_string(L, -1, &field, LB_OPTIONAL | LB_EMPTY, &it->result_len);",
    to = "  it->result = lb_check_string(L, -1, &field, LB_OPTIONAL | LB_EMPTY, &it->result_len);\n  it->result = NULL;\n  it->result_len = 0;",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "method-errors-count-self", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_error",
    from = "      strcmp(ar.namewhat, \"method\") == 0)\n    shift = 1;",
    to = "      strcmp(ar.namewhat, \"method\") == 0)\n    shift = 0;",
    hint = "specs/11-bad_input_spec.lua",
  },

  -- The binding's one argument checker per kind, and its two ways in ----
  {
    name = "integer-check-accepts-floats", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "check_integer",
    from = "    v = lua_tointegerx(L, idx, &isint);\n#else",
    to = "    v = (lua_Integer)lua_tonumber(L, idx);\n    isint = 1;\n#else",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "integer-bounds-unchecked", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "check_integer",
    from = "  if (!isint || (int64_t)v < min || (int64_t)v > max)\n    return integer_fail(",
    to = "  if (!isint)\n    return integer_fail(",
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "length-limit-unchecked", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_string",
    from = "  if (n > LEASE_MAX_LENGTH) {",
    to = "  if (0) {",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "path-zero-bytes-unchecked", step = "own", file = "src/lua/lease_lua_args.c",
    fn = "lb_check_string",
    from = "  if ((flags & LB_NOZERO) && strlen(s) != n)",
    to = "  if (0)",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "path-function-opens-before-checking", step = "own", file = "src/lua/lease_lua.c",
    fn = "op_path",
    from = "  op->check(L, &c, &a);\n  base = lua_gettop(L);\n  db = lb_path_take(L, op->name, path);",
    to = "  base = lua_gettop(L);\n  db = lb_path_take(L, op->name, path);\n  op->check(L, &c, &a);",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "claim-many-path-takes-memory", step = "own", file = "src/lua/lease_lua.c",
    fn = "op_path",
    from = "  if (op->needs_file && strcmp(path, \":memory:\") == 0)",
    to = "  if (0)",
    hint = "specs/08-claim_many_spec.lua",
  },
  {
    name = "copy-takes-any-userdata-as-shared", step = "own", file = "src/lua/lease_shared.c",
    fn = "lshared_test",
    from = "  return marked ? ((shared_ud *)lua_touserdata(L, i))->o : NULL;",
    to = "  (void)marked;\n  return ((shared_ud *)lua_touserdata(L, i))->o;",
    hint = "specs/20-thread_spec.lua",
  },

  -- Hostile files: the checks before SQLite writes anything --------------
  {
    name = "truncated-mid-page-accepted", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_length",
    from = "(page & (page - 1)) == 0 && size % page != 0)",
    to = "(page & (page - 1)) == 0 && size % page > page)",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "directory-left-to-sqlite", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_path",
    from = "  if (S_ISDIR(st.st_mode))\n",
    to = "  if (S_ISDIR(st.st_mode) && 0)\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "fifo-and-devices-opened", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_path",
    from = "  if (!S_ISREG(st.st_mode))\n",
    to = "  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "one-byte-file-initialised", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_file",
    from = "  if (size == 1 && hdr[0] != 'S')",
    to = "  if (size == 1 && hdr[0] == 'S')",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "missing-column-asked-about", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_columns",
    from = [=[  for (k = 0; k < NCOLUMNS; k++)
    if (!cs.seen[k])
]=],
    to = [=[  for (k = 0; k < NCOLUMNS; k++)
    if (!cs.seen[k] && k >= 2)
]=],
    hint = "specs/23-hostile_spec.lua",
  },

  -- Disk full: an I/O error whose errno says "no room" is full -----------
  {
    name = "full-only-for-enospc", step = "own", file = "src/sqlite/lsq_conn.c",
    fn = "errno_is_full",
    from = "  return e == ENOSPC || e == EFBIG\n",
    to = "  return e == ENOSPC\n",
    hint = "specs/24-full_spec.lua",
  },
  {
    name = "full-errno-from-sqlite-only", step = "own", file = "src/sqlite/lsq_conn.c",
    fn = "io_errno",
    from = "  int e = sqlite3_system_errno(conn);\n  if (e) return e;\n",
    to = "  int e = sqlite3_system_errno(conn);\n  return e;\n",
    hint = "specs/24-full_spec.lua",
  },

  -- Machine-readable output: numbers read back exactly -------------------
  {
    name = "json-number-14-digits", step = "own", file = "lua/lease/json.lua",
    fn = "number",
    from = "  for digits = 15, 17 do\n",
    to = "  for digits = 14, 14 do\n",
    hint = "specs/17-cli_spec.lua",
  },
  {
    name = "json-float-read-as-integer", step = "own", file = "lua/lease/json.lua",
    fn = "number",
    from = [[  if not s:find("[.e]") then s = s .. ".0" end
]],
    to = "",
    hint = "specs/17-cli_spec.lua",
  },
  {
    name = "json-writes-nan", step = "own", file = "lua/lease/json.lua",
    fn = "number",
    from = "  if x ~= x or x == math.huge or x == -math.huge then\n",
    to = "  if false then\n",
    hint = "specs/17-cli_spec.lua",
  },
  {
    name = "cli-json-until-inf-as-number", step = "own", file = "lua/lease/cli.lua",
    fn = "finite",
    from = "  return type(x) == \"number\" and x == x and x ~= math.huge and x ~= -math.huge\n",
    to = "  return type(x) == \"number\" and x == x\n",
    hint = "specs/17-cli_spec.lua",
  },

  -- The pool: counters merged from every worker, refusals with reasons ----
  {
    name = "pool-refusal-reason-dropped", step = "own", file = "lua/lease/pool.lua",
    fn = "refusal",
    from = "  w.st.refusals[key] = (w.st.refusals[key] or 0) + 1\n",
    to = "",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-out-unchecked", step = "own", file = "lua/lease/pool.lua",
    fn = "check_options",
    from = "    if not ok or type(write) ~= \"function\" then\n",
    to = "    if not ok and type(write) ~= \"function\" then\n",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-out-raise-ends-pool", step = "own", file = "lua/lease/pool.lua",
    fn = "say",
    from = "  pcall(function()\n    out:write(text)\n    if out.flush then out:flush() end\n  end)\n",
    to = "  out:write(text)\n  if out.flush then out:flush() end\n",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-open-option-unnamed", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = "    if why then error(\"bad argument #1 to 'lease.pool.run' (open: \" .. why .. \")\", 2) end\n",
    to = "",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-format-cut-counts-unsaid", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = "    string.format(\"jobs done          %d%s\", s.done, (s.unfinished or 0) > 0\n",
    to = "    string.format(\"jobs done          %d%s\", s.done, (s.unfinished or 0) > 1e9\n",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "testing-hook-errors-capped", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = "  w.messages_kept = math.huge   -- every hook's error, not the pool's first few\n",
    to = "",
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-status-unchecked", step = "own", file = "lua/lease/testing.lua",
    fn = "enqueued",
    from = "  if filter.status ~= nil then\n",
    to = "  if false then\n",
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "pool-counters-last-worker-only", step = "own", file = "lua/lease/pool.lua",
    fn = "merge",
    from = "  for _, k in ipairs(pool.COUNTERS) do s[k] = s[k] + st[k] end\n",
    to = "  for _, k in ipairs(pool.COUNTERS) do s[k] = st[k] end\n",
    hint = "specs/18-pool_spec.lua",
  },

  -- The host program behaves like lua.c ---------------------------------
  {
    name = "host-command-word-opened-as-file", step = "own", file = "src/host/host.c",
    fn = "pmain",
    from = "  if (argc > 1 && is_command_word(argv[1])) {\n",
    to = "  if (argc > 1 && is_command_word(argv[1]) && 0) {\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "host-luainit-under-E", step = "own", file = "src/host/host.c",
    fn = "pmain",
    from = "  if (!(args & HAS_EENV) && handle_luainit(L) != LUA_OK) return 0;\n",
    to = "  if (handle_luainit(L) != LUA_OK) return 0;\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "host-E-keeps-lua-path", step = "own", file = "src/host/host.c",
    fn = "pmain",
    from = "    lua_setfield(L, LUA_REGISTRYINDEX, \"LUA_NOENV\");\n",
    to = "    lua_pop(L, 1);\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "host-prompt-on-a-pipe", step = "own", file = "src/host/host.c",
    fn = "pmain",
    from = "    if (isatty(0)) {\n",
    to = "    if (1) {\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "host-l-global-named-after-module", step = "own", file = "src/host/host.c",
    fn = "dolibrary",
    from = "    if (eq) lua_pushlstring(L, spec, (size_t)(eq - spec));\n",
    to = "    if (eq) lua_pushstring(L, eq + 1);\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "host-W-ignored", step = "own", file = "src/host/host.c",
    fn = "runargs",
    from = "      lua_warning(L, \"@on\", 0);\n",
    to = "      (void)0;\n",
    hint = "specs/21-host_spec.lua",
  },
  {
    name = "cli-unknown-command-unnamed", step = "own", file = "lua/lease/cli.lua",
    fn = "main",
    from = "    err:write(\"lease: unknown command '\", show_bytes(tostring(name)), \"'\",\n",
    to = "    err:write(\"lease: unknown command\",\n",
    hint = "specs/21-host_spec.lua",
  },
  -- Opening while others open or write; the WAL's bound; read-only opens --
  {
    name = "open-busy-wait-removed", step = "own", file = "src/sqlite/lsq_conn.c",
    fn = "wait_again",
    from = [[  if (c->gave_up || c->busy_timeout_ms <= 0) return 0;]],
    to = [[  if (1) return 0;]],
    hint = "specs/26-open_race_spec.lua",
  },
  {
    name = "wal-checkpoint-bound-removed", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "set_pragmas",
    from = [[  if (rc == LEASE_OK) rc = lsq_exec(db, "PRAGMA journal_size_limit=" LSQ_WAL_LIMIT_BYTES);]],
    to = [[]],
    hint = "specs/27-wal_bound_spec.lua",
  },
  {
    name = "readonly-opened-readonly", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "open_connection",
    from = [[  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READWRITE, src;]],
    to = [[  int flags = SQLITE_OPEN_NOMUTEX | ((db->opt.flags & LEASE_OPEN_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE), src;]],
    hint = "specs/27-wal_bound_spec.lua",
  },
  {
    name = "readonly-handle-writes", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "set_pragmas",
    from = [["PRAGMA query_only=1"]],
    to = [["PRAGMA query_only=0"]],
    hint = "specs/27-wal_bound_spec.lua",
  },
  -- Fuzzing: mutants for fuzz_ops's model of the contract.  The hint runs
  -- the harness over its seed corpus in a clang tree (specs/fuzz/replay.lua),
  -- so each shows the model catching a broken engine, not only a broken model.
  {
    name = "counts-boundary-held", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_TALLY",
    edits = {
      { from = [[total(done = 0 AND b = 0 AND until <= ?1) AS ready,"]],
        to = [[total(done = 0 AND b = 0 AND until < ?1) AS ready,"]] },
      { from = [[" total(done = 0 AND b = 0 AND until > ?1) AS held]],
        to = [[" total(done = 0 AND b = 0 AND until >= ?1) AS held]] },
    },
    hint = "specs/fuzz/replay.lua",
  },
  {
    name = "list-ready-boundary-held", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_LIST",
    from = [[" WHEN 1 THEN j.done = 0 AND j.b = 0 AND j.until <= ?2"]],
    to = [[" WHEN 1 THEN j.done = 0 AND j.b = 0 AND j.until < ?2"]],
    hint = "specs/fuzz/replay.lua",
  },
  -- Power loss, simulated (specs/faults/powerloss.c): the test itself must
  -- see a sync that makes nothing durable and a FULL run lowered to NORMAL --
  {
    name = "powerloss-sync-makes-nothing-durable", step = "own", file = "specs/faults/powerloss.c",
    fn = "pl_sync",
    from = "  if (!lying_sync) clear_log(p->t);",
    to = "  if (0) clear_log(p->t);",
    hint = "specs/faults/powerloss.lua",
  },
  {
    name = "powerloss-full-run-at-normal", step = "own", file = "specs/faults/powerloss.c",
    fn = "trial",
    from = "  if (normal) opt.synchronous = LEASE_SYNC_NORMAL;\n  remove_files(path);",
    to = "  opt.synchronous = LEASE_SYNC_NORMAL;\n  remove_files(path);",
    hint = "specs/faults/powerloss.lua",
  },
  -- lease.compat: <close> and math.type on every Lua version -------------
  {
    name = "compat-using-never-closes", step = "own", file = "lua/lease/compat.lua",
    fn = "finish",
    from = "  h:close()\n  if not ok then error((...), 0) end\n",
    to = "  if not ok then error((...), 0) end\n",
    hint = "specs/28-compat_spec.lua",
  },
  {
    name = "compat-using-error-repositioned", step = "own", file = "lua/lease/compat.lua",
    fn = "finish",
    from = "  if not ok then error((...), 0) end\n",
    to = "  if not ok then error((...)) end\n",
    hint = "specs/28-compat_spec.lua",
  },
  {
    name = "compat-float-taken-as-integer", step = "own", file = "lua/lease/compat.lua",
    fn = "is_integer",
    from = "  if math.type then return math.type(x) == \"integer\" end\n",
    to = "  if math.type then return math.type(x) ~= nil end\n",
    hint = "specs/28-compat_spec.lua",
  },

  -- lease.cli: JSON output stays valid UTF-8 ------------------------------
  {
    name = "cli-utf8-surrogate-kept", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = "  if n == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return nil end\n",
    to = "  if n == 3 and cp < 0x800 then return nil end\n",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "cli-utf8-overlong-3-kept", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = "  if n == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return nil end\n",
    to = "  if n == 3 and cp >= 0xD800 and cp <= 0xDFFF then return nil end\n",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "cli-utf8-above-unicode-kept", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = "  if n == 4 and (cp < 0x10000 or cp > 0x10FFFF) then return nil end\n",
    to = "  if n == 4 and cp < 0x10000 then return nil end\n",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "cli-utf8-overlong-2-kept", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = "  if c >= 0xC2 and c <= 0xDF then n, cp = 2, c - 0xC0\n",
    to = "  if c >= 0xC0 and c <= 0xDF then n, cp = 2, c - 0xC0\n",
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "cli-utf8-continuation-unchecked", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = "    if not b or b < 0x80 or b > 0xBF then return nil end\n",
    to = "    if not b then return nil end\n",
    hint = "specs/25-hostile_values_spec.lua",
  },
  -- What the fuzzers and the power-loss test found --------------------------
  {
    name = "claim-many-owner-length-unchecked", step = "own", file = "src/core/lease_many.c",
    fn = "many_check",
    from = "    if ((rc = lease__check_bytes(db, name, owners[i], &lens[i])) != LEASE_OK) return rc;\n",
    to = "    if (!owners[i]) return lease__fail(db, LEASE_MISUSE, \"%s must not be NULL\", name);\n"
      .. "    if (lens[i] == LEASE_NTS) lens[i] = strlen(owners[i]);\n"
      .. "    if (lens[i] == 0) return lease__fail(db, LEASE_MISUSE, \"%s must not be empty\", name);\n",
    hint = "specs/08-claim_many_spec.lua",
    c_hint = "test_many",
  },
  {
    name = "refused-open-checkpoints-given-wal", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_open",
    from = "  if (rc != LEASE_OK && c->sql && c->wal_given)\n",
    to = "  if (0)\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "refused-open-keeps-own-wal", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_open",
    from = "  if (rc != LEASE_OK && c->sql && c->wal_given)\n",
    to = "  if (rc != LEASE_OK && c->sql)\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "wal-switch-before-table", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_open",
    from = "  if (rc == LEASE_OK) rc = create_missing(db, missing);\n  if (rc == LEASE_OK) rc = set_pragmas(db);\n",
    to = "  if (rc == LEASE_OK) rc = set_pragmas(db);\n  if (rc == LEASE_OK) rc = create_missing(db, missing);\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "hot-journal-refused-as-truncated", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_file",
    from = "  if (journal && stat(journal, &st) == 0 && st.st_size > 0) return LEASE_OK;\n",
    to = "  (void)journal;\n",
    hint = "specs/23-hostile_spec.lua",
  },
  -- The job queue's guards ------------------------------------------------
  {
    name = "fail-without-fence-check", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FAIL",
    from = [=[  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND done = 0 AND until > ?4" \]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "fail-without-deadline-check", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FAIL",
    from = [=[  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \]=],
    to = [=[  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0" \]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "claim-next-without-run-at-filter", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [[  " AND (q.run_at IS NULL OR q.run_at <= ?2)"                            \]],
    to = [[  ""                            \]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "claim-next-run-at-boundary", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [[  " AND (q.run_at IS NULL OR q.run_at <= ?2)"                            \]],
    to = [[  " AND (q.run_at IS NULL OR q.run_at < ?2)"                            \]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "claim-next-takes-ended-jobs", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [=[" WHERE q.state = " LEASE__Q_OPEN_S " AND q.queue = ?1"]=],
    to = [=[" WHERE q.state <> " LEASE__Q_COMPLETED_S " AND q.queue = ?1"]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "claim-next-ignores-priority", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_READY",
    from = [[" ORDER BY q.priority, q.due_at, q.seq LIMIT ?3"]],
    to = [[" ORDER BY q.due_at, q.seq LIMIT ?3"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "claim-by-id-takes-ended-jobs", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_CLAIM",
    from = [=[  " WHERE id = ?1 AND done = 0 AND until <= ?3"                          \
  " AND " LSQ_SQL_NOT_ENDED                                               \]=],
    to = [=[  " WHERE id = ?1 AND done = 0 AND until <= ?3"                          \]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "attempt-not-counted", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_ATTEMPT",
    from = [[" - " q ".base_fence, 0))"]],
    to = [[" - " LSQ_SQL_FENCE_INT(j ".fence") ", 0))"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "lowered-fence-negative-attempt", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_ATTEMPT",
    from = [["max(0, coalesce(" LSQ_SQL_FENCE_INT(j ".fence") " - " q ".base_fence, 0))"]],
    to = [["coalesce(" LSQ_SQL_FENCE_INT(j ".fence") " - " q ".base_fence, 0)"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "claim-next-lowered-fence-negative-attempt", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "kept",
    from = [[  if (fence <= base_fence) return 0;]],
    to = [[  if (fence == INT64_MIN) return 0;]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "claim-next-attempt-overflows", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "kept",
    from = [[  if (base_fence < 0 && fence > INT64_MAX + base_fence) return INT64_MAX;]],
    to = [[  if (base_fence < 0 && fence > INT64_MAX) return INT64_MAX;]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "claim-next-attempt-not-counted", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "kept",
    from = [[  return fence - base_fence;]],
    to = [[  return fence - base_fence - 1;]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "reopened-job-keeps-attempts", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_DONE_SET",
    from = [[" base_fence = CASE WHEN new.done <> 0 THEN base_fence ELSE "]],
    to = [[" base_fence = CASE WHEN 1 THEN base_fence ELSE "]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "relayout-loses-attempts", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_REFENCE",
    from = [[" FROM main.jobs WHERE jobs.id = o.id), 0) - o.attempt,"]],
    to = [[" FROM main.jobs WHERE jobs.id = o.id), 0),"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    -- the last attempt counted one late, for fail and for an expiry
    name = "discard-one-attempt-late", step = "own", file = "src/core/lease_rules.c",
    fn = "last_attempt",
    from = "  return f->attempt >= f->max_attempts;\n",
    to = "  return f->attempt > f->max_attempts;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- an expired lease on the last attempt claimed again instead of discarded
    name = "expired-lease-never-discards", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__after_expiry",
    from = "  if (last_attempt(f)) discarded(f, out);\n",
    to = "  if (0 && last_attempt(f)) discarded(f, out);\n",
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- SQLite's claim records the expired lease but never stores the discard
    name = "expiry-discard-not-stored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_expired",
    from = "  if (next.qstate == LEASE__Q_OPEN) return LEASE_OK;   /* the claim goes on */\n",
    to = "  if (next.qstate >= 0) return LEASE_OK;   /* the claim goes on */\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- fail's attempt = false counted against the budget
    name = "rules-no-attempt-ignored", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__after_fail",
    from = "  if (f->no_attempt)\n",
    to = "  if (0 && f->no_attempt)\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- a given-back attempt on a job at attempt 0 goes to -1
    name = "rules-no-attempt-below-zero", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__after_fail",
    from = "    open_again(out, f->attempt > 0 ? f->attempt - 1 : 0,",
    to = "    open_again(out, f->attempt - 1,",
    c_hint = "test_rules",
  },
  {
    -- fail's opts.run_at ignored: the backoff always
    name = "rules-fail-run-at-ignored", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__after_fail",
    from = "    open_again(out, f->attempt, f->has_run_at ? f->run_at : f->now + lease_backoff(f->attempt));\n",
    to = "    open_again(out, f->attempt, f->now + lease_backoff(f->attempt));\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- a given-back attempt ignores opts.run_at: again at once
    name = "rules-given-back-run-at-ignored", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__after_fail",
    from = " f->has_run_at ? f->run_at : f->now);\n",
    to = " f->now);\n",
    c_hint = "test_rules",
  },
  {
    -- retry refused as held for a cancelled or done job whose lease runs
    name = "rules-retry-held-whatever-state", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__retry_reason",
    from = "  if (!f->done && f->qstate == LEASE__Q_OPEN && f->live) return LEASE_HELD;\n",
    to = "  if (f->live) return LEASE_HELD;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "complete-ignores-cancel", step = "own", file = "src/sqlite/lsq_sql.h",
    fn = "LSQ_SQL_COMPLETE",
    from = [=[  " WHERE " LSQ_SQL_COMPLETE_GUARD                                        \
  " AND " LSQ_SQL_NOT_ENDED]=],
    to = [=[  " WHERE " LSQ_SQL_COMPLETE_GUARD]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "cancel-reason-as-done", step = "own", file = "src/core/lease_rules.c",
    fn = "ended_reason",
    from = [=[  if (queue && f->qstate == LEASE__Q_CANCELLED) return LEASE_CANCELLED;]=],
    to = [=[  if (queue && f->qstate == LEASE__Q_CANCELLED) return LEASE_DONE;]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "prune-deletes-held-job", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_PRUNE",
    from = [[  " AND NOT (j.done = 0 AND j.until > ?4)"]],
    to = [[  ""]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "prune-includes-the-boundary", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_PRUNE",
    from = [[" WHERE q.state <> " LEASE__Q_OPEN_S " AND q.finished_at < ?1"]],
    to = [[" WHERE q.state <> " LEASE__Q_OPEN_S " AND q.finished_at <= ?1"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "errors-keep-all", step = "own", file = "src/sqlite/lsq_schema_sql.h", fn = "LSQ_STEP_QUEUE",
    from = [[" FROM lease_errors WHERE id = new.id ORDER BY rowid DESC LIMIT 1 OFFSET 20); END")]],
    to = [[" FROM lease_errors WHERE id = new.id ORDER BY rowid DESC LIMIT 1 OFFSET 200); END")]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "seed-insert-not-queued", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_CLOCK",
    from = [[     " WHEN typeof(new.id) = 'text' BEGIN"                                \]],
    to = [[     " WHEN 0 BEGIN"                                \]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "retry-keeps-attempts", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_RESET",
    from = [["UPDATE lease_queue SET state = " LEASE__Q_OPEN_S ", base_fence = coalesce((SELECT "]],
    to = [["UPDATE lease_queue SET state = " LEASE__Q_OPEN_S ", base_fence = base_fence + 0 * coalesce((SELECT "]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  -- The job-queue service (lease.pool, lease.cli, lease_process.c) -------
  {
    name = "pool-owner-shared-across-processes", step = "own", file = "lua/lease/pool.lua",
    fn = "owner_name",
    from = "  return lease.hostname() .. \":\" .. lease.pid() .. \":\" .. index\n",
    to = "  return \"pool-\" .. index\n",
    hint = "specs/33-pool_process_spec.lua",
  },
  {
    name = "pool-shutdown-counts-attempt", step = "own", file = "lua/lease/pool.lua",
    fn = "give_back_held",
    from = "      local status, why = db:fail(j.id, j.owner, j.fence, db:server_now(), SHUTDOWN_MESSAGE, { attempt = false })\n",
    to = "      local status, why = db:fail(j.id, j.owner, j.fence, db:server_now(), SHUTDOWN_MESSAGE)\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-batch-give-back-counts-attempt", step = "own", file = "lua/lease/pool.lua",
    fn = "give_back",
    from = "    SHUTDOWN_MESSAGE, { attempt = false })\n",
    to = "    SHUTDOWN_MESSAGE)\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-stop-never-asked", step = "own", file = "lua/lease/pool.lua",
    fn = "supervise",
    from = "        for _ = 1, cfg.workers do stop:send(true) end\n",
    to = "",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-second-signal-ignored", step = "own", file = "lua/lease/pool.lua",
    fn = "supervise",
    from = "      if running > 0 and (n >= 2 or (deadline and lease.now() >= deadline)) then\n",
    to = "      if running > 0 and (deadline and lease.now() >= deadline) then\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-grace-never-ends", step = "own", file = "lua/lease/pool.lua",
    fn = "supervise",
    from = "      if running > 0 and (n >= 2 or (deadline and lease.now() >= deadline)) then\n",
    to = "      if running > 0 and n >= 2 then\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-backoff-ignored", step = "own", file = "lua/lease/pool.lua",
    fn = "fail_job",
    from = "    d and { run_at = now + d })\n",
    to = "    nil)\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-drain-leaves-retries", step = "own", file = "lua/lease/pool.lua",
    fn = "drained",
    from = "  if c.retryable == 0 then return true end\n",
    to = "  do return true end\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-batch-results-dropped", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_batch",
    from = "      local n = #results + 1\n",
    to = "      local n = math.max(#results, 1)\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-signals-not-given-back", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = "  if cfg.signals then lease.on_signal({ \"INT\", \"TERM\" }, false) end\n",
    to = "",
    hint = "specs/33-pool_process_spec.lua",
  },
  {
    name = "signal-not-counted", step = "own", file = "src/lua/lease_process.c",
    fn = "on_caught",
    from = "  atomic_fetch_add(&caught_count, 1u);\n",
    to = "",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "cli-jobs-loads-results", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_jobs",
    from = "                         results = false, errors = with_errors or nil })\n",
    to = "                         errors = with_errors or nil })\n",
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-run-at-and-in-together", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_enqueue",
    from = "  if flags[\"--run-at\"] and flags[\"--in\"] then usage(\"give at most one of --run-at and --in\") end\n",
    to = "",
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-max-attempts-zero-passed-on", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_enqueue",
    from = "                 max_attempts = number_flag(flags, \"--max-attempts\", \"integer\", 1, INT32_MAX),\n",
    to = "                 max_attempts = number_flag(flags, \"--max-attempts\", \"integer\", INT32_MIN, INT32_MAX),\n",
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-limit-per-seconds-only", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_limit",
    from = "    per = timeout_flag(flags, \"--per\"),\n",
    to = "    per = number_flag(flags, \"--per\", \"seconds\"),\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "cli-per-zero-passed-on", step = "own", file = "lua/lease/cli.lua",
    fn = "timeout_flag",
    from = "  if not x or not (x > 0) or x == math.huge then\n",
    to = "  if not x or not (x >= 0) or x == math.huge then\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "cli-pool-discard-exits-0", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_pool",
    from = "  return (#s.failed == 0 and s.discarded == 0) and 0 or 1\n",
    to = "  return #s.failed == 0 and 0 or 1\n",
    hint = "specs/22-host_commands_spec.lua",
  },
  -- Fenced side effects (src/sqlite/lsq_tx.c) ----------------------------
  {
    name = "with-lease-check-skipped", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "check_lease",
    from = "  if (!held) return lsq_why_refused(db, w, reason);\n",
    to = "  (void)held;\n",
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "with-lease-no-rollback-on-error", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "lsq_with_lease",
    from = "rolled back\", lease_errname(rc));\n    lsq_rollback(db);\n",
    to = "rolled back\", lease_errname(rc));\n",
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "fence-gate-equal-refused", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "LSQ_TX_SQL_GATE",
    from = [[" WHERE excluded.fence >= lease_fences.fence"]],
    to = [[" WHERE excluded.fence > lease_fences.fence"]],
    hint = "specs/51-fence_gate_spec.lua",
  },
  {
    name = "fence-gate-reversed", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "LSQ_TX_SQL_GATE",
    from = [[" WHERE excluded.fence >= lease_fences.fence"]],
    to = [[" WHERE excluded.fence <= lease_fences.fence"]],
    hint = "specs/51-fence_gate_spec.lua",
  },
  -- group commit (src/sqlite/lsq_group.c) ------------------------------
  {
    -- the followers hear their outcome when their bodies ran, before the
    -- COMMIT (the batch is cut off after the leader's request, so that the
    -- leader no longer reads requests whose callers have returned)
    name = "group-commit-outcome-before-commit", step = "own", file = "src/sqlite/lsq_group.c",
    edits = {
      { fn = "lead", from = "      q = run_bodies(batch, lc);\n      if (q) commit_batch(batch, q);\n",
        to = "      q = run_bodies(batch, lc);\n"
          .. "      { lsq_request *e_; pthread_mutex_lock(&g->mu);\n"
          .. "        for (e_ = batch->next; e_; e_ = e_->next) e_->state = REQ_DONE;\n"
          .. "        batch->next = NULL; pthread_cond_broadcast(&g->cv); pthread_mutex_unlock(&g->mu); }\n"
          .. "      if (q) commit_batch(batch, q);\n" },
      { fn = "commit_batch", from = "  for (p = first; p && p->rc != LEASE_OK; p = p->next) {}\n", to = "  p = first;\n" },
    },
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-failing-write-not-undone", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "run_in_savepoint",
    from = "  if (rc != LEASE_OK && !sqlite3_get_autocommit(LSQ(db)->sql)) {",
    to = "  if (0) {",
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-failure-leaks-into-neighbours", step = "own", file = "src/sqlite/lsq_group.c",
    edits = {
      { fn = "run_in_savepoint", from = "    if (savepoint_run(db, SP_UNDO) != LEASE_OK || savepoint_run(db, SP_RELEASE) != LEASE_OK)\n      lsq_rollback(db);",
        to = "    lsq_rollback(db);" },
      { fn = "run_bodies", from = "        if (p->rc == LEASE_OK) copy_failure(p, q->db);", to = "        (void)p;" },
    },
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-commit-failure-to-leader-only", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "commit_batch",
    from = "      else copy_failure(p, leader);",
    to = "      else (void)0;",
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-follower-deadline-ignored", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "group_write",
    from = "    } else if (r.state == REQ_QUEUED && now_ms() >= deadline) {",
    to = "    } else if (0) {",
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-readonly-joins", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "lsq_group_join",
    from = "  if (db->opt.flags & (LEASE_OPEN_READONLY | LEASE_OPEN_NO_GROUP_COMMIT)) return;",
    to = "  if (db->opt.flags & LEASE_OPEN_NO_GROUP_COMMIT) return;",
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-ignores-synchronous", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "lsq_group_join",
    from = "    if (g->dev == st.st_dev && g->ino == st.st_ino && g->synchronous == db->opt.synchronous &&",
    to = "    if (g->dev == st.st_dev && g->ino == st.st_ino &&",
    hint = "specs/60-group_commit_spec.lua",
  },
  {
    name = "group-commit-option-ignored", step = "own", file = "src/sqlite/lsq_group.c",
    fn = "lsq_group_join",
    from = "  if (db->opt.flags & (LEASE_OPEN_READONLY | LEASE_OPEN_NO_GROUP_COMMIT)) return;",
    to = "  if (db->opt.flags & LEASE_OPEN_READONLY) return;",
    hint = "specs/60-group_commit_spec.lua",
  },
  -- The path functions' connections (src/lua/lease_lua_pathcache.c) ---------
  {
    name = "path-cache-skips-inode", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "names_file",
    from = "(uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino",
    to = "(uint64_t)st.st_dev == dev && ((void)ino, 1)",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "path-cache-skips-identity-check", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "lb_path_take",
    from = "    if (names_file(path, h->dev, h->ino)) {",
    to = "    if (1) {",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "path-cache-identity-unchecked-at-open", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "identify",
    from = "  h->keep = lease_file_id(h->db, &h->dev, &h->ino) == LEASE_OK && names_file(path, h->dev, h->ino);",
    to = "  h->keep = 1;\n  (void)path;\n  (void)lease_file_id(h->db, &h->dev, &h->ino);",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "path-cache-keeps-failed-connection", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "lb_path_give",
    from = "  if (!ok || !h->keep || find_slot(c, lease_path(db)) >= 0) {",
    to = "  (void)ok;\n  if (!h->keep || find_slot(c, lease_path(db)) >= 0) {",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "path-cache-ignores-fd-limit", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "cache_cap",
    from = "  n = r.rlim_cur / PC_FDS_EACH;",
    to = "  n = PC_MAX;",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "path-cache-evicts-most-recent", step = "own", file = "src/lua/lease_lua_pathcache.c",
    fn = "lb_path_give",
    from = "    if (!s || c->slot[i].used < s->used) s = &c->slot[i];",
    to = "    if (!s || c->slot[i].used > s->used) s = &c->slot[i];",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "moved-file-closed-without-checkpoint", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_close",
    from = "  if (c->sql) settle_moved(c->sql);\n",
    to = "  (void)settle_moved;\n",
    hint = "specs/40-path_cache_spec.lua",
  },
  {
    name = "file-id-ignores-moved", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_file_id",
    from = "  if (moved)\n    return lease__fail(db, LEASE_CANTOPEN, \"the database file was renamed, deleted or replaced\");\n",
    to = "",
    hint = "specs/40-path_cache_spec.lua",   -- killed by specs/c/test_core.c (test_file_id)
    c_hint = "test_core",
  },
  {
    name = "file-id-without-its-name", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "lsq_file_id",
    from = "  if (stat(name, &st) != 0)\n    return lease__fail(db, LEASE_CANTOPEN, \"the database file is no longer at its name\");\n",
    to = "  memset(&st, 0, sizeof st);\n  (void)stat(name, &st);\n",
    hint = "specs/40-path_cache_spec.lua",   -- killed by specs/c/test_core.c (test_file_id)
    c_hint = "test_core",
  },
  -- The PostgreSQL backend (src/pg/), judged by the suite on PostgreSQL
  -- (backend = "pg": the runner starts a throwaway cluster) -------------
  {
    name = "pg-1-create-not-idempotent", step = "1", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_CREATE_JOBS",
    from = [["CREATE TABLE IF NOT EXISTS jobs(id bytea PRIMARY KEY CHECK (id <> ''::bytea),"]],
    to = [["CREATE TABLE jobs(id bytea PRIMARY KEY CHECK (id <> ''::bytea),"]],
    hint = "specs/01-init_spec.lua",
  },
  {
    -- db:enqueue (lease_enqueue) goes through the queue's statement on
    -- PostgreSQL (LPG_Q_SQL_ENQUEUE); enqueue_many of ids without data
    -- through LPG_SQL_ENQUEUE_MANY (pg-enqueue-many-data-dropped).
    name = "pg-2-enqueue-resets-lease", step = "2", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE",
    edits = {
      { from = [[  " WHERE NOT EXISTS (SELECT 1 FROM h) AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1)" \]],
        to = [[  " WHERE NOT EXISTS (SELECT 1 FROM h)" \]] },
      { from = [[  " ON CONFLICT (id) DO NOTHING RETURNING id, seq, fence),"]],
        to = [[  " ON CONFLICT (id) DO UPDATE SET owner = NULL, until = 0, done = 0 RETURNING id, seq, fence),"]] },
    },
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "pg-4-claim-boundary-held", step = "4", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_CLAIM",
    from = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.until <= $3"]],
    to = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.until < $3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "pg-5-renew-revives-at-boundary", step = "5", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_HELD_GUARD",
    from = [[" AND j.until > $4 AND j.fence < " LPG_FENCE_MAX " AND " LPG_SQL_NOT_ENDED]],
    to = [[" AND j.until >= $4 AND j.fence < " LPG_FENCE_MAX " AND " LPG_SQL_NOT_ENDED]],
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "pg-6-complete-done-ge-0", step = "6", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_HELD_GUARD",
    from = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.owner = $2"]],
    to = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done >= 0 AND j.owner = $2"]],
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "pg-7-release-any-owner", step = "7", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_RELEASE",
    from = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.owner = $2"]],
    to = [[" WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0"]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "pg-reason-from-pre-lock-snapshot", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_CLAIM",
    from = [[#define LPG_SQL_CLAIM                                                                 \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 FOR UPDATE)," \]],
    to = [[#define LPG_SQL_CLAIM                                                                 \
  "WITH j AS (SELECT id, owner, done, until, fence FROM jobs WHERE id = $1 )," \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-claim-next-waits-for-locked", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_CLAIM_NEXT_",
    from = [[" FOR UPDATE SKIP LOCKED) j"]],
    to = [[" FOR UPDATE) j"]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- unsorted, an id named twice is no longer found next to itself, so
    -- the batch runs as one statement and grants both (the statement
    -- itself locks in id order: ORDER BY id FOR UPDATE)
    name = "pg-complete-many-unordered", step = "own", file = "src/pg/lpg_many.c", backend = "pg",
    fn = "batch_sort",
    from = "  qsort(b->ord, (size_t)b->n, sizeof *b->ord, by_id);\n",
    to = "  if (0) qsort(b->ord, (size_t)b->n, sizeof *b->ord, by_id);\n",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    -- a keyed job in the one-statement batch: its key neither stored nor checked
    name = "pg-enqueue-data-takes-keys", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "lpg_q_enqueue",
    from = "  for (i = 0; batch && i < n; i++) batch = !jobs[i].key && jobs[i].n_after == 0;\n",
    to = "  for (i = 0; batch && i < n; i++) batch = jobs[i].n_after == 0;\n",
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-enqueue-data-takes-deps", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "lpg_q_enqueue",
    from = "  for (i = 0; batch && i < n; i++) batch = !jobs[i].key && jobs[i].n_after == 0;\n",
    to = "  for (i = 0; batch && i < n; i++) batch = !jobs[i].key;\n",
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-enqueue-data-last-entry-wins", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg", fn = "LPG_Q_SQL_ENQUEUE_DATA",
    from = [[  " f AS (SELECT DISTINCT ON (id) * FROM a ORDER BY id, k),"]],
    to = [[  " f AS (SELECT DISTINCT ON (id) * FROM a ORDER BY id, k DESC),"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    name = "pg-enqueue-data-exists-recorded-ok", step = "own", file = "src/pg/lpg_many.c",
    backend = "pg", fn = "enqueue_events",
    from = "                         added[i] ? LEASE_GRANTED : LEASE_EXISTS);\n",
    to = "                         LEASE_GRANTED);\n",
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-complete-many-fence-unchecked", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_COMPLETE_MANY",
    from = [[" AND g.owner = $4 AND g.fence = g.want AND g.until > $5"]],
    to = [[" AND g.owner = $4 AND g.until > $5"]],
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "pg-complete-many-twice-in-one-statement", step = "own", file = "src/pg/lpg_many.c",
    backend = "pg", fn = "named_twice",
    from = "    if (id_cmp(&ord[i - 1], &ord[i]) == 0) return 1;\n",
    to = "    if (id_cmp(&ord[i - 1], &ord[i]) == 0 && i < 0) return 1;\n",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "pg-server-isolation-kept", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "set_session",
    from = [["SET default_transaction_isolation = 'read committed';"]],
    to = [["SET application_name = 'lease';"]],
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "claim-null-fence-accepted", step = "4", file = "src/core/lease.c",
    fn = "lease_claim",
    from = "  if (!fence) return lease__fail(db, LEASE_MISUSE, \"fence must not be NULL: a claim granted hands it out\");\n",
    to = "",
    c_hint = "test_core",
  },
  {
    name = "release-attempt-kept", step = "7", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_guarded_step",
    from = "  if (changed && w->op == LEASE__RELEASE && (src = lsq_q_give_back(db, w)) != LEASE_OK) return src;\n",
    to = "  if (changed && w->op == LEASE__RELEASE && 0 && (src = lsq_q_give_back(db, w)) != LEASE_OK) return src;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-release-attempt-kept", step = "7", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_RELEASE",
    from = "  \" AND EXISTS (SELECT 1 FROM u) AND base_fence < (SELECT fence FROM j))\"             \\\n",
    to = "  \" AND false)\"             \\\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "release-gives-back-below-zero", step = "7", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_GIVE_BACK",
    from = "  \" AND base_fence < (SELECT \" LSQ_SQL_FENCE_INT(\"fence\") \" FROM jobs WHERE id = ?1)\"\n",
    to = "  \"\"\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-release-gives-back-below-zero", step = "7", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_RELEASE",
    from = "  \" AND EXISTS (SELECT 1 FROM u) AND base_fence < (SELECT fence FROM j))\"             \\\n",
    to = "  \" AND EXISTS (SELECT 1 FROM u))\"             \\\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "options-metatable-taken", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "lb_check_plain",
    from = "  if (!lua_getmetatable(L, idx)) return;\n",
    to = "  if (!lua_getmetatable(L, idx) || 1) return;\n",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "pool-options-metatable-taken", step = "own", file = "lua/lease/pool.lua",
    fn = "check_options",
    from = "  if getmetatable(o) ~= nil then\n",
    to = "  if false then\n",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "testing-options-metatable-taken", step = "own", file = "lua/lease/testing.lua",
    fn = "check_opts",
    from = "  if getmetatable(o) ~= nil then\n",
    to = "  if false then\n",
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "cli-positive-seconds-zero-taken", step = "own", file = "lua/lease/cli.lua",
    fn = "number_flag",
    from = "  local low = kind == \"seconds\" and not (x and x >= 0) or kind == \"seconds > 0\" and not (x and x > 0)\n",
    to = "  local low = kind == \"seconds\" and not (x and x >= 0) or kind == \"seconds > 0\" and not (x and x >= 0)\n",
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "pg-crash-not-ioerr", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "lpg_fail",
    from = "  rc = PQstatus(LPG(db)->pg) == CONNECTION_OK && PQconsumeInput(LPG(db)->pg) ? LEASE_ERROR\n",
    to = "  rc = PQstatus(LPG(db)->pg) == CONNECTION_OK ? LEASE_ERROR\n",
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-readonly-not-mapped", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "set_session",
    from = "  int ro = (db->opt.flags & LEASE_OPEN_READONLY) != 0;\n",
    to = "  int ro = 0 * (db->opt.flags & LEASE_OPEN_READONLY);\n",
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-fence-max-not-blocked", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_BLOCKED",
    from = [[#define LPG_SQL_BLOCKED "(CASE WHEN fence >= " LPG_FENCE_MAX " THEN 3 ELSE 0 END)"]],
    to = [[#define LPG_SQL_BLOCKED "(CASE WHEN fence >= " LPG_FENCE_MAX " THEN 0 ELSE 0 END)"]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "with-lease-queue-tables-writable", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "engine_object",
    from = [[sqlite3_strnicmp(name, "lease_", 6) == 0]],
    to = [[sqlite3_stricmp(name, "lease_fences") == 0]],
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "with-lease-ignores-cancel", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "LSQ_TX_SQL_HOLDS",
    from = [=[  " AND " LSQ_SQL_BLOCKED " = 0"                                           \
  " AND " LSQ_SQL_NOT_ENDED]=],
    to = [=[  " AND " LSQ_SQL_BLOCKED " = 0"]=],
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "pg-notice-printed-at-connect", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "connect_quiet",
    from = "  PQsetNoticeProcessor(c->pg, quiet, NULL);\n",
    to = "  (void)quiet;\n",
    c_hint = "test_pg_wire",
  },
  {
    name = "floor-text-read-as-zero", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_FLOOR_INT",
    from = [=[  " WHEN typeof(" v ") = 'text' AND length(" v ") BETWEEN 1 AND 19"]=],
    to = [=[  " WHEN 0 AND length(" v ") BETWEEN 1 AND 19"]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-added-floor-not-read-again", step = "own", file = "src/pg/lpg_schema_sql.h", backend = "pg",
    fn = "LPG_JOBS_ADDED_FN",
    from = [=[  " IF fl > 0 AND EXISTS (SELECT 1 FROM lease_added a WHERE a.fence < fl) THEN"]=],
    to = [=[  " IF false AND EXISTS (SELECT 1 FROM lease_added a WHERE a.fence < fl) THEN"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-added-floor-base-kept", step = "own", file = "src/pg/lpg_schema_sql.h", backend = "pg",
    fn = "LPG_JOBS_ADDED_FN",
    from = [=[" UPDATE lease_queue q SET base_fence = q.base_fence + r.d FROM r WHERE q.id = r.id;"]=],
    to = [=[" UPDATE lease_queue q SET base_fence = q.base_fence FROM r WHERE q.id = r.id;"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-added-floor-lowers", step = "own", file = "src/pg/lpg_schema_sql.h", backend = "pg",
    fn = "LPG_JOBS_ADDED_FN",
    from = [=[  " WHERE j.id = a.id AND a.fence < fl AND j.fence < fl RETURNING j.id, fl - a.fence AS d)"]=],
    to = [=[  " WHERE j.id = a.id RETURNING j.id, fl - a.fence AS d)"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-pipeline-left-kept", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "usable",
    from = "  return PQstatus(pg) == CONNECTION_OK && PQpipelineStatus(pg) == PQ_PIPELINE_OFF;\n",
    to = "  return PQstatus(pg) == CONNECTION_OK;\n",
    c_hint = "test_pg_conn",
  },
  -- Fenced side effects on PostgreSQL (src/pg/lpg_tx.c, lpg_tx_sql.h) and
  -- the pool's clock --------------------------------------------------
  {
    name = "pg-with-lease-check-skipped", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "lpg_with_lease",
    from = "  rc = check_lease(db, &tx->w, reason);\n",
    to = "  rc = 0 ? check_lease(db, &tx->w, reason) : LEASE_OK;\n",
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "pg-with-lease-commits-on-error", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "lpg_with_lease",
    from = "rolled back\", lease_errname(rc));\n    lpg_rollback(db);\n",
    to = "rolled back\", lease_errname(rc));\n    (void)lpg_exec(db, \"COMMIT\");\n",
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "pg-fence-gate-equal-refused", step = "own", file = "src/pg/lpg_tx_sql.h", backend = "pg",
    fn = "LPG_TX_SQL_GATE",
    from = [[" WHERE excluded.fence >= lease_fences.fence"]],
    to = [[" WHERE excluded.fence > lease_fences.fence"]],
    hint = "specs/51-fence_gate_spec.lua",
  },
  {
    name = "pg-fence-gate-reversed", step = "own", file = "src/pg/lpg_tx_sql.h", backend = "pg",
    fn = "LPG_TX_SQL_GATE",
    from = [[" WHERE excluded.fence >= lease_fences.fence"]],
    to = [[" WHERE excluded.fence <= lease_fences.fence"]],
    hint = "specs/51-fence_gate_spec.lua",
  },
  {
    name = "pg-guard-never-fires", step = "own", file = "src/pg/lpg_tx_sql.h", backend = "pg",
    fn = "LPG_TX_SQL_MARKED",
    from = [[#define LPG_TX_SQL_MARKED "left(current_query(), 21) = ''/*lease:with_lease*/ ''"]],
    to = [[#define LPG_TX_SQL_MARKED "false"]],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-caller-statement-unmarked", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "scan",
    from = "  memcpy(t, LPG_TX_MARK, LPG_TX_MARK_LEN);\n  o = LPG_TX_MARK_LEN;\n",
    to = "  o = 0;\n",
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-commit-unmarked", step = "own", file = "src/pg/lpg_tx_sql.h", backend = "pg",
    fn = "LPG_TX_SQL_COMMIT",
    from = [[#define LPG_TX_SQL_COMMIT LPG_TX_MARK "SET CONSTRAINTS ALL IMMEDIATE; COMMIT"]],
    to = [[#define LPG_TX_SQL_COMMIT "COMMIT"]],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-tx-control-allowed", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "judge",
    from = "    return \"it would begin, commit or roll back the with_lease transaction\";\n",
    to = "    return NULL;\n",
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-ddl-on-engine-tables-allowed", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "judge",
    from = "    if (!strcmp(w0, ddl[i]) && names_engine)\n",
    to = "    if (!strcmp(w0, ddl[i]) && names_engine && 0)\n",
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-failed-statement-ends-tx", step = "own", file = "src/pg/lpg_tx.c", backend = "pg",
    fn = "send_wrapped",
    from = "      back_to_savepoint(pg);\n",
    to = "      (void)pg;\n",
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    name = "pg-blocked-code-column", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "lpg_outcome_row",
    from = "    f.blocked = r_i4(r, row, 6);\n",
    to = "    f.blocked = r_i4(r, row, 5);\n",
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "pool-claims-with-local-clock", step = "own", file = "lua/lease/pool.lua",
    fn = "step",
    from = "    id, fence, c = w.db:claim_next(w.owner, w.db:server_now(), cfg.ttl, w.claim_opts)\n",
    to = "    id, fence, c = w.db:claim_next(w.owner, require(\"lease\").now(), cfg.ttl, w.claim_opts)\n",
    hint = "specs/53-pool_clock_spec.lua",
  },
  {
    name = "pool-completes-with-local-clock", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_one",
    from = "    w.db:server_now(), result, w.cfg.ttl, w.claim_opts)\n",
    to = "    require(\"lease\").now(), result, w.cfg.ttl, w.claim_opts)\n",
    hint = "specs/53-pool_clock_spec.lua",
  },
  {
    name = "pool-with-lease-local-clock", step = "own", file = "lua/lease/pool.lua",
    fn = "with_lease",
    from = "    return db:with_lease(id, owner, fence, db:server_now(), fn)\n",
    to = "    return db:with_lease(id, owner, fence, lease.now(), fn)\n",
    hint = "specs/53-pool_clock_spec.lua",
  },
  {
    name = "claim-next-batch-claims-ended-leases", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_CLAIM_FREE",
    from = [=[" WHERE rowid = ?6 AND id = ?1 AND fence = ?5 AND owner IS NULL AND done = 0 AND until <= ?3"]=],
    to = [=[" WHERE rowid = ?6 AND id = ?1 AND fence = ?5 AND done = 0 AND until <= ?3"]=],
    hint = "specs/36-claim_next_batch_spec.lua",
  },
  {
    name = "claim-next-batch-skips-ended-leases", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_body",
    from = "      if (!c->taken) {\n",
    to = "      if (!c->taken) continue;\n      if (0) {\n",
    hint = "specs/36-claim_next_batch_spec.lua",
  },
  {
    name = "claim-next-batch-stale-fence", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_free",
    from = "    if ((c->taken = sqlite3_changes(LSQ(db)->sql) == 1)) c->fence++;",
    to = "    if ((c->taken = sqlite3_changes(LSQ(db)->sql) == 1)) c->fence = 1;",
    hint = "specs/36-claim_next_batch_spec.lua",
  },
  {
    name = "pool-completed-ids-always", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = "  local s = { max_fence = 0, completed = cfg.completed and {} or nil, errors = {}, failed = {},\n",
    to = "  local s = { max_fence = 0, completed = {}, errors = {}, failed = {},\n",
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-job-method-made-per-read", step = "own", file = "lua/lease/pool.lua",
    fn = "job_meta",
    from = "    rawset(job, k, f)\n",
    to = "",
    hint = "specs/18-pool_spec.lua",
  },
  -- The job queue on PostgreSQL (src/pg/lpg_queue_sql.h, the guards
  -- lpg_sql.h shares with it) -----------------------------------------
  {
    -- fail stores without the fence check
    name = "pg-queue-fail-fence-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_FAIL",
    from = [[  LPG_SQL_HELD_GUARD ","]],
    to = [[  " WHERE jobs.id = j.id AND j.done = 0 AND j.owner = $2 AND j.until > $4 RETURNING 1),"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- claim, renew, complete and fail of a cancelled or discarded job granted
    name = "pg-queue-not-ended-ignored", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_NOT_ENDED",
    from = [[#define LPG_SQL_NOT_ENDED "q.state < " LEASE__Q_DISCARDED_S]],
    to = [[#define LPG_SQL_NOT_ENDED "q.state < 9"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- claim_next hands out scheduled jobs
    name = "pg-queue-run-at-filter", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_CLAIM_NEXT_",
    from = [[" AND q.queue = $1 AND (q.run_at IS NULL OR q.run_at <= $2)"]],
    to = [[" AND q.queue = $1"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- claim_next takes cancelled and discarded jobs
    name = "pg-queue-status-filter", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_CLAIM_NEXT_",
    from = [[" WHERE q.state = " LEASE__Q_OPEN_S " AND q.queue = $1 AND]],
    to = [[" WHERE q.state >= " LEASE__Q_OPEN_S " AND q.queue = $1 AND]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- a claim is not counted as an attempt (the fence's growth since
    -- base_fence is not read)
    name = "pg-queue-attempt-not-counted", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_ATTEMPT",
    from = [[#define LPG_SQL_ATTEMPT(j, q) "greatest(0, coalesce(" j ".fence - " q ".base_fence, 0))"]],
    to = [[#define LPG_SQL_ATTEMPT(j, q) "greatest(0, coalesce(" q ".base_fence - " q ".base_fence, 0))"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- retry keeps the attempts made: base_fence is not moved to the fence
    name = "pg-retry-keeps-attempts", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_RETRY",
    from = [[", base_fence = ok.fence,"]],
    to = [[", base_fence = base_fence,"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- the step ATTEMPTS loses the attempts counted before it
    name = "pg-attempts-step-count-lost", step = "own", file = "src/pg/lpg_schema_sql.h", backend = "pg",
    fn = "LPG_STEP_ATTEMPTS",
    from = [[" UPDATE lease_queue SET base_fence = jobs.fence - lease_queue.attempt FROM jobs"]],
    to = [[" UPDATE lease_queue SET base_fence = jobs.fence - 0 FROM jobs"]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- a database of the ATTEMPTS layout without its version row is taken
    -- for version 6: the step runs again (ADD COLUMN fails)
    name = "pg-schema-unversioned-attempts-layout-taken-for-older", step = "own", backend = "pg",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_SQL_CLASSIFY",
    from = [[AND attname = 'base_fence' AND NOT attisdropped) THEN 7"]],
    to = [[AND attname = 'base_fence' AND NOT attisdropped) THEN 6"]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- a read-only handle on a database before ATTEMPTS reads base_fence,
    -- which it does not have
    name = "pg-readonly-old-attempts-from-base-fence", step = "own", backend = "pg",
    file = "src/pg/lpg_queue.c", fn = "attempts_read",
    from = [[  return LPG(db)->version < LPG_ATTEMPTS_READABLE ? old : which;]],
    to = [[  return (void)db, (void)old, which;]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- an expired last attempt is claimed again instead of discarded
    name = "pg-queue-expiry-never-discards", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_CLAIM_NEXT_",
    from = [[" c.owner IS NOT NULL AND c.attempt >= c.max_attempts AS last FROM c),"]],
    to = [[" false AS last FROM c),"]],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- prune does not raise the fence floor: a job enqueued again under a
    -- pruned id hands out its fences again
    name = "prune-floor-not-raised", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "prune_body",
    from = "  return top > 0 ? raise_floor(db, top) : LEASE_OK;\n",
    to = "  return top < 0 ? raise_floor(db, top) : LEASE_OK;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- the floor is the fence of the last job a prune deletes, not the highest
    name = "prune-floor-last-not-highest", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "prune_body",
    from = "    if (fence > top) top = fence;\n",
    to = "    top = fence;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- a prune of lower fences lowers the floor
    name = "prune-floor-lowered", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_FLOOR_RAISE",
    from = [[" ON CONFLICT(key) DO UPDATE SET value = max(" LSQ_SQL_FLOOR_INT("value") ", excluded.value)"]],
    to = [[" ON CONFLICT(key) DO UPDATE SET value = excluded.value"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- enqueue starts a job at fence 0 whatever the floor
    name = "enqueue-ignores-floor", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = "  sqlite3_bind_int64(ins, 2, floor);\n",
    to = "  sqlite3_bind_null(ins, 2);\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-enqueue-ignores-floor", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE",
    from = [[  " i AS (INSERT INTO jobs(id, fence) SELECT $1, " LPG_SQL_FLOOR                   \]],
    to = [[  " i AS (INSERT INTO jobs(id, fence) SELECT $1, 0"                   \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the queue row counts attempts from 0, not from the fence the job starts at
    name = "pg-enqueue-base-fence-zero", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE",
    from = [[$6, $7, $8, fence"]],
    to = [[$6, $7, $8, 0"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- an enqueue waits for a prune deleting its id, then inserts it at the
    -- floor its snapshot read, below the one that prune raises
    name = "pg-enqueue-waits-on-pruned-row", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE",
    from = [[  " WHERE NOT EXISTS (SELECT 1 FROM h) AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1)" \]],
    to = [[  " WHERE NOT EXISTS (SELECT 1 FROM h)" \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-enqueue-data-ignores-floor", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE_DATA",
    from = [[  " i AS (INSERT INTO jobs(id, fence) SELECT id, " LPG_SQL_FLOOR " FROM a"         \]],
    to = [[  " i AS (INSERT INTO jobs(id, fence) SELECT id, 0 FROM a"         \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-enqueue-data-base-fence-zero", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE_DATA",
    from = [[" f.max_attempts, f.timeout, i.fence"]],
    to = [[" f.max_attempts, f.timeout, 0"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-enqueue-data-waits-on-pruned-row", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_ENQUEUE_DATA",
    from = [[  " WHERE (SELECT true FROM jobs j WHERE j.id = a.id) IS NULL ORDER BY k"          \]],
    to = [[  " ORDER BY k"           \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-enqueue-many-ignores-floor", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_ENQUEUE_MANY",
    from = [[  "INSERT INTO jobs(id, fence) SELECT id, " LPG_SQL_FLOOR                         \]],
    to = [[  "INSERT INTO jobs(id, fence) SELECT id, 0"                         \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-enqueue-many-waits-on-pruned-row", step = "own", file = "src/pg/lpg_sql.h", backend = "pg",
    fn = "LPG_SQL_ENQUEUE_MANY",
    from = [[  " WHERE (SELECT true FROM jobs j WHERE j.id = t.id) IS NULL"                   \]],
    to = [[  ""                    \]],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-prune-floor-not-raised", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_PRUNE",
    from = [[  " SELECT 'fence_floor', max(fence)::text FROM d HAVING max(fence) > 0"            \]],
    to = [[  " SELECT 'fence_floor', max(fence)::text FROM d HAVING false"            \]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-prune-floor-lowered", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_PRUNE",
    from = [[  " ON CONFLICT (key) DO UPDATE SET value = greatest("                              \
  LPG_SQL_FLOOR_OF(LEASE_SCHEMA_META ".value") ", excluded.value::int8)::text"      \]],
    to = [[  " ON CONFLICT (key) DO UPDATE SET value = excluded.value"     \]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- prune deletes a cancelled job still held
    name = "pg-queue-prune-held", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_PRUNE",
    from = [[") AND NOT (jobs.done = 0 AND jobs.until > $4)"]],
    to = [[")"]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pg-with-lease-ignores-cancel", step = "own", file = "src/pg/lpg_tx_sql.h", backend = "pg",
    fn = "LPG_TX_SQL_HOLDS",
    from = [[" SELECT j.done <> 0, CASE WHEN NOT (" LPG_SQL_NOT_ENDED ")"]],
    to = [[" SELECT j.done <> 0, CASE WHEN false"]],
    hint = "specs/50-with_lease_spec.lua",
  },
  {
    name = "readonly-open-drops-old-index", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = [[  if (!missing && ((db->opt.flags & LEASE_OPEN_READONLY) || sqlite3_db_readonly(c->sql, "main")))]],
    to = [[  if (!missing && sqlite3_db_readonly(c->sql, "main"))]],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "old-index-dropped-outside-the-schema-transaction", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = [[  return lsq_write_txn(db, schema_body, &missing);]],
    to = [[  (void)lsq_exec(db, "DROP INDEX IF EXISTS lease_jobs_pending");
  return lsq_write_txn(db, schema_body, &missing);]],
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "tally-default-queue-taken-for-all", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_TALLY_ALL",
    from = [["(?2 IS NULL OR (?2 = 'default' AND NOT EXISTS"]],
    to = [["(?2 IS NULL OR (?2 = 'default' OR NOT EXISTS"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "tally-done-jobs-read-twice", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_TALLY",
    from = [[" WHERE ((j.done <> 0) IS NOT 1 OR NOT (SELECT a FROM w))"]],
    to = [[" WHERE (1 OR NOT (SELECT a FROM w))"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "tally-done-jobs-of-a-queue-lost", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_TALLY",
    from = [[" WHERE ((j.done <> 0) IS NOT 1 OR NOT (SELECT a FROM w))"]],
    to = [[" WHERE ((j.done <> 0) IS NOT 1)"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "tally-done-jobs-counted-for-any-queue", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_TALLY",
    from = [[" (SELECT count(*) AS n FROM jobs WHERE (done <> 0) IS 1 AND (SELECT a FROM w)) AS d"]],
    to = [[" (SELECT count(*) AS n FROM jobs WHERE (done <> 0) IS 1) AS d"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "pool-batch-counts-one", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_batch",
    from = [[  if all and not w.cfg.completed and not w.hooks then return bump(w, "done", #results) end]],
    to = [[  if all and not w.cfg.completed and not w.hooks then return bump(w, "done") end]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-batch-skips-completed-list", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_batch",
    from = [[  if all and not w.cfg.completed and not w.hooks then return bump(w, "done", #results) end]],
    to = [[  if all and not w.hooks then return bump(w, "done", #results) end]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-batch-keeps-an-earlier-result", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_batch",
    from = [[      r.id, r.fence, r.result = c.id, c.fence, result]],
    to = [[      r.id, r.fence = c.id, c.fence
      if result ~= nil then r.result = result end]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-end-count-failure-raises", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = [[    else s.failed[#s.failed + 1] = "counts at the end: " .. tostring(c) end]],
    to = [[    else error(c, 0) end]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-own-handle-drops-bad-group-commit", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = [[  if own.group_commit == nil or type(own.group_commit) == "boolean" then own.group_commit = false end]],
    to = [[  own.group_commit = false]],
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "renamed-orphan-kept", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[  " DELETE FROM lease_queue WHERE id = new.id;"]],
    to = [[  ""]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-orphan-errors-kept", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[  " DELETE FROM lease_errors WHERE id = new.id;"]],
    to = [[  ""]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-errors-left-behind", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[  " UPDATE lease_errors SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';"]],
    to = [[  ""]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-blob-id-keeps-errors", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[  " DELETE FROM lease_errors WHERE id = old.id AND typeof(new.id) <> 'text';"]],
    to = [[  ""]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-blob-id-kept-in-queue", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[  " DELETE FROM lease_queue WHERE id = old.id AND typeof(new.id) <> 'text';"]],
    to = [[  ""]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-blob-id-moved-into-queue", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[" UPDATE lease_queue SET id = new.id WHERE id = old.id AND typeof(new.id) = 'text';"]],
    to = [[" UPDATE lease_queue SET id = new.id WHERE id = old.id;"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-text-id-gets-no-queue-row", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[" SELECT " LSQ_SQL_QUEUE_ROW_OF_NEW " WHERE typeof(new.id) = 'text';"]],
    to = [[" SELECT " LSQ_SQL_QUEUE_ROW_OF_NEW " WHERE 0;"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "renamed-done-not-followed", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_RENAMED_TRIGGER",
    from = [[" WHERE id = new.id AND (new.done <> 0) <> (old.done <> 0); END"]],
    to = [[" WHERE 0; END"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "older-queue-not-made-again", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = [[  if (!missing && c->versioned && c->version == LEASE_SCHEMA_VERSION) return LEASE_OK;]],
    to = [[  if (!missing && c->version >= LSQ_QUEUE_READABLE) return LEASE_OK;]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "older-queue-schema-body-skipped", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "schema_body",
    from = [[  if (c->versioned && c->version == LEASE_SCHEMA_VERSION) return LEASE_OK;]],
    to = [[  if (c->version >= LSQ_QUEUE_READABLE) return LEASE_OK;]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "readonly-older-queue-read-as-empty", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = [[    if (c->version < LSQ_QUEUE_READABLE) return lsq_q_temp(db);]],
    to = [[    if (c->version < LEASE_SCHEMA_VERSION) return lsq_q_temp(db);]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "ccn-claim-skipped-after-refusal", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_body",
    from = [[  if ((rc = complete_first(db, x)) != LEASE_OK) return rc;]],
    to = [[  if ((rc = complete_first(db, x)) != LEASE_OK) return rc;
  if (x->done && x->reason != LEASE_GRANTED) return LEASE_OK;]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "ccn-completion-not-stored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "complete_first",
    from = [[  if (x->done) return lsq_guarded_step(db, x->done, &unused, &x->reason);]],
    to = [[  if (0) return lsq_guarded_step(db, x->done, &unused, &x->reason);]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "ccn-reason-lost", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_complete_claim_next",
    from = "  if (reason) *reason = x.reason;\n",
    to = "  if (reason) *reason = LEASE_GRANTED;\n",
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "pg-ccn-two-transactions", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "ccn_pipelined",
    from = [[  if ((rc = lpg_pipeline_clocked(db, 5, which, p, out)) != LEASE_OK)]],
    to = [[  out[0] = NULL;
  if ((rc = lpg_pipeline_clocked(db, 4, which + 1, p + 1, out + 1)) != LEASE_OK)]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    -- the claim's first round fails inside the pipeline (ccn_pipelined):
    -- that failure dropped, COMMIT is sent and the call reports success
    name = "pg-ccn-claim-failure-commits", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "lpg_q_complete_claim_next",
    from = [[  rc = ccn_pipelined(db, wc, wn, max, jobs, count, reason, why);]],
    to = [[  (void)ccn_pipelined(db, wc, wn, max, jobs, count, reason, why);
  rc = LEASE_OK;]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "ccn-lua-reason-hidden", step = "own", file = "src/lua/lease_lua.c",
    fn = "push_complete_claim_next",
    from = [[  else lua_pushstring(L, lease_reason_name(a->reason));
  n = push_taken(L, a, "complete_claim_next");]],
    to = [[  else lua_pushnil(L);
  n = push_taken(L, a, "complete_claim_next");]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "ccn-lua-ttl-unchecked", step = "own", file = "src/lua/lease_lua.c",
    fn = "push_claim_next",
    from = [[  if (lease_check_time(a->now, a->ttl, &why))
    lb_error(L, LB_ARG(c, 7, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, 7)));]],
    to = [[  (void)why;]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  -- complete_many_claim_next: the batch's completions and the next claim in one transaction
  {
    name = "cmcn-completions-not-stored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "complete_first",
    from = [[  if (x->many) return lsq_complete_each(]],
    to = [[  if (0) return lsq_complete_each(]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "cmcn-refused-counted-stored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_complete_many_claim_next",
    from = [[  if (rc == LEASE_OK && stored) *stored = x.stored;]],
    to = [[  if (rc == LEASE_OK && stored) *stored = n;]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "pg-cmcn-two-transactions", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "lpg_q_complete_many_claim_next",
    from = [[  if (rc == LEASE_OK && (rc = claim_controlled(db, wn, max, jobs, count, why)) == LEASE_OK)]],
    to = [[  if (rc == LEASE_OK && (rc = lpg_exec(db, "COMMIT")) == LEASE_OK &&
      (rc = lpg_exec(db, "BEGIN")) == LEASE_OK &&
      (rc = claim_controlled(db, wn, max, jobs, count, why)) == LEASE_OK)]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "pg-cmcn-refused-counted-stored", step = "own", file = "src/pg/lpg_many.c", backend = "pg",
    fn = "note",
    from = [[  if (r == LEASE_GRANTED) b->done++;]],
    to = [[  b->done++;]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "cmcn-lua-refused-hidden", step = "own", file = "src/lua/lease_lua.c",
    fn = "push_complete_many_claim_next",
    from = [[  lua_pushboolean(L, a->reason == a->items);   /* a->reason: how many were stored */]],
    to = [[  lua_pushboolean(L, 1);]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "cmcn-lua-ttl-unchecked", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_complete_many_claim_next",
    from = [[  if (lease_check_time(a->now, a->ttl, &why))
    lb_error(L, LB_ARG(c, 5, NULL), lua_pushfstring(L, "%s, got %s", why, lb_got(L, 5)));]],
    to = [[  (void)why;]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "pool-batch-next-dropped", step = "own", file = "lua/lease/pool.lua",
    fn = "store_batch",
    from = [[  if #next_batch > 0 then w.next, w.next_at = next_batch, next_at end]],
    to = [[]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "pool-batch-next-not-given-back", step = "own", file = "lua/lease/pool.lua",
    fn = "step",
    from = [[      for _, j in ipairs(c) do give_back(w, j) end]],
    to = [[]],
    hint = "specs/62-complete_many_claim_next_spec.lua",
  },
  {
    name = "pool-batch-claims-while-stopping", step = "own", file = "lua/lease/pool.lua",
    fn = "store_batch",
    from = [[  if w.stopping then return w.db:complete_many(w.owner, w.db:server_now(), results) end]],
    to = [[]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-next-job-not-given-back", step = "own", file = "lua/lease/pool.lua",
    fn = "step",
    from = [[    elseif c then
      give_back(w, c)
    end]],
    to = [[    end]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "pool-next-job-dropped", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_one",
    from = [[  if id then w.next, w.next_at = next_job, next_at end]],
    to = [[]],
    hint = "specs/37-complete_claim_next_spec.lua",
  },
  {
    name = "backoff-clamped-at-cap", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_backoff",
    from = [[  return base * jitter;]],
    to = [[  return base * jitter > LEASE_BACKOFF_CAP ? LEASE_BACKOFF_CAP : base * jitter;]],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "pool-backoff-raise-kills-worker", step = "own", file = "lua/lease/pool.lua",
    fn = "pool_backoff",
    from = [[  local ok, d = pcall(w.cfg.backoff, job.attempt)]],
    to = [[  local ok, d = true, w.cfg.backoff(job.attempt)]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-backoff-bad-value-used", step = "own", file = "lua/lease/pool.lua",
    fn = "pool_backoff",
    from = [[  if ok and seconds(d) then return d end]],
    to = [[  if ok and type(d) == "number" then return d end]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-summary-misses-expiry-discards", step = "own", file = "lua/lease/pool.lua",
    fn = "add_expiry_discards",
    from = [[      if not known[j.id] and j.finished_at and j.finished_at >= since then]],
    to = [[      if false then]],
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-summary-counts-old-discards", step = "own", file = "lua/lease/pool.lua",
    fn = "add_expiry_discards",
    from = [[      if not known[j.id] and j.finished_at and j.finished_at >= since then]],
    to = [[      if not known[j.id] then]],
    hint = "specs/18-pool_spec.lua",
  },
  -- The CLI as people meet it (specs/38-cli_usage_spec.lua) --------------
  {
    name = "cli-suggests-anything", step = "own", file = "lua/lease/cli.lua",
    fn = "nearest",
    from = [=[  if best_d <= (#word <= 3 and 1 or 2) then return best end]=],
    to = [=[  if best_d <= 9 then return best end]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-no-suggestion", step = "own", file = "lua/lease/cli.lua",
    fn = "main",
    from = [=[near and (" (did you mean " .. near .. "?)") or "", "\n", commands_usage(), "\n")]=],
    to = [=["", "\n", commands_usage(), "\n")]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-help-skips-no-values", step = "own", file = "lua/lease/cli.lua",
    fn = "parse",
    from = [=[    i = i + (spec[argv[i]] and 2 or 1)]=],
    to = [=[    i = i + 1]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-usage-lists-every-command", step = "own", file = "lua/lease/cli.lua",
    fn = "main",
    from = [=[    err:write("lease ", name, ": ", show_bytes(res.msg), "\n", command_usage(cmd), "\n",]=],
    to = [=[    err:write("lease ", name, ": ", show_bytes(res.msg), "\n", commands_usage(), "\n",]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-time-ms-no-carry", step = "own", file = "lua/lease/cli.lua",
    fn = "iso_time",
    from = [=[  if ms >= 1000 then whole, ms = whole + 1, 0 end]=],
    to = [=[]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-time-shown-as-seconds", step = "own", file = "lua/lease/cli.lua",
    fn = "iso_time",
    from = [=[  return os.date("!%Y-%m-%dT%H:%M:%S", whole) .. string.format(".%03dZ", ms)]=],
    to = [=[  return string.format("%.3f", t)]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-duration-keeps-last-part", step = "own", file = "lua/lease/cli.lua",
    fn = "parse_duration",
    from = [=[    total = total + tonumber(num) * UNITS[unit]]=],
    to = [=[    total = tonumber(num) * UNITS[unit]]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-duration-ago-ahead", step = "own", file = "lua/lease/cli.lua",
    fn = "parse_time",
    from = [=[      t = direction == "ago" and now - d or now + d]=],
    to = [=[      t = now + d]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-date-any-day", step = "own", file = "lua/lease/cli.lua",
    fn = "parse_date",
    from = [=[  if mo < 1 or mo > 12 or d < 1 or d > mdays[mo] then return nil end]=],
    to = [=[  if mo < 1 or mo > 12 or d < 1 or d > 31 then return nil end]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-date-offset-sign", step = "own", file = "lua/lease/cli.lua",
    fn = "parse_date",
    from = [=[    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "+" and 1 or -1)]=],
    to = [=[    offset = (tonumber(oh) * 3600 + tonumber(om) * 60)]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-limit-ignored", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_jobs",
    from = [=[      local want = limit and math.min(1000, limit - #rows) or 1000]=],
    to = [=[      local want = 1000]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-limit-one-page", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_jobs",
    from = [=[    until #page < want or (limit and #rows >= limit)]=],
    to = [=[    until true]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-utf8-controls-shown", step = "own", file = "lua/lease/cli.lua",
    fn = "control_sequence",
    from = [=[  if n == 2 then return a == 0xC2 and b < 0xA0 end]=],
    to = [=[  if n == 2 then return false end]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-utf8-never-shown", step = "own", file = "lua/lease/cli.lua",
    fn = "show_bytes",
    from = [=[  if not s:find("[\128-\255]") or not utf8_locale() then]=],
    to = [=[  if true then]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-payload-and-payload-file", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_enqueue",
    from = [=[  if flags["--payload"] and flags["--payload-file"] then]=],
    to = [=[  if false then]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-pool-old-order-dropped", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_pool",
    from = [=[  if dbpath:find("%.lua$") and not worker:find("%.lua$") then dbpath, worker = worker, dbpath end]=],
    to = [=[]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-pool-no-compile-check", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_pool",
    from = [=[  if not compiled then error("worker script does not compile: " .. tostring(why), 0) end]=],
    to = [=[]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "pool-summary-every-discarded-id", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = [=[    if k > pool.SUMMARY_IDS then]=],
    to = [=[    if false then]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-cantopen-unexplained", step = "own", file = "lua/lease/cli.lua",
    fn = "explain_open",
    from = [=[    return text .. ": the directory " .. dir .. " does not exist"]=],
    to = [=[    return err]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-readonly-no-immutable-read", step = "own", file = "lua/lease/cli.lua",
    fn = "open_ro",
    from = [=[  local ok2, db2 = pcall(lease.open, immutable_uri(path), { readonly = true, create = false })]=],
    to = [=[  local ok2, db2 = pcall(lease.open, path, { readonly = true, create = false })]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "cli-readonly-wal-read-immutable", step = "own", file = "lua/lease/cli.lua",
    fn = "open_ro",
    from = [=[      or not is_file_path(path) or select(2, dir_state(dir)) then]=],
    to = [=[      or not is_file_path(path) or select(2, dir_state(dir)) or wal then]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  {
    name = "json-decode-trailing-text", step = "own", file = "lua/lease/json.lua",
    fn = "decode",
    from = [=[  if rest then]=],
    to = [=[  if false then]=],
    hint = "specs/38-cli_usage_spec.lua",
  },
  -- A password in a PostgreSQL connection string never shows -------------
  {
    name = "secret-error-names-path", step = "own", file = "src/lua/lease_lua.c",
    fn = "lb_push_db_error",
    from = [[lease_errname(lease_errcode(db)), lease_name(db));]],
    to = [[lease_errname(lease_errcode(db)), lease_path(db));]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-not-scrubbed", step = "own", file = "src/core/lease.c",
    fn = "lease__fail",
    from = [[  scrub(db, msg, sizeof msg);]],
    to = [[  (void)scrub;]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-uri-password-kept", step = "own", file = "src/pg/lpg_path.c",
    fn = "uri_secrets",
    from = [[  if (first && (colon = memchr(p, ':', (size_t)(first - p))) != NULL)
    lease__secret_add(out, cap, used, colon + 1, (size_t)(first - colon - 1));]],
    to = [[]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-keyword-rest-kept", step = "own", file = "src/pg/lpg_path.c",
    fn = "keyword_secrets",
    from = [[      lease__secret_add(out, cap, used, k, kn);
      continue;]],
    to = [[      continue;]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-decoded-kept", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "lease__pg_redact",
    from = [[      lease__secret_add(db->secrets, cap, &used, o->val, strlen(o->val));]],
    to = [[      (void)0;]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-tostring-path", step = "own", file = "src/lua/lease_lua.c", backend = "pg",
    fn = "m_tostring",
    from = [[lua_pushfstring(L, "lease.db (%s)", lease_name(h->db));]],
    to = [[lua_pushfstring(L, "lease.db (%s)", lease_path(h->db));]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  {
    name = "secret-cli-path", step = "own", file = "lua/lease/cli.lua", backend = "pg",
    fn = "cmd_show",
    from = [[err:write(string.format("lease show: no job %s in %s\n", quoted(pos[2]), show_bytes(db:name())))]],
    to = [[err:write(string.format("lease show: no job %s in %s\n", quoted(pos[2]), show_bytes(pos[1])))]],
    hint = "specs/38-conninfo_secret_spec.lua",
  },
  -- A handle used from two threads at once -------------------------------
  {
    name = "busy-flag-never-taken", step = "own", file = "src/core/lease.c",
    fn = "lease__hold",
    from = [[  return atomic_exchange_explicit(&db->busy, 1, memory_order_acquire) ? NULL : db;]],
    to = [[  return db;]],
    c_hint = "test_threads",
  },
  {
    name = "busy-flag-kept", step = "own", file = "src/core/lease.c",
    fn = "lease__unhold",
    from = [[  if (*held) atomic_store_explicit(&(*held)->busy, 0, memory_order_release);]],
    to = [[  (void)held;]],
    c_hint = "test_threads",
  },
  -- One function per operation (src/core/lease_queue.c): the arguments
  -- the merged forms added ------------------------------------------------
  {
    name = "state-infinite-now-accepted", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_state",
    from = [[  if (isinf(now)) return lease__fail(db, LEASE_MISUSE, "now must be a finite number or NaN");]],
    to = [[  if (0) return lease__fail(db, LEASE_MISUSE, "now must be a finite number or NaN");]],
    c_hint = "test_queue",
  },
  {
    name = "list-kind-unchecked", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_list",
    from = [[  if (g.which < LEASE_LIST_ALL || g.which > LEASE_LIST_BLOCKED)]],
    to = [[  if (0)]],
    c_hint = "test_queue",
  },
  {
    -- a batch with data taken for ids alone: its payload, queue ... lost
    name = "pg-enqueue-many-data-dropped", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "lpg_q_enqueue",
    from = [[  for (i = 0; plain && i < n; i++) plain = !has_data(&jobs[i]);]],
    to = [[  for (i = 0; plain && i < n; i++) plain = !has_data(&jobs[i]) || 1;]],
    hint = "specs/30-queue_data_spec.lua",
  },
  -- The core's rules (src/core/lease_rules.c): the order every backend's
  -- refused write, with_lease's check and cancel are judged by ----------
  {
    name = "rules-release-checks-queue-end", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = "  if ((*reason = ended_reason(f, !is_release)) != LEASE_GRANTED) return LEASE_OK;\n",
    to = "  if ((*reason = ended_reason(f, 1)) != LEASE_GRANTED) return LEASE_OK;\n",
    c_hint = "test_rules",
  },
  {
    name = "rules-release-checks-blocked", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = "  else if (!is_release && lease__blocked_msg(f->blocked))\n",
    to = "  else if (lease__blocked_msg(f->blocked))\n",
    c_hint = "test_rules",
  },
  {
    name = "rules-claim-checks-owner", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = "  if (!is_claim && f->other_owner) *reason = LEASE_NOT_OWNER;\n",
    to = "  if (f->other_owner) *reason = LEASE_NOT_OWNER;\n",
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "rules-held-for-every-write", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = "  else if (is_claim && f->live) *reason = LEASE_HELD;\n",
    to = "  else if (f->live) *reason = LEASE_HELD;\n",
    c_hint = "test_rules",
  },
  {
    name = "rules-expired-for-release", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = "  else if (!is_claim && !is_release && f->expired) *reason = LEASE_EXPIRED;\n",
    to = "  else if (!is_claim && f->expired) *reason = LEASE_EXPIRED;\n",
    c_hint = "test_rules",
  },
  {
    -- a guarded write another client's trigger skipped is an internal
    -- error, not [mismatch]
    name = "rules-skipped-write-as-error", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__refusal",
    from = [=[  return lease__fail(db, LEASE_MISMATCH, "the guarded %s of %.*s changed no row, yet the job "]=],
    to = [=[  return lease__fail(db, LEASE_ERROR, "the guarded %s of %.*s changed no row, yet the job "]=],
    c_hint = "test_rules",
  },
  {
    name = "rules-refused-write-granted", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__refusal",
    from = "  if (rc != LEASE_OK || *reason != LEASE_GRANTED) return rc;\n",
    to = "  return rc;\n",
    c_hint = "test_rules",
  },
  {
    name = "rules-gate-always-passes", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__gate_reason",
    from = "  return stored ? LEASE_GRANTED : LEASE_STALE_FENCE;\n",
    to = "  return stored ? LEASE_GRANTED : LEASE_GRANTED;\n",
    hint = "specs/51-fence_gate_spec.lua",
  },
  {
    name = "rules-prune-discarded-as-cancelled", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__prune_state",
    from = "    case LEASE_STATUS_DISCARDED: return LEASE__Q_DISCARDED;\n",
    to = "    case LEASE_STATUS_DISCARDED: return LEASE__Q_CANCELLED;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "queue-paused-still-claimed", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__claim_room",
    from = "  if (q->paused) return LEASE_PAUSED;\n",
    to = "",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-concurrency-off-by-one", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__claim_room",
    from = "    if (q->live >= q->concurrency) return LEASE_LIMITED;\n",
    to = "    if (q->live > q->concurrency) return LEASE_LIMITED;\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-expired-lease-counted", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_LIVE",
    from = "j.until > ?2 AND q.queue = ?1",
    to = "j.until >= ?2 AND q.queue = ?1",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- a job cancelled while held frees its slot at the cancel
    name = "queue-live-open-only", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_LIVE",
    from = [=[  " WHERE j.done = 0 AND j.until > ?2 AND q.queue = ?1"]=],
    to = [=[  " WHERE j.done = 0 AND j.until > ?2 AND q.queue = ?1 AND q.state = 0"]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-rate-window-closed", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    edits = {
      { fn = "LSQ_SQL_Q_RECENT", from = " AND at > t - ?3 AND", to = " AND at >= t - ?3 AND" },
      { fn = "LSQ_SQL_Q_PRUNE_CLAIMS", from = "queue = ?1 AND at <= ?2", to = "queue = ?1 AND at < ?2" },
    },
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-rate-not-recorded", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_body",
    from = "  return qf.rate > 0 && x->n > 0 ? record_claims(db, x->w, qf.at, x->n) : LEASE_OK;\n",
    to = "  return qf.rate > 0 && x->n < 0 ? record_claims(db, x->w, qf.at, x->n) : LEASE_OK;\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- a claim's time is its own now even when its clock is more than a
    -- window behind the latest claim recorded: it counts a window whose
    -- claims were pruned
    name = "queue-rate-late-clock-not-lifted", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_RECENT",
    from = " t(t, m) AS (SELECT max(?2, coalesce(m - ?3, ?2)), m FROM m)",
    to = " t(t, m) AS (SELECT ?2, m FROM m)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- the count looks back only, (at - per, at]: a claim committed first
    -- with a later now is not counted by one with an earlier now
    name = "queue-rate-later-claims-uncounted", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_RECENT",
    from = " AND at > t - ?3 AND at < t + ?3)",
    to = " AND at > t - ?3 AND at <= t)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- the claims pruned up to one window before the latest: a claim with
    -- an earlier now no longer counts them
    name = "queue-rate-pruned-one-window", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_RECENT",
    from = " max(t, coalesce(m, t)) - 2 * ?3 FROM t",
    to = " max(t, coalesce(m, t)) - ?3 FROM t",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- a claim moved up to a later time recorded at its own now instead
    name = "queue-rate-recorded-at-now", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_body",
    from = "record_claims(db, x->w, qf.at, x->n)",
    to = "record_claims(db, x->w, x->w->now, x->n)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "pg-queue-rate-late-clock-not-lifted", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg", fn = "LPG_Q_SQL_RECENT",
    from = "greatest($2, m - $3) AS t",
    to = "$2::float8 AS t",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "pg-queue-rate-later-claims-uncounted", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg", fn = "LPG_Q_SQL_RECENT",
    from = " AND at > t - $3 AND at < t + $3)",
    to = " AND at > t - $3 AND at <= t)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "pg-queue-rate-pruned-one-window", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg", fn = "LPG_Q_SQL_RECENT",
    from = "(SELECT greatest(t, m) - 2 * $3 FROM t)",
    to = "(SELECT greatest(t, m) - $3 FROM t)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "pg-queue-rate-recorded-at-now", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "claim_under",
    from = "    p_f8(&p, q->at);\n",
    to = "    p_f8(&p, w->now);\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-control-readonly-older-unread", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = "    if (c->version < LSQ_CONTROL_READABLE && lsq_q_control_temp(db) != LEASE_OK) return db->rc;\n",
    to = "",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-control-readonly-older-unread-pg", step = "own", file = "src/pg/lpg.c", backend = "pg",
    fn = "open_schema",
    from = "    if (c->version < LPG_CONTROL_READABLE && (rc = lpg_exec(db, LPG_Q_SQL_CONTROL_TEMP)) != LEASE_OK)",
    to = "    if (0 && (rc = lpg_exec(db, LPG_Q_SQL_CONTROL_TEMP)) != LEASE_OK)",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    name = "queue-limit-read-unlocked-pg", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "claim_controlled",
    from = "read_facts(db, w, LPG_ST_Q_SETTINGS_LOCKED, 0, &q);",
    to = "read_facts(db, w, LPG_ST_Q_SETTINGS, 0, &q);",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- claim_next reads a queue's settings without locking its row: the
    -- claims of a limited queue no longer take turns
    name = "queue-limit-read-unlocked-pg-claim-next", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "claim_pipelined",
    from = "  int which[4] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, LPG_ST_Q_SETTINGS_LOCKED,\n",
    to = "  int which[4] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, LPG_ST_Q_SETTINGS,\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- complete_claim_next on a queue with settings: its pipelined claim
    -- (which claims nothing there) taken as the claim, none run under them
    name = "pg-ccn-settings-ignored", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "ccn_pipelined",
    from = "  if (!q.found) return claim_rounds(db, wn, max, jobs, count, out[4]);\n",
    to = "  if (!q.found || 1) return claim_rounds(db, wn, max, jobs, count, out[4]);\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  -- A queue's advisory lock (LPG_Q_SQL_QUEUE_KEY): every claim takes it
  -- shared before it reads the settings, pause, resume and limit take it
  -- exclusive.  complete_claim_next's one round trip takes it in its
  -- complete (LPG_Q_SQL_COMPLETE_LOCKING: mutant pg-ccn-committed-unlocked).
  {
    -- claim_next's pipeline without the lock: a pause commits between its
    -- claim's snapshot and its COMMIT
    name = "pg-claim-next-unlocked", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "claim_pipelined",
    from = "  int which[4] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, LPG_ST_Q_SETTINGS_LOCKED,\n",
    to = "  int which[4] = {LPG_PIPE_BEGIN, LPG_ST_Q_SETTINGS, LPG_ST_Q_SETTINGS_LOCKED,\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- complete_claim_next's pipeline (the ledger on) without the lock
    name = "pg-ccn-pipelined-unlocked", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "ccn_pipelined",
    from = "  int which[5] = {LPG_PIPE_BEGIN, LPG_ST_Q_CLAIM_LOCK, 0, LPG_ST_Q_SETTINGS_LOCKED,\n",
    to = "  int which[5] = {LPG_PIPE_BEGIN, LPG_ST_Q_SETTINGS, 0, LPG_ST_Q_SETTINGS_LOCKED,\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- complete_many_claim_next's completions begun without the lock
    name = "pg-cmcn-unlocked", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "lpg_q_complete_many_claim_next",
    from = "  rc = n > 0 ? lpg_complete_begun(db, wc, items, n, reasons, &done, wn)\n",
    to = "  rc = n > 0 ? lpg_complete_begun(db, wc, items, n, reasons, &done, NULL)\n",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- pause, resume and limit write lease_queues without waiting for the
    -- claims in progress
    name = "pg-control-unlocked", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "control_body",
    from = "  if (!(res = qrun(db, LPG_ST_Q_CONTROL_LOCK, &p))) return db->rc;\n  PQclear(res);\n",
    to = "",
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- claim_next's pipelined round claims from a queue with settings
    name = "pg-claim-next-free-takes-settled", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg", fn = "LPG_Q_SQL_CLAIM_NEXT_FREE_",
    from = [=[  LPG_Q_SQL_CLAIM_NEXT_(" AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = $1)", "", limit)]=],
    to = [=[  LPG_Q_SQL_CLAIM_NEXT_(" AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = $1 AND false)", "", limit)]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  -- The schema version (src/sqlite/lsq_schema.c, src/pg/lpg_schema.c) ----
  {
    name = "schema-newer-version-accepted", step = "own", file = "src/sqlite/lsq_schema.c",
    fn = "lsq_schema_read",
    from = [[  if (version > LEASE_SCHEMA_VERSION)]],
    to = [[  if (version > LEASE_SCHEMA_VERSION + 100)]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "pg-schema-newer-version-accepted", step = "own", file = "src/pg/lpg_schema.c",
    fn = "lpg_schema_read", backend = "pg",
    from = [[  if (version > LEASE_SCHEMA_VERSION)]],
    to = [[  if (version > LEASE_SCHEMA_VERSION + 100)]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "schema-step-skipped", step = "own", file = "src/sqlite/lsq_schema.c",
    fn = "lsq_schema_upgrade",
    from = [[  for (k = c->version; k < LEASE_SCHEMA_VERSION && rc == LEASE_OK; k++)]],
    -- the first step an upgrade of an existing database runs (the last
    -- step, 12, has no SQL on SQLite: skipping it changed nothing)
    to = [[  for (k = c->version; k < LEASE_SCHEMA_VERSION && rc == LEASE_OK; k++)
    if (k == 0 || k != c->version)]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "pg-schema-step-skipped", step = "own", file = "src/pg/lpg_schema.c",
    fn = "upgrade_body", backend = "pg",
    from = [[    if (steps[k][0]) rc = lpg_exec(db, steps[k]);]],
    to = [[    if (steps[k][0] && k > 0) rc = lpg_exec(db, steps[k]);]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "schema-version-row-not-written", step = "own", file = "src/sqlite/lsq_schema.c",
    fn = "lsq_schema_upgrade",
    from = [[  if (rc == LEASE_OK) rc = lsq_exec(db, LSQ_SQL_VERSION_SET);]],
    to = [[]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "pg-schema-version-row-not-written", step = "own", file = "src/pg/lpg_schema.c",
    fn = "upgrade_body", backend = "pg",
    from = [[  if (rc == LEASE_OK) rc = lpg_exec(db, LPG_SQL_VERSION_SET);]],
    to = [[]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "schema-unversioned-v1-taken-for-v2", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_CLASSIFY",
    from = [[  " WHERE name = 'attempt') THEN 1"                                      \]],
    to = [[  " WHERE name = 'attempt') THEN 2"                                      \]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "schema-unversioned-v2-taken-for-current", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_CLASSIFY",
    from = [[  " ELSE 2 END"]],
    to = [[  " ELSE 3 END"]],
    hint = "specs/32-queue_seed_spec.lua",
  },
  {
    name = "pg-schema-unversioned-v0-taken-for-current", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_CLASSIFY", backend = "pg",
    from = [[" AND tgname = 'lease_jobs_added') THEN 3 ELSE 0 END"]],
    to = [[" AND tgname = 'lease_jobs_added') THEN 3 ELSE 3 END"]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "schema-version-row-ignored", step = "own", file = "src/sqlite/lsq_schema.c",
    fn = "lsq_schema_read",
    from = [[  if (rc == LEASE_OK && meta) rc = lsq_query(db, sql, LSQ_SQL_VERSION_GET, on_version, &version);]],
    to = [[]],
    hint = "specs/39-schema_version_spec.lua",
  },
  -- The clock mark (specs/54-clock_spec.lua) -------------------------
  {
    name = "clock-check-dropped", step = "own", file = "src/core/lease.c", fn = "lease__clock",
    from = [[  if (!isnan(now) && clock_off(now, mark, db->opt.clock_factor))
    return clock_refused(db, "now", now, mark, db->opt.clock_factor);]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-factor-one-way", step = "own", file = "src/core/lease.c", fn = "clock_off",
    from = [[  return now >= mark * factor || mark >= now * factor;]],
    to = [[  return now >= mark * factor;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-floor-dropped", step = "own", file = "src/core/lease.c", fn = "clock_off",
    from = [[  if (factor == 0 || !(now >= LEASE__CLOCK_FLOOR) || !(mark >= LEASE__CLOCK_FLOOR)) return 0;]],
    to = [[  if (factor == 0 || isnan(mark)) return 0;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-mark-never-moved", step = "own", file = "src/core/lease.c", fn = "lease__clock",
    from = [[  *move = clock_moves(now, mark);]],
    to = [[  *move = 0;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-option-ignored", step = "own", file = "src/lua/lease_lua.c", fn = "check_options",
    from = [[  opt->clock_factor = clock_check ? clock_factor : 0;]],
    to = [[  (void)clock_check;
  (void)clock_factor;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "unscheduled-due-at-zero", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_DATA",
    from = [[  " due_at = coalesce(?5, " LSQ_SQL_DUE_NOW "), max_attempts = ?6, timeout = ?7, key = ?8"]],
    to = [[  " due_at = coalesce(?5, 0), max_attempts = ?6, timeout = ?7, key = ?8"]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "unscheduled-due-at-zero-on-insert", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_QUEUE_ROW_OF_NEW",
    from = [[  LSQ_SQL_FENCE_INT("new.fence") ", " LSQ_SQL_DUE_NOW]],
    to = [[  LSQ_SQL_FENCE_INT("new.fence") ", 0"]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pg-unscheduled-due-at-zero", step = "own", backend = "pg", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_ENQUEUE",
    from = [[  " coalesce($5, " LPG_Q_SQL_DUE_NOW "), $6, $7, $8, fence"]],
    to = [[  " coalesce($5, 0), $6, $7, $8, fence"]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "schema-clock-step-fills-no-due-at", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_CLOCK",
    from = [[  XX("UPDATE lease_queue SET due_at = coalesce(run_at, 0)")               \]],
    to = [[  XX("SELECT 1")               \]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pg-schema-clock-step-fills-no-due-at", step = "own", backend = "pg",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_STEP_CLOCK",
    from = [[  " UPDATE lease_queue SET due_at = run_at WHERE run_at IS NOT NULL;"             \]],
    to = [[  " SELECT 1;"             \]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "schema-unversioned-clock-layout-taken-for-older", step = "own",
    file = "src/sqlite/lsq_schema_sql.h", fn = "LSQ_SQL_CLASSIFY",
    from = [[  " WHERE name = 'due_at') THEN 6"]],
    to = [[  " WHERE name = 'due_at') THEN 5"]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "pg-schema-unversioned-clock-layout-taken-for-older", step = "own", backend = "pg",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_SQL_CLASSIFY",
    from = [[AND NOT attisdropped) THEN 6"]],
    to = [[AND NOT attisdropped) THEN 5"]],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "clock-also-unchecked", step = "own", file = "src/core/lease.c", fn = "lease__clock",
    from = [[  if (!isnan(off = also_off(db, mark)))]],
    to = [[  if (!isnan(off = NAN))]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-judged-before-now", step = "own", file = "src/core/lease.c", fn = "lease__clock",
    from = [[  if (!isnan(now) && clock_off(now, mark, db->opt.clock_factor))
    return clock_refused(db, "now", now, mark, db->opt.clock_factor);
  if (!isnan(off = also_off(db, mark)))]],
    to = [[  if (!isnan(off = also_off(db, mark)))
    return clock_refused(db, db->clock_what, off, mark, also_factor(db));
  if (!isnan(now) && clock_off(now, mark, db->opt.clock_factor))
    return clock_refused(db, "now", now, mark, db->opt.clock_factor);
  if (!isnan(off = also_off(db, mark)))]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-least-unchecked", step = "own", file = "src/core/lease.c", fn = "also_off",
    from = [[  if (clock_off(db->clock_lo, mark, f)) return db->clock_lo;]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-greatest-unchecked", step = "own", file = "src/core/lease.c", fn = "also_off",
    from = [[  if (clock_off(db->clock_hi, mark, f)) return db->clock_hi;]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-small-times-kept", step = "own", file = "src/core/lease.c",
    fn = "lease__clock_also",
    from = [[  if (db->opt.clock_factor == 0 || !(t >= LEASE__CLOCK_FLOOR) || !isfinite(t)) return;]],
    to = [[  if (db->opt.clock_factor == 0 || !isfinite(t)) return;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-infinite-kept", step = "own", file = "src/core/lease.c",
    fn = "lease__clock_also",
    from = [[  if (db->opt.clock_factor == 0 || !(t >= LEASE__CLOCK_FLOOR) || !isfinite(t)) return;]],
    to = [[  if (db->opt.clock_factor == 0 || !(t >= LEASE__CLOCK_FLOOR)) return;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-not-due", step = "own", file = "src/core/lease.c", fn = "lease__clock_due",
    from = [[  return !isnan(db->clock_lo) && (isnan(db->clock_mark) || !isnan(also_off(db, db->clock_mark)));]],
    to = [[  return 0;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "enqueue-run-at-unclocked", step = "own", file = "src/core/lease_queue.c",
    fn = "check_new_job",
    from = [[  if (out->has_run_at) lease__clock_also(db, "run_at", out->run_at);]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "fail-run-at-unclocked", step = "own", file = "src/core/lease_queue.c", fn = "lease_fail",
    from = [[  if (opts->has_run_at) lease__clock_also(db, "run_at", opts->run_at);]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "prune-before-unclocked", step = "own", file = "src/core/lease_queue.c", fn = "lease_prune",
    from = [[  lease__clock_also(db, "before", before);]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  -- Left out: lease__clock_settled's look at the times of lease__clock_also.
  -- Its one caller, PostgreSQL's complete_claim_next, takes no such time, so
  -- no spec can tell it from a version without.
  {
    name = "tx-renew-clock-unchecked", step = "own", file = "src/core/lease_tx.c",
    fn = "lease_tx_renew",
    from = [[  if (lease__clock_in_tx(tx->db, now, tx->w.now)) return tx->db->rc;]],
    to = [[]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "tx-renew-clock-ignores-step", step = "own", file = "src/core/lease.c",
    fn = "lease__clock_in_tx",
    from = [[  if (isnan(mark) || stepped > mark) mark = stepped;]],
    to = [[  (void)stepped;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-settled-by-no-mark", step = "own", file = "src/core/lease.c",
    fn = "lease__clock_due",
    from = [[  return !isnan(db->clock_lo) && (isnan(db->clock_mark) || !isnan(also_off(db, db->clock_mark)));]],
    to = [[  return !isnan(db->clock_lo) && isnan(db->clock_mark);]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "clock-also-factor-of-now", step = "own", file = "src/core/lease.c", fn = "also_factor",
    from = [[  return fmax(db->opt.clock_factor, LEASE__CLOCK_ALSO_FACTOR);]],
    to = [[  return db->opt.clock_factor;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pool-refused-backoff-kills-worker", step = "own", file = "lua/lease/pool.lua",
    fn = "fail_job",
    from = [[  if not tostring(status):find(": run_at %S+ is off by a factor") then error(status, 0) end]],
    to = [[  error(status, 0)]],
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "with-lease-clock-unchecked", step = "own", file = "src/core/lease_tx.c",
    fn = "lease_with_lease",
    from = [[  db->clock_now = now;   /* the backend's clock step (lease__clock) checks it */]],
    to = [[  (void)lease__clock_cached;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "with-lease-clock-step-skipped", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "lsq_with_lease",
    from = [[  if ((rc = lsq_clock(db)) == LEASE_OK) rc = check_lease(db, t, &tx->w, reason);]],
    to = [[  rc = check_lease(db, t, &tx->w, reason);]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pg-with-lease-mark-not-dropped", step = "own", backend = "pg", file = "src/pg/lpg_tx.c",
    fn = "ready_clocked",
    from = [[  if (rc == LEASE_OK || !lpg_q_mark_dropped(db)) return rc;]],
    to = [[  if (rc == LEASE_OK || !lpg_q_mark_dropped(db) || 1) return rc;]],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    name = "tick-with-nothing-due-unclocked", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "lsq_s_tick",
    from = [[    rc = lsq_clock_checked(db);]],
    to = [[    rc = LEASE_OK;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pg-clock-check-skipped", step = "own", backend = "pg", file = "src/pg/lpg.c", fn = "lpg_ready",
    from = [[  return rc != LEASE_OK ? rc : lpg_q_clock(db);]],
    to = [[  return rc;]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    -- claim_next, complete_claim_next and complete_many read the mark in
    -- their first round trip
    name = "pg-pipeline-clock-unjudged", step = "own", backend = "pg", file = "src/pg/lpg.c",
    fn = "lpg_pipeline_clocked",
    from = [[    if (c) rc = lpg_q_clock_judge(db, o[0], &move), PQclear(o[0]);]],
    to = [[    if (c) PQclear(o[0]);]],
    hint = "specs/54-clock_spec.lua",
  },
  {
    name = "pg-pipeline-clock-not-moved", step = "own", backend = "pg", file = "src/pg/lpg.c",
    fn = "lpg_pipeline_clocked",
    from = [[    if (rc == LEASE_OK && !move) return LEASE_OK;]],
    to = [[    if (rc == LEASE_OK) return LEASE_OK;]],
    hint = "specs/54-clock_spec.lua",
  },
  -- Schedules (specs/41-schedule_spec.lua, specs/c/test_cron.c) -------
  {
    name = "schedule-tick-unguarded", step = "own", file = "src/sqlite/lsq_schedule_sql.h",
    fn = "LSQ_SQL_SCHEDULE_MOVE",
    from = [=[" WHERE name = ?3 AND next_at = ?4"]=],
    to = [=[" WHERE name = ?3 AND ?4 IS NOT NULL"]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "pg-schedule-tick-unguarded", step = "own", file = "src/pg/lpg_schedule_sql.h",
    backend = "pg", fn = "LPG_SQL_SCHEDULE_MOVE",
    from = [=[" WHERE name = $3 AND next_at = $4"]=],
    to = [=[" WHERE name = $3 AND $4::float8 IS NOT NULL"]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "prune-huge-deletes-held", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__prune_held",
    from = "  return isnan(db->clock_mark) || db->clock_mark > before ? before : db->clock_mark;\n",
    to = "  (void)db;\n  return before;\n",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "prune-huge-mark-stale", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_prune",
    from = "  db->clock_read = 1;   /* the mark stands for now: lease__prune_held */\n",
    to = "",
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    name = "schedule-broken-every-blames-now", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_due",
    from = "    if (!(s->every > 0 && isfinite(s->every))) return -1;   /* another client stored it */\n",
    to = "",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-far-now-every-as-mismatch", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_due",
    from = "    if (!every_fits(s->every, now)) return -2;\n",
    to = "    if (!every_fits(s->every, now)) return -1;\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-far-now-cron-as-mismatch", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_due",
    from = "    if ((e = lease__cron_next(&c, now, next)) != 0) return e == -2 ? -2 : -1;\n",
    to = "    if ((e = lease__cron_next(&c, now, next)) != 0) return -1;\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-far-now-blames-every", step = "own", file = "src/lua/lease_lua_schedule.c",
    fn = "check_schedule",
    from = "      if (!(fabs(a->now) <= 9007199254740992.0))\n",
    to = "      if (0)\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-same-declaration-resets", step = "own", file = "src/sqlite/lsq_schedule_sql.h",
    fn = "LSQ_SQL_SCHEDULE_SAME",
    from = "  \" AND lease_schedules.max_attempts IS excluded.max_attempts\"\n",
    to = "  \" AND 0\"\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-changed-declaration-kept", step = "own", file = "src/sqlite/lsq_schedule_sql.h",
    fn = "LSQ_SQL_SCHEDULE_SAME",
    from = "  \" AND lease_schedules.queue IS excluded.queue AND lease_schedules.payload IS excluded.payload\" \\\n",
    to = "  \" AND lease_schedules.queue IS excluded.queue\" \\\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "pg-schedule-same-declaration-resets", step = "own", file = "src/pg/lpg_schedule_sql.h",
    backend = "pg", fn = "LPG_S_SQL_SAME",
    from = "  \" IS NOT DISTINCT FROM (EXCLUDED.every, EXCLUDED.cron, EXCLUDED.queue,\"              \\\n",
    to = "  \" IS DISTINCT FROM (EXCLUDED.every, EXCLUDED.cron, EXCLUDED.queue,\"              \\\n",
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-missed-ticks-replayed", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_due",
    from = [=[    latest = k * s->every;]=],
    to = [=[    latest = s->next_at;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedule-next-not-past-now", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_due",
    from = [=[    if (lease__schedule_next(s, now, next)) return -1;]=],
    to = [=[    if (lease__schedule_next(s, s->next_at, next)) return -1;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "cron-dom-dow-and", step = "own", file = "src/core/lease_cron.c", fn = "day_matches",
    from = [=[  return dom || dow;]=],
    to = [=[  return dom && dow;]=],
    c_hint = "test_cron", hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "cron-step-off-by-one", step = "own", file = "src/core/lease_cron.c", fn = "parse_field",
    from = [=[      step = (int)n;]=],
    to = [=[      step = (int)n + 1;]=],
    c_hint = "test_cron", hint = "specs/41-schedule_spec.lua",
  },
  {
    -- a database file with a second hard link is opened
    name = "open-hard-link-allowed", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "check_path",
    from = [=[  if (st.st_nlink > 1)]=],
    to = [=[  if (st.st_nlink > 2)]=],
    hint = "specs/23-hostile_spec.lua",
  },
  {
    -- a schedule's job id stops at a zero byte of its name
    name = "schedule-job-id-cut-at-zero", step = "own", file = "src/core/lease_schedule.c",
    fn = "lease__schedule_job_id",
    from = [=[    size_t name = s->name_len < n - 1 ? s->name_len : n - 1;]=],
    to = [=[    size_t name = strnlen(s->name, s->name_len < n - 1 ? s->name_len : n - 1);]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    -- a time past the calendar reads as an expression that never matches
    name = "cron-range-as-never", step = "own", file = "src/core/lease_cron.c",
    fn = "lease__cron_next",
    from = [=[  if (!(t >= CLOCK_MIN && t <= CLOCK_MAX - LEASE__CRON_HORIZON)) return -2;]=],
    to = [=[  if (!(t >= CLOCK_MIN && t <= CLOCK_MAX - LEASE__CRON_HORIZON)) return -1;]=],
    c_hint = "test_cron", hint = "specs/41-schedule_spec.lua",
  },
  {
    -- lease.cron_next blames the expression for a time past the calendar
    name = "cron-next-range-blames-expr", step = "own", file = "src/lua/lease_lua_schedule.c",
    fn = "lb_cron_next",
    from = [=[  if (rc != LEASE_OK) lb_error(L, LB_ARG(&c, rc == LEASE_RANGE ? 2 : 1, NULL), lua_pushstring(L, err));]=],
    to = [=[  if (rc != LEASE_OK) lb_error(L, LB_ARG(&c, 1, NULL), lua_pushstring(L, err));]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    -- db:schedule blames its opts for a now past the calendar
    name = "schedule-cron-range-blames-opts", step = "own", file = "src/lua/lease_lua_schedule.c",
    fn = "check_schedule",
    from = [=[    if (rc == LEASE_RANGE) lb_error(L, LB_ARG(c, 3, NULL), lua_pushstring(L, err));]=],
    to = [=[    if (rc == LEASE_RANGE && 0) lb_error(L, LB_ARG(c, 3, NULL), lua_pushstring(L, err));]=],
    hint = "specs/41-schedule_spec.lua",
  },
  -- The schema step SCHEDULES, and a read-only handle on an older database
  {
    name = "schema-schedules-step-temporary", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_SCHEDULES",
    from = [=[  XX("CREATE TABLE IF NOT EXISTS lease_schedules(name TEXT PRIMARY KEY,"]=],
    to = [=[  XX("CREATE TEMP TABLE IF NOT EXISTS lease_schedules(name TEXT PRIMARY KEY,"]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "pg-schema-schedules-step-temporary", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_SCHEDULES", backend = "pg",
    from = [=["CREATE TABLE IF NOT EXISTS lease_schedules(name bytea PRIMARY KEY,"]=],
    to = [=["CREATE TEMP TABLE IF NOT EXISTS lease_schedules(name bytea PRIMARY KEY,"]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedules-older-file-taken-for-current", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "have_table",
    from = [=[  if (LSQ(db)->version > LEASE__STEP_SCHEDULES) return 1;]=],
    to = [=[  if (LSQ(db)->version >= LEASE__STEP_SCHEDULES) return 1;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "schedules-table-made-since-not-seen", step = "own", file = "src/sqlite/lsq_schedule.c",
    fn = "have_table",
    from = [=[  return found;]=],
    to = [=[  return 0;]=],
    hint = "specs/41-schedule_spec.lua",
  },
  -- Hooks of the pool (lua/lease/pool.lua) and lease.testing ------------
  {
    -- a C function given as the handler or a hook: refused by name alike
    -- on every Lua version (LuaJIT reports its upvalues as unnamed)
    name = "pool-c-function-handler-taken", step = "own", file = "lua/lease/pool.lua",
    fn = "check_movable",
    from = [=[  if debug.getinfo(fn, "S").what == "C" then]=],
    to = [=[  if false then]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-error-loses-the-job", step = "own", file = "lua/lease/pool.lua",
    fn = "hook",
    from = [=[  local ok, err = pcall(fn, ev)]=],
    to = [=[  local ok, err = true, fn(ev)]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-error-not-counted", step = "own", file = "lua/lease/pool.lua",
    fn = "hook",
    from = [=[  bump(w, "hook_errors")]=],
    to = [=[  ]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-refusal-not-called", step = "own", file = "lua/lease/pool.lua",
    fn = "refusal",
    from = [=[  hook(w, "on_refusal", job, { op = op, reason = why })]=],
    to = [=[  ]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-failure-without-run-at", step = "own", file = "lua/lease/pool.lua",
    fn = "handler_failed",
    from = [=[    hook(w, "on_failure", job, { error = text, status = status, run_at = why })]=],
    to = [=[    hook(w, "on_failure", job, { error = text, status = status })]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-discard-not-called", step = "own", file = "lua/lease/pool.lua",
    fn = "handler_failed",
    from = [=[    hook(w, "on_discard", job, { error = text })]=],
    to = [=[    ]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-hook-batch-success-skipped", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_batch",
    from = [=[      hook(w, "on_success", jobs[k], { result = r.result })]=],
    to = [=[      ]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "pool-module-unknown-hook-taken", step = "own", file = "lua/lease/pool.lua",
    fn = "worker_module",
    from = [=[      if not HOOK_NAMES[k] then]=],
    to = [=[      if false then]=],
    hint = "specs/55-pool_hooks_spec.lua",
  },
  {
    name = "testing-drain-does-not-advance", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = [=[        clock.now = due]=],
    to = [=[        break]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-drain-advances-unasked", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = [=[      elseif fence == "empty" and opts.advance then]=],
    to = [=[      elseif fence == "empty" then]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-drain-ignores-queue", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = [=[  local cfg = { handler = fn, ttl = opts.ttl or 10, queue = queue, batch = 1 }]=],
    to = [=[  local cfg = { handler = fn, ttl = opts.ttl or 10, batch = 1 }]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-drain-misses-retries", step = "own", file = "lua/lease/testing.lua",
    fn = "next_due",
    from = [=[  for _, status in ipairs({ "scheduled", "retryable" }) do]=],
    to = [=[  for _, status in ipairs({ "scheduled" }) do]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-drain-counts-discard-as-failed", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = [=[    on_failure = function(ev) if ev.status == "retryable" then add(r.failed, ev) end end,]=],
    to = [=[    on_failure = function(ev) add(r.failed, ev) end,]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-drain-takes-infinite-now", step = "own", file = "lua/lease/testing.lua",
    fn = "drain",
    from = [=[  if opts.now ~= nil and not finite(opts.now) then argerror("drain", 3, "now must be a finite number") end]=],
    to = [=[  if false then argerror("drain", 3, "now must be a finite number") end]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-enqueued-ignores-status", step = "own", file = "lua/lease/testing.lua",
    fn = "matches",
    from = [=[      and (filter.status == nil or st.status == filter.status)]=],
    to = [=[      and true]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-enqueued-ignores-key", step = "own", file = "lua/lease/testing.lua",
    fn = "matches",
    from = [=[      and (filter.key == nil or st.key == filter.key)]=],
    to = [=[      and true]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "testing-handle-check-skipped", step = "own", file = "lua/lease/testing.lua",
    fn = "check_handle",
    from = [=[  if type(db) ~= "userdata" or not ok or type(m) ~= "function" then]=],
    to = [=[  if not ok then]=],
    hint = "specs/56-testing_spec.lua",
  },
  {
    name = "pg-schedules-readonly-no-temporary", step = "own", file = "src/pg/lpg.c",
    fn = "open_schema", backend = "pg",
    from = [=[    return c->version >= LPG_SCHEDULES_READABLE ? LEASE_OK : lpg_s_temp(db);]=],
    to = [=[    return c->version >= LPG_SCHEDULES_READABLE - 1 ? LEASE_OK : lpg_s_temp(db);]=],
    hint = "specs/41-schedule_spec.lua",
  },
  -- waiting for jobs (lease_wait: src/core/lease_queue.c, src/sqlite/lsq_wake.c,
  -- src/pg/lpg_wake.c) -------------------------------------------------
  {
    name = "wake-enqueue-no-signal", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_enqueue",
    from = [=[  if (rc == LEASE_OK && n == 1) lease__wake(db, j.queue, j.queue_len);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-wait-ignores-due-time", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_wait",
    from = [=[    if (delay < left) left = delay;]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-release-no-signal", step = "own", file = "src/core/lease.c",
    fn = "lease_release",
    from = [=[  if (why == LEASE_GRANTED) lease__wake(db, NULL, 0);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- judged on PostgreSQL, where the signal (NOTIFY) is the only wake-up: on
    -- SQLite under Linux the fail's write to the -wal wakes the waiter too
    -- (on SQLite, whose waiter in its own process without a watch of the
    -- files wakes by the signal alone; on PostgreSQL the trigger
    -- lease_jobs_sooner wakes it too, at the fail's until = 0)
    name = "wake-fail-no-signal", step = "own", file = "src/core/lease_queue.c",
    fn = "lease_fail",
    from = [=[  if (st == LEASE_STATUS_RETRYABLE) lease__wake(db, NULL, 0);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-sqlite-no-broadcast", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "lsq_wake",
    from = [=[  w->signals++;
  w->every_ms = 0;   /* the database is busy: look often again */
  pthread_cond_broadcast(&w->cv);
  ring(w);
  pthread_mutex_unlock(&w->mu);]=],
    to = [=[  ring(w);
  pthread_mutex_unlock(&w->mu);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-sqlite-other-process-unseen", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "lsq_wait_signal",
    from = [=[      if (watcher_sleep(w, now + every < end ? now + every : end)) watch_files(db, w, 1);]=],
    to = [=[      watcher_sleep(w, now + every < end ? now + every : end);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wake-no-notify", step = "own", file = "src/pg/lpg_wake.c", backend = "pg",
    fn = "lpg_wake",
    from = [=[  if ((res = lpg_stmt_run(db, LPG_ST_WAKE, &p)) != NULL) {]=],
    to = [=[  if ((res = lpg_stmt_run(db, LPG_ST_NOW, NULL)) != NULL) {]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wake-other-queue-wakes-not", step = "own", file = "src/pg/lpg_wake.c", backend = "pg",
    fn = "woken_by",
    from = [=[        (n->extra[0] == '\0' || strcmp(n->extra, want) == 0))]=],
    to = [=[        (n->extra[0] == '\0' || want[0] == '\1'))]=],
    hint = "specs/57-wake_spec.lua",
  },
  -- waiting on a queue at its limit: no job due until the limit leaves room,
  -- and the claiming handle's end of a lease wakes the queue's waiters.  The
  -- wake-ups are judged on PostgreSQL, where the signal (NOTIFY) is the only
  -- one: on SQLite under Linux the end's write to the -wal wakes the waiter
  -- too, so a mutant of the signal (or of db->claim_limited on SQLite)
  -- changes nothing there
  -- On SQLite the inotify watch is open only while a waiter is the watcher
  {
    name = "wake-watch-kept-after-wait", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "lsq_wait_signal",
    from = [=[    notify_unwatch(w);
]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-watch-closed-per-wait", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "notify_unwatch",
    from = [=[    if (w->notify_wd[i] >= 0) inotify_rm_watch(w->notify_fd, w->notify_wd[i]);]=],
    to = [=[    if (w->notify_wd[i] >= 0 && w->notify_fd >= 0) {
      close(w->notify_fd);
      w->notify_fd = -1;
    }]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-first-look-settles", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "watch_files",
    from = "  if (!timed && s == w->stamp) return s;\n",
    to = "  (void)timed;\n",
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-wal-unwatched", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "notify_watch",
    from = [=[  for (i = 0; i < 2; i++) w->notify_wd[i] = inotify_add_watch(w->notify_fd, w->files[i], IN_MODIFY);]=],
    to = [=[  for (i = 0; i < 1; i++) w->notify_wd[i] = inotify_add_watch(w->notify_fd, w->files[i], IN_MODIFY);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-watch-needs-both-files", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "notify_watched",
    from = [=[  return w->notify_wd[0] >= 0 || w->notify_wd[1] >= 0;]=],
    to = [=[  return w->notify_wd[0] >= 0 && w->notify_wd[1] >= 0;]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-watch-never-opened", step = "own", file = "src/sqlite/lsq_wake.c",
    fn = "lsq_wait_signal",
    from = [=[      if (notify_watch(w) && files_stamp(db) != w->stamp) {]=],
    to = [=[      if (w->files[0] == NULL && notify_watch(w) && files_stamp(db) != w->stamp) {]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wait-limit-concurrency-ignored", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_LIMIT_DUE",
    from = [=[" SELECT (SELECT CASE WHEN ?3 > 0 AND count(*) >= ?3 THEN min(j.until) - ?2 END"]=],
    to = [=[" SELECT (SELECT CASE WHEN ?3 < 0 AND count(*) >= ?3 THEN min(j.until) - ?2 END"]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wait-limit-rate-ignored", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_LIMIT_DUE",
    from = [=[" (SELECT CASE WHEN ?4 > 0 AND count(*) >= ?4"]=],
    to = [=[" (SELECT CASE WHEN ?4 > 0 AND count(*) > ?4"]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wait-limits-not-read", step = "own", file = "src/sqlite/lsq_wake.c", fn = "lsq_due",
    from = [=[  if (*delay < INFINITY) return limits_due(db, st, queue, queue_len, now, delay);]=],
    to = [=[  if (*delay < -INFINITY) return limits_due(db, st, queue, queue_len, now, delay);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wait-limit-concurrency-ignored", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIMIT_DUE", backend = "pg",
    from = [=[" SELECT CASE WHEN $3 > 0 AND (" LPG_Q_SQL_LIVE ") >= $3"]=],
    to = [=[" SELECT CASE WHEN $3 > 0 AND (" LPG_Q_SQL_LIVE ") > $3"]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wait-limit-rate-ignored", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIMIT_DUE", backend = "pg",
    from = [=[" (SELECT CASE WHEN $4 > 0 AND count(*) >= $4"]=],
    to = [=[" (SELECT CASE WHEN $4 > 0 AND count(*) > $4"]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wait-limits-not-read", step = "own", file = "src/pg/lpg_wake.c", fn = "lpg_due",
    backend = "pg",
    from = [=[  if (*delay < INFINITY) return limits_due(db, res, queue, queue_len, now, delay);]=],
    to = [=[  if (*delay < -INFINITY) return limits_due(db, res, queue, queue_len, now, delay);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-complete-no-signal", step = "own", backend = "pg", file = "src/core/lease.c",
    fn = "lease_complete",
    from = [=[  if (why == LEASE_GRANTED) lease__wake_limited(db);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-complete-many-no-signal", step = "own", backend = "pg", file = "src/core/lease.c",
    fn = "lease_complete_many",
    from = [=[  if (kept > 0) lease__wake_limited(db);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-ccn-no-signal", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease_complete_claim_next",
    from = [=[    if (!(*count > 0 && only_limited(db, wn.queue, wn.queue_len))) lease__wake_limited(db);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-ccmn-no-signal", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease_complete_many_claim_next",
    from = [=[    if (kept > 0 && !(*count >= kept && only_limited(db, wn.queue, wn.queue_len)))]=],
    to = [=[    if (kept > 1 && !(*count >= kept && only_limited(db, wn.queue, wn.queue_len)))]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-queue-not-kept", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease__claimed_from",
    from = [=[  if (db->claim_limited && queue_len <= sizeof db->limited_queue) {]=],
    to = [=[  if (0 && db->claim_limited && queue_len <= sizeof db->limited_queue) {]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-queue-forgotten", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease__claimed_from",
    from = [=[  } else if (same && !db->limited_several) {]=],
    to = [=[  } else if (db->limited_queue_len > 0) {]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- the fused calls wake unless their claim refilled the slot in the queue
    name = "wake-limited-ccn-other-queue", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease_complete_claim_next",
    from = [=[    if (!(*count > 0 && only_limited(db, wn.queue, wn.queue_len))) lease__wake_limited(db);]=],
    to = [=[    if (*count == 0) lease__wake_limited(db);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-ccmn-other-queue", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease_complete_many_claim_next",
    from = [=[    if (kept > 0 && !(*count >= kept && only_limited(db, wn.queue, wn.queue_len)))]=],
    to = [=[    if (kept > *count)]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-several-unmarked", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease__claimed_from",
    from = [=[    if (db->limited_queue_len > 0 && !same) db->limited_several = 1;]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-several-last-only", step = "own", backend = "pg", file = "src/core/lease_queue.c",
    fn = "lease__wake_limited",
    from = [=[  if (db->limited_several) lease__wake(db, NULL, 0);]=],
    to = [=[  if (0) lease__wake(db, NULL, 0);]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-limited-with-lease-no-signal", step = "own", backend = "pg", file = "src/core/lease_tx.c",
    fn = "lease_with_lease",
    from = [=[  if (rc == LEASE_OK && r == LEASE_GRANTED && tx.completed) lease__wake_limited(db);]=],
    to = [=[]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pg-wake-limited-unflagged", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "claim_under",
    from = [=[  db->claim_limited = q->concurrency > 0 || q->rate > 0;]=],
    to = [=[  db->claim_limited = q->rate > 0;]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "pool-limited-sleeps-poll", step = "own", file = "lua/lease/pool.lua",
    fn = "step",
    from = [=[  if held == "limited" then return wait_poll(w) end]=],
    to = [=[  if held == "limited" then return not stop_asked(w, cfg.poll) end]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- the job page shows at most web.MAX_SHOWN bytes of a payload or result
    name = "web-job-page-whole-value", step = "own", file = "lua/lease/web.lua",
    fn = "shown",
    from = [=[  local out = '<pre class="' .. class .. '">' .. h(ctx, bytes:sub(1, web.MAX_SHOWN)) .. "</pre>"]=],
    to = [=[  local out = '<pre class="' .. class .. '">' .. h(ctx, bytes) .. "</pre>"]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    -- a forever pool wakes for its schedules' next tick and ticks then
    name = "pool-tick-wait-uncapped", step = "own", file = "lua/lease/pool.lua",
    fn = "wait_poll",
    from = [=[    if due < limit then limit = due > 0 and due or 0 end]=],
    to = [=[    if due < limit and false then limit = due > 0 and due or 0 end]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    name = "pool-tick-once-per-poll", step = "own", file = "lua/lease/pool.lua",
    fn = "tick",
    from = [=[  if w.ticked and t - w.ticked < w.cfg.poll and not (w.tick_at and t >= w.tick_at) then return end]=],
    to = [=[  if w.ticked and t - w.ticked < w.cfg.poll then return end]=],
    hint = "specs/41-schedule_spec.lua",
  },
  {
    -- a payload the decoder cannot follow must fail its job, not the worker
    name = "pool-decode-unprotected", step = "own", file = "lua/lease/pool.lua",
    fn = "call_handler",
    from = [=[    local ok, data, err = pcall(require("lease.json").decode, job.payload)]=],
    to = [=[    local ok, data, err = true, require("lease.json").decode(job.payload)]=],
    hint = "specs/29-pool_service_spec.lua",
  },
  -- Unique keys (specs/43-unique_key_spec.lua) ---------------------------
  {
    name = "unique-key-ignored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "enqueue_body",
    from = [=[    if (j->key && held) {]=],
    to = [=[    if (0 && held) {]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-not-freed-after-complete", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_KEY_HOLDER",
    from = [=[  LEASE__Q_UNFINISHED_SQL("state")                                        \
  " AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?3) LIMIT 1"]=],
    to = [=[  "state IN (0, 2, 3)"                                                    \
  " AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?3) LIMIT 1"]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-retry-takes-held-key", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if (x->reason == LEASE_GRANTED && (rc = retry_holder(db, x)) != LEASE_OK) return rc;]=],
    to = [=[  if (x->reason == LEASE_GRANTED && (rc = retry_holder(db, x)) != LEASE_OK) return rc;
  if (x->reason == LEASE_DUPLICATE) x->reason = LEASE_GRANTED;]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-bad-length-taken", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "read_job_fields",
    from = [=[        if (job->key_len > LEASE_KEY_MAX)]=],
    to = [=[        if (job->key_len > LEASE_KEY_MAX + 1)]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-holder-not-named", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "lb_push_outcome",
    from = [=[  if (a->reason != LEASE_DUPLICATE || !a->dup) return n;]=],
    to = [=[  if (a->reason != LEASE_DUPLICATE || a->dup) return n;]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-ignored", step = "own", backend = "pg", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_ENQUEUE",
    from = [=[  "WITH h AS (SELECT id FROM lease_queue WHERE $8::bytea IS NOT NULL AND queue = $3" \]=],
    to = [=[  "WITH h AS (SELECT id FROM lease_queue WHERE false AND queue = $3"              \]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-index-not-unique", step = "own", backend = "pg", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_UNIQUE",
    from = [=[  " CREATE UNIQUE INDEX lease_queue_key ON lease_queue(queue, key)"               \]=],
    to = [=[  " CREATE INDEX lease_queue_key ON lease_queue(queue, key)"                      \]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-conflict-not-run-again", step = "own", backend = "pg", file = "src/pg/lpg_queue.c",
    fn = "lpg_key_conflict",
    from = [=[  return rc == LEASE_CONSTRAINT && strcmp(LPG(db)->constraint, "lease_queue_key") == 0;]=],
    to = [=[  return rc == LEASE_CONSTRAINT && strcmp(LPG(db)->constraint, "lease_queue_key") == 1;]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-retry-takes-held-key", step = "own", backend = "pg", file = "src/pg/lpg_queue.c",
    fn = "admin_once",
    from = [=[  if (which == LPG_ST_Q_RETRY && r == LEASE_GRANTED && !PQgetisnull(res, 0, 4)) {]=],
    to = [=[  if (which == LPG_ST_Q_RETRY && r == LEASE_GRANTED && PQgetisnull(res, 0, 4) && 0) {]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-readonly-older-no-view", step = "own", file = "src/sqlite/lsq_open.c",
    fn = "create_missing",
    from = [=[    return c->version >= LSQ_KEY_READABLE ? LEASE_OK : lsq_q_key_view(db);]=],
    to = [=[    return c->version >= LSQ_QUEUE_READABLE ? LEASE_OK : lsq_q_key_view(db);]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-readonly-older-no-view", step = "own", backend = "pg", file = "src/pg/lpg.c",
    fn = "open_schema",
    from = [=[    if (c->version < LPG_KEY_READABLE &&]=],
    to = [=[    if (c->version < LPG_QUEUE_READABLE &&]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-layout-classified-older", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_CLASSIFY",
    from = [=[  " WHERE name = 'key') THEN 11"                                         \]=],
    to = [=[  " WHERE name = 'key') THEN 10"                                         \]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-unique-key-layout-classified-older", step = "own", backend = "pg", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_CLASSIFY",
    from = [=[  " to_regclass('lease_queue') AND attname = 'key' AND NOT attisdropped) THEN 11"  \]=],
    to = [=[  " to_regclass('lease_queue') AND attname = 'key' AND NOT attisdropped) THEN 10"  \]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "unique-key-empty-taken-in-c", step = "own", file = "src/core/lease_queue.c",
    fn = "check_new_job",
    from = [=[    if (out->key_len == 0 || out->key_len > LEASE_KEY_MAX)]=],
    to = [=[    if (out->key_len > LEASE_KEY_MAX)]=],
    hint = "specs/43-unique_key_spec.lua",
    c_hint = "test_queue",
  },
  {
    name = "cli-enqueue-empty-key-taken", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_enqueue",
    from = [=[  if flags["--key"] == "" then usage("--key needs a non-empty key") end]=],
    to = [=[  if false and flags["--key"] == "" then usage("--key needs a non-empty key") end]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  -- The events ledger (src/core/lease_events.c, lsq_events.c, lpg_events.c) ---
  {
    name = "events-refused-write-not-recorded", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_guarded_step",
    from = [=[  return lease__event_write(db, write_event[w->op], w, fence && changed ? *fence : 0, *reason);]=],
    to = [=[  if (!changed) return LEASE_OK;
  return lease__event_write(db, write_event[w->op], w, fence && changed ? *fence : 0, *reason);]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-insert-failure-ignored", step = "own", file = "src/core/lease_events.c",
    fn = "lease__event_add",
    from = [=[  if ((rc = db->be->event(db, e, &seq)) != LEASE_OK) return rc;]=],
    to = [=[  if ((rc = db->be->event(db, e, &seq)) != LEASE_OK) return LEASE_OK;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-retention-never-prunes", step = "own", file = "src/core/lease_events.c",
    fn = "lease__event_add",
    from = [=[  if (seq % step != 0) return LEASE_OK;]=],
    to = [=[  if (seq % step != 0 || step > 0) return LEASE_OK;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-on-by-default", step = "own", file = "src/core/lease.c",
    fn = "lease_options_default",
    from = [=[  opt->events_keep = 0;]=],
    to = [=[  opt->events_keep = LEASE_EVENTS_KEEP;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-false-still-records", step = "own", file = "src/lua/lease_lua.c",
    fn = "check_events_option",
    from = [=[    opt->events_keep = lua_toboolean(L, t) ? LEASE_EVENTS_KEEP : 0;]=],
    to = [=[    opt->events_keep = LEASE_EVENTS_KEEP;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-claim-next-bulk-not-recorded", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "claim_next_body",
    from = [=[        if ((rc = lease__event_write(db, LEASE_EV_CLAIM, &one, c->fence, LEASE_GRANTED)))
          return rc;]=],
    to = [=[        (void)one;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-events-write-outside-transaction", step = "own", file = "src/pg/lpg_events.c",
    fn = "lpg_ev_begin", backend = "pg",
    from = [=[  if (!lease__events_on(db) || PQtransactionStatus(LPG(db)->pg) != PQTRANS_IDLE) return LEASE_OK;]=],
    to = [=[  return LEASE_OK;]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-events-prune-keeps-one-more", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_EVENT_PRUNE", backend = "pg",
    from = [=["DELETE FROM lease_events WHERE seq <= greatest($1, coalesce((SELECT seq FROM"]=],
    to = [=["DELETE FROM lease_events WHERE seq < greatest($1, coalesce((SELECT seq FROM"]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-events-refused-complete-not-recorded", step = "own", file = "src/pg/lpg.c",
    fn = "lpg_write_read", backend = "pg",
    from = [=[  return lease__event_write(db, write_event[w->op], w, got, *reason);]=],
    to = [=[  return *reason ? LEASE_OK : lease__event_write(db, write_event[w->op], w, got, *reason);]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "events-since-negative-accepted", step = "own", file = "src/core/lease_events.c",
    fn = "lease_events",
    from = [=[  if (g.since < 0) return lease__fail(db, LEASE_MISUSE, "since must be >= 0");]=],
    to = [=[  if (g.since < -1) return lease__fail(db, LEASE_MISUSE, "since must be >= 0");]=],
    c_hint = "test_queue",
  },
  {
    name = "events-max-zero-accepted", step = "own", file = "src/core/lease_events.c",
    fn = "lease_events",
    from = [=[  if (max < 1) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");]=],
    to = [=[  if (max < 0) return lease__fail(db, LEASE_MISUSE, "max must be at least 1");]=],
    c_hint = "test_queue",
  },
  {
    name = "events-keep-negative-accepted", step = "own", file = "src/core/lease.c",
    fn = "check_options",
    from = [=[  if (opt->events_keep < 0)]=],
    to = [=[  if (opt->events_keep < -1)]=],
    c_hint = "test_queue",
  },
  -- Job timeouts (lease_new_job.timeout, the pool's hook) ----------------
  {
    name = "pool-timeout-never-fires", step = "own", file = "lua/lease/pool.lua",
    fn = "run_limited",
    from = "  debug.sethook(check, \"\", TIMEOUT_CHECK_EVERY)\n",
    to = "",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-timeout-not-an-attempt", step = "own", file = "lua/lease/pool.lua",
    fn = "handle_one",
    from = "  if not ok then return handler_failed(w, job, result, timed_out) end\n",
    to = "  if not ok then\n    if timed_out then return give_back(w, job) end\n"
      .. "    return handler_failed(w, job, result, timed_out)\n  end\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-overdue-not-an-attempt", step = "own", file = "lua/lease/pool.lua",
    fn = "fail_overdue",
    from = "    string.format(TIMEOUT_MESSAGE, r.limit))\n  if not status then\n",
    to = "    string.format(TIMEOUT_MESSAGE, r.limit), { attempt = false })\n  if not status then\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-timeout-hook-outlives-job", step = "own", file = "lua/lease/pool.lua",
    fn = "run_limited",
    from = "  else debug.sethook() end\n",
    to = "  end\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-timeout-lease-not-outlasting", step = "own", file = "lua/lease/pool.lua",
    fn = "outlast",
    from = "  if job.claimed_at + ttl - w.now() >= failed_by + ttl / 2 then return true end\n",
    to = "  if true then return true end\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    -- the pool's own failure of a handler blocked in C comes at the
    -- timeout plus shutdown_grace: a lease for the timeout alone lapses first
    name = "pool-timeout-lease-short-of-grace", step = "own", file = "lua/lease/pool.lua",
    fn = "outlast",
    from = "  if w.events then failed_by = limit + w.cfg.shutdown_grace end\n",
    to = "",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-timeout-lease-kept-short-of-grace", step = "own", file = "lua/lease/pool.lua",
    fn = "outlast",
    from = "  if job.claimed_at + ttl - w.now() >= failed_by + ttl / 2 then return true end\n",
    to = "  if job.claimed_at + ttl - w.now() >= limit + ttl / 2 then return true end\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pool-timeout-lease-renewed-short-of-grace", step = "own", file = "lua/lease/pool.lua",
    fn = "outlast",
    from = "w.db:server_now(), failed_by + ttl)\n",
    to = "w.db:server_now(), limit + ttl)\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    -- a worker without a pool around it (lease.testing's drain) has no
    -- events channel to report its job under a timeout on
    name = "pool-timeout-running-sent-without-pool", step = "own", file = "lua/lease/pool.lua",
    fn = "call_handler",
    from = "    if events then events:send({ \"running\", w.index, job.id, job.fence, w.monotonic() + limit, limit }) end\n",
    to = "    events:send({ \"running\", w.index, job.id, job.fence, w.monotonic() + limit, limit })\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "timeout-infinite-accepted", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "check_timeout",
    from = [=[  if (!(isfinite(t) && t > 0)) lb_fail(L, idx, a, "a finite number of seconds > 0");]=],
    to = [=[  if (!(t > 0)) lb_fail(L, idx, a, "a finite number of seconds > 0");]=],
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "core-timeout-negative-accepted", step = "own", file = "src/core/lease_queue.c",
    fn = "check_new_job",
    from = [=[  if (out->timeout != 0 && !(isfinite(out->timeout) && out->timeout > 0))]=],
    to = [=[  if (out->timeout != 0 && !isfinite(out->timeout))]=],
    c_hint = "test_queue",
  },
  {
    name = "timeout-only-job-not-stored", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "has_data",
    from = "j->max_attempts != LEASE_MAX_ATTEMPTS_DEFAULT ||\n         j->timeout != 0;\n",
    to = "j->max_attempts != LEASE_MAX_ATTEMPTS_DEFAULT;\n",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "timeout-read-on-older-layout", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "read_timeout",
    from = "  if (!LEASE_SCHEMA_HAS(LSQ(db)->version, TIMEOUT)) return LEASE_OK;\n",
    to = "",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "timeout-layout-classified-6", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_CLASSIFY",
    from = [=[  " WHERE name = 'timeout') THEN 9"]=],
    to = [=[  " WHERE name = 'timeout') THEN 6"]=],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    name = "pg-timeout-not-stored", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "enqueue_jobs",
    from = [=[    p_time(&p, j->timeout != 0 ? j->timeout : NAN);]=],
    to = [=[    p_time(&p, NAN);]=],
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pg-timeout-not-handed-out", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "claim_rounds",
    from = [=[      j->timeout = PQgetisnull(res, i, 10) ? 0 : r_f8(res, i, 10);]=],
    to = [=[      j->timeout = 0;]=],
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pg-timeout-read-on-older-layout", step = "own", file = "src/pg/lpg_queue.c", backend = "pg",
    fn = "read_timeout",
    from = "  if (!LEASE_SCHEMA_HAS(LPG(db)->version, TIMEOUT)) return LEASE_OK;\n",
    to = "",
    hint = "specs/45-timeout_spec.lua",
  },
  {
    name = "pg-timeout-layout-classified-6", step = "own", file = "src/pg/lpg_schema_sql.h",
    backend = "pg", fn = "LPG_SQL_CLASSIFY",
    from = [=[  " to_regclass('lease_queue') AND attname = 'timeout' AND NOT attisdropped) THEN 9" \]=],
    to = [=[  " to_regclass('lease_queue') AND attname = 'timeout' AND NOT attisdropped) THEN 6" \]=],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- the session leaves jit at the server's setting: a batch estimated
    -- dear is compiled at each call
    name = "pg-session-jit-on", step = "own", file = "src/pg/lpg.c",
    fn = "set_session", backend = "pg",
    from = [=[           " SET jit = off; SET enable_seqscan = off; SET lease.events = %s",]=],
    to = [=[           " SET enable_seqscan = off; SET lease.events = %s",]=],
    hint = "specs/35-postgres_spec.lua",
  },
  -- Plans that stay keyed as the tables grow (spec 35, "plans as the
  -- tables grow": plans made on tiny tables, then each call's reads counted)
  {
    -- the session prices whole-table scans as the statistics say: a plan
    -- made on tiny tables scans them
    name = "pg-session-seqscan-on", step = "own", file = "src/pg/lpg.c",
    fn = "set_session", backend = "pg",
    from = [=[           " SET jit = off; SET enable_seqscan = off; SET lease.events = %s",]=],
    to = [=[           " SET jit = off; SET lease.events = %s",]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the list and the tally run with sequential scans priced out: a read
    -- of every row goes through whole indexes
    name = "pg-scan-read-priced-out", step = "own", file = "src/pg/lpg_queue.c",
    fn = "scan_read", backend = "pg",
    from = [=[  if (lpg_exec(db, "SET enable_seqscan = on") != LEASE_OK) return NULL;]=],
    to = [=[  if (lpg_exec(db, "SET enable_seqscan = off") != LEASE_OK) return NULL;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- after a list or a tally the session's statements go on with
    -- sequential scans priced as usual
    name = "pg-scan-read-left-on", step = "own", file = "src/pg/lpg_queue.c",
    fn = "scan_read", backend = "pg",
    from = [=[  PQclear(PQexec(LPG(db)->pg, "SET enable_seqscan = off"));]=],
    to = [=[  PQclear(PQexec(LPG(db)->pg, "SELECT 1"));]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a concurrency limit's count without its index joins jobs to the
    -- queue's open jobs
    name = "pg-live-joined", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE_AMONG", backend = "pg",
    from = [=[  "(SELECT count(*) FROM lease_queue q CROSS JOIN LATERAL (SELECT done, until"      \
  " FROM jobs WHERE jobs.id = q.id LIMIT 1) j"                                      \]=],
    to = [=[  "(SELECT count(*) FROM lease_queue q JOIN jobs j ON j.id = q.id"           \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a job cancelled while held frees its slot at the cancel, counted
    -- through lease_jobs_live
    name = "pg-live-open-only", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE", backend = "pg",
    from = [=[  " FROM lease_queue q WHERE q.id = j.id LIMIT 1) q"                                \]=],
    to = [=[  " FROM lease_queue q WHERE q.id = j.id AND q.state = 0 LIMIT 1) q"              \]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- the same, counted without lease_jobs_live: the queue's open jobs alone
    name = "pg-live-fallback-open-only", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE", backend = "pg",
    from = [=[  " + " LPG_Q_SQL_LIVE_AMONG(">= " LEASE__Q_DISCARDED_S) " END"]=],
    to = [=[  " END"]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- a concurrency limit's count reads the queue's backlog with the index
    -- of live leases there to read
    name = "pg-live-from-the-queue", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE", backend = "pg",
    from = [=[  "SELECT CASE WHEN coalesce(" LPG_Q_SQL_LIVE_VALID ", false)"                      \]=],
    to = [=[  "SELECT CASE WHEN false AND coalesce(" LPG_Q_SQL_LIVE_VALID ", false)"            \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the index of live leases looked up through search_path: another
    -- schema's stands for this jobs table's
    name = "pg-live-index-by-search-path", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE_VALID", backend = "pg",
    edits = {
      { from = [=[  "(SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"    \]=],
        to = [=[  "(SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass('lease_jobs_live'))"    \]=] },
      { from = [=[  " WHERE i.indrelid = 'jobs'::regclass AND c.relname = 'lease_jobs_live')"]=],
        to = [=[  ""]=] },
    },
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the index of live leases and the count's test of done written
    -- done = 0: the index of jobs not done can stand in for it, reading
    -- every job not done
    name = "pg-live-index-keyed-done", step = "own", file = "src/pg/lpg_queue_sql.h",
    backend = "pg",
    edits = {
      { fn = "LPG_Q_SQL_LIVE",
        from = [=[  " WHERE " LPG_SQL_UNKEYED("j.done") " = 0 AND j.until > 0 AND j.until > $2"     \]=],
        to = [=[  " WHERE j.done = 0 AND j.until > $2"     \]=] },
      { fn = "LPG_Q_SQL_LIVE_INDEX",
        from = [=[  " WHERE " LPG_SQL_UNKEYED("done") " = 0 AND until > 0"]=],
        to = [=[  " WHERE done = 0"]=] },
    },
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- no index of live leases is made for a concurrency limit
    name = "pg-live-index-never-made", step = "own", file = "src/pg/lpg_queue.c",
    fn = "live_index", backend = "pg",
    from = [=[    if (rc == LEASE_OK && strcmp(want, "drop") != 0) rc = lpg_exec(db, LPG_Q_SQL_LIVE_INDEX);]=],
    to = [=[    if (rc == LEASE_OK && strcmp(want, "drop") != 0) rc = LEASE_OK;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the index of live leases stays when the last concurrency limit goes
    name = "pg-live-index-kept", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE_WANT", backend = "pg",
    from = [=[  " WHEN valid IS NOT NULL THEN 'drop' ELSE '' END,"                                 \]=],
    to = [=[  " WHEN valid IS NOT NULL THEN '' ELSE '' END,"                                 \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- an index of live leases left invalid by a failed build stays so
    name = "pg-live-index-invalid-kept", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_LIVE_WANT", backend = "pg",
    from = [=[WHEN NOT valid THEN 'remake' ELSE '' END"]=],
    to = [=[WHEN NOT valid THEN '' ELSE '' END"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a failure to build the index of live leases fails the limit whose
    -- settings have committed (a role that may not index jobs, a build
    -- that waits too long)
    name = "pg-live-index-failure-raised", step = "own", file = "src/pg/lpg_queue.c",
    fn = "live_index", backend = "pg",
    from = [=[  if (rc != LEASE_OK) lease__clear_error(db);
  return LEASE_OK;]=],
    to = [=[  return rc;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the index is built or dropped whoever else is at it
    name = "pg-live-index-lock-ignored", step = "own", file = "src/pg/lpg_queue.c",
    fn = "live_index", backend = "pg",
    from = [=[             PQgetvalue(res, 0, 0)[0] == 't';]=],
    to = [=[             PQgetvalue(res, 0, 0)[0] != 'x';]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- one look at what must change, neither after each step nor after
    -- letting go: settings another session committed during the build
    -- are left to nobody
    name = "pg-live-index-one-look", step = "own", file = "src/pg/lpg_queue.c",
    fn = "live_index", backend = "pg",
    edits = {
      { from = [=[  for (round = 0; round < 8 && rc == LEASE_OK; round++) {]=],
        to = [=[  for (round = 0; round < 1 && rc == LEASE_OK; round++) {]=] },
      { from = [=[    for (step = 0; rc == LEASE_OK && step < 4; step++) {]=],
        to = [=[    for (step = 0; rc == LEASE_OK && step < 1; step++) {]=] },
    },
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a pause makes or drops the index of live leases too (a pause never
    -- changes what it must be)
    name = "pg-live-index-on-pause", step = "own", file = "src/pg/lpg_queue.c",
    fn = "lpg_q_set_queue", backend = "pg",
    from = [=[  if (rc == LEASE_OK && what != 0) rc = live_index(db);]=],
    to = [=[  if (rc == LEASE_OK) rc = live_index(db);]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- claim_next's look at a candidate's jobs row may go through the index
    -- of pending jobs, every entry of it at each candidate
    name = "pg-claim-next-pending-index", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_", backend = "pg",
    from = [=[  " WHERE jobs.id = q.id AND " LPG_SQL_UNKEYED("done") " = 0 AND until <= $2"      \]=],
    to = [=[  " WHERE jobs.id = q.id AND done = 0 AND until <= $2"      \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- claim_next's claims found by a join with the candidates, not by the
    -- array of their ids
    name = "pg-claim-next-update-joined", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_", backend = "pg",
    from = [=[  " WHERE jobs.id = ANY(ARRAY(SELECT id FROM x WHERE NOT last))"                   \]=],
    to = [=[  " WHERE jobs.id IN (SELECT id FROM x WHERE NOT last)"                   \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- claim_next takes a candidate neither claimed nor discarded (another
    -- client's trigger skipped its write) for a discard, and looks again
    name = "pg-claim-next-skip-unchecked", step = "own", file = "src/pg/lpg_queue.c",
    fn = "claim_rounds", backend = "pg",
    from = [=[      if ((PQgetisnull(res, i, 1) && !r_bool(res, i, 12)) || r_bool(res, i, 13)) {]=],
    to = [=[      if (r_bool(res, i, 13)) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- claim_next's statement says a discard stored whenever one was due
    name = "pg-claim-next-discard-assumed", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_", backend = "pg",
    from = [=[  " x.lapsed, x.owner, x.fence, x.timeout, x.last, d.id IS NOT NULL,"               \]=],
    to = [=[  " x.lapsed, x.owner, x.fence, x.timeout, x.last, x.last,"               \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- complete_claim_next's one round trip commits a round whose claim of
    -- a candidate did not store
    name = "pg-ccn-keeping-skip-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_KEEPING_", backend = "pg",
    from = [=[  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN x.last OR u.id IS NULL" \]=],
    to = [=[  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN x.last" \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a claim whose discard another client's trigger skipped is reported
    -- as a guarded claim refused without a reason
    name = "pg-claim-discard-skip-unchecked", step = "own", file = "src/pg/lpg.c",
    fn = "lpg_write_read", backend = "pg",
    from = [=[  if (w->op == LEASE__CLAIM && PQntuples(res) == 1 && r_bool(res, 0, 10) && !r_bool(res, 0, 13)) {]=],
    to = [=[  if (0) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- a claim records the lapsed lease's error though neither its claim
    -- nor its discard stored (out of a transaction, it stays)
    name = "pg-claim-error-without-write", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_CLAIM", backend = "pg",
    from = [=[  " FROM j, q, x WHERE x.lapsed AND (EXISTS (SELECT 1 FROM d) OR EXISTS (SELECT 1 FROM u))" \]=],
    to = [=[  " FROM j, q, x WHERE x.lapsed" \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- claim_next's discards found by a join with the candidates, not by
    -- the array of their ids
    name = "pg-claim-next-discard-joined", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_", backend = "pg",
    from = [=[  " WHERE lease_queue.id = ANY(ARRAY(SELECT id FROM x WHERE last))"                \]=],
    to = [=[  " WHERE lease_queue.id IN (SELECT id FROM x WHERE last)"                \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- renew, complete and fail find the row to write by the join alone
    name = "pg-held-guard-joined", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_HELD_GUARD", backend = "pg",
    from = [=[  " WHERE jobs.id = $1 AND jobs.id = j.id AND j.done = 0 AND j.owner = $2"          \]=],
    to = [=[  " WHERE jobs.id = j.id AND j.done = 0 AND j.owner = $2"          \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- an enqueue after a parent looks for its row through the index of
    -- open jobs
    name = "pg-dep-wait-open-index", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_DEP_UNWAITED_", backend = "pg",
    from = [=[  "id = " id " AND " LPG_SQL_UNKEYED("state") " = " LEASE__Q_OPEN_S                \]=],
    to = [=[  "id = " id " AND state = " LEASE__Q_OPEN_S                \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a parent's end finds its waiting children through the index of
    -- ended jobs
    name = "pg-deps-follow-ended-index", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_DEP_WAITING_CHILD_OF", backend = "pg",
    from = [=[  " WHERE c.id = ANY(" LPG_DEP_CHILDREN_OF(row) ") AND " LPG_SQL_UNKEYED("c.state") \]=],
    to = [=[  " WHERE c.id = ANY(" LPG_DEP_CHILDREN_OF(row) ") AND c.state" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- retry looks for the holder of the job's key in a join
    name = "pg-retry-holder-joined", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_RETRY", backend = "pg",
    from = [=[  " AND o.id <> k.id AND " LEASE__Q_UNFINISHED_SQL("o.state") " LIMIT 1) o),"      \]=],
    to = [=[  " AND o.id <> k.id AND " LEASE__Q_UNFINISHED_SQL("o.state") ") o),"      \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  -- A completion's queue row on SQLite (schema step SQLITE_COMPLETE_ONCE)
  {
    -- the queue row completed without complete's guard on the job
    name = "sq-complete-row-unguarded", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_COMPLETE",
    from = [=[  " AND EXISTS (SELECT 1 FROM jobs WHERE " LSQ_SQL_COMPLETE_GUARD ")"]=],
    to = [=[  ""]=],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- the queue row of a job the queue ended (cancelled while held) made
    -- completed, after which complete's own guard sees it not ended
    name = "sq-complete-row-of-ended-job", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_COMPLETE",
    from = [=[  " WHERE id = ?1 AND NOT (state >= " LEASE__Q_DISCARDED_S ")"           \]=],
    to = [=[  " WHERE id = ?1"           \]=],
    hint = "specs/31-queue_fail_spec.lua",
  },
  {
    -- a tx:complete the callback catches leaves its queue row completed
    name = "sq-tx-complete-outside-savepoint", step = "own", file = "src/sqlite/lsq_tx.c",
    fn = "lsq_tx_write",
    from = [=[  if (w->op == LEASE__COMPLETE) return note_end(tx, lsq_savepoint(tx->db, tx_write_body, &x));
]=],
    to = [=[]=],
    hint = "specs/30-queue_data_spec.lua",
  },
  {
    -- a queue row completed while the job's own UPDATE stored nothing
    -- goes unnoticed and is committed
    name = "sq-complete-mismatch-ignored", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_guarded_step",
    from = [=[  if (queued && !changed)]=],
    to = [=[  if (0 && queued && !changed)]=],
    hint = "specs/30-queue_data_spec.lua",
  },
  -- Job dependencies (lease_new_job's after, schema step DEPS) ----------
  {
    -- the release run before the guard, so a refused (stale) complete
    -- opens the children too (the release counts its parent as completed:
    -- the guard alone decides)
    name = "deps-stale-parent-releases-children", step = "own", file = "src/sqlite/lsq_ops.c",
    fn = "lsq_guarded_step",
    from = [=[  if (changed && w->op == LEASE__COMPLETE && (src = lsq_q_release(db, w)) != LEASE_OK) return src;]=],
    to = [=[  if (w->op == LEASE__COMPLETE && (src = lsq_q_release(db, w)) != LEASE_OK) return src;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-released-by-one-of-two-parents", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_DEP_RELEASE",
    from = [=[LSQ_SQL_DEP_RELEASE_OF("?1", " AND d.parent <> ?1")]=],
    to = [=[LSQ_SQL_DEP_RELEASE_OF("?1", " AND 0")]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  -- A paused queue has no job due until its resume (db:wait, the pool)
  {
    name = "wait-paused-due", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_DUE",
    from = [=[  " AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = ?1 AND paused <> 0)"]=],
    to = [=[  ""]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- the engine's complete leaves its own completion to lease_jobs_changed
    name = "pg-complete-uncounted", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  " lease_completions = jobs.lease_completions + q.seen::int"                         \]=],
    to = [=[  " lease_completions = jobs.lease_completions"                         \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ...and keeps the trigger from a queue row its statement cannot see
    name = "pg-complete-counted-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  " lease_completions = jobs.lease_completions + q.seen::int"                         \]=],
    to = [=[  " lease_completions = jobs.lease_completions + 1"                         \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-complete-many-uncounted", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[jobs.lease_completions + g.seen::int FROM g"]=],
    to = [=[jobs.lease_completions FROM g"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-complete-many-counted-unseen", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[jobs.lease_completions + g.seen::int FROM g"]=],
    to = [=[jobs.lease_completions + 1 FROM g"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- an edge inserted leaves its parent unflagged: the parent's end calls
    -- no lease_deps_follow
    name = "pg-deps-added-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAITED_ON_ANY_CLIENT", backend = "pg",
    from = [=[  " AS $f$ BEGIN " LPG_SQL_FLAG_JOB("new.parent") ";"]=],
    to = [=[  " AS $f$ BEGIN PERFORM 1;"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a listed job pruned and enqueued again comes back unflagged
    name = "pg-jobs-added-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_FLAG_ADDED", backend = "pg",
    from = [=[  " AND NOT waited_on;"]=],
    to = [=[  " AND false;"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- the added jobs' parents found by a join: a plan kept from when
    -- lease_deps was tiny reads all of it at every enqueue
    name = "pg-flag-added-joined", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_FLAG_ADDED", backend = "pg",
    from = [=[  " FROM lease_added a WHERE (SELECT true FROM lease_deps d WHERE d.parent = a.id LIMIT 1)))" \]=],
    to = [=[  " FROM lease_added a WHERE a.id = ANY(ARRAY(SELECT d.parent FROM lease_deps d WHERE d.parent = ANY(ARRAY(SELECT b.id FROM lease_added b))))))" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a job renamed to an id lease_deps names stays unflagged
    name = "pg-queue-renamed-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAITED_ON_ANY_CLIENT", backend = "pg",
    from = [=[  " AS $f$ BEGIN " LPG_SQL_FLAG_JOB("new.id")]=],
    to = [=[  " AS $f$ BEGIN UPDATE lease_queue SET waited_on = true WHERE false"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- an edge moved to another parent leaves that one unflagged
    name = "pg-deps-added-insert-only", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAITED_ON_ANY_CLIENT", backend = "pg",
    from = [=[" CREATE TRIGGER lease_deps_added AFTER INSERT OR UPDATE OF parent ON lease_deps"]=],
    to = [=[" CREATE TRIGGER lease_deps_added AFTER INSERT ON lease_deps"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- step 22 leaves the jobs listed since step 21 without the flag
    name = "pg-waited-on-step-parents-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAITED_ON_ANY_CLIENT", backend = "pg",
    from = [=[  " " LPG_SQL_FLAG_PARENTS]=],
    to = [=[  " SELECT 1"]=],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- the steps leave the jobs already listed unflagged
    name = "pg-upgrade-parents-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_FLAG_PARENTS", backend = "pg",
    from = [=[  "UPDATE lease_queue SET waited_on = true WHERE id IN (SELECT parent FROM lease_deps)" \]=],
    to = [=[  "UPDATE lease_queue SET waited_on = false WHERE id IN (SELECT parent FROM lease_deps)" \]=],
    hint = "specs/39-schema_version_spec.lua",
  },
  {
    -- another program's INSERT INTO jobs wakes no waiter
    name = "pg-jobs-added-no-wake", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAKE_ANY_CLIENT", backend = "pg",
    from = [=[  LPG_JOBS_ADDED_FN("", "", LPG_SQL_WAKE_ADDED LPG_SQL_FLAG_ADDED) ";"              \]=],
    to = [=[  LPG_JOBS_ADDED_FN("", "", LPG_SQL_FLAG_ADDED) ";"              \]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- a queue row made open again wakes no waiter
    name = "pg-queue-reopened-never", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAKE_ANY_CLIENT", backend = "pg",
    from = [=[  " FOR EACH ROW WHEN (new.state = " LEASE__Q_OPEN_S " AND old.state <> " LEASE__Q_OPEN_S ")" \]=],
    to = [=[  " FOR EACH ROW WHEN (false AND new.state = " LEASE__Q_OPEN_S " AND old.state <> " LEASE__Q_OPEN_S ")" \]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- every change of a queue row's state wakes, the workers' completes included
    name = "pg-queue-reopened-any-state", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAKE_ANY_CLIENT", backend = "pg",
    from = [=[  " FOR EACH ROW WHEN (new.state = " LEASE__Q_OPEN_S " AND old.state <> " LEASE__Q_OPEN_S ")" \]=],
    to = [=[  " FOR EACH ROW WHEN (new.state <> old.state)" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- another program's INSERT INTO jobs wakes only when the trigger made no queue row
    name = "pg-jobs-added-wake-unfound", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_WAKE_ADDED", backend = "pg",
    from = [=[IF FOUND THEN PERFORM pg_notify(]=],
    to = [=[IF NOT FOUND THEN PERFORM pg_notify(]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- a write that moves a lease end earlier wakes no waiter
    name = "pg-jobs-sooner-never", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAKE_ANY_CLIENT", backend = "pg",
    from = [=[  " FOR EACH ROW WHEN (new.until < old.until)"]=],
    to = [=[  " FOR EACH ROW WHEN (false AND new.until < old.until)"]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- every write of until wakes, the workers' claims included
    name = "pg-jobs-sooner-any-move", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_WAKE_ANY_CLIENT", backend = "pg",
    from = [=[  " FOR EACH ROW WHEN (new.until < old.until)"]=],
    to = [=[  " FOR EACH ROW WHEN (new.until <> old.until)"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- lease_jobs_done runs its body for the engine's completions again
    name = "sqlite-jobs-done-body-always", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_SQLITE_QUIET_COMPLETE",
    from = [=[     " OR EXISTS (SELECT 1 FROM lease_queue AS p WHERE p.id = new.id"     \]=],
    to = [=[     " OR 1 OR EXISTS (SELECT 1 FROM lease_queue AS p WHERE p.id = new.id"     \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- lease_jobs_done skips another client's done = 1 too
    name = "sqlite-jobs-done-skips-open", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_SQLITE_QUIET_COMPLETE",
    from = [=[     " AND p.state <> " LEASE__Q_COMPLETED_S ")) BEGIN " LSQ_SQL_JOBS_DONE_BODY)]=],
    to = [=[     " AND p.state = " LEASE__Q_COMPLETED_S ")) BEGIN " LSQ_SQL_JOBS_DONE_BODY)]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- lease_jobs_done skips a reopen (done back to 0)
    name = "sqlite-jobs-done-skips-reopen", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_SQLITE_QUIET_COMPLETE",
    from = [=[     " WHEN (new.done <> 0) <> (old.done <> 0) AND (new.done = 0"         \]=],
    to = [=[     " WHEN (new.done <> 0) <> (old.done <> 0) AND (new.done = 99"         \]=],
    hint = "specs/23-hostile_spec.lua",
  },
  {
    -- a one-job claim runs the statement with LIMIT $5: once the tables are
    -- analyzed grown, every claim is planned anew
    name = "pg-claim-one-limit-parameter", step = "own", file = "src/pg/lpg_queue.c",
    fn = "claim_stmt", backend = "pg",
    from = [=[  if (n != 1) return which;]=],
    to = [=[  if (n != 0) return which;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a queue name past 4000 bytes makes a NOTIFY payload PostgreSQL
    -- refuses, and the write that fired the trigger fails
    name = "pg-wake-payload-unbounded", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_SQL_WAKE_PAYLOAD", backend = "pg",
    from = [=[  "CASE WHEN octet_length(" q ") <= " LPG_STR(LEASE_QUEUE_MAX) " THEN encode(" q ", 'hex') ELSE '' END"]=],
    to = [=[  "CASE WHEN octet_length(" q ") <= 100000 THEN encode(" q ", 'hex') ELSE '' END"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- lease_deps_follow called at the end of every job, listed or not
    name = "pg-deps-follow-fires-unflagged", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_QUIET_COMPLETE", backend = "pg",
    from = [=[LPG_DEPS_FOLLOW_TRIGGER("new.waited_on AND ")]=],
    to = [=[LPG_DEPS_FOLLOW_TRIGGER("")]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- lease_jobs_changed called by the engine's own completions again
    name = "pg-jobs-changed-fires-on-counted", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_QUIET_COMPLETE", backend = "pg",
    from = [=[LPG_JOBS_CHANGED_TRIGGER(" AND new.lease_completions = old.lease_completions")]=],
    to = [=[LPG_JOBS_CHANGED_TRIGGER("")]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-wait-paused-due", step = "own", file = "src/pg/lpg_queue_sql.h", backend = "pg",
    fn = "LPG_Q_SQL_DUE",
    from = [=[  " AND NOT EXISTS (SELECT 1 FROM lease_queues WHERE name = $1 AND paused <> 0)"]=],
    to = [=[  ""]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    -- lease show writes a result's bytes, escapes included, to the terminal
    name = "cli-show-result-raw", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_show",
    from = [=[        out:write(show_bytes(line), "\n")]=],
    to = [=[        out:write(line, "\n")]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    -- a draining worker on a paused queue sleeps poll though the queue emptied
    name = "pool-held-wait-ignores-drained", step = "own", file = "lua/lease/pool.lua",
    fn = "wait_poll",
    from = [=[    if woken or not cfg.forever and drained(w) then return true end]=],
    to = [=[    if woken then return true end]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- a worker of a paused queue sleeps poll, as at a limit
    name = "pool-paused-sleeps-poll", step = "own", file = "lua/lease/pool.lua",
    fn = "step",
    from = [=[  if held == "paused" then return wait_poll(w) end]=],
    to = [=[  if held == "paused" then return not stop_asked(w, cfg.poll) end]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  -- The jobs waiting for a job follow its end whoever writes it (schema
  -- step DEPS_ANY_CLIENT)
  {
    -- another client's done = 1 completes the job and opens nothing
    name = "deps-raw-complete-not-followed", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_JOBS_DONE_BODY",
    from = [=[  LSQ_SQL_DEP_RELEASE_OF("new.id", " AND d.parent <> new.id")            \]=],
    to = [=[  "SELECT 1 WHERE 1"            \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- the job another client completes counted as a parent still pending
    name = "deps-raw-complete-counts-itself", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_JOBS_DONE_BODY",
    from = [=[LSQ_SQL_DEP_RELEASE_OF("new.id", " AND d.parent <> new.id")]=],
    to = [=[LSQ_SQL_DEP_RELEASE_OF("new.id", "")]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- another client's complete of one parent opens a child of two
    name = "deps-raw-complete-one-of-two-parents", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_SQL_JOBS_DONE_BODY",
    from = [=[LSQ_SQL_DEP_RELEASE_OF("new.id", " AND d.parent <> new.id")]=],
    to = [=[LSQ_SQL_DEP_RELEASE_OF("new.id", " AND 0")]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a parent deleted opens nothing
    name = "deps-parent-gone-not-followed", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_DEPS_ANY_CLIENT",
    from = [=[     LSQ_SQL_DEP_RELEASE_OF("old.id", "") "; END")]=],
    to = [=[     "SELECT 1; END")]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- one of two parents deleted opens the child
    name = "deps-parent-gone-one-of-two-parents", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_DEPS_ANY_CLIENT",
    from = [=[LSQ_SQL_DEP_RELEASE_OF("old.id", "")]=],
    to = [=[LSQ_SQL_DEP_RELEASE_OF("old.id", " AND 0")]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- followed only for a job deleted unfinished: prune of a cancelled
    -- parent leaves its retried child waiting
    name = "deps-parent-gone-unfinished-only", step = "own", file = "src/sqlite/lsq_schema_sql.h",
    fn = "LSQ_STEP_DEPS_ANY_CLIENT",
    from = [=[" WHEN old.state <> " LEASE__Q_COMPLETED_S " BEGIN "]=],
    to = [=[" WHEN old.state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S ") BEGIN "]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-parent-gone-not-followed", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_ANY_CLIENT", backend = "pg",
    from = [=[LPG_DEP_OPEN_WAITING_OF("old")]=],
    to = [=[""]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-parent-gone-unfinished-only", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_ANY_CLIENT", backend = "pg",
    from = [=[  " FOR EACH ROW WHEN (old.state <> " LEASE__Q_COMPLETED_S ")"                     \]=],
    to = [=[  " FOR EACH ROW WHEN (old.state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S "))" \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- the children read without their rows locked: a delete and the
    -- other parent's complete at once each see the other parent pending
    name = "pg-deps-parent-gone-children-unlocked", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_ANY_CLIENT", backend = "pg",
    from = [=[  " PERFORM 1 FROM jobs WHERE id = ANY(" LPG_DEP_CHILDREN_OF("old") ") ORDER BY id FOR UPDATE;" \]=],
    to = [=[  " PERFORM 1 FROM jobs WHERE false AND id = ANY(" LPG_DEP_CHILDREN_OF("old") ") ORDER BY id FOR UPDATE;" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "deps-discarded-parent-leaves-children-waiting", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "fail_body",
    from = [=[      next.qstate != LEASE__Q_DISCARDED)]=],
    to = [=[      1)]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-expired-parent-leaves-children-waiting", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_expired",
    from = [=[  return lsq_q_cascade(db, w->id, w->id_len, LEASE__Q_DISCARDED, w->now);]=],
    to = [=[  return LEASE_OK;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-cancelled-parent-leaves-children-waiting", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "cancel_body",
    from = [=[  return lsq_q_cascade(db, x->id, x->id_len, LEASE__Q_CANCELLED, x->now);]=],
    to = [=[  return LEASE_OK;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- the cascade stops at the children: the grandchildren stay waiting
    name = "deps-cascade-not-recursive", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_DEP_BELOW",
    from = [=[  " UNION SELECT d.child, d.parent FROM k CROSS JOIN lease_deps AS d ON d.parent = k.id"]=],
    to = [=[  " UNION SELECT d.child, d.parent FROM k CROSS JOIN lease_deps AS d ON d.parent = k.id AND 0"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- the cascade's step may read lease_deps whole: statistics of a small
    -- file make it scan the table at each step (specs/c/test_plans.c)
    name = "deps-cascade-step-joined", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_DEP_BELOW",
    from = [=[  " UNION SELECT d.child, d.parent FROM k CROSS JOIN lease_deps AS d ON d.parent = k.id" \
  " CROSS JOIN lease_queue AS c ON c.id = d.child WHERE c.state = " LEASE__Q_WAITING_S ")"]=],
    to = [=[  " UNION SELECT d.child, d.parent FROM k JOIN lease_deps AS d ON d.parent = k.id" \
  " JOIN lease_queue AS c ON c.id = d.child WHERE c.state = " LEASE__Q_WAITING_S ")"]=],
    c_hint = "test_plans",
  },
  {
    name = "deps-enqueue-does-not-wait", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "add_deps",
    from = [=[  lsq_bind_bytes(wait, 1, j->id, j->id_len);
  if ((rc = run_once(db, wait)) != LEASE_OK || sqlite3_changes(LSQ(db)->sql) == 1) return rc;]=],
    to = [=[  lsq_bind_bytes(wait, 1, j->id, j->id_len);
  if (1) return LEASE_OK;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-retry-does-not-wait-again", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "retry_body",
    from = [=[  if ((rc = run_id(db, LSQ_ST_Q_DEP_WAIT, x)) != LEASE_OK) return rc;]=],
    to = [=[]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-missing-parent-stored", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__dep_reason",
    from = [=[  return !found                          ? LEASE_MISSING]=],
    to = [=[  return !found                          ? LEASE_GRANTED]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-ended-parent-taken", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__dep_reason",
    from = [=[         : qstate == LEASE__Q_CANCELLED ? LEASE_CANCELLED]=],
    to = [=[         : 0 ? LEASE_CANCELLED]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a waiting job claimed by id: the guard refuses it, and the rules
    -- then find no reason (an internal error instead of "waiting")
    name = "deps-claim-waiting-no-reason", step = "own", file = "src/core/lease_rules.c",
    fn = "lease__judge",
    from = [=[  if (!is_release && f->qstate == LEASE__Q_WAITING) {]=],
    to = [=[  if (0) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-self-not-refused-lua", step = "own", file = "src/lua/lease_lua_queue.c",
    fn = "lb_check_after_self",
    from = [=[    if (job->after_lens[k] == job->id_len && memcmp(job->after[k], job->id, job->id_len) == 0) {]=],
    to = [=[    if (0) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-self-not-refused-core", step = "own", file = "src/core/lease_queue.c",
    fn = "check_after",
    from = [=[    if (lens[k] == out->id_len && memcmp(out->after[k], out->id, lens[k]) == 0) {]=],
    to = [=[    if (0) {]=],
    hint = "specs/44-dependencies_spec.lua",   -- killed by specs/c/test_queue.c (test_after)
    c_hint = "test_queue",
  },
  {
    name = "deps-cancel-skips-waiting", step = "own", file = "src/sqlite/lsq_queue_sql.h",
    fn = "LSQ_SQL_Q_END",
    from = [=[  " AND state IN (" LEASE__Q_OPEN_S ", " LEASE__Q_WAITING_S ")"]=],
    to = [=[  " AND state IN (" LEASE__Q_OPEN_S ")"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  -- An enqueue on PostgreSQL locks and flags the jobs it lists in id
  -- order, as complete_many locks jobs, and names the first refused one in
  -- the batch's order
  {
    name = "pg-deps-flags-left-to-trigger", step = "own", file = "src/pg/lpg_queue.c",
    fn = "flag_parents", backend = "pg",
    from = [=[  for (t = 0; t < m && unflagged > 1; t++) {]=],
    to = [=[  for (t = 0; t < m && unflagged > m; t++) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-listed-unsorted", step = "own", file = "src/pg/lpg_queue.c",
    fn = "check_deps", backend = "pg",
    from = [=[  qsort(l, (size_t)m, sizeof *l, listed_by_id);]=],
    to = [=[  if (m < 0) qsort(l, (size_t)m, sizeof *l, listed_by_id);]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-refusal-last-listed", step = "own", file = "src/pg/lpg_queue.c",
    fn = "check_deps", backend = "pg",
    from = [=[        (first < 0 || l[t].i < l[first].i || (l[t].i == l[first].i && l[t].k < l[first].k)))]=],
    to = [=[        (first < 0 || l[t].i > l[first].i || (l[t].i == l[first].i && l[t].k > l[first].k)))]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-flagged-when-refused", step = "own", file = "src/pg/lpg_queue.c",
    fn = "check_deps", backend = "pg",
    from = [=[  else if (rc == LEASE_OK)
    rc = flag_parents(db, l, m);]=],
    to = [=[  if (rc == LEASE_OK)
    rc = flag_parents(db, l, m);]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-released-by-one-of-two-parents", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_DEP_OPEN_WAITING_OF", backend = "pg",
    from = [=[  " AND NOT " LPG_Q_SQL_DEP_PENDING("c") ";"]=],
    to = [=[  " AND NOT false;"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-discarded-parent-leaves-children-waiting", step = "own",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_DEPS_FOLLOW_TRIGGER", backend = "pg",
    from = [=[  " " LEASE__Q_DISCARDED_S ", " LEASE__Q_CANCELLED_S ")"]=],
    to = [=[  " " LEASE__Q_COMPLETED_S ", " LEASE__Q_CANCELLED_S ")"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a listed job that does not exist taken as there (state open)
    name = "pg-deps-missing-parent-stored", step = "own", file = "src/pg/lpg_queue.c",
    fn = "read_listed", backend = "pg",
    from = [=[    l[t].state = PQntuples(res) == 1 ? r_i4(res, 0, 0) : -1;]=],
    to = [=[    l[t].state = PQntuples(res) == 1 ? r_i4(res, 0, 0) : 0;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-retry-does-not-wait-again", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_DEP_UNWAITED_", backend = "pg",
    from = [=[  " AND " LPG_Q_SQL_DEP_PENDING("lease_queue")]=],
    to = [=[  " AND false"]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a file of the DEPS layout without its version row is taken for the
    -- one before: step DEPS runs again (the index another client dropped
    -- comes back)
    name = "deps-schema-unversioned-layout-taken-for-older", step = "own",
    file = "src/sqlite/lsq_schema_sql.h", fn = "LSQ_SQL_CLASSIFY",
    from = [=[  " WHERE type = 'table' AND name = 'lease_deps') THEN 10"]=],
    to = [=[  " WHERE type = 'table' AND name = 'lease_deps') THEN 6"]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    name = "pg-deps-schema-unversioned-layout-taken-for-older", step = "own", backend = "pg",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_SQL_CLASSIFY",
    from = [=[  " WHEN to_regclass('lease_deps') IS NOT NULL THEN 10"]=],
    to = [=[  " WHEN to_regclass('lease_deps') IS NOT NULL THEN 9"]=],
    hint = "specs/43-unique_key_spec.lua",
  },
  {
    -- a completed child's retry left open by the trigger that reopens a
    -- done job: it would be claimed before its retried parent completes
    name = "pg-deps-completed-child-retry-does-not-wait", step = "own", file = "src/pg/lpg_queue.c",
    backend = "pg", fn = "retry_body",
    from = [=[  if (rc != LEASE_OK || x->reason != LEASE_GRANTED) return rc;]=],
    to = [=[  if (1) return rc;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-batch-entry-skipped-as-duplicate-waits-for-nothing", step = "own",
    file = "src/sqlite/lsq_queue_sql.h", fn = "LSQ_SQL_DEP_PARENT",
    from = [=[  "queue = ?3 AND key = ?4 AND id <> ?1 AND " LEASE__Q_UNFINISHED_SQL("state") \]=],
    to = [=[  "queue = ?3 AND key = ?4 AND 0 AND " LEASE__Q_UNFINISHED_SQL("state") \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-batch-entry-key-not-passed", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "bind_dep",
    from = [=[  if ((m = lease__dep_in_batch(e->jobs, i, k)) >= 0 && e->jobs[m].key) {]=],
    to = [=[  if ((m = lease__dep_in_batch(e->jobs, i, k)) >= 0 && 0) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "deps-batch-entry-already-there-unchecked", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "check_deps",
    from = [=[      if (!found && lease__dep_in_batch(e->jobs, i, k) >= 0) continue;]=],
    to = [=[      if (lease__dep_in_batch(e->jobs, i, k) >= 0) continue;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- an entry skipped for its key stands for its own id, never stored:
    -- the batch finds no such job, and runs again until it gives up
    name = "pg-deps-batch-entry-skipped-as-duplicate-waits-for-nothing", step = "own",
    file = "src/pg/lpg_queue.c", fn = "add_deps", backend = "pg",
    from = [=[      if (state < 0 && e->held[m].id) {]=],
    to = [=[      if (state < 0 && 0) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a holder cancelled after the batch read it is listed all the same:
    -- its cascade ran before the edge, and the child waits for ever
    name = "pg-deps-batch-parent-end-unchecked", step = "own",
    file = "src/pg/lpg_queue.c", fn = "add_deps", backend = "pg",
    from = [=[      if (lease__dep_reason(state >= 0, state) != LEASE_GRANTED) {]=],
    to = [=[      if (state < 0) {]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- a batch that found a parent ended is not run again: enqueue_many
    -- raises busy where a run after the end would have stored it
    name = "pg-deps-batch-not-run-again", step = "own",
    file = "src/pg/lpg_queue.c", fn = "lpg_q_enqueue", backend = "pg",
    from = [=[    if (!(lpg_key_conflict(db, rc) || e.again) || tries == KEY_TRIES) break;]=],
    to = [=[    if (!(lpg_key_conflict(db, rc) || 0) || tries == KEY_TRIES) break;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "pg-deps-batch-entry-already-there-unchecked", step = "own", file = "src/pg/lpg_queue.c",
    fn = "check_deps", backend = "pg",
    from = [=[    if (l[t].state < 0 && lease__dep_in_batch(e->jobs, l[t].i, l[t].k) >= 0) continue;]=],
    to = [=[    if (lease__dep_in_batch(e->jobs, l[t].i, l[t].k) >= 0) continue;]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- another client's done = 1 left open in lease_queue
    name = "pg-complete-once-other-client-left-open", step = "own",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_STEP_COMPLETE_ONCE", backend = "pg",
    from = [=[  " WHERE id = new.id AND (new.done = 0 OR state <> " LEASE__Q_COMPLETED_S ");"     \]=],
    to = [=[  " WHERE id = new.id AND (new.done = 0);"     \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a completed job reopened by another client (done cleared) left completed in lease_queue
    name = "pg-complete-once-reopen-skipped", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_COMPLETE_ONCE", backend = "pg",
    from = [=[  " WHERE id = new.id AND (new.done = 0 OR state <> " LEASE__Q_COMPLETED_S ");"     \]=],
    to = [=[  " WHERE id = new.id AND (false OR state <> " LEASE__Q_COMPLETED_S ");"     \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the early exit taken for every job: a parent's end opens no child
    name = "pg-deps-childless-always", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_KEYED", backend = "pg",
    from = [=[  " AS $f$ BEGIN IF NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \]=],
    to = [=[  " AS $f$ BEGIN IF true OR NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    -- no early exit: a childless job's end still locks and writes nothing
    -- through three scans of lease_deps
    name = "pg-deps-childless-never", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_KEYED", backend = "pg",
    from = [=[  " AS $f$ BEGIN IF NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \]=],
    to = [=[  " AS $f$ BEGIN IF false AND NOT EXISTS (SELECT 1 FROM lease_deps d WHERE d.parent = new.id)" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the queue row read with the calling statement's snapshot, taken
    -- before the job's row lock was granted: a cancel committed during
    -- the wait is not seen
    name = "pg-queue-now-stable", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_QUEUE_NOW_PLPGSQL", backend = "pg",
    from = [=[  " LANGUAGE plpgsql VOLATILE AS $f$ BEGIN"                                        \]=],
    to = [=[  " LANGUAGE plpgsql STABLE AS $f$ BEGIN"                                        \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the caller's statement in with_lease runs with the engine's
    -- sequential scans priced out
    name = "pg-tx-caller-seqscan-off", step = "own", file = "src/pg/lpg_tx.c",
    fn = "send_wrapped", backend = "pg",
    from = [=[push(pg, "SET LOCAL enable_seqscan TO DEFAULT", 0, NULL, &queued)]=],
    to = [=[push(pg, "SET LOCAL enable_seqscan = off", 0, NULL, &queued)]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the engine's enable_seqscan is not set back after the caller's
    -- statement: its own statements after it run with sequential scans
    name = "pg-tx-seqscan-not-set-back", step = "own", file = "src/pg/lpg.c",
    fn = "keep_settings", backend = "pg",
    from = [=[" set_config('enable_seqscan', 'off', false)]=],
    to = [=[" set_config('enable_seqscan', 'on', false)]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- only enable_seqscan is set back: a set_config() of the caller's
    -- outlasts its statement
    name = "pg-tx-settings-not-set-again", step = "own", file = "src/pg/lpg_tx.c",
    fn = "send_wrapped", backend = "pg",
    from = [=[push_prepared(pg, LPG_SETTINGS_STMT, &queued)]=],
    to = [=[(push(pg, "SET LOCAL enable_seqscan = off", 0, NULL, &queued) ||
                          push_prepared(pg, LPG_SETTINGS_STMT, &queued))]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a statement libpq refuses to send leaves the connection in pipeline
    -- mode with the savepoint's transaction open
    name = "pg-tx-unsent-left-in-pipeline", step = "own", file = "src/pg/lpg_tx.c",
    backend = "pg",
    fn = "unsend",
    from = [=[  if (PQpipelineSync(pg)) {]=],
    to = [=[  if (0) {]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a statement libpq refuses to send leaves the savepoint's SET LOCAL
    -- in force: the engine's statements after it scan
    name = "pg-tx-unsent-not-rolled-back", step = "own", file = "src/pg/lpg_tx.c",
    fn = "send_wrapped", backend = "pg",
    from = [=[    unsend(pg, queued, !sc->savepoint && queued > 0);]=],
    to = [=[    unsend(pg, queued, 0);]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- prune locks the jobs it deletes in its plan's order: against
    -- complete_many's id order, the two can deadlock
    name = "pg-prune-locks-unordered", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_PRUNE", backend = "pg",
    from = [=[  " ORDER BY jobs.id FOR UPDATE),"]=],
    to = [=[  " FOR UPDATE),"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- synchronous_commit is not set again: a caller's set_config() makes
    -- the engine's later commits asynchronous
    name = "pg-tx-synchronous-not-set-again", step = "own", file = "src/pg/lpg.c",
    fn = "keep_settings", backend = "pg",
    from = [=[set_config('synchronous_commit', '%s', false),"]=],
    to = [=[set_config('lease.synchronous', '%s', false),"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- DEALLOCATE inside with_lease drops the engine's prepared statements
    name = "pg-tx-deallocate-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[  if (!strcmp(w0, "deallocate") || (!strcmp(w0, "prepare") && names_engine))]=],
    to = [=[  if ((!strcmp(w0, "prepare") && names_engine))]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- SELECT ... INTO is not seen as creating a table: SELECT * INTO TEMP
    -- TABLE jobs FROM jobs shadows the engine's jobs for the session
    name = "pg-tx-select-into-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_word", backend = "pg",
    from = [=[    st->into = 1;]=],
    to = [=[    st->into = 0;]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- a word after INSERT is not told from INSERT INTO: SELECT 1 AS insert,
    -- 2 INTO TEMP jobs passes
    name = "pg-tx-prev-word-kept", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_token", backend = "pg",
    from = [=[  st->prev[0] = '\0';   /* any other token: the next word follows no word */]=],
    to = [=[  /* any other token */]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- EXPLAIN ANALYZE CREATE TABLE jobs AS ... is judged as an EXPLAIN
    name = "pg-tx-explain-create-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_word", backend = "pg",
    from = [=[  if (!strcmp(fold, "create")) st->create = 1;]=],
    to = [=[  if (!strcmp(fold, "create")) st->create = 0;]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- a creating statement naming jobs is let through unless it says TEMP
    name = "pg-tx-create-engine-name-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[    if (names_engine) return "it would change]=],
    to = [=[    if (0) return "it would change]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- temporary objects are created in the engine's session: a temporary
    -- table named bytea takes the place of the type
    name = "pg-tx-temp-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[    if (temp)
]=],
    to = [=[    if (temp && 0)
]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- TEMP after CREATE or INTO is not noted
    name = "pg-tx-temp-word-unseen", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_word", backend = "pg",
    from = [=[!strcmp(st->prev, "into")))
    st->temp = 1;]=],
    to = [=[!strcmp(st->prev, "into")))
    st->temp = 0;]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- a pg_temp name is not noted: CREATE TABLE pg_temp.bytea passes
    name = "pg-tx-pg-temp-name-unseen", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_word", backend = "pg",
    from = [=[  if (temp_name(fold, len)) st->temp = 1;]=],
    to = [=[  if (temp_name(fold, len)) st->temp = 0;]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- a quoted "pg_temp" is not noted
    name = "pg-tx-quoted-pg-temp-unseen", step = "own", file = "src/pg/lpg_tx.c",
    fn = "scan_quoted", backend = "pg",
    from = [=[  if (temp_name(s + b, len)) st->temp = 1;]=],
    to = [=[  if (temp_name(s + b, len)) st->temp = 0;]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- UNLISTEN inside with_lease: the handle's later waits are never woken
    name = "pg-tx-listen-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[  if (!strcmp(w0, "listen") || !strcmp(w0, "unlisten"))]=],
    to = [=[  if (0)]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- LOAD of a library into the engine's session
    name = "pg-tx-load-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[  if (!strcmp(w0, "load"))]=],
    to = [=[  if (0)]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- IMPORT FOREIGN SCHEMA: tables named by the remote server
    name = "pg-tx-import-allowed", step = "own", file = "src/pg/lpg_tx.c",
    fn = "judge", backend = "pg",
    from = [=[  if (!strcmp(w0, "import"))]=],
    to = [=[  if (0)]=],
    hint = "specs/52-with_lease_pg_spec.lua",
  },
  {
    -- the search_path the session started with is not set again
    name = "pg-tx-search-path-not-set-again", step = "own", file = "src/pg/lpg.c",
    fn = "keep_settings", backend = "pg",
    from = [=["SELECT set_config('search_path', %s, false),"]=],
    to = [=["SELECT set_config('lease.search_path', %s, false),"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete_many reads the queue rows in its statement's snapshot
    name = "pg-complete-many-queue-read-in-snapshot", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " FOR UPDATE) s ON true),"]=],
    to = [=[  ") s ON true),"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete_many reads no queue row that another client added during
    -- its wait: the job counts as open
    name = "pg-complete-many-added-queue-row-missed", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " (SELECT n.state FROM lease_queue_now(j.id) n), " LEASE__Q_OPEN_S ")"]=],
    to = [=[  " NULL, " LEASE__Q_OPEN_S ")"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete_many reads the jobs rows in its statement's snapshot: the
    -- guard sees a lease taken over during the wait as still its own
    name = "pg-complete-many-jobs-read-in-snapshot", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " WHERE jobs.id = a.id FOR UPDATE) j ON true"]=],
    to = [=[  " WHERE jobs.id = a.id) j ON true"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- step 15 does nothing: lease_queue_now stays in SQL, planned at each call
    name = "pg-queue-now-left-in-sql", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_QUEUE_NOW_PLPGSQL", backend = "pg",
    from = [=[  "CREATE OR REPLACE FUNCTION lease_queue_now(bytea) RETURNS SETOF lease_queue"    \]=],
    to = [=[  "SELECT 1 -- CREATE OR REPLACE FUNCTION lease_queue_now(bytea) RETURNS SETOF lease_queue"    \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete_claim_next commits in one round trip under a mark another
    -- client moved since the handle read it: a now off from it is stored
    name = "pg-ccn-check-mark-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CCN_CHECK", backend = "pg",
    from = [=[  " AND 1 / CASE WHEN " LPG_Q_SQL_MARK " IS NOT DISTINCT FROM $6"                    \]=],
    to = [=[  " AND 1 / CASE WHEN $6 IS NOT DISTINCT FROM $6"                    \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and takes a database without a mark for one moved since the
    -- handle read it: every such call rolled back and done again
    name = "pg-ccn-check-no-mark-differs", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CCN_CHECK", backend = "pg",
    from = [=[  " AND 1 / CASE WHEN " LPG_Q_SQL_MARK " IS NOT DISTINCT FROM $6"                    \]=],
    to = [=[  " AND 1 / CASE WHEN " LPG_Q_SQL_MARK " = $6"                    \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and hands the check a handle without a mark as NaN, which no
    -- database without a mark matches
    name = "pg-ccn-no-mark-bound-nan", step = "own", file = "src/pg/lpg_queue.c",
    fn = "ccn_committed", backend = "pg",
    from = [=[  if (isnan(db->clock_mark)) p_null(&pn);   /* no mark: the check wants none still */]=],
    to = [=[  if (0) p_null(&pn);   /* no mark: the check wants none still */]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and claims from a queue with settings as if it had none
    name = "pg-ccn-check-settings-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CCN_CHECK", backend = "pg",
    from = [=[  " FROM lease_queues WHERE name = $1) AND EXISTS (SELECT 1 FROM jobs"             \]=],
    to = [=[  " FROM lease_queues WHERE name = $1 AND false) AND EXISTS (SELECT 1 FROM jobs"             \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and commits the claim of a call whose complete then fails
    name = "pg-ccn-check-done-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CCN_CHECK", backend = "pg",
    from = [=[  " WHERE id = $7 AND done <> 0) THEN 1 ELSE 0 END = 1"]=],
    to = [=[  " WHERE id = $7) THEN 1 ELSE 0 END = 1"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and the check reads a candidate's column, so that it runs only
    -- when there is one: with none left, a complete under a moved mark
    -- commits
    name = "pg-ccn-check-per-candidate", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CCN_CHECK", backend = "pg",
    from = [=[  " WHERE id = $7 AND done <> 0) THEN 1 ELSE 0 END = 1"]=],
    to = [=[  " WHERE id = $7 AND done <> 0) THEN 1 ELSE 0 END = 1 + 0 * q.seq"]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and its complete takes no lock of the queue: a pause that
    -- commits while its claim statement runs returns before the claim
    -- commits
    name = "pg-ccn-committed-unlocked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_COMPLETE_LOCKING", backend = "pg",
    from = [=[  LPG_SQL_COMPLETE_FROM("(SELECT 1 FROM pg_advisory_xact_lock_shared("              \]=],
    to = [=[  LPG_SQL_COMPLETE_FROM("(SELECT 1 FROM int8pl("              \]=],
    hint = "specs/42-queue_control_spec.lua",
  },
  {
    -- ... and its claim round runs without the check at all
    name = "pg-ccn-check-dropped", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_KEEPING_", backend = "pg",
    from = [=[  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN x.last OR u.id IS NULL" \]=],
    to = [=[  LPG_Q_SQL_CLAIM_NEXT_("", ", 1 / CASE WHEN x.last OR u.id IS NULL" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and commits a discard, the rounds after it running alone
    name = "pg-ccn-claim-discards", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLAIM_NEXT_KEEPING_", backend = "pg",
    from = [=[  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN x.last OR u.id IS NULL" \]=],
    to = [=[  LPG_Q_SQL_CLAIM_NEXT_(LPG_Q_SQL_CCN_CHECK, ", 1 / CASE WHEN NOT x.last AND u.id IS NULL" \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- ... and with the ledger on, its events written after the COMMIT
    name = "pg-ccn-events-ignored", step = "own", file = "src/pg/lpg_queue.c",
    fn = "lpg_q_complete_claim_next", backend = "pg",
    from = [=[  if (lease__clock_settled(db) && !lease__events_on(db)) {]=],
    to = [=[  if (lease__clock_settled(db)) {]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- no mark is taken at any now: a first now below 0 becomes the mark,
    -- and jobs enqueued after it go before the ones made before
    name = "clock-first-mark-at-any-now", step = "own", file = "src/core/lease.c",
    fn = "clock_moves",
    from = [=[  return now > m + fmax(1.0, fabs(m) * LEASE__CLOCK_STEP);]=],
    to = [=[  return isnan(mark) || now > m + fmax(1.0, fabs(m) * LEASE__CLOCK_STEP);]=],
    hint = "specs/54-clock_spec.lua",
  },
  {
    -- a mark a step behind the write's now taken as settled: the write
    -- commits without moving it
    name = "clock-settled-ignores-move", step = "own", file = "src/core/lease.c",
    fn = "lease__clock_settled", backend = "pg",
    from = [=[  return !clock_off(now, mark, db->opt.clock_factor) && !clock_moves(now, mark);]=],
    to = [=[  return !clock_off(now, mark, db->opt.clock_factor);]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- complete leaves the state to the trigger: two writes of the row
    name = "pg-complete-state-left-to-trigger", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_FROM", backend = "pg",
    from = [=[  ", f AS (UPDATE lease_queue SET state = " LEASE__Q_COMPLETED_S ", finished_at = $4"    \]=],
    to = [=[  ", f AS (UPDATE lease_queue SET finished_at = $4"    \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-complete-many-state-left-to-trigger", step = "own", file = "src/pg/lpg_sql.h",
    fn = "LPG_SQL_COMPLETE_MANY", backend = "pg",
    from = [=[  " f AS (UPDATE lease_queue SET state = " LEASE__Q_COMPLETED_S ", finished_at = $5"  \]=],
    to = [=[  " f AS (UPDATE lease_queue SET finished_at = $5"  \]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    name = "pg-deps-follow-reads-children-unlocked", step = "own",
    file = "src/pg/lpg_schema_sql.h", fn = "LPG_STEP_DEPS_KEYED", backend = "pg",
    from = [=[  " PERFORM 1 FROM jobs WHERE id = ANY(" LPG_DEP_CHILDREN ") ORDER BY id FOR UPDATE;" \]=],
    to = [=[  " PERFORM 1 FROM jobs WHERE false AND id = ANY(" LPG_DEP_CHILDREN ") ORDER BY id FOR UPDATE;" \]=],
    hint = "specs/44-dependencies_spec.lua",
  },
  {
    name = "events-cascade-not-recorded", step = "own", file = "src/sqlite/lsq_queue.c",
    fn = "lsq_q_cascade",
    from = [=[  if (lease__events_on(db)) {]=],
    to = [=[  if (0) {]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-events-cascade-not-recorded", step = "own", file = "src/pg/lpg_schema_sql.h",
    fn = "LPG_STEP_DEPS_KEYED", backend = "pg",
    from = [=[  " ELSE IF current_setting('lease.events', true) = 'on' THEN"                   \]=],
    to = [=[  " ELSE IF false THEN"                   \]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "pg-events-cascade-recorded-without-events", step = "own", file = "src/pg/lpg.c",
    fn = "set_session", backend = "pg",
    from = [=[           db->opt.events_keep > 0 && !ro ? "on" : "off");]=],
    to = [=[           "on");]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "cli-events-env-ignored", step = "own", file = "lua/lease/cli.lua", fn = "events_env",
    from = [=[  return v ~= nil and v ~= "" and v ~= "0"]=],
    to = [=[  return false]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "cli-events-env-zero-taken-as-on", step = "own", file = "lua/lease/cli.lua", fn = "events_env",
    from = [=[  return v ~= nil and v ~= "" and v ~= "0"]=],
    to = [=[  return v ~= nil and v ~= ""]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "cli-pool-events-flag-ignored", step = "own", file = "lua/lease/cli.lua", fn = "cmd_pool",
    from = [=[                       open = { create = false, events = flags["--events"] and true or events_env() },]=],
    to = [=[                       open = { create = false, events = events_env() },]=],
    hint = "specs/58-events_spec.lua",
  },
  {
    name = "wake-files-not-watched", step = "own", file = "src/sqlite/lsq_wake.c", fn = "notify_watch",
    from = [=[  for (i = 0; i < 2; i++) w->notify_wd[i] = inotify_add_watch(w->notify_fd, w->files[i], IN_MODIFY);]=],
    to = [=[  for (i = 0; i < 2; i++) w->notify_wd[i] = 0;]=],
    hint = "specs/57-wake_spec.lua",
  },
  {
    name = "wake-change-signalled-once", step = "own", file = "src/sqlite/lsq_wake.c", fn = "watch_files",
    from = [=[    w->settle = s != w->stamp ? LSQ_WAKE_SETTLE : w->settle - 1;]=],
    to = [=[    w->settle = 0;]=],
    hint = "specs/57-wake_spec.lua",
  },
  -- lease stats, metrics and timeline (lua/lease/observe.lua, lua/lease/cli.lua)
  {
    name = "web-job-events-oldest", step = "own", file = "lua/lease/web.lua",
    fn = "newest_events",
    from = "    if #batch < MAX_EVENTS then break end\n",
    to = "    break\n",
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-loopback-one-spelling", step = "own", file = "lua/lease/web.lua",
    fn = "is_loopback",
    from = "  if g[6] == 0xffff then return math.floor(g[7] / 256) == 127 end\n",
    to = "",
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-host-bound-address-refused", step = "own", file = "lua/lease/web.lua",
    fn = "host_allowed",
    from = "  return name == \"localhost\" or web.is_loopback(name)\n",
    to = "  return name == \"localhost\" or name == \"127.0.0.1\"\n",
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-loopback-leading-zero-taken", step = "own", file = "lua/lease/web.lua",
    fn = "ipv4_octets",
    from = "    if not (part == \"0\" or part:find(\"^[1-9]%d?%d?$\")) or tonumber(part) > 255 then return nil end\n",
    to = "    if not part:find(\"^%d+$\") then return nil end\n",
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-after-unchecked", step = "own", file = "lua/lease/web.lua",
    fn = "jobs_page",
    from = "  if not (after and after >= 0 and after <= 2 ^ 53 and after == math.floor(after)) then\n",
    to = "  if false then\n",
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "metrics-label-backslash-kept", step = "own", file = "lua/lease/observe.lua",
    fn = "label",
    from = "  s = s:gsub(\"\\\\\", \"\\\\\\\\\")\n",
    to = "",
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "timeline-axis-step-too-fine", step = "own", file = "lua/lease/observe.lua",
    fn = "svg",
    from = "  step = step or STEPS[#STEPS] * 10 ^ math.ceil(math.log((t1 - t0) / (8 * STEPS[#STEPS])) / math.log(10))\n",
    to = "  step = step or STEPS[#STEPS] * 10 ^ (math.ceil(math.log((t1 - t0) / (8 * STEPS[#STEPS])) / math.log(10)) - 2)\n",
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "timeline-axis-span-collapsed", step = "own", file = "lua/lease/observe.lua",
    fn = "svg",
    from = "  if not (t1 - t0 >= 1) then t1 = t0 + math.max(1, math.abs(t0) * 2 ^ -40) end\n",
    to = "  if not (t1 - t0 >= 1) then t1 = t0 + 1 end\n",
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-refusals-not-counted", step = "own", file = "lua/lease/observe.lua",
    fn = "collect",
    from = [=[      refusals[key] = (refusals[key] or 0) + 1]=],
    to = [=[      refusals[key] = (refusals[key] or 0)]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-completions-every-window", step = "own", file = "lua/lease/observe.lua",
    fn = "collect",
    from = [=[        if e.at > now - 60 * m and e.at <= now then s.windows[m] = s.windows[m] + 1 end]=],
    to = [=[        if e.at <= now then s.windows[m] = s.windows[m] + 1 end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-oldest-age-ignores-run-at", step = "own", file = "lua/lease/observe.lua",
    fn = "collect",
    from = [=[      for _, t in ipairs({ j.run_at or false, lease_end or false, last_at[j.id] or false }) do]=],
    to = [=[      for _, t in ipairs({ false, lease_end or false, last_at[j.id] or false }) do]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-metrics-label-not-escaped", step = "own", file = "lua/lease/observe.lua",
    fn = "label",
    from = [=[  return (s:gsub("[\\\"\n]", { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }))]=],
    to = [=[  return (s:gsub("[\\\"]", { ["\\"] = "\\\\", ['"'] = '\\"' }))]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-xml-lt-not-escaped", step = "own", file = "lua/lease/observe.lua",
    fn = "xml",
    from = [=[  return (s:gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",]=],
    to = [=[  return (s:gsub("[&>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-refused-drawn-accepted", step = "own", file = "lua/lease/observe.lua",
    fn = "svg",
    from = [=[      if m.outcome == "refused" then]=],
    to = [=[      if m.outcome == "refused" and m.op ~= "complete" then]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-expire-does-not-end-lease", step = "own", file = "lua/lease/observe.lua",
    fn = "leases",
    from = [=[      if ok and (e.op == "claim" or ENDS[e.op]) and cur and cur.to == nil then cur.to = e.at end]=],
    to = [=[      if ok and ENDS[e.op] and e.op ~= "expire" and cur and cur.to == nil then cur.to = e.at end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-watch-zero-accepted", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_stats",
    from = [=[  local watch = number_flag(flags, "--watch", "seconds > 0")]=],
    to = [=[  local watch = number_flag(flags, "--watch", "seconds")]=],
    hint = "specs/59-observe_spec.lua",
  },
  -- lease web (lua/lease/web.lua, lua/lease/cli.lua, src/host/host_httpd.c)
  {
    name = "web-token-check-skipped", step = "own", file = "lua/lease/web.lua",
    fn = "action",
    from = [=[  if not web.token_equal(form.token, ctx.token) then]=],
    to = [=[  if false then]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-token-cookie-stands-for-form", step = "own", file = "lua/lease/web.lua",
    fn = "action",
    from = [=[  if not web.token_equal(form.token, ctx.token) then]=],
    to = [=[  if not (web.token_equal(form.token, ctx.token) or authorized(ctx, req)) then]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-token-longer-accepted", step = "own", file = "lua/lease/web.lua",
    fn = "token_equal",
    from = [=[  local diff = #given == #want and 0 or 1]=],
    to = [=[  local diff = 0]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-forms-always-carry-token", step = "own", file = "lua/lease/web.lua",
    fn = "button",
    from = [=[  if authed then]=],
    to = [=[  if true then]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-escaping-removed", step = "own", file = "lua/lease/web.lua",
    fn = "h",
    from = [=[  return observe.xml(tostring(s), ctx.fmt.safe)]=],
    to = [=[  return tostring(s)]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-host-check-skipped", step = "own", file = "lua/lease/web.lua",
    fn = "host_allowed",
    from = [=[  if not ctx.loopback then return true end]=],
    to = [=[  if true then return true end]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-bind-default-any", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_web",
    from = [=[  local bind = flags["--bind"] or "127.0.0.1"]=],
    to = [=[  local bind = flags["--bind"] or "0.0.0.0"]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-port-range-unchecked", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_web",
    from = [=[  if port and port > 65535 then]=],
    to = [=[  if false then]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-empty-token-accepted", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_web",
    from = [=[  if flags["--token"] == "" then usage("--token needs a non-empty token") end]=],
    to = [=[]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-body-limit-unchecked", step = "own", file = "src/host/host_httpd.c",
    fn = "hd_access",
    from = "    if (!req->too_large && req->len + *upload_size <= HD_MAX_BODY) {",
    to = "    if (!req->too_large) {",
    hint = "specs/61-web_spec.lua",
  },
  {
    -- a deadlock's victim is not run again: the caller gets busy for a
    -- write another run would have stored
    name = "pg-deadlock-not-run-again", step = "own", file = "src/pg/lpg.c",
    fn = "rerun", backend = "pg",
    from = [=[    deadlock = lpg_failed_with(db, "40P01");]=],
    to = [=[    deadlock = 0;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a serialization failure is not run again
    name = "pg-serialization-not-run-again", step = "own", file = "src/pg/lpg.c",
    fn = "rerun", backend = "pg",
    from = [=[    if (!deadlock && !lpg_failed_with(db, "40001")) return 0;]=],
    to = [=[    if (!deadlock) return 0;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- every busy failure is run again (a lock_timeout too, which would
    -- multiply the caller's wait)
    name = "pg-any-busy-run-again", step = "own", file = "src/pg/lpg.c",
    fn = "rerun", backend = "pg",
    from = [=[    if (!deadlock && !lpg_failed_with(db, "40001")) return 0;]=],
    to = [=[]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- the runs are not bounded as said
    name = "pg-rerun-unbounded", step = "own", file = "src/pg/lpg.c",
    fn = "rerun", backend = "pg",
    from = [=[  if (rc == LEASE_OK || runs >= LPG_RUNS) return 0;]=],
    to = [=[  if (rc == LEASE_OK || runs > LPG_RUNS) return 0;]=],
    hint = "specs/35-postgres_spec.lua",
  },
  {
    -- a write that failed on a clock mark another client stored as a text
    -- that is no number is not run again once the mark is dropped
    name = "pg-mark-dropped-not-run-again", step = "own", file = "src/pg/lpg.c",
    fn = "rerun", backend = "pg",
    from = [=[  if (!(dropped = lpg_q_mark_dropped(db))) {]=],
    to = [=[  if (!(dropped = lpg_q_mark_dropped(db) && 0)) {]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- ... the mark is never found to be no number
    name = "pg-mark-never-dropped", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_CLOCK_DROP", backend = "pg",
    from = [=[  " AND NOT " LPG_Q_SQL_FLOAT8_TEXT("value") " RETURNING 1"]=],
    to = [=[  " AND false AND NOT " LPG_Q_SQL_FLOAT8_TEXT("value") " RETURNING 1"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- ... a number out of float8's range passes for one
    name = "pg-mark-range-unchecked", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_FLOAT8_TEXT", backend = "pg",
    from = [=[  " OR abs(" v "::numeric) BETWEEN 2.5e-324 AND 1.7976931348623157e308 END)"]=],
    to = [=[  " OR true END)"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- ... a number at the ends of float8's range is taken for none, and
    -- dropped after a failure that was not its own
    name = "pg-mark-range-narrow", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_FLOAT8_TEXT", backend = "pg",
    from = [=[  " OR abs(" v "::numeric) BETWEEN 2.5e-324 AND 1.7976931348623157e308 END)"]=],
    to = [=[  " OR abs(" v "::numeric) BETWEEN 1e-300 AND 1e300 END)"]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- ... so is a signed NaN or Infinity
    name = "pg-mark-signed-special-dropped", step = "own", file = "src/pg/lpg_queue_sql.h",
    fn = "LPG_Q_SQL_FLOAT8_TEXT", backend = "pg",
    from = [=[  "(CASE WHEN " v " ~* '^\\s*[-+]?(nan|inf|infinity)\\s*$' THEN true"              \]=],
    to = [=[  "(CASE WHEN " v " ~* '^\\s*(nan|inf|infinity)\\s*$' THEN true"              \]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- ... a failure out of range is not looked at
    name = "pg-mark-range-failure-unseen", step = "own", file = "src/pg/lpg_queue.c",
    fn = "lpg_q_mark_dropped", backend = "pg",
    from = [=[  if (!lpg_failed_with(db, "22P02") && !lpg_failed_with(db, "22003")) return 0;]=],
    to = [=[  if (!lpg_failed_with(db, "22P02")) return 0;]=],
    hint = "specs/25-hostile_values_spec.lua",
  },
  {
    -- cancel readies the connection after its transaction began, which
    -- rolls it back: the cancel commits alone, without its event
    name = "pg-cancel-ready-in-tx", step = "own", file = "src/pg/lpg_queue.c",
    fn = "admin_once", backend = "pg",
    from = [=[  if ((rc = lpg_ev_begin(db, &began)) != LEASE_OK) return rc;]=],
    to = [=[  if ((rc = lpg_ev_begin(db, &began)) != LEASE_OK || (rc = lpg_ready(db)) != LEASE_OK) return rc;]=],
    hint = "specs/35-postgres_spec.lua",
  },

  -- The pool and lost connections: errors waited out, results settled --
  {
    name = "pool-retried-never", step = "own", file = "lua/lease/pool.lua",
    fn = "retried",
    from = "  return code ~= nil and pool.RETRIED[backend][code] == true\n",
    to = "  return false\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-sqlite-ioerr-retried", step = "own", file = "lua/lease/pool.lua",
    fn = "retried",
    from = "  return code ~= nil and pool.RETRIED[backend][code] == true\n",
    to = "  return code ~= nil and (pool.RETRIED[backend][code] == true or code == \"ioerr\")\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-settle-own-done-refused", step = "own", file = "lua/lease/pool.lua",
    fn = "settle",
    from = "      if st and st.fence == r.fence and st.owner == w.owner then reason = nil end\n",
    to = "",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-settle-fence-unchecked", step = "own", file = "lua/lease/pool.lua",
    fn = "settle",
    from = "      if st and st.fence == r.fence and st.owner == w.owner then reason = nil end\n",
    to = "      if st then reason = nil end\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-settle-skipped", step = "own", file = "lua/lease/pool.lua",
    fn = "turn", backend = "pg",
    from = "  if w.pending then settle(w) end\n",
    to = "  w.pending = nil\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-end-count-not-retried", step = "own", file = "lua/lease/pool.lua",
    fn = "run", backend = "pg",
    from = "      if counted or try == 3 or not pool.retried(c, backend) then break end\n",
    to = "      break\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-retry-wait-uncapped", step = "own", file = "lua/lease/pool.lua",
    fn = "retry_wait", backend = "pg",
    from = "  if d > pool.RETRY_MAX then d = pool.RETRY_MAX end\n",
    to = "",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-format-made-up-counts", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = "  local c = s.counts\n",
    to = "  local c = s.counts or {}\n",
    hint = "specs/29-pool_service_spec.lua",
  },
  {
    name = "pool-format-queue-raw", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = [=[s.workers, show(tostring(s.queue))),]=],
    to = [=[s.workers, tostring(s.queue)),]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "pool-format-ids-raw", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = [=[lines[#lines + 1] = "discarded          " .. show(id)]=],
    to = [=[lines[#lines + 1] = "discarded          " .. id]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "pool-format-errors-raw", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = [=[lines[#lines + 1] = "handler error      " .. show(e) end]=],
    to = [=[lines[#lines + 1] = "handler error      " .. e end]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    -- the workers start before the pool catches SIGINT and SIGTERM
    name = "pool-signals-caught-after-spawn", step = "own", file = "lua/lease/pool.lua",
    fn = "run",
    from = "  if cfg.signals then lease.on_signal({ \"INT\", \"TERM\" }) end\n  local workers = spawn_workers(cfg, events, stop, db)\n",
    to = "  local workers = spawn_workers(cfg, events, stop, db)\n  if cfg.signals then lease.on_signal({ \"INT\", \"TERM\" }) end\n",
    hint = "specs/33-pool_process_spec.lua",
  },
  {
    -- a pool that cannot start its workers keeps catching the signals
    name = "pool-spawn-failure-keeps-signals", step = "own", file = "lua/lease/pool.lua",
    fn = "spawn_workers",
    from = [=[      if cfg.signals then require("lease").on_signal({ "INT", "TERM" }, false) end]=],
    to = [=[      if false then require("lease").on_signal({ "INT", "TERM" }, false) end]=],
    hint = "specs/33-pool_process_spec.lua",
  },
  {
    -- a worker file's error carries the pool's own frames
    name = "pool-worker-file-error-traced", step = "own", file = "lua/lease/pool.lua",
    fn = "_worker",
    from = [=[    if not made then error(setmetatable({ text = error_text(w) }, TRACED), 0) end]=],
    to = [=[    if not made then error(w, 0) end]=],
    hint = "specs/18-pool_spec.lua",
  },
  {
    -- every worker failing alike gets a line of its own
    name = "pool-format-failed-not-grouped", step = "own", file = "lua/lease/pool.lua",
    fn = "failed_lines",
    from = [=[    while who and failed[i + 1] and select(2, failed[i + 1]:match("^worker (%d+): (.*)$")) == text do]=],
    to = [=[    while false and who and failed[i + 1] and select(2, failed[i + 1]:match("^worker (%d+): (.*)$")) == text do]=],
    hint = "specs/18-pool_spec.lua",
  },
  {
    -- a traceback's lines each repeat the head
    name = "pool-format-failed-lines-unindented", step = "own", file = "lua/lease/pool.lua",
    fn = "failed_lines",
    from = [=[      prefix = "                   "]=],
    to = [=[      prefix = "worker failed      " .. head]=],
    hint = "specs/18-pool_spec.lua",
  },
  {
    name = "pool-format-no-default-escape", step = "own", file = "lua/lease/pool.lua",
    fn = "format",
    from = "  show = show or compat.hex_escaped\n",
    to = "  show = show or tostring\n",
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-pause-queue-raw", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_pause",
    from = [=[verb == "pause" and "paused" or "resumed", show_bytes(pos[2])))]=],
    to = [=[verb == "pause" and "paused" or "resumed", pos[2]))]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-limit-queue-raw", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_limit",
    from = [=[out:write("limited ", show_bytes(pos[2]), ": ",]=],
    to = [=[out:write("limited ", pos[2], ": ",]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-usage-message-raw", step = "own", file = "lua/lease/cli.lua",
    fn = "main",
    from = [=[err:write("lease ", name, ": ", show_bytes(res.msg), "\n", command_usage(cmd), "\n",]=],
    to = [=[err:write("lease ", name, ": ", res.msg, "\n", command_usage(cmd), "\n",]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-show-missing-id-raw", step = "own", file = "lua/lease/cli.lua",
    fn = "quoted",
    from = [=[  return '"' .. show_bytes(s) .. '"']=],
    to = [=[  return '"' .. s .. '"']=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "observe-until-zero-ends-a-lease", step = "own", file = "lua/lease/observe.lua",
    fn = "collect",
    from = [=[      local lease_end = (j.fence or 0) > 0 and type(u) == "number" and u > 0 and u]=],
    to = [=[      local lease_end = (j.fence or 0) > 0 and u]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-text-no-waiting", step = "own", file = "lua/lease/observe.lua",
    fn = "text",
    from = [=[    for _, stt in ipairs(STATUSES) do parts[#parts + 1] = s.counts[stt] .. " " .. stt end]=],
    to = [=[    for _, stt in ipairs(STATUSES) do
      if stt ~= "waiting" then parts[#parts + 1] = s.counts[stt] .. " " .. stt end
    end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-metrics-no-waiting", step = "own", file = "lua/lease/observe.lua",
    fn = "metrics",
    from = [=[      jobs[#jobs + 1] = { { { "queue", s.name }, { "status", stt } }, s.counts[stt] }]=],
    to = [=[      if stt ~= "waiting" then jobs[#jobs + 1] = { { { "queue", s.name }, { "status", stt } }, s.counts[stt] } end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "cli-queues-no-waiting-column", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_queues",
    edits = {
      { from = [=[    for _, c in ipairs(QUEUE_COLUMNS) do rows[1][#rows[1] + 1] = c:upper() end]=],
        to = [=[    for _, c in ipairs(QUEUE_COLUMNS) do
      if c ~= "waiting" then rows[1][#rows[1] + 1] = c:upper() end
    end]=] },
      { from = [=[      for _, c in ipairs(QUEUE_COLUMNS) do row[#row + 1] = tostring(q[c]) end]=],
        to = [=[      for _, c in ipairs(QUEUE_COLUMNS) do
        if c ~= "waiting" then row[#row + 1] = tostring(q[c]) end
      end]=] },
    },
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "cli-enqueue-priority-unbounded", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_enqueue",
    from = [=[priority = number_flag(flags, "--priority", "integer", INT32_MIN, INT32_MAX),]=],
    to = [=[priority = number_flag(flags, "--priority", "integer"),]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-number-flag-max-ignored", step = "own", file = "lua/lease/cli.lua",
    fn = "number_flag",
    from = [=[    if not x or (min and x < min) or (max and x > max) then]=],
    to = [=[    if not x or (min and x < min) then]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-queue-length-unchecked", step = "own", file = "lua/lease/cli.lua",
    fn = "queue_flag",
    from = [=[  if q and #q > QUEUE_MAX then]=],
    to = [=[  if false then]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-schedule-name-length-unchecked", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_schedule",
    from = [=[  if #pos[2] > SCHEDULE_NAME_MAX then]=],
    to = [=[  if false then]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-every-too-small-passed-on", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_schedule",
    from = [=[    if not (now + opts.every > now) then]=],
    to = [=[    if false then]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-dry-run-refusal-ignored", step = "own", file = "lua/lease/cli.lua",
    fn = "dry_run",
    from = [=[  if why then usage(why) end   -- any other error is the real write's to report]=],
    to = [=[]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-engine-refusal-exits-1", step = "own", file = "lua/lease/cli.lua",
    fn = "main",
    from = [=[  if refused then res = setmetatable({ msg = refused }, Usage) end]=],
    to = [=[]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-empty-path-passed-on", step = "own", file = "lua/lease/cli.lua",
    fn = "open_ro",
    from = [=[  if path == "" then usage("the database path is empty") end]=],
    to = [=[]=],
    hint = "specs/34-cli_queue_spec.lua",
  },
  {
    name = "cli-web-bind-unnamed", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_web",
    from = [=[    if why then usage("--bind needs " .. why:gsub("^not ", "", 1) .. ", got '" .. bind .. "'") end]=],
    to = [=[]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "web-listen-error-positioned", step = "own", file = "lua/lease/web.lua",
    fn = "serve",
    from = [=[  local listening, srv = pcall(httpd.listen, bind, port, function(req) return web.handle(ctx, req) end)]=],
    to = [=[  local listening, srv = true, httpd.listen(bind, port, function(req) return web.handle(ctx, req) end)]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "cli-stats-watch-sigint-fails", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_stats",
    from = [=[    if not ok and not (watch and tostring(e):find("interrupted!$")) then error(e, 0) end]=],
    to = [=[    if not ok then error(e, 0) end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "json-sorted-ignored", step = "own", file = "lua/lease/json.lua",
    fn = "encode",
    from = [=[                keys = options and options.sorted and {} or nil }]=],
    to = [=[                keys = nil }]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "json-nonfinite-raises", step = "own", file = "lua/lease/json.lua",
    fn = "prepare",
    from = [=[    if how.null_nonfinite and (v ~= v or v == math.huge or v == -math.huge) then return json.null end]=],
    to = [=[]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-json-unsorted", step = "own", file = "lua/lease/observe.lua",
    fn = "json",
    from = [=[    { sorted = true, null_nonfinite = true })]=],
    to = [=[    { null_nonfinite = true })]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-json-inf-raises", step = "own", file = "lua/lease/observe.lua",
    fn = "json",
    from = [=[    { sorted = true, null_nonfinite = true })]=],
    to = [=[    { sorted = true })]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "cli-queues-json-unsorted", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_queues",
    from = [=[      out:write(json.encode(qs, { sorted = true, null_nonfinite = true }), "\n")]=],
    to = [=[      out:write(json.encode(qs, { null_nonfinite = true }), "\n")]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "cli-queues-json-raw-names", step = "own", file = "lua/lease/cli.lua",
    fn = "cmd_queues",
    from = [=[        c.name = utf8_safe(q.name)]=],
    to = [=[        c.name = q.name]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-label-raw-bytes", step = "own", file = "lua/lease/observe.lua",
    fn = "label",
    from = [=[  if s:find("[\128-\255]") then]=],
    to = [=[  if false then]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "observe-label-cut-sequence-kept", step = "own", file = "lua/lease/compat.lua",
    fn = "utf8_sequence",
    from = [=[    if not b or b < 0x80 or b > 0xBF then return nil end]=],
    to = [=[    if b and (b < 0x80 or b > 0xBF) then return nil end]=],
    hint = "specs/59-observe_spec.lua",
  },
  {
    name = "httpd-query-cut-at-nul", step = "own", file = "src/host/host_httpd.c",
    fn = "hd_set_pair",
    from = [=[  lua_pushlstring(L, value ? value : "", value ? value_size : 0);]=],
    to = [=[  lua_pushstring(L, value ? value : ""); (void)value_size;]=],
    hint = "specs/61-web_spec.lua",
  },
  {
    name = "cli-usage-preloads-incomplete", step = "own", file = "lua/lease/cli.lua",
    fn = "usage",
    from = [=[    "lease.web, lease.compat and lease.testing are preloaded, and lease.httpd in a",]=],
    to = [=[    "lease.web and lease.testing are preloaded, and lease.httpd in a",]=],
    hint = "specs/70-docs_spec.lua",
  },
  {
    name = "web-serving-name-raw", step = "own", file = "lua/lease/web.lua",
    fn = "serve",
    from = [=[(one request at a time)\n", ctx.fmt.show(ctx.name),]=],
    to = [=[(one request at a time)\n", ctx.name,]=],
    hint = "specs/61-web_spec.lua",
  },
}
