/*
** lpg_tx.c: fenced side effects on PostgreSQL (lease.h: lease_with_lease,
** lease_tx_*, lease_fence_gate).
**
** with_lease holds one transaction on the handle's connection while the
** caller's callback runs: BEGIN, the lease check (LPG_TX_SQL_HOLDS:
** complete's guard read on the job's row locked FOR UPDATE, the reason from
** that locked row), the callback, then COMMIT, or ROLLBACK when the
** callback fails.
**
** The caller's statements (tx_run) are checked here before they are sent
** (scan: one statement, no transaction control, no SET, no LISTEN, no DDL
** naming the engine's tables, nothing temporary created, the parameters
** counted and `?` numbered), then sent
** with LPG_TX_MARK in front: the guard triggers (lpg_tx_sql.h) refuse any
** write of jobs or a lease_ table made under a marked statement, by what
** it does.  Each runs inside a savepoint of its own, sent in one round trip
** with it (libpq's pipeline mode), so that a refused or failed statement
** leaves the transaction usable, as on SQLite.
**
** Parameters: a statement written with $1, $2 ... is sent as it is;
** otherwise each `?` outside literals, quoted names and comments becomes
** $1, $2 ... in order, so the same SQL runs on both engines.
*/
#include "lpg_int.h"
#include "lpg_sql.h"
#include "lpg_tx_sql.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

/*
** A connection's state for this file (lpg_txstate).  The result of the
** caller's query and the row being handed out live here, not on the
** stack, so that a row callback that raises past call_rows (a Lua memory
** error) leaks nothing: the next statement, the end of with_lease or the
** handle's close frees them.
*/
typedef struct txstate {
  int schema_ok;          /* the gate's table and the guards exist */
  int in_row;             /* a row callback of the caller's query runs */
  PGresult *res;          /* the caller's result being handed out */
  lease_value *v;         /* its row: values, names, bytea copies */
  const char **names;
  unsigned char **bin;
  int nc;
} txstate;

/* db's state, created on first use; NULL when memory ran out (recorded). */
static txstate *state(lease_db *db) {
  void **slot = lpg_txstate(db);
  if (!*slot && !(*slot = calloc(1, sizeof(txstate))))
    lease__fail(db, LEASE_NOMEM, "out of memory");
  return *slot;
}

/* Free the caller's result and row, if any are left. */
static void finish_user(txstate *t) {
  int c;
  if (t->bin)
    for (c = 0; c < t->nc; c++) PQfreemem(t->bin[c]);
  free(t->v), free(t->names), free(t->bin);
  PQclear(t->res);
  t->v = NULL, t->names = NULL, t->bin = NULL, t->res = NULL;
  t->nc = 0;
  t->in_row = 0;
}

/* See lpg_int.h. */
void lpg_tx_close(lease_db *db) {
  void **slot = lpg_txstate(db);
  if (!*slot) return;
  finish_user(*slot);
  free(*slot);
  *slot = NULL;
}

/* PostgreSQL's type oids (pg_type.dat) read back here, beside lpg_int.h's. */
enum { T_BOOL = 16, T_INT2 = 21, T_OID = 26, T_FLOAT4 = 700, T_NUMERIC = 1700 };

/* ===================================================================== */
/* Schema: the gate's table and the guards                               */
/* ===================================================================== */

/* Make sure the gate's table and the guard triggers exist (once per
** connection): a database created before they were part of the schema,
** or a lease_ table added since, gets them under the init's advisory lock.
** LEASE_OK or the failure recorded. */
static int ensure_schema(lease_db *db) {
  txstate *t = state(db);
  PGresult *res;
  int missing, rc;
  if (!t) return db->rc;
  if (t->schema_ok) return LEASE_OK;
  res = PQexec(lpg_pq(db), LPG_TX_SQL_MISSING);
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    rc = lpg_fail_result(db, res);
    PQclear(res);
    return rc;
  }
  missing = PQgetvalue(res, 0, 0)[0] == 't';
  PQclear(res);
  if (missing && (rc = lpg_exec(db, LPG_TX_SQL_INIT)) != LEASE_OK) {
    lpg_rollback(db);
    return rc;
  }
  t->schema_ok = 1;
  return LEASE_OK;
}

/* ===================================================================== */
/* with_lease                                                             */
/* ===================================================================== */

