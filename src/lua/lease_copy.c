/*
** lease_copy.c: deep copies of Lua values from one lua_State to another,
** possibly on another OS thread (arguments and results of lease.thread,
** values sent through channels).
**
** A value is encoded into plain malloc'ed memory (an lcopy), then decoded
** into the other state.  Copied: nil, booleans, integers and floats (the
** subtype is kept), strings (any bytes), tables (cycles and shared
** subtables preserved, nesting up to LCOPY_MAXDEPTH), Lua functions whose
** only upvalue is _ENV (moved with lua_dump, unstripped, so
** tracebacks keep file and line), and barriers and channels (shared, not
** copied: one more reference to the same C object).  Everything else is
** refused with a message that names its type and where it was found:
** nothing is dropped or turned into a string silently.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease_copy.h"

/* Tags of the encoding, one byte before each value. */
enum {
  T_NIL, T_FALSE, T_TRUE,
  T_INT,      /* lua_Integer, native bytes */
  T_FLT,      /* lua_Number, native bytes */
  T_STR,      /* size_t length, bytes */
  T_TABLE,    /* uint32 array size hint, uint32 pair count, then the pairs */
  T_REF,      /* uint32 id of a table already decoded (cycles, sharing) */
  T_FUNC,     /* size_t length, a lua_dump binary chunk */
  T_OBJ       /* uint32 index into lcopy.refs */
};

#define COPYBOX_MT "lease.copybox"

/* ===================================================================== */
/* The buffer                                                             */
/* ===================================================================== */

/* Make room for n more bytes; returns 0 when memory ran out (never raises,
** so it can serve lua_dump's writer). */
static int reserve(lcopy *m, size_t n) {
  if (n > m->cap - m->len) {
    size_t cap = m->cap ? m->cap : 256;
    char *p;
    while (cap - m->len < n) {
      if (cap > ((size_t)-1) / 2) return 0;
      cap *= 2;
    }
    p = realloc(m->data, cap);
    if (!p) return 0;
    m->data = p;
    m->cap = cap;
  }
  return 1;
}

/* See lease_copy.h. */
void lcopy_free(lcopy *m) {
  size_t i;
  if (!m) return;
  for (i = 0; i < m->nrefs; i++) lshared_unref(m->refs[i]);
  free(m->refs);
  free(m->data);
  free(m);
}

/* __gc of a copy box: free whatever copy it still holds. */
static int box_gc(lua_State *L) {
  lcopy **slot = luaL_checkudata(L, 1, COPYBOX_MT);
  lcopy_free(*slot);
  *slot = NULL;
  return 0;
}

/* See lease_copy.h. */
lcopy **lcopy_newbox(lua_State *L) {
  lcopy **slot = lua_newuserdatauv(L, sizeof *slot, 0);
  *slot = NULL;
  if (luaL_newmetatable(L, COPYBOX_MT)) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return slot;
}

/* ===================================================================== */
/* Encoding                                                               */
/* ===================================================================== */

/* The state of one lcopy_encode. */
typedef struct enc {
  lua_State *L;
  lcopy *m;
  int seen;                         /* stack index: table -> id, for cycles */
  uint32_t ntables;                 /* ids handed out so far */
  int keys[LCOPY_MAXDEPTH + 1];     /* stack index of the key at each level; 0: a key itself */
} enc;

/* Append n bytes, raising a memory error when memory runs out. */
static void put(enc *e, const void *p, size_t n) {
  if (!reserve(e->m, n)) luaL_error(e->L, "not enough memory");
  memcpy(e->m->data + e->m->len, p, n);
  e->m->len += n;
}

/* Append one tag byte. */
static void put_tag(enc *e, int tag) {
  unsigned char b = (unsigned char)tag;
  put(e, &b, 1);
}

/* Append a uint32. */
static void put_u32(enc *e, uint32_t v) {
  put(e, &v, sizeof v);
}

/* Push how a key is written in a path: .name, ["str"], [3], [1.5], [true]. */
static void push_key(lua_State *L, int k) {
  size_t len, i;
  const char *s;
  int ident = 1;
  luaL_Buffer b;
  if (k == 0) {   /* inside a table used as a key */
    lua_pushliteral(L, "[<key>]");
    return;
  }
  switch (lua_type(L, k)) {
    case LUA_TSTRING:
      s = lua_tolstring(L, k, &len);
      for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (i > 0 && ch >= '0' && ch <= '9')))
          ident = 0;
      }
      if (ident && len > 0 && len <= 40) {
        lua_pushfstring(L, ".%s", s);
        return;
      }
      luaL_buffinit(L, &b);
      luaL_addstring(&b, "[\"");
      for (i = 0; i < len && i < 40; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        if (ch == '"' || ch == '\\') {
          luaL_addchar(&b, '\\');
          luaL_addchar(&b, (char)ch);
        } else if (ch < 32 || ch >= 127) {
          snprintf(esc, sizeof esc, "\\%d", ch);
          luaL_addstring(&b, esc);
        } else {
          luaL_addchar(&b, (char)ch);
        }
      }
      if (len > 40) luaL_addstring(&b, "...");
      luaL_addstring(&b, "\"]");
      luaL_pushresult(&b);
      return;
    case LUA_TNUMBER:
    case LUA_TBOOLEAN:
      lua_pushfstring(L, "[%s]", luaL_tolstring(L, k, NULL));
      lua_remove(L, -2);
      return;
    default:
      lua_pushfstring(L, "[<%s>]", luaL_typename(L, k));
      return;
  }
}

