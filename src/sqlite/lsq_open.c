/*
** lsq_open.c: opening a database file for the SQLite backend: the path and
** the file as found (before SQLite writes anything beside it), the jobs
** table checked against the contract, then WAL, synchronous, the WAL's
** size bound, and the table and index created when missing.
**
** Every statement here runs through lsq_query, so each waits out locks up
** to the busy timeout, also where SQLite itself would not wait (lsq_conn.c).
*/
#include "lsq.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ===================================================================== */
/* The path and the file, before SQLite reads them                        */
/* ===================================================================== */

/*
** Refuse a path that names something other than a regular file, before
** SQLite opens it: a directory (SQLite's read-only open of one succeeds,
** then fails as a "disk I/O error"), a FIFO (a read-only open blocks for
** ever), a device (/dev/null swallows every write, and SQLite creates
** /dev/null-journal beside it).  A missing path is left to SQLite (it
** creates the file, or refuses); so are ":memory:", "" and "file:" URIs,
** which name no file directly.  A file with more than one hard link is
** refused too: SQLite names the -wal and -shm after the path it opened,
** so two processes opening one file by two names would each keep their
** own -wal over it, and one would hand out a fence the other had handed
** out (a symbolic link is resolved by SQLite: one name, one -wal).  Only
** stat(): no descriptor of ours is ever opened on a database file
** (closing one would drop the POSIX locks that the process's SQLite
** connections hold on it).
*/
static int check_path(lease_db *db, const char *path) {
  struct stat st;
  if (!path[0] || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
    return LEASE_OK;
  if (stat(path, &st) != 0) return LEASE_OK;
  if (S_ISDIR(st.st_mode))
    return lease__fail(db, LEASE_CANTOPEN, "unable to open database file: it is a directory");
  if (!S_ISREG(st.st_mode))
    return lease__fail(db, LEASE_CANTOPEN, "unable to open database file: not a regular file");
  if (st.st_nlink > 1)
    return lease__fail(db, LEASE_CANTOPEN,
                       "unable to open database file: it has %lu hard links (each name would "
                       "get a -wal of its own); open it by one name only",
                       (unsigned long)st.st_nlink);
  return LEASE_OK;
}

/* Refuse a file that starts like a database but was cut short: shorter
** than the 100-byte header, or not a whole number of its pages. */
static int check_length(lease_db *db, const unsigned char *hdr, long long size) {
  int page;
  if (size < 100)
    return lease__fail(db, LEASE_CORRUPT, "database disk image is malformed: the file is %lld "
                       "bytes, shorter than the 100-byte header (truncated)", size);
  page = hdr[16] << 8 | hdr[17];
  if (page == 1) page = 65536;
  if (page >= 512 && page <= 65536 && (page & (page - 1)) == 0 && size % page != 0)
    return lease__fail(db, LEASE_CORRUPT, "database disk image is malformed: the file is %lld "
                       "bytes, not a whole number of its %d-byte pages (truncated)", size, page);
  return LEASE_OK;
}

/*
** Look at the database file before SQLite reads it: its size (stat) and its
** first 100 bytes, read through the connection's own file handle
** (SQLITE_FCNTL_FILE_POINTER; SQLite opens the file at sqlite3_open_v2 but
** reads nothing until the first statement).
**
** A file of one byte other than "S" is not a database: SQLite reports a
** one-byte file as empty (a work-around of its own for OS X's msdos file
** system, where it writes that "S"), then initialises it over the byte.
**
** A file that starts like a database ("SQLite format 3") but was cut short
** (check_length) is refused as corrupt: SQLite itself opens one that is not
** a whole number of pages, reads the missing tail as zeros and writes to
** it.  A -wal file holding frames may complete the file (a checkpoint
** rewrites it), and so may a hot -journal (a power loss inside a rollback
** transaction, such as the one that creates the table of a new file: the
** first read rolls it back), so then the check is SQLite's.  The size is read before
** the -wal is looked at: a checkpoint extending the file runs only while
** the -wal holds frames.
**
** Sets *precheck when the file is in WAL mode (header bytes 18-19) and has
** no -wal: SQLite would create -wal and -shm beside it at the first read
** and leave them behind when the file then turns out corrupt or someone
** else's (check_schema_immutable avoids that).
*/
static int check_file(lease_db *db, int *precheck) {
  sqlite3 *sql = LSQ(db)->sql;
  sqlite3_file *f = NULL;
  long long size;
  unsigned char hdr[100];
  const char *name = sqlite3_db_filename(sql, "main"), *wal, *journal;
  struct stat st;
  int src, walfile = 0, rc;
  *precheck = 0;
  if (!name || !name[0]) return LEASE_OK;
  /* Whatever the file turns out to be, a -wal it came with stays as it
  ** was when the file is refused (lsq_open). */
  wal = sqlite3_filename_wal(name);
  if (wal && stat(wal, &st) == 0 && st.st_size > 0) LSQ(db)->wal_given = 1;
  if (stat(name, &st) != 0 || st.st_size <= 0) return LEASE_OK;
  size = (long long)st.st_size;
  if (sqlite3_file_control(sql, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK || !f ||
      !f->pMethods)
    return LEASE_OK;
  memset(hdr, 0, sizeof hdr);
  src = f->pMethods->xRead(f, hdr, size < 100 ? (int)size : 100, 0);
  if (src != SQLITE_OK && src != SQLITE_IOERR_SHORT_READ) return LEASE_OK;   /* SQLite will say */
  if (size == 1 && hdr[0] != 'S')
    return lease__fail(db, LEASE_NOTADB, "file is not a database: one byte");
  /* Not a database at all: SQLite refuses it (notadb) before creating anything. */
  if (memcmp(hdr, "SQLite format 3", 16) != 0) return LEASE_OK;
  if (wal && stat(wal, &st) == 0) {
    walfile = 1;
    if (st.st_size > 0) return LEASE_OK;
  }
  journal = sqlite3_filename_journal(name);
  if (journal && stat(journal, &st) == 0 && st.st_size > 0) return LEASE_OK;
  if ((rc = check_length(db, hdr, size)) != LEASE_OK) return rc;
  *precheck = !walfile && (hdr[18] == 2 || hdr[19] == 2);
  return LEASE_OK;
}

/* ===================================================================== */
/* The jobs table against the contract                                    */
/* ===================================================================== */

/* One column of the contract's jobs table. */
typedef struct column_spec {
  const char *name;
  const char *type;
  int notnull_zero;   /* 1: must be NOT NULL DEFAULT 0 */
  int pk;             /* 1: the primary key */
} column_spec;

static const column_spec jobs_columns[] = {
  {"id", "TEXT", 0, 1},
  {"owner", "TEXT", 0, 0},
  {"until", "REAL", 1, 0},
  {"fence", "INTEGER", 1, 0},
  {"result", "TEXT", 0, 0},
  {"done", "INTEGER", 1, 0},
};
#define NCOLUMNS (sizeof jobs_columns / sizeof jobs_columns[0])

/* True when a column default (as PRAGMA table_info prints it) is zero:
** "0", "0.0", "'0'", "(0)" all count. */
static int default_is_zero(const char *d) {
  char tmp[64];
  size_t n, i = 0, j;
  char *end;
  double v;
  if (!d) return 0;
  n = strlen(d);
  if (n >= sizeof tmp) return 0;
  j = n;
  while (i < j && (d[i] == '(' || d[i] == '\'' || d[i] == '"')) i++;
  while (j > i && (d[j - 1] == ')' || d[j - 1] == '\'' || d[j - 1] == '"')) j--;
  memcpy(tmp, d + i, j - i);
  tmp[j - i] = '\0';
  if (!tmp[0]) return 0;
  v = strtod(tmp, &end);
  return *end == '\0' && v == 0.0;
}

/* Row of "SELECT type FROM sqlite_master ...": *(int *)ctx = 1 (found); a
** jobs that is not a table is refused. */
static int on_jobs_kind(lease_db *db, sqlite3_stmt *st, void *ctx) {
  const char *type = (const char *)sqlite3_column_text(st, 0);
  *(int *)ctx = 1;
  if (!type || strcmp(type, "table") != 0)
    return lease__fail(db, LEASE_SCHEMA, "jobs is a %s, not a table", type ? type : "?");
  return LSQ_STOP;
}

/* What check_columns gathers over PRAGMA table_info's rows. */
typedef struct columns_seen {
  int rows;
  int seen[NCOLUMNS];
} columns_seen;

/* A column of another client's: allowed when an INSERT of the id alone
** can fill it, and when it hides nothing the engine relies on. */
static int check_other_column(lease_db *db, const char *name, int notnull, const char *dflt,
                              int pk) {
  if (name && (strcasecmp(name, "rowid") == 0 || strcasecmp(name, "oid") == 0 ||
               strcasecmp(name, "_rowid_") == 0))
    return lease__fail(db, LEASE_SCHEMA, "jobs has a column named %s, which hides the rowid "
                       "the engine keeps enqueue order in", name);
  if (pk)
    return lease__fail(db, LEASE_SCHEMA, "jobs has column %s in its primary key; only id may be",
                       name);
  if (notnull && !dflt)
    return lease__fail(db, LEASE_SCHEMA, "jobs has column %s NOT NULL without a default, so "
                       "enqueue could not insert", name);
  return LEASE_OK;
}

/* Row of PRAGMA table_info(jobs): a contract column must keep its name,
** type, primary key and NOT NULL DEFAULT 0. */
static int on_column(lease_db *db, sqlite3_stmt *st, void *ctx) {
  columns_seen *cs = ctx;
  const char *name = (const char *)sqlite3_column_text(st, 1);
  const char *type = (const char *)sqlite3_column_text(st, 2);
  int notnull = sqlite3_column_int(st, 3);
  const char *dflt = (const char *)sqlite3_column_text(st, 4);
  int pk = sqlite3_column_int(st, 5);
  const column_spec *c;
  size_t k;
  cs->rows++;
  for (k = 0; k < NCOLUMNS; k++)
    if (name && strcasecmp(name, jobs_columns[k].name) == 0) break;
  if (k == NCOLUMNS) return check_other_column(db, name, notnull, dflt, pk);
  c = &jobs_columns[k];
  cs->seen[k] = 1;
  if (!type || strcasecmp(type, c->type) != 0)
    return lease__fail(db, LEASE_SCHEMA, "jobs.%s is %s, expected %s", c->name,
                       type && *type ? type : "untyped", c->type);
  if ((pk != 0) != c->pk)
    return lease__fail(db, LEASE_SCHEMA, c->pk ? "jobs.%s is not the primary key"
                                               : "jobs.%s is part of the primary key", c->name);
  if (c->notnull_zero && !(notnull && default_is_zero(dflt)))
    return lease__fail(db, LEASE_SCHEMA, "jobs.%s must be NOT NULL DEFAULT 0", c->name);
  return LEASE_OK;
}

/* The six columns, each as the contract declares it; extra columns as
** check_other_column allows. */
static int check_columns(lease_db *db, sqlite3 *sql) {
  columns_seen cs;
  size_t k;
  int rc;
  memset(&cs, 0, sizeof cs);
  if ((rc = lsq_query(db, sql, "PRAGMA table_info(jobs)", on_column, &cs)) != LEASE_OK) return rc;
  if (cs.rows == 0) return lease__fail(db, LEASE_SCHEMA, "jobs has no columns");
  for (k = 0; k < NCOLUMNS; k++)
    if (!cs.seen[k])
      return lease__fail(db, LEASE_SCHEMA, "jobs has no column %s %s", jobs_columns[k].name,
                         jobs_columns[k].type);
  return LEASE_OK;
}

/* Ids and owners are byte strings, compared byte for byte: a NOCASE or
** RTRIM collation would make "a " the same job as "a", "W" the owner "w".
** Runs after check_columns (sqlite3_table_column_metadata fails on a
** missing column). */
static int check_collations(lease_db *db, sqlite3 *sql) {
  size_t k;
  for (k = 0; k < 2; k++) {
    const char *coll = NULL;
    int src = sqlite3_table_column_metadata(sql, "main", "jobs", jobs_columns[k].name, NULL,
                                            &coll, NULL, NULL, NULL);
    if (src != SQLITE_OK) return lsq_fail(db, sql, src);
    if (coll && strcasecmp(coll, "BINARY") != 0)
      return lease__fail(db, LEASE_SCHEMA, "jobs.%s has collation %s; ids and owners must "
                         "compare byte for byte (BINARY)", jobs_columns[k].name, coll);
  }
  return LEASE_OK;
}

/* Row of PRAGMA index_list(jobs): another unique index would make enqueue
** refuse ids the primary key allows (INSERT OR IGNORE says "exists"). */
static int on_index(lease_db *db, sqlite3_stmt *st, void *ctx) {
  const char *origin = (const char *)sqlite3_column_text(st, 3);
  (void)ctx;
  if (sqlite3_column_int(st, 2) && (!origin || strcmp(origin, "pk") != 0))
    return lease__fail(db, LEASE_SCHEMA, "jobs has the unique index %s besides its primary key",
                       (const char *)sqlite3_column_text(st, 1));
  return LEASE_OK;
}

/* Enqueue order is rowid order: a WITHOUT ROWID or virtual table has none. */
static int check_rowid(lease_db *db, sqlite3 *sql) {
  int rc = lsq_query(db, sql, "SELECT rowid FROM jobs LIMIT 0", NULL, NULL);
  if (rc == LEASE_ERROR)
    return lease__fail(db, LEASE_SCHEMA, "jobs has no rowid (a WITHOUT ROWID table?), which the "
                       "engine keeps enqueue order in");
  return rc;
}

/*
** Compare the jobs table on connection sql with the contract, then read
** the file's schema version (lsq_schema_read: a version newer than this
** build knows is refused here, before anything is written).  Sets
** *missing when there is no table.  Extra columns are allowed when an
** INSERT of the id alone can fill them (nullable or with a default).
** Never changes the file.
*/
static int check_schema(lease_db *db, sqlite3 *sql, int *missing) {
  int found = 0, rc;
  *missing = 0;
  LSQ(db)->version = 0;
  LSQ(db)->versioned = 0;
  rc = lsq_query(db, sql, "SELECT type FROM sqlite_master WHERE name = 'jobs' COLLATE NOCASE",
                 on_jobs_kind, &found);
  if (rc != LEASE_OK) return rc;
  if (!found) {
    *missing = 1;
    return LEASE_OK;
  }
  if ((rc = check_columns(db, sql)) != LEASE_OK) return rc;
  if ((rc = check_collations(db, sql)) != LEASE_OK) return rc;
  if ((rc = lsq_query(db, sql, "PRAGMA index_list(jobs)", on_index, NULL)) != LEASE_OK) return rc;
  if ((rc = check_rowid(db, sql)) != LEASE_OK) return rc;
  return lsq_schema_read(db, sql);
}

/* The URI "file:<name>?immutable=1", name percent-encoded but for
** unreserved bytes and '/'.  NULL when memory ran out. */
static char *immutable_uri(const char *name) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = strlen(name), i, k = 5;
  char *uri = malloc(3 * n + 32);
  if (!uri) return NULL;
  memcpy(uri, "file:", 5);
  for (i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)name[i];
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '/' || ch == '.' || ch == '_' || ch == '-' || ch == '~') {
      uri[k++] = (char)ch;
    } else {
      uri[k++] = '%';
      uri[k++] = hex[ch >> 4];
      uri[k++] = hex[ch & 15];
    }
  }
  memcpy(uri + k, "?immutable=1", sizeof "?immutable=1");
  return uri;
}