/*
** The lease check before the callback, in the open transaction: the row
** locked, then the job's facts (LPG_TX_SQL_HOLDS, text columns) judged
** as complete's by the core's rules (lease__judge).  Sets *reason;
** returns LEASE_OK or a failure (a blocked job, the server's).
*/
static int check_lease(lease_db *db, const lease__write *w, int *reason) {
  static const Oid types[4] = {T_BYTEA, T_BYTEA, T_INT8, T_FLOAT8};
  char fence[8], now[8];
  const char *vals[4];
  int lens[4], fmts[4] = {1, 1, 1, 1}, rc = LEASE_OK;
  uint64_t bits;
  PGresult *res;
  memcpy(&bits, &w->now, sizeof bits);
  put_be(fence, (uint64_t)w->fence, 8);
  put_be(now, bits, 8);
  vals[0] = w->id_len ? w->id : "";
  lens[0] = (int)w->id_len;
  vals[1] = w->owner_len ? w->owner : "";
  lens[1] = (int)w->owner_len;
  vals[2] = fence;
  lens[2] = 8;
  vals[3] = now;
  lens[3] = 8;
  res = PQexecParams(lpg_pq(db), LPG_TX_SQL_HOLDS, 4, types, vals, lens, fmts, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    rc = lpg_fail_result(db, res);
  } else {
    lease__facts f = {0};
    if ((f.found = PQntuples(res) > 0)) {
      f.done = PQgetvalue(res, 0, 0)[0] == 't';
      f.qstate = atoi(PQgetvalue(res, 0, 1));
      f.other_owner = PQgetvalue(res, 0, 2)[0] == 't';
      f.other_fence = PQgetvalue(res, 0, 3)[0] == 't';
      f.blocked = atoi(PQgetvalue(res, 0, 4));
      f.expired = PQgetvalue(res, 0, 5)[0] == 't';
    }
    rc = lease__judge(db, w->op, &f, reason);
  }
  PQclear(res);
  return rc;
}

/* True when the transaction can still run statements. */
static int tx_alive(lease_db *db) {
  return PQtransactionStatus(lpg_pq(db)) == PQTRANS_INTRANS;
}

/* Record that the transaction is gone (a failure under the callback
** aborted it); returns that failure's code. */
static int ended_fail(lease_db *db, lease_tx *tx) {
  return lease__fail(db, tx->ended, "the with_lease transaction was ended by an earlier "
                     "failure inside its callback (%s): nothing is committed",
                     lease_errname(tx->ended));
}

/*
** lpg_ready, whose clock step runs at the with_lease's now.  A mark that
** is no number float8 reads fails the step; it is then dropped
** (lpg_q_mark_dropped) and the step runs once more, as lpg.c's rerun does
** for the other writes.  LEASE_OK or the failure recorded.
*/
static int ready_clocked(lease_db *db) {
  int rc = lpg_ready(db);
  if (rc == LEASE_OK || !lpg_q_mark_dropped(db)) return rc;
  lease__clear_error(db);
  return lpg_ready(db);
}

/* See lpg_int.h and lease.h. */
int lpg_with_lease(lease_db *db, lease_tx *tx, int *reason) {
  int rc;
  if ((rc = ready_clocked(db)) != LEASE_OK || (rc = ensure_schema(db)) != LEASE_OK) return rc;
  if ((rc = lpg_exec(db, "BEGIN")) != LEASE_OK) return rc;
  rc = check_lease(db, &tx->w, reason);
  if (rc != LEASE_OK || *reason != LEASE_GRANTED) {
    lpg_rollback(db);
    return rc;
  }
  tx->open = 1;
  rc = tx->fn(tx, tx->ctx);
  tx->open = 0;
  finish_user(state(db));   /* exists: ensure_schema made it */
  if (rc != LEASE_OK) {
    if (db->rc != rc)
      lease__fail(db, rc, "the with_lease callback returned %s: rolled back", lease_errname(rc));
    lpg_rollback(db);
    return rc;
  }
  if (!tx->ended && !tx_alive(db)) tx->ended = LEASE_ERROR;
  if (tx->ended) {
    lpg_rollback(db);
    return ended_fail(db, tx);
  }
  if ((rc = lpg_exec(db, LPG_TX_SQL_COMMIT)) != LEASE_OK) lpg_rollback(db);
  return rc;
}

/* ===================================================================== */
/* The caller's statements: the scan                                     */
/* ===================================================================== */

/* What scan found in the caller's sql. */
typedef struct scanned {
  char *text;         /* LPG_TX_MARK + the statement, `?` numbered (malloc) */
  int nparams;        /* the parameters it takes */
  int savepoint;      /* SAVEPOINT, RELEASE or ROLLBACK TO: not wrapped */
  const char *refused;  /* why it is refused, or NULL */
} scanned;

/* Up to this many leading words are kept for the checks. */
#define SCAN_WORDS 4
#define SCAN_WORD_MAX 24

static int ident_start(int c) { return isalpha(c) || c == '_' || c >= 0x80; }
static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

/* True when name (len bytes, already folded as PostgreSQL folds it) is the
** engine's: jobs, or a name starting with lease_. */
static int engine_name(const char *name, size_t len) {
  return (len == 4 && memcmp(name, "jobs", 4) == 0) ||
         (len >= 6 && memcmp(name, "lease_", 6) == 0);
}

