// SPDX-License-Identifier: BSD-3-Clause
/*
 * json.c - JSON writer and strict reader (see json.h).  The reader is recursive descent
 * over a byte buffer with an explicit depth limit, so hostile input cannot exhaust the
 * stack; every refusal names line and column.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0) /* overlong */
			return 0;
		if (c == 0xed && s[1] >= 0xa0) /* surrogates */
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90) /* overlong */
			return 0;
		if (c == 0xf4 && s[1] >= 0x90) /* above U+10FFFF */
			return 0;
		return 4;
	}
	return 0;
}

char *json_utf8_dup(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(2 * n + 1), *o = out;
	if (!out)
		return NULL;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t k = utf8_len(p);
		if (k) {
			memcpy(o, p, k);
			o += k;
			p += k;
		} else { /* the byte as a Latin-1 character */
			*o++ = (char)(0xc0 | *p >> 6);
			*o++ = (char)(0x80 | (*p & 0x3f));
			p++;
		}
	}
	*o = '\0';
	return out;
}

/* ---- writer ---- */

void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', f);
	while (*p) {
		unsigned c = *p;
		size_t k = utf8_len(p);
		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc((int)c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (!k) { /* an invalid byte: its Latin-1 character */
			fprintf(f, "\\u%04x", c);
		} else {
			fwrite(p, 1, k, f);
			p += k;
			continue;
		}
		p++;
	}
	putc('"', f);
}

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

/* Separator, new line and indentation before a member, then its key. */
static void member(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->count[w->depth - 1]++)
			putc(',', w->f);
		putc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (key) {
		json_write_string(w->f, key);
		fputs(": ", w->f);
	}
}

/* The writer's callers nest a few levels; deeper is a bug, not input. */
static void open_level(struct jw *w, const char *key, int c)
{
	member(w, key);
	putc(c, w->f);
	if (w->depth == JSON_MAX_DEPTH)
		abort();
	w->count[w->depth] = 0;
	w->close[w->depth] = c == '{' ? '}' : ']';
	w->depth++;
}

void jw_object(struct jw *w, const char *key)
{
	open_level(w, key, '{');
}

void jw_array(struct jw *w, const char *key)
{
	open_level(w, key, '[');
}

void jw_end(struct jw *w)
{
	w->depth--;
	if (w->count[w->depth]) {
		putc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	putc(w->close[w->depth], w->f);
}

void jw_str(struct jw *w, const char *key, const char *val)
{
	member(w, key);
	if (val)
		json_write_string(w->f, val);
	else
		fputs("null", w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t val)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, val);
}

void jw_i64(struct jw *w, const char *key, int64_t val)
{
	member(w, key);
	fprintf(w->f, "%" PRId64, val);
}

void jw_double(struct jw *w, const char *key, double val)
{
	member(w, key);
	if (isfinite(val))
		fprintf(w->f, "%.6g", val);
	else
		fputs("null", w->f);
}

void jw_double_exact(struct jw *w, const char *key, double val)
{
	member(w, key);
	if (isfinite(val))
		fprintf(w->f, "%.17g", val);
	else
		fputs("null", w->f);
}

void jw_bool(struct jw *w, const char *key, int val)
{
	member(w, key);
	fputs(val ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jw_finish(struct jw *w)
{
	putc('\n', w->f);
}

/* ---- reader ---- */

struct parser {
	const char *s, *end, *p;
	char *err;
	size_t errlen;
	int failed;
};

static void fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	if (ps->failed)
		return;
	ps->failed = 1;
	unsigned line = 1, col = 1;
	for (const char *q = ps->s; q < at && q < ps->end; q++) {
		if (*q == '\n')
			line++, col = 1;
		else
			col++;
	}
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "line %u, column %u: %s", line, col, what);
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

/* What the parser sees at p, for messages. */
static const char *seen(const struct parser *ps)
{
	static char buf[16];
	if (ps->p >= ps->end)
		return "the end of the input";
	unsigned char c = (unsigned char)*ps->p;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, sizeof(buf), "'%c'", c);
	else
		snprintf(buf, sizeof(buf), "byte 0x%02x", c);
	return buf;
}