/*
** Refuse the value at i, which was reached through `levels` keys (e->keys)
** and is a key itself when is_key: push "cannot copy <what>[ at t<path>]"
** and return 0.  `what` says what it is ("a coroutine", ...).
*/
static int refuse(enc *e, int levels, int is_key, const char *what) {
  lua_State *L = e->L;
  luaL_Buffer b;
  size_t path_len = 0;   /* bytes of the path added so far */
  int d;
  luaL_checkstack(L, 8, NULL);
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "cannot copy ");
  luaL_addstring(&b, what);
  if (is_key) luaL_addstring(&b, " used as a table key");
  if (levels > 0) {
    luaL_addstring(&b, is_key ? " in t" : " at t");
    for (d = 0; d < levels; d++) {
      if (path_len > 160) {
        luaL_addstring(&b, "...");
        break;
      }
      push_key(L, e->keys[d]);
      path_len += lua_rawlen(L, -1);
      luaL_addvalue(&b);
    }
  }
  luaL_pushresult(&b);
  return 0;
}

/*
** Why the function at i cannot move to another state, pushed as a phrase
** ("a function with upvalue 'x' ..."), or NULL when it can: a Lua function
** whose only upvalue, if any, is _ENV.  lua_load gives the copy the new
** state's global table as _ENV, whatever table the original had (busted,
** for one, runs spec files in an environment of their own): the function
** runs among the new state's globals, which its documentation says.
*/
static const char *function_problem(lua_State *L, int i) {
  const char *name;
  int n;
  if (lua_iscfunction(L, i)) return lua_pushliteral(L, "a C function");
  for (n = 1; (name = lua_getupvalue(L, i, n)) != NULL; n++) {
    lua_pop(L, 1);
    if (strcmp(name, "_ENV") == 0) continue;
    if (name[0] == '\0' || strcmp(name, "(no name)") == 0 || strcmp(name, "?") == 0)
      return lua_pushliteral(L, "a function with an unnamed upvalue (stripped debug "
                                "information)");
    return lua_pushfstring(L, "a function with upvalue '%s' (only _ENV can cross to another "
                              "thread; pass '%s' as an argument)", name, name);
  }
  return NULL;
}

/* How refusals name the value at i: "a coroutine", "a lease.db (userdata)"... */
static const char *describe(lua_State *L, int i) {
  switch (lua_type(L, i)) {
    case LUA_TTHREAD: return "a coroutine";
    case LUA_TLIGHTUSERDATA: return "a light userdata";
    case LUA_TUSERDATA:
      if (luaL_getmetafield(L, i, "__name") == LUA_TSTRING)
        return lua_pushfstring(L, "a %s (userdata)", lua_tostring(L, -1));
      return "a userdata";
    default: return lua_pushfstring(L, "a %s", luaL_typename(L, i));
  }
}

/* lua_Writer for lua_dump: append a chunk piece; non-zero when memory ran out. */
static int dump_writer(lua_State *L, const void *p, size_t n, void *ud) {
  lcopy *m = ud;
  (void)L;
  if (!reserve(m, n)) return 1;
  memcpy(m->data + m->len, p, n);
  m->len += n;
  return 0;
}

static int enc_value(enc *e, int i, int depth, int is_key);