/*
** check_schema, run on a second connection that opens the file read-only
** with immutable=1: it takes no locks and opens no -wal or -shm, it reads
** the main file as it is.  For a WAL-mode file without a -wal (check_file),
** so that a file that is corrupt, not ours, or whose jobs table differs is
** refused with nothing created beside it; when it passes, its result (and
** *missing, and the schema version) stands for the check on db's own connection,
** which then needs no second schema read.  Sound there: without a -wal no
** connection has the file open in WAL mode, and only a checkpoint (which
** needs a -wal holding frames) writes to the main file.  A refusal is
** confirmed on db's own connection when a -wal appeared meanwhile (another
** connection opened the file while it was read).
*/
static int check_schema_immutable(lease_db *db, int *missing) {
  sqlite3 *own = LSQ(db)->sql, *c = NULL;
  const char *name = sqlite3_db_filename(own, "main"), *wal;
  struct stat st;
  char *uri;
  int src, rc;
  *missing = 0;
  if (!name || !name[0]) return check_schema(db, own, missing);
  if (!(uri = immutable_uri(name))) return lease__fail(db, LEASE_NOMEM, "out of memory");
  src = sqlite3_open_v2(uri, &c, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                        NULL);
  free(uri);
  if (src != SQLITE_OK) {
    rc = lsq_fail(db, c, src);
  } else {
    sqlite3_extended_result_codes(c, 1);
    rc = check_schema(db, c, missing);
  }
  sqlite3_close_v2(c);
  wal = sqlite3_filename_wal(name);
  if (rc != LEASE_OK && rc != LEASE_NOMEM && wal && stat(wal, &st) == 0)
    rc = check_schema(db, own, missing);
  return rc;
}