static struct jv *new_value(struct parser *ps, enum jv_type t)
{
	struct jv *v = calloc(1, sizeof(*v));
	if (!v)
		fail(ps, ps->p, "out of memory");
	else
		v->type = t;
	return v;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string literal at p (which is '"'); returns the decoded text (malloc'ed) or NULL. */
static char *parse_string(struct parser *ps)
{
	const char *start = ps->p++;
	/* The decoded text is never longer than the literal. */
	const char *q = ps->p;
	while (q < ps->end && *q != '"') {
		if (*q == '\\' && q + 1 < ps->end)
			q++;
		q++;
	}
	if (q >= ps->end) {
		fail(ps, start, "string not terminated");
		return NULL;
	}
	char *out = malloc((size_t)(q - ps->p) + 1), *o = out;
	if (!out) {
		fail(ps, start, "out of memory");
		return NULL;
	}
	while (*ps->p != '"') {
		const unsigned char *u = (const unsigned char *)ps->p;
		if (*u < 0x20) {
			fail(ps, ps->p, "control character 0x%02x in a string (must be escaped)",
			     *u);
			goto bad;
		}
		if (*u != '\\') {
			/* utf8_len stops at the first byte that does not continue the
			 * sequence: the closing quote is one, so it never reads past it. */
			size_t k = utf8_len(u);
			if (!k) {
				fail(ps, ps->p, "invalid UTF-8 in a string");
				goto bad;
			}
			memcpy(o, u, k);
			o += k;
			ps->p += k;
			continue;
		}
		const char *esc = ps->p++;
		switch (*ps->p) {
		case '"':
		case '\\':
		case '/':
			*o++ = *ps->p;
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u': {
			unsigned cp, lo;
			if (ps->end - ps->p < 5 || hex4(ps->p + 1, &cp)) {
				fail(ps, esc, "bad \\u escape");
				goto bad;
			}
			ps->p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				fail(ps, esc, "lone low surrogate in \\u escape");
				goto bad;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (ps->end - ps->p < 7 || ps->p[1] != '\\' || ps->p[2] != 'u' ||
				    hex4(ps->p + 3, &lo) || lo < 0xdc00 || lo > 0xdfff) {
					fail(ps, esc, "high surrogate without its low surrogate");
					goto bad;
				}
				ps->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0) {
				fail(ps, esc, "\\u0000 in a string");
				goto bad;
			}
			o += put_utf8(o, cp);
			break;
		}
		default:
			fail(ps, esc, "unknown escape \\%c", *ps->p);
			goto bad;
		}
		ps->p++;
	}
	ps->p++; /* the closing quote */
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static struct jv *parse_number(struct parser *ps)
{
	const char *start = ps->p, *q = ps->p;
	int integral = 1, negative = 0;
	if (q < ps->end && *q == '-')
		q++, negative = 1;
	if (q >= ps->end || *q < '0' || *q > '9') {
		fail(ps, start, "bad number");
		return NULL;
	}
	if (*q == '0' && q + 1 < ps->end && q[1] >= '0' && q[1] <= '9') {
		fail(ps, start, "number with a leading zero");
		return NULL;
	}
	while (q < ps->end && *q >= '0' && *q <= '9')
		q++;
	if (q < ps->end && *q == '.') {
		integral = 0;
		q++;
		if (q >= ps->end || *q < '0' || *q > '9') {
			fail(ps, start, "bad number: no digit after '.'");
			return NULL;
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		integral = 0;
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9') {
			fail(ps, start, "bad number: no digit in the exponent");
			return NULL;
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	char buf[64];
	size_t len = (size_t)(q - start);
	if (len >= sizeof(buf)) {
		fail(ps, start, "number too long");
		return NULL;
	}
	memcpy(buf, start, len);
	buf[len] = '\0';
	struct jv *v = new_value(ps, JV_NUMBER);
	if (!v)
		return NULL;
	v->number = strtod(buf, NULL);
	if (!isfinite(v->number)) {
		fail(ps, start, "number out of range");
		free(v);
		return NULL;
	}
	if (integral && !negative) {
		uint64_t u = 0;
		int over = 0;
		for (const char *d = buf; *d; d++)
			over |= __builtin_mul_overflow(u, 10, &u) ||
				__builtin_add_overflow(u, (uint64_t)(*d - '0'), &u);
		if (!over) {
			v->is_uint = 1;
			v->u = u;
		}
	}
	ps->p = q;
	return v;
}

static int push_item(struct parser *ps, struct jv *c, struct jv *item, char *key, size_t *cap)
{
	if (c->n == *cap) {
		size_t n = *cap ? *cap * 2 : 8;
		struct jv **items = realloc(c->items, n * sizeof(*items));
		if (!items)
			goto oom;
		c->items = items;
		if (c->type == JV_OBJECT) {
			char **keys = realloc(c->keys, n * sizeof(*keys));
			if (!keys)
				goto oom;
			c->keys = keys;
		}
		*cap = n;
	}
	c->items[c->n] = item;
	if (c->type == JV_OBJECT)
		c->keys[c->n] = key;
	c->n++;
	return 0;
oom:
	fail(ps, ps->p, "out of memory");
	jv_free(item);
	free(key);
	return -1;
}

static struct jv *parse_value(struct parser *ps, int depth);

static struct jv *parse_container(struct parser *ps, int depth, int object)
{
	const char *open = ps->p++;
	struct jv *c = new_value(ps, object ? JV_OBJECT : JV_ARRAY);
	size_t cap = 0;
	if (!c)
		return NULL;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
		ps->p++;
		return c;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, ps->p, "expected a member name (a string), found %s",
				     seen(ps));
				goto bad;
			}
			const char *at = ps->p;
			if (!(key = parse_string(ps)))
				goto bad;
			for (size_t i = 0; i < c->n; i++)
				if (!strcmp(c->keys[i], key)) {
					fail(ps, at, "duplicate member \"%s\"", key);
					free(key);
					goto bad;
				}
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				fail(ps, ps->p, "expected ':' after a member name, found %s",
				     seen(ps));
				free(key);
				goto bad;
			}
			ps->p++;
		}
		struct jv *item = parse_value(ps, depth + 1);
		if (!item) {
			free(key);
			goto bad;
		}
		if (push_item(ps, c, item, key, &cap))
			goto bad;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
				fail(ps, ps->p, "trailing comma");
				goto bad;
			}
			continue;
		}
		if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
			ps->p++;
			return c;
		}
		if (ps->p >= ps->end)
			fail(ps, open, "%s not closed", object ? "object" : "array");
		else
			fail(ps, ps->p, "expected ',' or '%c', found %s", object ? '}' : ']',
			     seen(ps));
		goto bad;
	}