/*
** Encode the table at i, found `depth` levels down: a reference when it was
** seen before (cycles, shared subtables), else its pairs.  Returns 0 with
** the message pushed when something in it cannot be copied.
*/
static int enc_table(enc *e, int i, int depth, int is_key) {
  lua_State *L = e->L;
  size_t count_at;
  uint32_t count = 0, id;
  lua_Unsigned n;
  if (lua_getmetatable(L, i)) return refuse(e, depth - is_key, is_key, "a table with a metatable");
  lua_pushvalue(L, i);
  if (lua_rawget(L, e->seen) == LUA_TNUMBER) {
    id = (uint32_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
    put_tag(e, T_REF);
    put_u32(e, id);
    return 1;
  }
  lua_pop(L, 1);
  if (depth >= LCOPY_MAXDEPTH)
    return refuse(e, depth - is_key, is_key,
                  lua_pushfstring(L, "tables nested deeper than %d levels", LCOPY_MAXDEPTH));
  id = ++e->ntables;
  lua_pushvalue(L, i);
  lua_pushinteger(L, (lua_Integer)id);
  lua_rawset(L, e->seen);
  n = lua_rawlen(L, i);
  put_tag(e, T_TABLE);
  put_u32(e, n > 0x7fffffff ? 0 : (uint32_t)n);
  count_at = e->m->len;
  put_u32(e, 0);   /* the pair count, patched below */
  luaL_checkstack(L, 4, NULL);
  lua_pushnil(L);
  while (lua_next(L, i)) {
    int k = lua_gettop(L) - 1, v = lua_gettop(L);
    e->keys[depth] = 0;
    if (!enc_value(e, k, depth + 1, 1)) return 0;
    e->keys[depth] = k;
    if (!enc_value(e, v, depth + 1, 0)) return 0;
    lua_pop(L, 1);
    if (count == UINT32_MAX) return refuse(e, depth, 0, "a table with too many entries");
    count++;
  }
  memcpy(e->m->data + count_at, &count, sizeof count);
  return 1;
}

/*
** Encode the value at stack index i (absolute), found `depth` levels down
** (e->keys[0 .. depth-1] lead to it), a table key when is_key.  Returns 1,
** or 0 with the refusal message pushed on the stack.
*/
static int enc_value(enc *e, int i, int depth, int is_key) {
  lua_State *L = e->L;
  int levels = depth - is_key;   /* keys leading to the value, or to the key's table */
  switch (lua_type(L, i)) {
    case LUA_TNIL:
      put_tag(e, T_NIL);
      return 1;
    case LUA_TBOOLEAN:
      put_tag(e, lua_toboolean(L, i) ? T_TRUE : T_FALSE);
      return 1;
    case LUA_TNUMBER:
      if (lua_isinteger(L, i)) {
        lua_Integer v = lua_tointeger(L, i);
        put_tag(e, T_INT);
        put(e, &v, sizeof v);
      } else {
        lua_Number v = lua_tonumber(L, i);
        put_tag(e, T_FLT);
        put(e, &v, sizeof v);
      }
      return 1;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, i, &len);
      put_tag(e, T_STR);
      put(e, &len, sizeof len);
      put(e, s, len);
      return 1;
    }
    case LUA_TTABLE:
      return enc_table(e, i, depth, is_key);
    case LUA_TFUNCTION: {
      const char *why = function_problem(L, i);
      size_t len_at, start, len;
      int status;
      if (why) return refuse(e, levels, is_key, why);
      put_tag(e, T_FUNC);
      len_at = e->m->len;
      len = 0;
      put(e, &len, sizeof len);
      start = e->m->len;
      lua_pushvalue(L, i);
      status = lua_dump(L, dump_writer, e->m, 0);   /* 0: keep debug information */
      lua_pop(L, 1);
      if (status != 0) return luaL_error(L, "not enough memory");
      len = e->m->len - start;
      memcpy(e->m->data + len_at, &len, sizeof len);
      return 1;
    }
    case LUA_TUSERDATA: {
      lshared *o = lshared_test(L, i);
      lcopy *m = e->m;
      if (!o) return refuse(e, levels, is_key, describe(L, i));
      if (m->nrefs == m->refcap) {
        size_t cap = m->refcap ? m->refcap * 2 : 4;
        lshared **p = realloc(m->refs, cap * sizeof *p);
        if (!p) return luaL_error(L, "not enough memory");
        m->refs = p;
        m->refcap = cap;
      }
      lshared_ref(o);
      m->refs[m->nrefs] = o;
      put_tag(e, T_OBJ);
      put_u32(e, (uint32_t)m->nrefs);
      m->nrefs++;
      return 1;
    }
    default:
      return refuse(e, levels, is_key, describe(L, i));
  }
}

/* See lease_copy.h. */
lcopy *lcopy_encode(lua_State *L, int first, int last, int *bad) {
  int base = lua_gettop(L), i;
  lcopy **slot, *m;
  enc e;
  first = lua_absindex(L, first);
  last = lua_absindex(L, last);
  *bad = 0;
  luaL_checkstack(L, 8, NULL);
  slot = lcopy_newbox(L);
  *slot = calloc(1, sizeof **slot);
  if (!*slot) luaL_error(L, "not enough memory");
  memset(&e, 0, sizeof e);
  e.L = L;
  e.m = *slot;
  lua_newtable(L);
  e.seen = lua_gettop(L);
  for (i = first; i <= last; i++) {
    if (!enc_value(&e, i, 0, 0)) {
      *bad = i - first + 1;
      lua_copy(L, -1, base + 1);   /* the message replaces the box... */
      lcopy_free(*slot);           /* ...whose copy goes now, not at the next GC */
      *slot = NULL;
      lua_settop(L, base + 1);
      return NULL;
    }
    e.m->count++;
  }
  m = *slot;
  *slot = NULL;
  lua_settop(L, base);
  return m;
}

