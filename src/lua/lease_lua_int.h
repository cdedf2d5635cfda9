/*
** lease_lua_int.h: what the binding's C files share (prefix lb_).  Internal
** to the `lease` module; the public part is lease_lua.h.
**
** The binding in files, each using only the ones below it:
**   lease_lua.c        the module, handles, and one record per operation
**   lease_lua_many.c   the claim_many record
**   lease_lua_args.c   argument checks: one string, integer, number checker
**   lease_lua_compat.h the Lua 5.1/5.3/5.4/LuaJIT differences
** and the threads (lease_thread.c) over value copies (lease_copy.h) over
** the shared-object registry (lease_shared.h).
*/
#ifndef LEASE_LUA_INT_H
#define LEASE_LUA_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lease_lua_compat.h"
#include "lease_lua.h"

/* ===================================================================== */
/* Argument checks (lease_lua_args.c)                                     */
/* ===================================================================== */

/*
** Who is being called, for argument errors: the name users wrote ("claim"
** for db:claim, "lease.claim" for the path function) and whether it was
** called as a method (then, as in luaL_argerror, self is not counted).
** Naming the function ourselves keeps the name even when Lua's debug
** information has none, as in pcall(db.claim, db, ...).  Nothing is
** looked up or formatted until an error is raised.
*/
typedef struct lb_callee {
  const char *name;   /* a static string, without "lease." */
  int is_method;      /* 1: "name"; 0: "lease.name" */
} lb_callee;

/*
** One argument, or one entry of a table argument, as errors name it:
** "bad argument #<pos> to '<f>' (<what> must be ..., got ...)".  For an
** entry, what is a format with one %d, filled with k (counted from 1):
** "ids[%d]", "jobs[%d].fence".  Formatted only when an error is raised.
*/
typedef struct lb_arg {
  const lb_callee *c;
  int pos;            /* the argument's position, self counted */
  const char *what;   /* "id", or a format such as "ids[%d]" when k > 0 */
  int k;              /* the entry's index from 1, or 0 for the argument itself */
} lb_arg;

/* An lb_arg for argument pos of c, named what. */
#define LB_ARG(c, pos, what) (&(const lb_arg){(c), (pos), (what), 0})

/* Flags of lb_check_string and lb_check_number. */
enum {
  LB_OPTIONAL = 1,   /* nil (or none) is allowed: NULL, or the number's default */
  LB_EMPTY = 2,      /* an empty string is allowed */
  LB_NOZERO = 4,     /* no zero bytes (a C string, such as a path) */
  LB_FINITE = 8,     /* no NaN, no infinity */
  LB_SECONDS = 16    /* errors say "a number of seconds" */
};

/* lb_error: raise "bad argument #<pos> to '<f>' (<msg>)", self not
** counted for a method called as one.  Must run in the C function c
** describes (stack level 0).  Never returns. */
int lb_error(lua_State *L, const lb_arg *a, const char *msg);

/* lb_got: how errors name the value at idx: "a string", "an empty
** string", the number itself ("nan" for NaN), or its type name. */
const char *lb_got(lua_State *L, int idx);

/* lb_fail: raise "bad argument ... (<what> must be <kind>, got <value at idx>)". */
int lb_fail(lua_State *L, int idx, const lb_arg *a, const char *kind);

/*
** lb_check_string: the string at idx (numbers are not coerced), stored in
** *len when len is not NULL.  Non-empty unless LB_EMPTY; nil gives NULL
** (and *len 0) under LB_OPTIONAL; without zero bytes under LB_NOZERO; at
** most LEASE_MAX_LENGTH bytes always (the one place lengths are checked).
** Raises "... (<what> must be a non-empty string, got ...)" or
** "... (<what> must be at most <max> bytes, got <len>)".
*/
const char *lb_check_string(lua_State *L, int idx, const lb_arg *a, int flags, size_t *len);

