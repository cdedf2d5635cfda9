-- specs/mutation/mutants.lua: the broken changes the spec suite must catch.
--
-- Each mutant is one exact search-and-replace on the real source: `from`
-- must occur exactly once in `file`, so a refactor that makes a mutant stale
-- fails the run loudly instead of letting it pass.  A mutant that needs
-- several edits of one file lists them as edits = {{from=, to=}, ...}.
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
return {
  -- The seed's broken changes (CONTRACT.md's table) ---------------------
  {
    name = "seed-1-create-not-idempotent", step = "1", file = "src/lease.c",
    from = [["CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "]],
    to = [["CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, "]],
    hint = "specs/01-init_spec.lua",
  },
  {
    name = "seed-2-insert-or-replace", step = "2", file = "src/lease.c",
    from = [["INSERT OR IGNORE INTO jobs(id) VALUES (?1)"]],
    to = [["INSERT OR REPLACE INTO jobs(id) VALUES (?1)"]],
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "seed-3-state-empty-table", step = "3", file = "src/lease_lua.c",
    from = "      if (found) push_row(L, &row);\n      else lua_pushnil(L);",
    to = "      if (found) push_row(L, &row);\n      else lua_newtable(L);",
    hint = "specs/03-state_spec.lua",
  },
  {
    name = "seed-4-claim-boundary-held", step = "4", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND done = 0 AND until < ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "seed-5-renew-revives-at-boundary", step = "5", file = "src/lease.c",
    from = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\"",
    to = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until >= ?4\"",
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "seed-6-complete-done-ge-0", step = "6", file = "src/lease.c",
    from = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\"",
    to = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done >= 0 AND until > ?4\"",
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "seed-7-release-resets-fence", step = "7", file = "src/lease.c",
    from = [["UPDATE jobs SET owner = NULL, until = 0"]],
    to = [["UPDATE jobs SET owner = NULL, until = 0, fence = 0"]],
    hint = "specs/07-release_spec.lua",
  },

  {
    name = "seed-8-claim-many-first-owner-only", step = "8", file = "src/lease_many.c",
    from = "    if (i >= run->n) break;",
    to = "    if (i >= 1) break;",
    hint = "specs/08-claim_many_spec.lua",
  },

  -- Our own: plausible slips a maintainer could make ---------------------
  {
    name = "complete-without-owner-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3",
    to = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND fence = ?3",
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "complete-without-fence-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3",
    to = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2",
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "complete-without-deadline-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\"",
    to = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND ?4 = ?4\"",
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "renew-without-fence-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3",
    to = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2",
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-without-owner-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3",
    to = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND fence = ?3",
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-without-deadline-check", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\"",
    to = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND ?4 = ?4\"",
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "renew-on-done-job", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
    to = "\"UPDATE jobs SET until = ?5\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done >= 0",
    hint = "specs/05-renew_spec.lua",
  },
  {
    name = "release-without-owner-check", step = "own", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
  /* ST_WRITE_WHY]],
    to = [[" WHERE id = ?1 AND fence = ?3 AND done = 0",
  /* ST_WRITE_WHY]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-without-fence-check", step = "own", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
  /* ST_WRITE_WHY]],
    to = [[" WHERE id = ?1 AND owner = ?2 AND done = 0",
  /* ST_WRITE_WHY]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-of-done-job", step = "own", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0",
  /* ST_WRITE_WHY]],
    to = [[" WHERE id = ?1 AND owner = ?2 AND fence = ?3",
  /* ST_WRITE_WHY]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "release-keeps-deadline", step = "own", file = "src/lease.c",
    from = [["UPDATE jobs SET owner = NULL, until = 0"]],
    to = [["UPDATE jobs SET owner = NULL"]],
    hint = "specs/07-release_spec.lua",
  },
  {
    name = "claim-without-done-check", step = "own", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND until <= ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-without-held-check", step = "own", file = "src/lease.c",
    from = [[" WHERE id = ?1 AND done = 0 AND until <= ?3"]],
    to = [[" WHERE id = ?1 AND done = 0 AND ?3 = ?3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-ignores-ttl", step = "own", file = "src/lease.c",
    from = "  sqlite3_bind_double(st, 3, now);\n  sqlite3_bind_double(st, 4, now + ttl);",
    to = "  sqlite3_bind_double(st, 3, now);\n  sqlite3_bind_double(st, 4, now);",
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "claim-returns-old-fence", step = "own", file = "src/lease.c",
    from = [[" RETURNING fence",]],
    to = [[" RETURNING fence - 1",]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "blocked-ignores-fence-max", step = "own", file = "src/lease.c",
    from = [[" WHEN fence >= 9223372036854775807 THEN 3"]],
    to = [[" WHEN fence > 9223372036854775807 THEN 3"]],
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "blocked-ignores-until-type", step = "own", file = "src/lease.c",
    from = [[" WHEN typeof(until) NOT IN ('integer', 'real') THEN 4 ELSE 0 END)"]],
    to = [[" ELSE 0 END)"]],
    hint = "specs/19-hostile_values_spec.lua",
  },
  {
    name = "claim-without-blocked-guard", step = "own", file = "src/lease.c",
    from = "  \" AND \" SQL_BLOCKED \" = 0\"\n  \" RETURNING fence\",",
    to = "  \" RETURNING fence\",",
    hint = "specs/19-hostile_values_spec.lua",
  },
  {
    name = "complete-without-blocked-guard", step = "own", file = "src/lease.c",
    from = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\"\n  \" AND \" SQL_BLOCKED \" = 0\",",
    to = "\"UPDATE jobs SET result = ?5, done = 1\"\n  \" WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4\",",
    hint = "specs/19-hostile_values_spec.lua",
  },
  {
    name = "claim-next-without-blocked-guard", step = "own", file = "src/lease.c",
    from = "  \" AND \" SQL_BLOCKED \" = 0\"\n  \" ORDER BY rowid LIMIT ?4)\"",
    to = "  \" ORDER BY rowid LIMIT ?4)\"",
    hint = "specs/19-hostile_values_spec.lua",
  },
  {
    name = "counts-ready-includes-blocked", step = "own", file = "src/lease.c",
    from = [["SELECT count(*), total(done <> 0), total(done = 0 AND b = 0 AND until <= ?1),"]],
    to = [["SELECT count(*), total(done <> 0), total(done = 0 AND until <= ?1),"]],
    hint = "specs/19-hostile_values_spec.lua",
  },
  {
    name = "claim-reason-held-for-done", step = "own", file = "src/lease.c",
    from = "    if (sqlite3_column_int(why, 0)) { if (reason) *reason = LEASE_DONE; }",
    to = "    if (sqlite3_column_int(why, 0)) { if (reason) *reason = LEASE_HELD; }",
    hint = "specs/04-claim_spec.lua",
  },
  {
    name = "reason-not-owner-as-stale-fence", step = "own", file = "src/lease.c",
    from = "      else if (sqlite3_column_int(why, 1)) *r = LEASE_NOT_OWNER;",
    to = "      else if (sqlite3_column_int(why, 1)) *r = LEASE_STALE_FENCE;",
    hint = "specs/06-complete_spec.lua",
  },
  {
    name = "enqueue-always-true", step = "own", file = "src/lease.c",
    from = "sqlite3_changes(db->conn) == 1 ? LEASE_GRANTED : LEASE_EXISTS",
    to = "LEASE_GRANTED",
    hint = "specs/02-enqueue_spec.lua",
  },
  {
    name = "result-bound-with-strlen", step = "own", file = "src/lease_lua.c",
    from = "        a->result = lua_tolstring(L, 6, &a->result_len);",
    to = "        a->result = lua_tostring(L, 6);\n        a->result_len = strlen(a->result);",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "id-bound-with-strlen", step = "own", file = "src/lease_lua.c",
    from = "  arg_length(L, c, i, what, lua_rawlen(L, i));\n  return lua_tolstring(L, i, len);",
    to = "  arg_length(L, c, i, what, lua_rawlen(L, i));\n  { const char *s_ = lua_tolstring(L, i, len); if (len) *len = strlen(s_); return s_; }",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "fence-type-check-removed", step = "own", file = "src/lease_lua.c",
    from = "  if (!isint) arg_fail(L, c, i, \"fence\", \"an integer\");",
    to = "  (void)c;\n  if (!isint) v = (lua_Integer)lua_tonumber(L, i);",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "time-check-left-to-the-core", step = "own", file = "src/lease_lua.c",
    from = "  bad = lease_check_time(*now, *ttl, &why);\n  if (bad) {",
    to = "  bad = lease_check_time(*now, *ttl, &why);\n  if (0) {",
    hint = "specs/11-bad_input_spec.lua",
  },
  {
    name = "synchronous-normal-by-default", step = "own", file = "src/lease.c",
    from = "  opt->synchronous = LEASE_SYNC_FULL;",
    to = "  opt->synchronous = LEASE_SYNC_NORMAL;",
    hint = "specs/13-interop_spec.lua",
  },
  {
    name = "busy-reported-as-held", step = "own", file = "src/lease_lua.c",
    from = "  if (rc != LEASE_OK) {\n    push_db_error(L, db, op_names[op]);",
    to = "  if (rc == LEASE_BUSY) {\n    lua_pushnil(L);\n    lua_pushliteral(L, \"held\");\n    return 2;\n  }\n  if (rc != LEASE_OK) {\n    push_db_error(L, db, op_names[op]);",
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "busy-handler-gives-up-at-once", step = "own", file = "src/lease.c",
    from = "  if (db->busy_timeout_ms <= 0) return 0;",
    to = "  if (db->busy_timeout_ms >= 0) return 0;",
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "schema-types-not-compared", step = "own", file = "src/lease.c",
    from = "    if (!type || strcasecmp(type, jobs_columns[k].type) != 0)",
    to = "    if (!type)",
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "wal-before-schema-check", step = "own", file = "src/lease.c",
    from = "  else if (rc == LEASE_OK) rc = check_schema(db, &missing);\n  if (rc == LEASE_OK && !(opt->flags & LEASE_OPEN_READONLY))\n    rc = exec1(db, \"PRAGMA journal_mode=WAL\");",
    to = "  if (rc == LEASE_OK && !(opt->flags & LEASE_OPEN_READONLY))\n    rc = exec1(db, \"PRAGMA journal_mode=WAL\");\n  if (rc == LEASE_OK && !precheck) rc = check_schema(db, &missing);",
    hint = "specs/12-failures_spec.lua",
  },
  {
    name = "state-done-as-number", step = "own", file = "src/lease_lua.c",
    from = "  lua_pushboolean(L, row->done);",
    to = "  lua_pushinteger(L, row->done);",
    hint = "specs/03-state_spec.lua",
  },
  {
    name = "gc-does-not-close", step = "own", file = "src/lease_lua.c",
    from = "static int m_gc(lua_State *L) {\n  lhandle *h = luaL_checkudata(L, 1, DB_MT);",
    to = "static int m_gc(lua_State *L) {\n  lhandle *h = luaL_checkudata(L, 1, DB_MT);\n  if (h) return 0;",
    hint = "specs/10-handle_spec.lua",
  },
  {
    name = "close-scope-does-not-close", step = "own", file = "src/lease_lua.c",
    from = "static int m_close_scope(lua_State *L) {\n  return close_handle(L, 1);",
    to = "static int m_close_scope(lua_State *L) {\n  (void)L;\n  return 0;",
    hint = "specs/10-handle_spec.lua",
  },
  {
    name = "path-function-leaves-connection-open", step = "own", file = "src/lease_lua.c",
    from = "  n = exec_op(L, db, op, &a);\n  close_handle(L, base + 1);",
    to = "  n = exec_op(L, db, op, &a);\n  (void)base;",
    hint = "specs/10-handle_spec.lua",
  },
  {
    name = "claim-next-boundary-held", step = "own", file = "src/lease.c",
    from = [[" WHERE rowid IN (SELECT rowid FROM jobs WHERE done = 0 AND until <= ?2"]],
    to = [[" WHERE rowid IN (SELECT rowid FROM jobs WHERE done = 0 AND until < ?2"]],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-next-takes-done-jobs", step = "own", file = "src/lease.c",
    from = [[" WHERE rowid IN (SELECT rowid FROM jobs WHERE done = 0 AND until <= ?2"]],
    to = [[" WHERE rowid IN (SELECT rowid FROM jobs WHERE until <= ?2"]],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-next-id-order", step = "own", file = "src/lease.c",
    from = [[" ORDER BY rowid LIMIT ?4)"]],
    to = [[" ORDER BY id LIMIT ?4)"]],
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-next-unsorted-result", step = "own", file = "src/lease.c",
    from = "  qsort(t, (size_t)n, sizeof *t, by_rowid);",
    to = "  qsort(t, (size_t)n, sizeof *t, by_rowid);\n  for (i = 0; i < n / 2; i++) { taken x_ = t[i]; t[i] = t[n - 1 - i]; t[n - 1 - i] = x_; }",
    hint = "specs/15-claim_next_spec.lua",
  },
  {
    name = "claim-read-then-write-without-lock", step = "own", file = "src/lease.c",
    edits = {
      { from = "\" WHERE id = ?1 AND done = 0 AND until <= ?3\"\n  \" AND \" SQL_BLOCKED \" = 0\"",
        to = "\" WHERE id = ?1 AND ?3 = ?3\"" },
      { from = "  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;\n  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);\n  sqlite3_bind_text(st, 2, owner, (int)owner_len, SQLITE_STATIC);\n  sqlite3_bind_double(st, 3, now);",
        to = "  sqlite3_bind_text(why, 1, id, (int)id_len, SQLITE_STATIC);\n  sqlite3_bind_double(why, 2, now);\n  src = sqlite3_step(why);\n  if (src == SQLITE_DONE || (src == SQLITE_ROW && (sqlite3_column_int(why, 0) || sqlite3_column_int(why, 1)))) {\n    if (reason) *reason = src == SQLITE_DONE ? LEASE_MISSING : sqlite3_column_int(why, 0) ? LEASE_DONE : LEASE_HELD;\n    sqlite3_reset(why);\n    return LEASE_OK;\n  }\n  sqlite3_reset(why);\n  if ((rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;\n  sqlite3_bind_text(st, 1, id, (int)id_len, SQLITE_STATIC);\n  sqlite3_bind_text(st, 2, owner, (int)owner_len, SQLITE_STATIC);\n  sqlite3_bind_double(st, 3, now);" },
    },
    hint = "specs/08-claim_many_spec.lua",
  },
  {
    name = "claim-many-results-in-wrong-slots", step = "own", file = "src/lease_many.c",
    from = "    run->fences[i] = fence;",
    to = "    run->fences[run->n - 1 - i] = fence;",
    hint = "specs/08-claim_many_spec.lua",
  },
  {
    name = "thread-copy-loses-integer-subtype", step = "own", file = "src/lease_copy.c",
    from = "      if (lua_isinteger(L, i)) {\n        lua_Integer v = lua_tointeger(L, i);",
    to = "      if (0) {\n        lua_Integer v = lua_tointeger(L, i);",
    hint = "specs/20-thread_spec.lua",
  },
  {
    name = "barrier-does-not-wait", step = "own", file = "src/lease_thread.c",
    from = "    while (b->round == round) pthread_cond_wait(&b->cv, &b->mu);",
    to = "    (void)round;",
    hint = "specs/20-thread_spec.lua",
  },
  {
    name = "barrier-true-to-all", step = "own", file = "src/lease_thread.c",
    from = "  lua_pushboolean(L, serial);",
    to = "  (void)serial;\n  lua_pushboolean(L, 1);",
    hint = "specs/20-thread_spec.lua",
  },
  -- complete_many (issue 6: the batched complete) ------------------------
  {
    name = "complete-many-stops-at-first-refused", step = "own", file = "src/lease.c",
    from = "    if (r == LEASE_GRANTED) done++;\n  }",
    to = "    if (r == LEASE_GRANTED) done++;\n    else break;\n  }",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-commits-each-job", step = "own", file = "src/lease.c",
    from = "    if (r == LEASE_GRANTED) done++;",
    to = "    if (r == LEASE_GRANTED) done++;\n"
      .. "    if ((rc = commit(db)) != LEASE_OK || (rc = run(db, ST_BEGIN)) != LEASE_OK) return rc;",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-counts-refused-as-stored", step = "own", file = "src/lease.c",
    from = "  if (stored) *stored = done;",
    to = "  if (stored) *stored = n;",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-no-expired-reason", step = "own", file = "src/lease.c",
    from = "it->fence, 1, now, 0,",
    to = "it->fence, 0, now, 0,",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-empty-id-unchecked", step = "own", file = "src/lease.c",
    from = "    if (len == LEASE_NTS) len = strlen(items[i].id);\n    if (len == 0) return fail(",
    to = "    if (len == LEASE_NTS) len = strlen(items[i].id);\n    if (0) return fail(",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-fence-unchecked", step = "own", file = "src/lease_lua.c",
    from = "  if (!isint)\n    arg_error(L, c, at, lua_pushfstring(L, \"jobs[%I].fence",
    to = "  if (0)\n    arg_error(L, c, at, lua_pushfstring(L, \"jobs[%I].fence",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-drops-result", step = "own", file = "src/lease_lua.c",
    from = "    case LUA_TSTRING: it->result = lua_tolstring(L, -1, &it->result_len); break;",
    to = "    case LUA_TSTRING: break;",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "complete-many-reads-through-metatables", step = "own", file = "src/lease_lua.c",
    from = "  lua_pushliteral(L, \"fence\");\n  if (lua_rawget(L, -2) == LUA_TNUMBER)",
    to = "  lua_pushliteral(L, \"fence\");\n  if (lua_gettable(L, -2) == LUA_TNUMBER)",
    hint = "specs/19-complete_many_spec.lua",
  },
  {
    name = "method-errors-count-self", step = "own", file = "src/lease_lua.c",
    from = "      strcmp(ar.namewhat, \"method\") == 0)\n    shift = 1;",
    to = "      strcmp(ar.namewhat, \"method\") == 0)\n    shift = 0;",
    hint = "specs/11-bad_input_spec.lua",
  },

  -- Hostile files (issue #7): the checks before SQLite writes anything --
  {
    name = "truncated-mid-page-accepted", step = "own", file = "src/lease.c",
    from = "(page & (page - 1)) == 0 && size % page != 0)",
    to = "(page & (page - 1)) == 0 && size % page > page)",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "wal-file-checked-in-place", step = "own", file = "src/lease.c",
    from = "  *precheck = !walfile && (hdr[18] == 2 || hdr[19] == 2);",
    to = "  *precheck = !walfile && (hdr[18] == 1 || hdr[19] == 1);",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "directory-left-to-sqlite", step = "own", file = "src/lease.c",
    from = "  if (S_ISDIR(st.st_mode))\n",
    to = "  if (S_ISDIR(st.st_mode) && 0)\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "fifo-and-devices-opened", step = "own", file = "src/lease.c",
    from = "  if (!S_ISREG(st.st_mode))\n",
    to = "  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))\n",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "one-byte-file-initialised", step = "own", file = "src/lease.c",
    from = "  if (size == 1 && hdr[0] != 'S')",
    to = "  if (size == 1 && hdr[0] == 'S')",
    hint = "specs/23-hostile_spec.lua",
  },
  {
    name = "missing-column-asked-about", step = "own", file = "src/lease.c",
    from = "  for (k = 0; k < NCOLUMNS; k++)\n    if (!seen[k])\n",
    to = "  for (k = 0; k < NCOLUMNS; k++)\n    if (!seen[k] && k >= 2)\n",
    hint = "specs/23-hostile_spec.lua",
  },

  -- Disk full (issue #7): an I/O error whose errno says "no room" is full --
  {
    name = "full-only-for-enospc", step = "own", file = "src/lease.c",
    from = "  return e == ENOSPC || e == EFBIG\n",
    to = "  return e == ENOSPC\n",
    hint = "specs/24-full_spec.lua",
  },
  {
    name = "full-errno-from-sqlite-only", step = "own", file = "src/lease.c",
    from = "  int e = sqlite3_system_errno(conn);\n  if (e) return e;\n",
    to = "  int e = sqlite3_system_errno(conn);\n  return e;\n",
    hint = "specs/24-full_spec.lua",
  },

  -- Power loss, simulated (specs/faults/powerloss.c): the test itself must
  -- see a sync that makes nothing durable and a FULL run lowered to NORMAL --
  {
    name = "powerloss-sync-makes-nothing-durable", step = "own", file = "specs/faults/powerloss.c",
    from = "  if (!lying_sync) clear_log(p->t);",
    to = "  if (0) clear_log(p->t);",
    hint = "specs/faults/powerloss.lua",
  },
  {
    name = "powerloss-full-run-at-normal", step = "own", file = "specs/faults/powerloss.c",
    from = "  if (normal) opt.synchronous = LEASE_SYNC_NORMAL;\n  remove_files(path);",
    to = "  opt.synchronous = LEASE_SYNC_NORMAL;\n  remove_files(path);",
    hint = "specs/faults/powerloss.lua",
  },
}
