// SPDX-License-Identifier: BSD-3-Clause
/*
 * user.c - what the program says through the annotation API: user regions, markers and
 * counters.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include <string.h>

#include "internal.h"

/* REGION_ENTER, REGION_LEAVE, MARKER, COUNTER. */
void cv_user_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		    const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	switch (r->type) {
	case LT_REC_REGION_ENTER:
	case LT_REC_REGION_LEAVE: {
		uint32_t reg;
		if (r->arg < ps->p->nstrings && ps->user_regions[r->arg]) {
			reg = ps->user_regions[r->arg] - 1;
		} else {
			const char *name = rd_string(ps->p, r->arg);
			char unknown[64];
			if (!name) {
				snprintf(unknown, sizeof(unknown), "string %u (undefined)", r->arg);
				name = unknown;
				cv->stats.anomalies++;
			}
			reg = cv_user_region(cv, name);
			if (r->arg < ps->p->nstrings)
				ps->user_regions[r->arg] = reg + 1;
		}
		if (r->type == LT_REC_REGION_ENTER) {
			if (cv_push(cv, t, reg, FN_USER, 0, 0) == 0)
				CV_EMIT(cv, enter, l, ns, reg);
		} else if (cv_pop_match(cv, l, t, ns, FN_USER, reg)) {
			CV_EMIT(cv, leave, l, ns, reg, 0);
		}
		break;
	}
	case LT_REC_MARKER: {
		const char *text = rd_string(ps->p, r->arg);
		CV_EMIT(cv, marker, l, ns, CV_MARK_USER, text ? text : "(undefined string)");
		if (text && !strcmp(text, LT_PAUSE_TEXT))
			CV_EMIT(cv, measurement, l, ns, 0);
		else if (text && !strcmp(text, LT_RESUME_TEXT))
			CV_EMIT(cv, measurement, l, ns, 1);
		break;
	}
	case LT_REC_COUNTER: {
		const char *name = rd_string(ps->p, r->arg);
		if (!name || np < 1) {
			cv->stats.anomalies++;
			break;
		}
		CV_EMIT(cv, metric, l, ns, cv_metric_id(cv, name, r->sub == LT_VALUE_DOUBLE, "#"),
			pl[LT_W_COUNTER_VALUE]);
		break;
	}
	default:
		break;
	}
}