bad:
	jv_free(c);
	return NULL;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, word, n)) {
		ps->p += n;
		return 1;
	}
	return 0;
}

static struct jv *parse_value(struct parser *ps, int depth)
{
	skip_ws(ps);
	if (depth > JSON_MAX_DEPTH) {
		fail(ps, ps->p, "nested deeper than %d levels", JSON_MAX_DEPTH);
		return NULL;
	}
	if (ps->p >= ps->end) {
		fail(ps, ps->p, "expected a value, found the end of the input");
		return NULL;
	}
	struct jv *v;
	switch (*ps->p) {
	case '{':
		return parse_container(ps, depth, 1);
	case '[':
		return parse_container(ps, depth, 0);
	case '"': {
		char *s = parse_string(ps);
		if (!s)
			return NULL;
		if (!(v = new_value(ps, JV_STRING))) {
			free(s);
			return NULL;
		}
		v->string = s;
		return v;
	}
	case 't':
	case 'f':
	case 'n':
		if (literal(ps, "true") || literal(ps, "false")) {
			if ((v = new_value(ps, JV_BOOL)))
				v->boolean = ps->p[-2] == 'u'; /* tr[u]e, fal[s]e */
			return v;
		}
		if (literal(ps, "null"))
			return new_value(ps, JV_NULL);
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
	}
	fail(ps, ps->p, "expected a value, found %s", seen(ps));
	return NULL;
}

struct jv *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = {text, text + len, text, err, errlen, 0};
	struct jv *v = parse_value(&ps, 1);
	if (!v)
		return NULL;
	skip_ws(&ps);
	if (ps.p < ps.end) {
		fail(&ps, ps.p, "unexpected %s after the value", seen(&ps));
		jv_free(v);
		return NULL;
	}
	return v;
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jv_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	free(v);
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
	if (!o || o->type != JV_OBJECT)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

const char *jv_type_name(enum jv_type t)
{
	static const char *names[] = {"null",	  "a boolean", "a number",
				      "a string", "an array",  "an object"};
	return names[t];
}