/*
** Judge a statement by its leading words (folded to lower case), whether
** it names one of the engine's objects, whether it creates a table without
** starting with CREATE (into: SELECT ... INTO, also behind WITH, EXPLAIN
** ANALYZE or PREPARE; create: the word CREATE after EXPLAIN, as in EXPLAIN
** ANALYZE CREATE TABLE ... AS) and whether it names a temporary object
** (temp: TEMP or TEMPORARY where CREATE or INTO takes it, or a pg_temp
** name).  Returns why it is refused (transaction control,
** SET/RESET/DISCARD, DEALLOCATE and PREPARE of a lease_ name, COPY, LOAD,
** LISTEN and UNLISTEN, IMPORT FOREIGN SCHEMA, dropping a schema or what a
** role owns, DDL naming jobs or a lease_ object, a statement creating a
** temporary object or one naming the engine's), or NULL.  *savepoint:
** 1 for SAVEPOINT, RELEASE and ROLLBACK TO, which must not be wrapped in
** the engine's own savepoint.
**
** Temporary objects are refused whatever their names: they would stay in
** the engine's session after the with_lease, and the session's pg_temp is
** searched before every schema of search_path for relations and types, so
** a temporary table or view named jobs or lease_... would take the place
** of the engine's table in its later statements, and one named bytea,
** int8, text ... (a table is also a type of its name) the place of the
** type the engine's statements cast to.  Functions and operators are
** never looked up in pg_temp unless named with it.
*/
static const char *judge(char words[SCAN_WORDS][SCAN_WORD_MAX], int nwords, int names_engine,
                         int into, int create, int temp, int *savepoint) {
  const char *w0 = nwords > 0 ? words[0] : "", *w1 = nwords > 1 ? words[1] : "";
  const char *w2 = nwords > 2 ? words[2] : "";
  static const char *const ddl[] = {
    "create", "alter", "drop", "truncate", "comment", "grant", "revoke", "reindex",
    "cluster", "security", "refresh", "import", NULL,
  };
  int i;
  *savepoint = 0;
  if (!strcmp(w0, "savepoint") || !strcmp(w0, "release")) {
    *savepoint = 1;
    return NULL;
  }
  if (!strcmp(w0, "rollback") &&
      (!strcmp(w1, "to") || ((!strcmp(w1, "transaction") || !strcmp(w1, "work")) &&
                             !strcmp(w2, "to")))) {
    *savepoint = 1;
    return NULL;
  }
  if (!strcmp(w0, "begin") || !strcmp(w0, "start") || !strcmp(w0, "commit") ||
      !strcmp(w0, "end") || !strcmp(w0, "rollback") || !strcmp(w0, "abort") ||
      (!strcmp(w0, "prepare") && !strcmp(w1, "transaction")))
    return "it would begin, commit or roll back the with_lease transaction";
  if ((!strcmp(w0, "set") && strcmp(w1, "constraints") != 0) || !strcmp(w0, "reset") ||
      !strcmp(w0, "discard"))
    return "SET, RESET and DISCARD are not allowed inside with_lease (the engine's "
           "statements run in the same session)";
  if (!strcmp(w0, "deallocate") || (!strcmp(w0, "prepare") && names_engine))
    return "DEALLOCATE, and PREPARE of a lease_ name, are not allowed inside with_lease "
           "(the engine's prepared statements live in the same session)";
  if (!strcmp(w0, "copy")) return "COPY is not allowed inside with_lease: use INSERT";
  if (!strcmp(w0, "load"))
    return "LOAD is not allowed inside with_lease (the engine's statements run in the same "
           "session)";
  if (!strcmp(w0, "listen") || !strcmp(w0, "unlisten"))
    return "LISTEN and UNLISTEN are not allowed inside with_lease (the handle's wait listens "
           "in the same session)";
  if (!strcmp(w0, "import"))
    return "IMPORT FOREIGN SCHEMA is not allowed inside with_lease (the server names the "
           "tables it creates)";
  if (!strcmp(w0, "create") || into || (!strcmp(w0, "explain") && create)) {
    if (names_engine) return "it would change the engine's own tables (jobs, lease_fences)";
    if (temp)
      return "temporary objects are not allowed inside with_lease (they would stay in the "
             "engine's session, searched before its schema)";
  }
  if ((!strcmp(w0, "drop") && (!strcmp(w1, "schema") || !strcmp(w1, "owned"))) ||
      (!strcmp(w0, "reassign") && !strcmp(w1, "owned")))
    return "it would change the engine's own tables (jobs, lease_fences)";
  for (i = 0; ddl[i]; i++)
    if (!strcmp(w0, ddl[i]) && names_engine)
      return "it would change the engine's own tables (jobs, lease_fences)";
  return NULL;
}

/* Skip a dollar-quoted string starting at s[i] ('$'), or return i when
** it is not one (a parameter $n, or a '$' inside a name).  Returns the
** index after the closing tag. */
static size_t skip_dollar(const char *s, size_t n, size_t i) {
  size_t j = i + 1, tag;
  while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_' || (unsigned char)s[j] >= 0x80))
    j++;
  if (j >= n || s[j] != '$' || (j > i + 1 && isdigit((unsigned char)s[i + 1]))) return i;
  tag = j - i + 1;
  for (j = j + 1; j + tag <= n; j++)
    if (s[j] == '$' && memcmp(s + j, s + i, tag) == 0) return j + tag;
  return n;
}

/* Skip a comment (-- to the line's end, or nested slash-star) starting at
** s[i]; returns i when there is none. */
static size_t skip_comment(const char *s, size_t n, size_t i) {
  if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
    while (i < n && s[i] != '\n') i++;
  } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
    int depth = 1;
    for (i += 2; i < n && depth > 0; i++) {
      if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') depth++, i++;
      else if (s[i] == '*' && i + 1 < n && s[i + 1] == '/') depth--, i++;
    }
  }
  return i;
}

