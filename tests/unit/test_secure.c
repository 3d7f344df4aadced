// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_secure - a setuid/setgid process (AT_SECURE in its auxiliary vector) is never
 * traced.  The auxiliary vector is injected: init runs once with AT_SECURE=1, which must
 * leave tracing off and create nothing, then once with AT_SECURE=0, which must trace.
 * CTest starts it with LIBTRACE_MODULES=none (so that the constructor's init does nothing)
 * and LIBTRACE_OUTPUT naming a directory that does not exist yet.
 */
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "../../src/common/modules.h"
#include "lt.h"
#include "test.h"

static unsigned long secure;

static unsigned long fake_getauxval(unsigned long type)
{
	return type == AT_SECURE ? secure : getauxval(type);
}

int main(void)
{
	const char *out = getenv("LIBTRACE_OUTPUT");
	struct stat st;
	CHECK(out != NULL);
	CHECK_EQ(lt_state, LT_STATE_OFF); /* LIBTRACE_MODULES=none */
	setenv("LIBTRACE_MODULES", "all", 1);
	lt_getauxval = fake_getauxval;

	secure = 1;
	lt_state = LT_STATE_UNINIT;
	lt_active = 0;
	lt_init();
	CHECK_EQ(lt_state, LT_STATE_OFF);
	CHECK_EQ(lt_active & LT_MOD_ALL, 0);
	CHECK(lt_self == NULL);
	CHECK(stat(out, &st) != 0); /* nothing created */

	secure = 0;
	lt_state = LT_STATE_UNINIT;
	lt_active = 0;
	lt_init();
	CHECK_EQ(lt_state, LT_STATE_ON);
	CHECK(lt_self != NULL);
	CHECK(stat(out, &st) == 0 && S_ISDIR(st.st_mode));
	TEST_DONE();
}