/* ===================================================================== */
/* Settings and the table                                                 */
/* ===================================================================== */

/*
** The most the -wal file keeps once a checkpoint has copied it all back
** (PRAGMA journal_size_limit, bytes).  While readers keep older snapshots
** open the WAL cannot restart from its start and grows with every commit;
** once they are gone, the next checkpoint copies it back and the next
** commit truncates it to this size.  What steady readers cost:
** docs/guarantees.md ("The WAL and long readers").
*/
#define LSQ_WAL_LIMIT_BYTES "4194304"

/* WAL (a read-only handle leaves the mode as it finds it, and refuses
** every write: query_only, see open_connection), synchronous, and the
** WAL's size bound. */
static int set_pragmas(lease_db *db) {
  int rc;
  if (db->opt.flags & LEASE_OPEN_READONLY) rc = lsq_exec(db, "PRAGMA query_only=1");
  else rc = lsq_exec(db, "PRAGMA journal_mode=WAL");
  if (rc == LEASE_OK)
    rc = lsq_exec(db, db->opt.synchronous == LEASE_SYNC_FULL ? "PRAGMA synchronous=FULL"
                                                             : "PRAGMA synchronous=NORMAL");
  if (rc == LEASE_OK) rc = lsq_exec(db, "PRAGMA journal_size_limit=" LSQ_WAL_LIMIT_BYTES);
  return rc;
}

