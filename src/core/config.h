/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - the LIBTRACE_* configuration table.  config.c is the only place that reads the
 * environment; the core reads lt_cfg, the modules lt_setting (module.h).
 */
#ifndef LIBTRACE_CONFIG_H
#define LIBTRACE_CONFIG_H

#include <stddef.h>

enum lt_opt_type {
	LT_OPT_STRING,
	LT_OPT_SIZE, /* bytes, with an optional K, M or G suffix (powers of 1024) */
	LT_OPT_INT,
	LT_OPT_BOOL,	 /* 1/0, yes/no, true/false, on/off */
	LT_OPT_CHOICE,	 /* one of the words in `choices`, stored as its index */
	LT_OPT_MODULES,	 /* comma-separated module names, "all" or "none" */
	LT_OPT_DURATION, /* a number with a unit ns, us, ms or s; a bare 0 */
	LT_OPT_SAMPLERS, /* comma-separated sampler names, "all" or "none" */
};

struct lt_option {
	const char *name;
	enum lt_opt_type type;
	const char *def;     /* default, in the same syntax a user would write */
	const char *choices; /* LT_OPT_CHOICE: words separated by '|'; -1 maps to the first */
	const char *help;
};

/* The table, terminated by an entry with name == NULL. */
extern const struct lt_option lt_options[];

/* Sampler names in bit order (enum lt_sampler), for LIBTRACE_SAMPLERS. */
extern const char *const lt_sampler_names[];

/*
 * Fills lt_cfg from the environment (getenv) or, when `env` is not NULL, from that
 * NULL-terminated "NAME=value" array (tests).  Invalid values are reported once with
 * lt_warn and replaced by the default.  Returns the number of invalid values.
 */
int lt_config_load(char *const *env);

/* Writes "NAME=value" of the resolved option `i` into buf.  Returns buf. */
char *lt_config_format(size_t i, char *buf, size_t len);

#endif /* LIBTRACE_CONFIG_H */