/*
** lb_check_integer: the number at idx as an integer from min to max: an
** integer value (2.0 counts; 1.5 and "2" do not).  On a Lua without an
** integer subtype (5.1, LuaJIT) a value of magnitude above 2^53 is refused
** too, as it may already be rounded.  Raises "... (<what> must be an
** integer[ from min to max | >= min], got ...)".
*/
int64_t lb_check_integer(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max);

/* lb_opt_integer: as lb_check_integer, but nil or none gives def. */
int64_t lb_opt_integer(lua_State *L, int idx, const lb_arg *a, int64_t min, int64_t max,
                       int64_t def);

/*
** lb_check_number: the number at idx (strings are not coerced) as a
** double, finite under LB_FINITE, at least min; nil gives def under
** LB_OPTIONAL.  Raises "... (<what> must be a number, got ...)" for
** another type, and for a value out of bounds "... (<what> must be a
** finite number[ of seconds][ >= <min>][ or nil], got ...)", naming every
** bound the flags set.
*/
double lb_check_number(lua_State *L, int idx, const lb_arg *a, int flags, double min,
                       double def);

/* lb_check_time: now at idx and ttl at idx + 1 (arguments pos and pos + 1
** of c), checked together as lease_check_time does, or raise its words:
** "bad argument #4 to 'claim' (ttl must be a number > 0, got 0)". */
void lb_check_time(lua_State *L, const lb_callee *c, int idx, double *now, double *ttl);

/*
** lb_check_sequence: the table at idx and its length n (lua_rawlen), at
** most max entries, with no key outside 1..n.  Raises "... (<what> must
** be a table, got ...)", "... (<what> has more than <max> entries)" or
** "... (<what> must be a sequence, but has key <key> beside 1..<n>)".
*/
int lb_check_sequence(lua_State *L, int idx, const lb_arg *a, int max);

/* ===================================================================== */
/* Operations as records (lease_lua.c)                                   */
/* ===================================================================== */

/*
** What a record's functions pass each other: the checked arguments, the
** core's outputs, and arrays living in a userdata on the stack (so a
** raised error frees them).  Each record uses the fields it names.
*/
typedef struct lb_args {
  const char *id, *owner, *result;
  size_t id_len, owner_len, result_len;
  int64_t fence;
  double now, ttl;
  int n;                 /* entries, or a count asked for; 0: the single form */
  int which, after_set;  /* jobs: which list */
  int64_t after;
  void *mem;             /* a record's arrays (a userdata on the stack) */
  /* outputs of the core */
  int reason, found;
  lease_row row;
  lease_counts counts;
  lease_settings settings;
  /* the job queue (lease_lua_queue.c) */
  lease_new_job job;            /* enqueue */
  const char *queue;            /* claim_next, counts, prune: NULL for the default or all */
  size_t queue_len;
  lease_fail_opts fail;         /* fail */
  lease_filter filter;          /* jobs{...} */
  int table_form;               /* jobs: 1 for jobs{...} */
  int with_errors;              /* jobs{errors = true} */
  int status;                   /* fail's outcome; prune's status */
  double run_at;                /* fail's outcome */
  int64_t deleted;              /* prune */
  int why;                      /* claim_next's reason (empty, paused, limited) */
  int items;                    /* complete_many_claim_next: the completions (n: the claim's) */
  lease_queue_limits limits;    /* limit */
  lease_db *db;                 /* the handle run used, for a push that reads again */
  int nerrs;                    /* state: errors read into errs */
  lease_job_error errs[LEASE_ERRORS_KEPT];
  lease_schedule_spec sched;    /* schedule */
  int more;                     /* tick: more may be due */
  const char *dup;              /* enqueue, retry: the holder of the key (reason
                                   LEASE_DUPLICATE: lease_duplicate_id), else NULL */
  size_t dup_len;
  lease_event_filter events;    /* events */
} lb_args;