/* ===================================================================== */
/* Decoding                                                               */
/* ===================================================================== */

/* The state of one lcopy_decode. */
typedef struct dec {
  lua_State *L;
  const lcopy *m;
  size_t pos;
  int tables;        /* stack index: id -> table decoded so far */
  uint32_t ntables;
} dec;

/* Read n bytes; the data is our own encoding, but a short read is still
** an error rather than a read past the end. */
static void get(dec *d, void *p, size_t n) {
  if (n > d->m->len - d->pos) luaL_error(d->L, "lease: corrupt copy (internal error)");
  memcpy(p, d->m->data + d->pos, n);
  d->pos += n;
}

/* Read a uint32. */
static uint32_t get_u32(dec *d) {
  uint32_t v;
  get(d, &v, sizeof v);
  return v;
}

/* A binary chunk not yet handed to lua_load. */
typedef struct chunk {
  const char *p;
  size_t n;
} chunk;

/* lua_Reader for lua_load: hand over the chunk in one piece. */
static const char *chunk_reader(lua_State *L, void *ud, size_t *size) {
  chunk *ck = ud;
  const char *p = ck->p;
  (void)L;
  *size = ck->n;
  ck->n = 0;
  ck->p = NULL;
  return *size ? p : NULL;
}

/* Push the next value. */
static void dec_value(dec *d) {
  lua_State *L = d->L;
  unsigned char tag;
  luaL_checkstack(L, 4, NULL);
  get(d, &tag, 1);
  switch (tag) {
    case T_NIL: lua_pushnil(L); break;
    case T_FALSE: lua_pushboolean(L, 0); break;
    case T_TRUE: lua_pushboolean(L, 1); break;
    case T_INT: {
      lua_Integer v;
      get(d, &v, sizeof v);
      lua_pushinteger(L, v);
      break;
    }
    case T_FLT: {
      lua_Number v;
      get(d, &v, sizeof v);
      lua_pushnumber(L, v);
      break;
    }
    case T_STR: {
      size_t len;
      get(d, &len, sizeof len);
      if (len > d->m->len - d->pos) luaL_error(L, "lease: corrupt copy (internal error)");
      lua_pushlstring(L, d->m->data + d->pos, len);
      d->pos += len;
      break;
    }
    case T_TABLE: {
      uint32_t narr = get_u32(d), count = get_u32(d), k;
      lua_createtable(L, (int)(narr < 0x10000000 ? narr : 0),
                      (int)(count > narr && count - narr < 0x10000000 ? count - narr : 0));
      lua_pushvalue(L, -1);
      lua_rawseti(L, d->tables, (lua_Integer)++d->ntables);
      for (k = 0; k < count; k++) {
        dec_value(d);   /* key */
        dec_value(d);   /* value */
        lua_rawset(L, -3);
      }
      break;
    }
    case T_REF:
      lua_rawgeti(L, d->tables, (lua_Integer)get_u32(d));
      break;
    case T_FUNC: {
      size_t len;
      chunk ck;
      get(d, &len, sizeof len);
      if (len > d->m->len - d->pos) luaL_error(L, "lease: corrupt copy (internal error)");
      ck.p = d->m->data + d->pos;
      ck.n = len;
      /* binary only; the chunk keeps its own source name and lines */
      if (lua_load(L, chunk_reader, &ck, "=(copied function)", "b") != LUA_OK) lua_error(L);
      d->pos += len;
      break;
    }
    case T_OBJ: {
      uint32_t idx = get_u32(d);
      if (idx >= d->m->nrefs) luaL_error(L, "lease: corrupt copy (internal error)");
      lshared_push(L, d->m->refs[idx]);
      break;
    }
    default:
      luaL_error(L, "lease: corrupt copy (internal error)");
  }
}

/* See lease_copy.h. */
int lcopy_decode(lua_State *L, const lcopy *m) {
  dec d;
  int i;
  luaL_checkstack(L, m->count + 4, "too many values to copy");
  memset(&d, 0, sizeof d);
  d.L = L;
  d.m = m;
  lua_newtable(L);
  d.tables = lua_gettop(L);
  for (i = 0; i < m->count; i++) dec_value(&d);
  lua_remove(L, d.tables);
  return m->count;
}