/* Write body of create_missing, ctx the int *missing: the table when it is
** missing (contract step 1), then the schema version read again inside
** the transaction (another client may have created the table, or brought
** the file up to date, meanwhile), then every step past it and the
** version row. */
static int schema_body(lease_db *db, void *ctx) {
  lsq_conn *c = LSQ(db);
  int rc;
  if (*(int *)ctx && (rc = lsq_exec(db, LSQ_SQL_CREATE_JOBS)) != LEASE_OK) return rc;
  if ((rc = check_schema(db, c->sql, (int *)ctx)) != LEASE_OK) return rc;
  if (c->versioned && c->version == LEASE_SCHEMA_VERSION) return LEASE_OK;
  return lsq_schema_upgrade(db);
}

/* Bring the file's schema to this build's (LEASE_SCHEMA_VERSION): the
** jobs table when it is missing, then every step past the file's version,
** then the version row.  All in one write transaction, so a file refused
** on the way (a corrupt page found then) is rolled back to what it was.  A
** handle that may not write changes nothing: it reads the file's queue
** tables when their layout is one it reads (LSQ_QUEUE_READABLE), else
** empty temporary ones (lsq_q_temp); so too queue control's tables
** (LSQ_CONTROL_READABLE, lsq_q_control_temp); a file of a version
** without unique keys has its queue table read through a temporary view
** that adds the column key, NULL (lsq_q_key_view). */
static int create_missing(lease_db *db, int missing) {
  lsq_conn *c = LSQ(db);
  if (missing && (db->opt.flags & LEASE_OPEN_READONLY))
    return lease__fail(db, LEASE_SCHEMA, "the database has no jobs table (opened read-only)");
  if (!missing && ((db->opt.flags & LEASE_OPEN_READONLY) || sqlite3_db_readonly(c->sql, "main"))) {
    if (c->version < LSQ_CONTROL_READABLE && lsq_q_control_temp(db) != LEASE_OK) return db->rc;
    if (c->version < LSQ_QUEUE_READABLE) return lsq_q_temp(db);
    return c->version >= LSQ_KEY_READABLE ? LEASE_OK : lsq_q_key_view(db);
  }
  if (!missing && c->versioned && c->version == LEASE_SCHEMA_VERSION) return LEASE_OK;
  return lsq_write_txn(db, schema_body, &missing);
}

