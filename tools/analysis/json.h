/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.h - the little JSON the tools need (trace-report, trace2otf2 --format=chrome): a streaming
 * writer (pretty-printed, strings escaped, always valid UTF-8 out) and a strict reader that builds
 * a small tree.
 *
 * The reader takes RFC 8259 JSON and nothing else: no comments, no trailing commas, no
 * NaN/Infinity, no leading zeros, no control characters or invalid UTF-8 in strings, no
 * duplicate keys in an object, nothing but white space after the value, nesting at most
 * JSON_MAX_DEPTH deep.  A refusal says where (line, column) and what is wrong.
 * Saved profiles are small (definitions, not events), so a tree is fine.
 */
#ifndef LIBTRACE_REPORT_JSON_H
#define LIBTRACE_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 64

/* ---- writer ---- */

struct jw {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH];  /* members written at each level */
	char close[JSON_MAX_DEPTH]; /* '}' or ']' */
};

void jw_init(struct jw *w, FILE *f);
/* key is the member name inside an object, NULL inside an array or at the top. */
void jw_object(struct jw *w, const char *key);
void jw_array(struct jw *w, const char *key);
void jw_end(struct jw *w); /* closes the innermost object or array */
void jw_str(struct jw *w, const char *key, const char *val); /* val NULL: null */
void jw_u64(struct jw *w, const char *key, uint64_t val);
void jw_i64(struct jw *w, const char *key, int64_t val);
void jw_double(struct jw *w, const char *key, double val); /* 6 digits; not finite: null */
/* The value exactly, in as few digits as %.17g takes (74745600.5, not 7.47456e+07). */
void jw_double_exact(struct jw *w, const char *key, double val);
void jw_bool(struct jw *w, const char *key, int val);
void jw_null(struct jw *w, const char *key);
void jw_finish(struct jw *w); /* the final newline */

/* Writes s as a JSON string literal (quotes included). */
void json_write_string(FILE *f, const char *s);

/* A copy of s (malloc'ed) that is valid UTF-8: each byte of an invalid sequence becomes the
 * character of the same value (Latin-1), so names from any program print and round-trip. */
char *json_utf8_dup(const char *s);

/* ---- reader ---- */

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_type type;
	int boolean;
	double number;
	int is_uint; /* the number is an integer in 0..UINT64_MAX, exactly in `u` */
	uint64_t u;
	char *string;
	struct jv **items; /* array elements, or object values */
	char **keys;	   /* object member names */
	size_t n;
};

/*
 * Parses text[0..len).  Returns the tree, or NULL with err saying "line L, column C: what"
 * (or "out of memory").
 */
struct jv *json_parse(const char *text, size_t len, char *err, size_t errlen);
void jv_free(struct jv *v);
/* The member `key` of object o, or NULL (also when o is not an object). */
const struct jv *jv_get(const struct jv *o, const char *key);
const char *jv_type_name(enum jv_type t);

#endif /* LIBTRACE_REPORT_JSON_H */