/* Skip a string literal ('...' or E'...') starting at s[i]; returns the
** index after its closing quote. */
static size_t skip_string(const char *s, size_t n, size_t i) {
  int esc = s[i] != '\'';
  for (i += esc ? 2 : 1; i < n; i++) {
    if (esc && s[i] == '\\' && i + 1 < n) i++;
    else if (s[i] == '\'' && i + 1 < n && s[i + 1] == '\'') i++;
    else if (s[i] == '\'') break;
  }
  return i + 1;
}

/* What scan gathers from the statement's tokens. */
typedef struct scan_state {
  char words[SCAN_WORDS][SCAN_WORD_MAX];   /* the leading words, folded */
  char prev[SCAN_WORD_MAX];                /* the token before, when a word */
  int nwords, nq, maxd, names_engine;      /* ?s, largest $n, an engine name */
  int into, create, temp;                  /* see judge */
} scan_state;

/* True when name (len bytes, folded) is pg_temp or a pg_temp_n schema. */
static int temp_name(const char *name, size_t len) {
  return len >= 7 && memcmp(name, "pg_temp", 7) == 0;
}

/* A quoted name starting at s[i] ('"'): notes whether it names one of the
** engine's tables; returns the index after its closing quote. */
static size_t scan_quoted(const char *s, size_t n, size_t i, scan_state *st) {
  size_t b = i + 1, len;
  for (i++; i < n; i++) {
    if (s[i] == '"' && i + 1 < n && s[i + 1] == '"') i++;
    else if (s[i] == '"') break;
  }
  len = (i < n ? i : n) - b;
  if (engine_name(s + b, len)) st->names_engine = 1;
  if (temp_name(s + b, len)) st->temp = 1;
  return i + 1;
}

/* A '$' at s[i]: a dollar-quoted string (skipped), a parameter $n (the
** largest noted), or a '$' inside a name.  Returns the index after it. */
static size_t scan_dollar(const char *s, size_t n, size_t i, scan_state *st) {
  size_t e = skip_dollar(s, n, i);
  long v = 0;
  if (e != i) return e;
  if (!(i + 1 < n && isdigit((unsigned char)s[i + 1]))) return i + 1;
  for (i++; i < n && isdigit((unsigned char)s[i]); i++)
    if (v < 100000) v = v * 10 + (s[i] - '0');
  if (v > st->maxd) st->maxd = (int)v;
  return i;
}

/* A name starting at s[i]: folded to lower case, noted when it names one
** of the engine's tables, kept when it is one of the leading words; INTO
** not right after INSERT or MERGE (SELECT ... INTO makes a table), CREATE,
** TEMP or TEMPORARY right after CREATE, REPLACE (OR REPLACE), GLOBAL,
** LOCAL or INTO, and a pg_temp name are noted for judge.  Returns the index
** after it. */
static size_t scan_word(const char *s, size_t n, size_t i, scan_state *st) {
  char fold[SCAN_WORD_MAX];
  size_t start = i, len, k;
  while (i < n && ident_char((unsigned char)s[i])) i++;
  len = i - start;
  for (k = 0; k < len && k < SCAN_WORD_MAX - 1; k++)
    fold[k] = (char)tolower((unsigned char)s[start + k]);
  fold[k] = '\0';
  if (engine_name(fold, len)) st->names_engine = 1;   /* fold holds the first 23 bytes */
  if (!strcmp(fold, "into") && strcmp(st->prev, "insert") != 0 && strcmp(st->prev, "merge") != 0)
    st->into = 1;
  if (!strcmp(fold, "create")) st->create = 1;
  if ((!strcmp(fold, "temp") || !strcmp(fold, "temporary")) &&
      (!strcmp(st->prev, "create") || !strcmp(st->prev, "replace") ||
       !strcmp(st->prev, "global") || !strcmp(st->prev, "local") || !strcmp(st->prev, "into")))
    st->temp = 1;
  if (temp_name(fold, len)) st->temp = 1;
  memcpy(st->prev, fold, k + 1);
  if (st->nwords < SCAN_WORDS) {
    memcpy(st->words[st->nwords], fold, k + 1);
    st->nwords++;
  }
  return i;
}

/* One token of the statement at s[i] that is neither blank, a comment nor
** ';': returns the index after it; a `?` is written to t as $n instead
** (*o advanced), every other token by the caller. */
static size_t scan_token(const char *s, size_t n, size_t i, scan_state *st, char *t,
                         size_t cap, size_t *o, int *copied) {
  unsigned char c = (unsigned char)s[i];
  *copied = 0;
  if (c == '\'' || ((c == 'e' || c == 'E') && i + 1 < n && s[i + 1] == '\''))
    return skip_string(s, n, i);
  if (ident_start(c)) return scan_word(s, n, i, st);
  st->prev[0] = '\0';   /* any other token: the next word follows no word */
  if (c == '"') return scan_quoted(s, n, i, st);
  if (c == '$') return scan_dollar(s, n, i, st);
  if (c == '?') {
    st->nq++;
    *o += (size_t)snprintf(t + *o, cap - *o, "$%d", st->nq);
    *copied = 1;
    return i + 1;
  }
  return i + 1;
}