/*
** One operation of the binding, reached two ways: as the method
** db:<name>(...) and, when has_path, as the path function
** lease.<name>(path, ...), which runs on the state's connection to path
** (lease_lua_pathcache.c).
** Arguments start at stack index 2 in both (the handle or the path is 1).
**   check: check every argument into a, raising a bad-argument error
**          before anything touches the database; may push a userdata.
**   run:   the core call on db; returns its LEASE_ code.
**   push:  push the results for Lua; returns how many.  Runs while the
**          handle is entered: pointers into the connection are valid.
*/
typedef struct lb_op {
  const char *name;
  int has_path;       /* 1: also lease.<name>(path, ...) */
  int needs_file;     /* 1: the path function refuses ":memory:" */
  void (*check)(lua_State *L, const lb_callee *c, lb_args *a);
  int (*run)(lease_db *db, lb_args *a);
  int (*push)(lua_State *L, lb_args *a);
} lb_op;

/* The claim_many record (lease_lua_many.c). */
extern const lb_op lb_op_claim_many;

/* ===================================================================== */
/* The job queue (lease_lua_queue.c)                                      */
/* ===================================================================== */

/* lb_push_outcome: push a reason as the binding returns it: true when
** granted, else false and the reason's word, and for LEASE_DUPLICATE the
** id of the job holding the key (a->dup) third.  Returns how many. */
int lb_push_outcome(lua_State *L, lb_args *a);

/* The records fail, retry, cancel and prune. */
extern const lb_op lb_op_fail, lb_op_retry, lb_op_cancel, lb_op_prune;
extern const lb_op lb_op_pause, lb_op_resume, lb_op_limit, lb_op_queues, lb_op_wait;

/* The events record (lease_lua_events.c). */
extern const lb_op lb_op_events;

/* lease.backoff(attempt): the default backoff (lease_backoff). */
int lb_backoff(lua_State *L);

/* lb_check_plain: raise unless the table at idx has no metatable: "bad
** argument #p to 'f' (<name> must be a plain table, ...)".  Options are read
** from a table's own fields (raw, so that their strings stay alive in it
** through the call); a metatable's __index would be read by some calls and
** not others, so none takes one.
** lb_check_keys: raise unless every key of the table at idx is one of
** keys[0..n): "bad argument #p to 'f' (<name> has an unknown key 'k')",
** and unless it is a plain table (lb_check_plain). */
void lb_check_plain(lua_State *L, const lb_arg *a, int idx, const char *name);
void lb_check_keys(lua_State *L, const lb_arg *a, int idx, const char *const *keys, int n,
                   const char *name);

/* lb_check_job_opts: the optional table at idx (argument pos of c) of
** enqueue's options into *job, over its current values; unknown keys and
** bad values raise ("bad argument #2 to 'enqueue' (opts.priority must be
** an integer, got 1.5)").  When there is a table, pushes one more, which
** keeps opts.after's list alive: the caller leaves both on the stack
** while it uses *job. */
void lb_check_job_opts(lua_State *L, const lb_callee *c, int idx, int pos, lease_new_job *job);

/* lb_check_after_self: raise "... (opts.after[k] is the job's own id)",
** or for entry a->k of enqueue_many's list "ids[i].after[k]", when job's
** after lists its own id. */
void lb_check_after_self(lua_State *L, const lb_arg *a, const lease_new_job *job);

/* lb_attach_after: read the jobs the row table at the top was enqueued
** after (lease_after at now) and set them as its `after` (a list of ids;
** not set when none).  0 with a message pushed on a database failure. */
int lb_attach_after(lua_State *L, lease_db *db, const char *op, double now);

/* lb_check_new_jobs: enqueue_many's list at 2 and defaults at 3 into a
** userdata of lease_new_job pushed on the stack (a->mem, a->n). */
void lb_check_new_jobs(lua_State *L, const lb_callee *c, lb_args *a);

/* lb_check_claim_opts: claim_next's options at idx (5 for claim_next): nil,
** an integer n, or a table {n =, queue =}, into a->n (0: the single form)
** and a->queue. */
void lb_check_claim_opts(lua_State *L, const lb_callee *c, int idx, lb_args *a);