/*
** sqlite3_open_v2 with db's options: NOMUTEX, as one handle is used by one
** thread at a time; extended result codes; the engine's busy handler.
** A read-only handle opens the file read-write where it may, never
** creating it, and refuses writes with PRAGMA query_only (set_pragmas):
** a connection opened SQLITE_OPEN_READONLY cannot take the lock that
** closing the last connection needs to checkpoint the WAL and delete the
** -wal and -shm, so it would leave both beside an idle database.  On a
** file it may not write, SQLite opens it read-only anyway.
*/
static int open_connection(lease_db *db) {
  lsq_conn *c = LSQ(db);
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READWRITE, src;
  if (!(db->opt.flags & (LEASE_OPEN_READONLY | LEASE_OPEN_NOCREATE))) flags |= SQLITE_OPEN_CREATE;
  src = sqlite3_open_v2(db->path, &c->sql, flags, NULL);
  if (src != SQLITE_OK) {
    int rc = lsq_fail(db, c->sql, src);
    sqlite3_close_v2(c->sql);
    c->sql = NULL;
    return rc;
  }
  sqlite3_extended_result_codes(c->sql, 1);
  sqlite3_busy_handler(c->sql, lsq_busy_handler, db);
  return LEASE_OK;
}

/*
** See lsq.h.  Check the file before writing anything to it: a file that is
** not a database, cut short, corrupt, or whose jobs table is another's,
** stays byte-for-byte as it was, with no -wal or -shm left beside it (a
** WAL file without a -wal is checked through an immutable connection,
** which then stands for this one's check; a file of a schema version newer
** than this build knows is refused there too).  Then the schema (the table
** when missing, the steps past the file's version), in one transaction that
** a failure rolls back, and only then the settings: switching a rollback-journal file to
** WAL rewrites its header, so it comes last, when nothing can refuse the
** file any more.
*/
int lsq_open(lease_db *db) {
  lsq_conn *c = calloc(1, sizeof *c);
  int rc, missing = 0, precheck = 0;
  if (!c) return lease__fail(db, LEASE_NOMEM, "out of memory");
  db->conn = c;
  c->busy_timeout_ms = db->opt.busy_timeout_ms;
  if ((rc = check_path(db, db->path)) != LEASE_OK) return rc;
  if ((rc = open_connection(db)) != LEASE_OK) return rc;
  rc = check_file(db, &precheck);
  if (rc == LEASE_OK && precheck) rc = check_schema_immutable(db, &missing);
  else if (rc == LEASE_OK) rc = check_schema(db, c->sql, &missing);
  if (rc == LEASE_OK) rc = create_missing(db, missing);
  if (rc == LEASE_OK) rc = set_pragmas(db);
  if (rc == LEASE_OK) db->schema_version = c->version;
  /* A refused file stays as it was: closing the last connection would
  ** otherwise checkpoint a -wal it came with into the main file.  A -wal
  ** this open made holds nothing committed: closing removes it. */
  if (rc != LEASE_OK && c->sql && c->wal_given)
    sqlite3_db_config(c->sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
  if (rc == LEASE_OK) lsq_group_join(db);
  if (rc == LEASE_OK) lsq_wake_join(db);
  return rc;
}

/*
** A connection whose database file is no longer at its name (deleted,
** renamed, replaced by another file) closes without a checkpoint: SQLite
** then neither checkpoints nor deletes the -wal (SQLITE_READONLY_DBMOVED).
** Its -wal, still at the name beside the file, keeps the commits not yet
** copied into the file, and the next connection to whatever file has the
** name now would read them as that file's own.  So before closing such a
** connection, copy them into the file it holds and empty its -wal
** (SQLITE_CHECKPOINT_TRUNCATE, through its own descriptors), without
** waiting: when other connections still use that -wal, it is theirs.
*/
static void settle_moved(sqlite3 *sql) {
  int moved = 0;
  if (sqlite3_file_control(sql, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || !moved)
    return;
  sqlite3_busy_handler(sql, NULL, NULL);
  sqlite3_wal_checkpoint_v2(sql, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}

/* See lsq.h. */
void lsq_close(lease_db *db) {
  lsq_conn *c = LSQ(db);
  int i;
  if (!c) return;
  lsq_group_leave(db);
  lsq_wake_leave(db);
  for (i = 0; i < LSQ_ST_COUNT; i++) sqlite3_finalize(c->stmt[i]);
  lsq_tx_close(db);
  for (i = 0; i < 3; i++) sqlite3_finalize(c->savepoint[i]);
  if (c->sql) settle_moved(c->sql);
  if (c->sql) sqlite3_close_v2(c->sql);
  free(c);
  db->conn = NULL;
}

/* ===================================================================== */
/* The file held                                                          */
/* ===================================================================== */

/*
** See lease.h (lease_file_id).  stat() first, then SQLite's own check that
** the name still names the inode its descriptor holds: a name that moved to
** another file in between fails that check instead of passing with the
** other file's identity.
*/
int lsq_file_id(lease_db *db, uint64_t *dev, uint64_t *ino) {
  sqlite3 *sql = LSQ(db)->sql;
  const char *name = sqlite3_db_filename(sql, "main");
  struct stat st;
  int moved = 1;
  if (!name || !name[0])
    return lease__fail(db, LEASE_CANTOPEN, "the database is no file (in-memory or temporary)");
  if (stat(name, &st) != 0)
    return lease__fail(db, LEASE_CANTOPEN, "the database file is no longer at its name");
  if (sqlite3_file_control(sql, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK)
    return lease__fail(db, LEASE_CANTOPEN, "cannot tell which file the connection holds");
  if (moved)
    return lease__fail(db, LEASE_CANTOPEN, "the database file was renamed, deleted or replaced");
  *dev = (uint64_t)st.st_dev;
  *ino = (uint64_t)st.st_ino;
  return LEASE_OK;
}
