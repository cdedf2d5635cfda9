# specs/fuzz/seeds_open.py: write the seed corpus of fuzz_open (see the input
# layout in specs/fuzz/fuzz_open.c) into DIR, with Python's sqlite3 module:
#   python3 specs/fuzz/seeds_open.py specs/fuzz/corpus/fuzz_open [specs/fuzz/regress/fuzz_open]
# (with the second directory, also the regression inputs made by hand)
# Databases of 512-byte pages: the engine's own table (rollback and WAL mode,
# idle or with frames in a -wal, read-only opens too), a foreign jobs table,
# extra columns with a trigger, files cut short, bytes that are no database.
import sqlite3, os, shutil, struct, sys
out = sys.argv[1]
tmp = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'lease-fuzz-seeds')
shutil.rmtree(tmp, ignore_errors=True); os.makedirs(tmp)
SCHEMA = ("CREATE TABLE jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, "
          "fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0);"
          "CREATE INDEX lease_jobs_pending ON jobs(done) WHERE done = 0;")
def make(name, script, wal=False, keep_wal=False):
    p = f'{tmp}/{name}.db'
    c = sqlite3.connect(p, isolation_level=None)
    c.execute('PRAGMA page_size=512')
    if wal:
        c.execute('PRAGMA journal_mode=WAL')
        c.execute('PRAGMA wal_autocheckpoint=0')
    c.executescript(script)
    if keep_wal:
        db = open(p, 'rb').read(); w = open(p + '-wal', 'rb').read()
        c.close()
        return db, w
    c.close()
    return open(p, 'rb').read(), None
def put(name, flags, db, wal=None, to=None):
    with open(f'{to or out}/{name}', 'wb') as f:
        if wal is None:
            f.write(bytes([flags]) + db)
        else:
            f.write(bytes([flags | 2]) + struct.pack('<I', len(db)) + db + wal)
rows = "INSERT INTO jobs(id) VALUES ('a'); INSERT INTO jobs(id, owner, until, fence) VALUES ('b', 'w1', 2e9, 3); INSERT INTO jobs(id, result, done, fence) VALUES ('c', 'r', 1, 1);"
lease, _ = make('lease', SCHEMA + rows)
put('empty', 0, b'')
put('lease-rollback', 0, lease)
put('lease-rollback-readonly', 1, lease)
walmode, _ = make('walmode', SCHEMA + rows, wal=True)
put('lease-wal-idle', 0, walmode)
put('lease-wal-idle-readonly', 5, walmode)
db, w = make('walframes', SCHEMA, wal=True, keep_wal=True)
db2, w2 = make('walframes2', SCHEMA + 'PRAGMA wal_checkpoint;' + rows, wal=True, keep_wal=True)
put('lease-wal-frames', 0, db2, w2)
put('lease-wal-frames-readonly', 1, db2, w2)
put('lease-in-wal-only', 0, db, w)
foreign, _ = make('foreign', "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO jobs VALUES (1, 'x');")
put('foreign-jobs', 0, foreign)
extra, _ = make('extra', SCHEMA.replace('done INTEGER NOT NULL DEFAULT 0)', 'done INTEGER NOT NULL DEFAULT 0, note TEXT DEFAULT \'n\')')
                + "CREATE TRIGGER t AFTER UPDATE ON jobs BEGIN UPDATE jobs SET note = 'u' WHERE id = new.id; END;" + rows)
put('extra-column-trigger', 0, extra)
put('truncated-mid-page', 0, lease[:len(lease) - 100])
# a foreign jobs table whose pages are still in the -wal
if len(sys.argv) > 2:
    regress = sys.argv[2]
    db, w = make('walforeign', "CREATE TABLE t(a); PRAGMA wal_checkpoint; "
                 "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO jobs VALUES (1, 'x');",
                 wal=True, keep_wal=True)
    put('wal-foreign-table-checkpointed-on-refusal', 0, db, w, regress)
    put('wal-foreign-table-refused-readonly', 1, db, w, regress)
put('header-only', 0, lease[:100])
put('not-a-db', 0, b'hello, this is not a database\n' * 4)
put('one-byte', 0, b'x')