/* lb_check_now_opt: the optional now at idx (argument pos): a finite
** number, or the current time (lease.now()) when nil. */
double lb_check_now_opt(lua_State *L, const lb_callee *c, int idx);

/* lb_check_jobs_table: jobs{...} at 2 into a->filter, a->n (limit),
** a->with_errors, and a userdata of rows (a->mem). */
void lb_check_jobs_table(lua_State *L, const lb_callee *c, lb_args *a);

/* lb_push_queue_fields: set the queue's fields of row on the table at the
** top (payload, queue, priority, run_at, attempt, max_attempts, status,
** finished_at; seq and result_size when with_seq). */
void lb_push_queue_fields(lua_State *L, const lease_row *row, int with_seq);

/* lb_push_errors: push errs[0..n) as a list of {attempt=, at=, owner=,
** fence=, message=}. */
void lb_push_errors(lua_State *L, const lease_job_error *errs, int n);

/* lb_push_job_fields: set payload, queue, priority, attempt and
** max_attempts of job on the table at the top. */
void lb_push_job_fields(lua_State *L, const lease_job *job);

/* lb_attach_errors: for the row table at the top (list 0), or each row
** table in the list at the top (list 1), read its errors through db and
** set them as its `errors`.  0 with a message pushed on a database failure. */
int lb_attach_errors(lua_State *L, lease_db *db, const char *op, int list);

/* The schedule, unschedule, schedules and tick records (lease_lua_schedule.c). */
extern const lb_op lb_op_schedule, lb_op_unschedule, lb_op_schedules, lb_op_tick;

/* lease.cron_next(expr, t): lease_cron_next (lease_lua_schedule.c). */
int lb_cron_next(lua_State *L);

/* ===================================================================== */
/* Fenced side effects (lease_lua_tx.c)                                   */
/* ===================================================================== */

/* The with_lease and fence_gate records (lease_lua_tx.c). */
extern const lb_op lb_op_with_lease, lb_op_fence_gate;

/* lb_push_db_error: push "lease.<op>: <message> [<code>] (file "<path>")"
** for db's last failure. */
void lb_push_db_error(lua_State *L, lease_db *db, const char *op);

/* ===================================================================== */
/* The path functions' connections (lease_lua_pathcache.c)               */
/* ===================================================================== */

/*
** lb_path_take: a connection to path for one call of the path function op
** (opened with the default options), with a holder pushed on the stack
** that owns it until lb_path_give.  It is the state's cached connection to
** path when stat(path) still names the file that one holds; otherwise path
** is opened (creating the file when missing, as lease.open does).  Raises
** "lease.<op>: <message> [<code>] (file "<path>")" when opening fails.
*/
lease_db *lb_path_take(lua_State *L, const char *op, const char *path);

/*
** lb_path_give: end the call whose holder is at idx: keep its connection
** for the next call on the path when ok (the call succeeded) and it holds
** a file path names, else close it.  Never raises.
*/
void lb_path_give(lua_State *L, int idx, int ok);

/* ===================================================================== */
/* Embedded Lua modules (lease_lua.c and the generated lease_lua_sources.c) */
/* ===================================================================== */

/* One Lua module of lua/, embedded by cmake/embed_lua.cmake. */
typedef struct lease_lua_source {
  const char *module;     /* "lease.pool" */
  const char *chunkname;  /* "@lua/lease/pool.lua", for tracebacks */
  const char *code;
  size_t size;
} lease_lua_source;

/* The embedded modules, ended by an entry whose module is NULL. */
extern const lease_lua_source lease_lua_sources[];

/*
** lease_lua_run_embedded: compile and run embedded module i (an index into
** lease_lua_sources) as require would a file, passing its name; returns 1
** with the module's value pushed.  Raises a syntax or runtime error.  The
** generated luaopen_lease_<name> functions call it.
*/
int lease_lua_run_embedded(lua_State *L, int i);

/* lease_lua_process_register (lease_process.c): add lease.pid,
** lease.hostname, lease.on_signal and lease.signals to the table on top. */
void lease_lua_process_register(lua_State *L);

#endif