/* Record a misuse found by scan, freeing its text; returns LEASE_MISUSE. */
static int scan_refuse(lease_db *db, char *t, scanned *out, const char *why) {
  free(t);
  out->text = NULL;
  return lease__fail(db, LEASE_MISUSE, "%s", why);
}

/*
** Scan the caller's sql as PostgreSQL's lexer reads it: literals ('',
** E'', $tag$), quoted names, comments, `?` and `$n` parameters, the
** leading words and every name.  Fills *out; LEASE_OK, or LEASE_MISUSE
** or LEASE_NOMEM recorded.
*/
static int scan(lease_db *db, const char *sql, scanned *out) {
  size_t n = strlen(sql), i = 0, o = 0, cap;
  scan_state st;
  int ended = 0, any = 0;
  char *t;
  memset(out, 0, sizeof *out);
  memset(&st, 0, sizeof st);
  cap = LPG_TX_MARK_LEN + n * 4 + 16;   /* each ? becomes at most "$NNNNNNNNNN" */
  if (!(t = malloc(cap))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  memcpy(t, LPG_TX_MARK, LPG_TX_MARK_LEN);
  o = LPG_TX_MARK_LEN;
  while (i < n) {
    size_t start = i;
    int copied = 0;
    if (isspace((unsigned char)sql[i])) {
      i++;
    } else if ((i = skip_comment(sql, n, i)) != start) {
      /* a comment, copied as it is */
    } else if (sql[i] == ';') {
      i++;
      ended = 1;
    } else {
      if (ended) return scan_refuse(db, t, out, "sql holds more than one statement");
      any = 1;
      i = scan_token(sql, n, i, &st, t, cap, &o, &copied);
    }
    if (i > n) i = n;
    if (!copied) {
      memcpy(t + o, sql + start, i - start);
      o += i - start;
    }
  }
  t[o] = '\0';
  out->text = t;
  if (!any) return scan_refuse(db, t, out, "sql holds no statement");
  if (st.nq && st.maxd)
    return scan_refuse(db, t, out, "sql mixes ? and $n parameters: use one kind");
  out->nparams = st.nq ? st.nq : st.maxd;
  out->refused = judge(st.words, st.nwords, st.names_engine, st.into, st.create, st.temp,
                       &out->savepoint);
  return LEASE_OK;
}

/* ===================================================================== */
/* The caller's statements: running them                                  */
/* ===================================================================== */

/* Refuse a tx call when the transaction is gone or a row callback runs. */
static int tx_usable(lease_tx *tx) {
  if (tx->ended || !tx_alive(tx->db)) {
    if (!tx->ended) tx->ended = LEASE_ERROR;
    return ended_fail(tx->db, tx);
  }
  if (((txstate *)*lpg_txstate(tx->db))->in_row)
    return lease__fail(tx->db, LEASE_MISUSE, "the tx cannot run a statement inside a row "
                       "callback of its own query");
  return LEASE_OK;
}

/* Note a failure that ended the transaction; returns rc. */
static int note_end(lease_tx *tx, int rc) {
  if (rc != LEASE_OK && !tx->ended && !tx_alive(tx->db)) tx->ended = rc;
  return rc;
}

/* The parameters as libpq takes them: integers and floats binary, byte
** strings as text (PostgreSQL converts them to the type the statement
** needs, as it does a literal), or as bytea when they hold a zero byte
** (text cannot) or are blobs. */
typedef struct sent {
  Oid *types;
  const char **vals;
  int *lens, *fmts;
  char (*num)[8];
  char **own;   /* text copies with their terminating zero */
} sent;

static void sent_free(sent *p, int n) {
  int i;
  if (p->own)
    for (i = 0; i < n; i++) free(p->own[i]);
  free(p->types);
  free(p->vals);
  free(p->lens);
  free(p->fmts);
  free(p->num);
  free(p->own);
}

static int sent_fill(lease_db *db, sent *p, const lease_value *values, int n) {
  int i;
  size_t k = n > 0 ? (size_t)n : 1;
  memset(p, 0, sizeof *p);
  p->types = calloc(k, sizeof *p->types);
  p->vals = calloc(k, sizeof *p->vals);
  p->lens = calloc(k, sizeof *p->lens);
  p->fmts = calloc(k, sizeof *p->fmts);
  p->num = calloc(k, sizeof *p->num);
  p->own = calloc(k, sizeof *p->own);
  if (!p->types || !p->vals || !p->lens || !p->fmts || !p->num || !p->own)
    return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (i = 0; i < n; i++) {
    const lease_value *v = &values[i];
    const char *s = v->s ? v->s : "";
    size_t len = v->s && v->len == LEASE_NTS ? strlen(v->s) : v->len;
    uint64_t bits;
    switch (v->type) {
      case LEASE_TYPE_INTEGER:
        put_be(p->num[i], (uint64_t)v->i, 8);
        p->types[i] = T_INT8, p->vals[i] = p->num[i], p->lens[i] = 8, p->fmts[i] = 1;
        break;
      case LEASE_TYPE_FLOAT:
        memcpy(&bits, &v->f, sizeof bits);
        put_be(p->num[i], bits, 8);
        p->types[i] = T_FLOAT8, p->vals[i] = p->num[i], p->lens[i] = 8, p->fmts[i] = 1;
        break;
      case LEASE_TYPE_TEXT:
        if (!memchr(s, '\0', len)) {
          if (!(p->own[i] = malloc(len + 1))) return lease__fail(db, LEASE_NOMEM, "out of memory");
          memcpy(p->own[i], s, len);
          p->own[i][len] = '\0';
          p->vals[i] = p->own[i];
          break;
        }
        p->types[i] = T_BYTEA, p->vals[i] = s, p->lens[i] = (int)len, p->fmts[i] = 1;
        break;   /* a zero byte: as bytea */
      case LEASE_TYPE_BLOB:
        p->types[i] = T_BYTEA, p->vals[i] = s, p->lens[i] = (int)len, p->fmts[i] = 1;
        break;
      default:
        break;   /* NULL: vals[i] stays NULL */
    }
  }
  return LEASE_OK;
}

/* Whether a numeric's text is a whole number that fits 64 bits. */
static int whole(const char *s, int64_t *out) {
  char *end;
  long long v;
  if (strchr(s, '.') || strchr(s, 'e') || strchr(s, 'E') || strchr(s, 'N')) return 0;
  v = strtoll(s, &end, 10);
  if (*end || (v == LLONG_MAX || v == LLONG_MIN)) return 0;
  *out = v;
  return 1;
}

/*
** Call row on each row of res: values converted as SQLite's binding gives
** them: integers (int2, int4, int8, oid, bool as 0 or 1, a whole numeric
** that fits), floats (float4, float8, other numerics), blobs (bytea),
** NULL, and text for every other type as PostgreSQL prints it.
*/
static int call_rows(lease_db *db, txstate *t, lease_row_fn *row, void *ctx) {
  const PGresult *res = t->res;
  int nc = PQnfields(res), nr = PQntuples(res), r, c, rc = LEASE_OK;
  if (nc == 0) return LEASE_OK;
  t->v = malloc((size_t)nc * sizeof *t->v);
  t->names = malloc((size_t)nc * sizeof *t->names);
  t->bin = calloc((size_t)nc, sizeof *t->bin);
  t->nc = nc;
  if (!t->v || !t->names || !t->bin) return lease__fail(db, LEASE_NOMEM, "out of memory");
  for (c = 0; c < nc; c++) t->names[c] = PQfname(res, c);
  for (r = 0; r < nr && rc == LEASE_OK; r++) {
    lease_value *v = t->v;
    for (c = 0; c < nc && rc == LEASE_OK; c++) {
      const char *s = PQgetvalue(res, r, c);
      memset(&v[c], 0, sizeof v[c]);
      if (PQgetisnull(res, r, c)) continue;
      switch (PQftype(res, c)) {
        case T_INT2: case T_INT4: case T_INT8: case T_OID:
          v[c].type = LEASE_TYPE_INTEGER, v[c].i = strtoll(s, NULL, 10);
          break;
        case T_BOOL:
          v[c].type = LEASE_TYPE_INTEGER, v[c].i = s[0] == 't';
          break;
        case T_NUMERIC:
          if (whole(s, &v[c].i)) v[c].type = LEASE_TYPE_INTEGER;
          else v[c].type = LEASE_TYPE_FLOAT, v[c].f = strtod(s, NULL);
          break;
        case T_FLOAT4: case T_FLOAT8:
          v[c].type = LEASE_TYPE_FLOAT, v[c].f = strtod(s, NULL);
          break;
        case T_BYTEA: {
          size_t len = 0;
          if (!(t->bin[c] = PQunescapeBytea((const unsigned char *)s, &len))) {
            rc = lease__fail(db, LEASE_NOMEM, "out of memory");
            break;
          }
          v[c].type = LEASE_TYPE_BLOB, v[c].s = (const char *)t->bin[c], v[c].len = len;
          break;
        }
        default:
          v[c].type = LEASE_TYPE_TEXT, v[c].s = s, v[c].len = (size_t)PQgetlength(res, r, c);
          break;
      }
    }
    if (rc == LEASE_OK) {
      t->in_row = 1;
      rc = row(ctx, nc, (const char *const *)t->names, v);
      t->in_row = 0;
    }
    for (c = 0; c < nc; c++) {
      PQfreemem(t->bin[c]);
      t->bin[c] = NULL;
    }
  }
  return rc;
}

/* The rows changed by a statement that writes rows (INSERT, UPDATE,
** DELETE, MERGE); 0 for any other. */
static int64_t changed(PGresult *res) {
  const char *tag = PQcmdStatus(res);
  if (strncmp(tag, "INSERT ", 7) && strncmp(tag, "UPDATE ", 7) && strncmp(tag, "DELETE ", 7) &&
      strncmp(tag, "MERGE ", 6))
    return 0;
  return strtoll(PQcmdTuples(res), NULL, 10);
}

/* Record the failure of the caller's statement: the guard's refusal as
** LEASE_MISUSE naming why, any other as the server's. */
static int user_fail(lease_db *db, const PGresult *res) {
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  if (state && strcmp(state, LPG_TX_GUARD_STATE) == 0)
    return lease__fail(db, LEASE_MISUSE, "statement refused: %s",
                       PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
  return lpg_fail_result(db, res);
}

/* Send sql into pg's pipeline with n parameters (p; NULL when n is 0),
** counting it in *queued; 0 when it cannot be sent. */
static int push(PGconn *pg, const char *sql, int n, const sent *p, int *queued) {
  if (!(n ? PQsendQueryParams(pg, sql, n, p->types, p->vals, p->lens, p->fmts, 0)
          : PQsendQueryParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0)))
    return 0;
  (*queued)++;
  return 1;
}

/* Send the session's prepared statement `name` (no parameters) into pg's
** pipeline, counting it in *queued; 0 when it cannot be sent. */
static int push_prepared(PGconn *pg, const char *name, int *queued) {
  if (!PQsendQueryPrepared(pg, name, 0, NULL, NULL, NULL, 0)) return 0;
  (*queued)++;
  return 1;
}

/* Read and drop pg's results up to its pipeline's sync. */
static void read_to_sync(PGconn *pg) {
  PGresult *res;
  while ((res = PQgetResult(pg)) != NULL) {
    ExecStatusType st = PQresultStatus(res);
    PQclear(res);
    if (st == PGRES_PIPELINE_SYNC) break;
  }
}

/* Roll the transaction back to the savepoint send_wrapped made, and let
** it go. */
static void back_to_savepoint(PGconn *pg) {
  PQclear(PQexec(pg, "ROLLBACK TO SAVEPOINT lease_stmt; RELEASE SAVEPOINT lease_stmt"));
}

/*
** Undo a pipeline of pg whose sending failed after `queued` statements
** went (libpq refuses, for one, a statement of more than 65535
** parameters): sync, read and drop their results, leave pipeline mode,
** and when the first of them was the savepoint (savepoint 1), roll back to
** it, so the transaction is as before the call and the connection takes
** the next one.
*/
static void unsend(PGconn *pg, int queued, int savepoint) {
  PGresult *res;
  int q;
  if (PQpipelineSync(pg)) {
    for (q = 0; q < queued; q++)
      while ((res = PQgetResult(pg)) != NULL) PQclear(res);
    read_to_sync(pg);
  }
  PQexitPipelineMode(pg);
  if (savepoint && PQstatus(pg) == CONNECTION_OK) back_to_savepoint(pg);
}

/*
** Send the statement, wrapped in a savepoint unless it is a savepoint
** command itself, in one round trip (pipeline mode), and return its result
** (NULL with the failure recorded).  A failure rolls back to the
** savepoint, so the transaction stays usable.  Inside the savepoint the
** statement runs with enable_seqscan at the server's setting (SET LOCAL
** ... TO DEFAULT): the session prices sequential scans out for the
** engine's statements (lpg.c: set_session), which a caller's query that
** reads a whole table should not pay.  After it the statement lpg.c's
** keep_settings prepared sets the session's settings again, at the
** session's level, whatever the caller's statement did with set_config():
** enable_seqscan off, and the search_path, synchronous_commit, isolation
** and lock_timeout the engine's statements rely on, for the rest of the
** transaction and after its commit.  A failure's rollback to the
** savepoint undoes the statement's settings and the SET LOCAL.
*/
static PGresult *send_wrapped(lease_db *db, const scanned *sc, const sent *p, int n) {
  PGconn *pg = lpg_pq(db);
  PGresult *res, *mine = NULL, *first_err = NULL;
  int q, nq = sc->savepoint ? 1 : 5, at = sc->savepoint ? 0 : 2, queued = 0, ok;
  if (!PQenterPipelineMode(pg)) {
    lpg_fail_result(db, NULL);
    return NULL;
  }
  ok = (sc->savepoint || (push(pg, "SAVEPOINT lease_stmt", 0, NULL, &queued) &&
                          push(pg, "SET LOCAL enable_seqscan TO DEFAULT", 0, NULL, &queued))) &&
       push(pg, sc->text, n, p, &queued) &&
       (sc->savepoint || (push_prepared(pg, LPG_SETTINGS_STMT, &queued) &&
                          push(pg, "RELEASE SAVEPOINT lease_stmt", 0, NULL, &queued))) &&
       PQpipelineSync(pg);
  if (!ok) {
    lpg_fail_result(db, NULL);
    unsend(pg, queued, !sc->savepoint && queued > 0);
    return NULL;
  }
  for (q = 0; q < nq; q++) {
    while ((res = PQgetResult(pg)) != NULL) {
      ExecStatusType st = PQresultStatus(res);
      if (q == at && !mine && (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)) {
        mine = res;
        continue;
      }
      if (!first_err && st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK &&
          st != PGRES_PIPELINE_ABORTED)
        first_err = res;
      else
        PQclear(res);
    }
    if (PQstatus(pg) != CONNECTION_OK) break;
  }
  read_to_sync(pg);
  if (first_err) user_fail(db, first_err);
  else if (!mine) lpg_fail_result(db, NULL);
  if (lpg_pipeline_end(db, first_err || !mine ? db->rc : LEASE_OK) != LEASE_OK) {
    PQclear(first_err);
    PQclear(mine);
    if (!sc->savepoint && PQstatus(pg) == CONNECTION_OK &&
        PQpipelineStatus(pg) == PQ_PIPELINE_OFF && PQtransactionStatus(pg) == PQTRANS_INERROR)
      back_to_savepoint(pg);
    return NULL;
  }
  return mine;
}

/* See lpg_int.h and lease.h: one statement of the caller's inside tx. */
int lpg_tx_run(lease_tx *tx, const char *sql, const lease_value *values, int n,
               lease_row_fn *row, void *ctx, int64_t *changes) {
  lease_db *db = tx->db;
  txstate *t = *lpg_txstate(db);
  scanned sc;
  sent p;
  int rc;
  if ((rc = tx_usable(tx)) != LEASE_OK) return rc;
  finish_user(t);
  if ((rc = scan(db, sql, &sc)) != LEASE_OK) return rc;
  if (sc.refused) {
    free(sc.text);
    return lease__fail(db, LEASE_MISUSE, "statement refused: %s", sc.refused);
  }
  if (sc.nparams != n) {
    free(sc.text);
    return lease__fail(db, LEASE_MISUSE, "sql has %d parameters, %d given", sc.nparams, n);
  }
  if ((rc = sent_fill(db, &p, values, n)) == LEASE_OK) {
    if (!(t->res = send_wrapped(db, &sc, &p, n))) {
      rc = db->rc;
    } else {
      if (row) rc = call_rows(db, t, row, ctx);
      if (rc == LEASE_OK && changes) *changes = changed(t->res);
    }
    finish_user(t);
  }
  sent_free(&p, n);
  free(sc.text);
  return note_end(tx, rc);
}

/* See lpg_int.h: renew or complete of the held job inside tx.  A complete
** runs in a savepoint: its statement fails on the server when its queue
** row was not written (lpg_sql.h: LPG_SQL_COMPLETE), and a failure rolls
** back to the savepoint, so the complete stores nothing and the
** transaction stays usable, as on SQLite. */
int lpg_tx_write(lease_tx *tx, const lease__write *w, int *reason) {
  PGconn *pg = lpg_pq(tx->db);
  int rc;
  if ((rc = tx_usable(tx)) != LEASE_OK) return rc;
  if (w->op != LEASE__COMPLETE) return note_end(tx, lpg_guarded(tx->db, w, reason));
  if ((rc = lpg_exec(tx->db, "SAVEPOINT lease_write")) != LEASE_OK) return note_end(tx, rc);
  rc = lpg_guarded(tx->db, w, reason);
  if (rc != LEASE_OK && PQstatus(pg) == CONNECTION_OK && PQtransactionStatus(pg) != PQTRANS_IDLE)
    PQclear(PQexec(pg, "ROLLBACK TO SAVEPOINT lease_write"));
  if (PQstatus(pg) == CONNECTION_OK && PQtransactionStatus(pg) == PQTRANS_INTRANS)
    PQclear(PQexec(pg, "RELEASE SAVEPOINT lease_write"));
  return note_end(tx, rc);
}

/* ===================================================================== */
/* The fence gate                                                         */
/* ===================================================================== */

/* After a gate of fence for resource vals[0] (lens[0] bytes) changed no
** row: LEASE_OK when a larger fence is stored (the gate refused it), else
** LEASE_MISMATCH recorded (another client's trigger skipped the upsert:
** lease__skipped). */
static int gate_refused(lease_db *db, const char *const vals[2], const int lens[2],
                        int64_t fence) {
  static const Oid types[1] = {T_BYTEA};
  static const int fmts[1] = {1};
  PGresult *res = PQexecParams(lpg_pq(db), LPG_TX_SQL_GATE_STORED, 1, types, vals, lens, fmts, 1);
  int larger;
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    lpg_fail_result(db, res);
    PQclear(res);
    return db->rc;
  }
  larger = PQntuples(res) == 1 && r_i8(res, 0, 0) > fence;
  PQclear(res);
  return larger ? LEASE_OK : lease__skipped(db, "fence_gate's fence of", vals[0], (size_t)lens[0]);
}

/* See lpg_int.h and lease.h: one statement, on its own or inside tx; a
** gate that changed no row is checked (gate_refused). */
int lpg_fence_gate(lease_db *db, lease_tx *tx, const char *resource, size_t resource_len,
                   int64_t fence, int *reason) {
  static const Oid types[2] = {T_BYTEA, T_INT8};
  char f[8];
  const char *vals[2] = {resource, f};
  int lens[2] = {(int)resource_len, 8}, fmts[2] = {1, 1}, rc;
  PGresult *res;
  if (tx) {
    if ((rc = tx_usable(tx)) != LEASE_OK) return rc;
  } else if ((rc = lpg_ready(db)) != LEASE_OK) {
    return rc;
  }
  if ((rc = ensure_schema(db)) != LEASE_OK) return tx ? note_end(tx, rc) : rc;
  put_be(f, (uint64_t)fence, 8);
  res = PQexecParams(lpg_pq(db), LPG_TX_SQL_GATE, 2, types, vals, lens, fmts, 0);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) {
    rc = lpg_fail_result(db, res);
  } else {
    *reason = lease__gate_reason(strcmp(PQcmdTuples(res), "1") == 0);
    rc = LEASE_OK;
  }
  PQclear(res);
  if (rc == LEASE_OK && *reason != LEASE_GRANTED) rc = gate_refused(db, vals, lens, fence);
  return tx ? note_end(tx, rc) : rc;
}
