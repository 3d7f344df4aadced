// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_config - the LIBTRACE_* table: defaults, parsing, rejection of bad values.
 * "test_config --list" prints each variable and its default, tab-separated, one per line
 * (tests/e2e/readme.sh compares that with README.md).
 */
#include <signal.h>
#include <string.h>

#include "../../src/samplers/sampler.h" /* the sampler bits, to check the mask */
#include "../../src/common/modules.h"
#include "config.h"
#include "lt.h"
#include "test.h"

static int load(const char *a, const char *b)
{
	char *env[3] = {(char *)a, (char *)b, NULL};
	return lt_config_load(env);
}

int main(int argc, char **argv)
{
	char buf0[256];
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; lt_options[i].name; i++)
			printf("%s\t%s\n", lt_options[i].name, lt_options[i].def);
		return 0;
	}
	/* Defaults. */
	CHECK_EQ(load(NULL, NULL), 0);
	CHECK_EQ(lt_cfg.modules, LT_MOD_ALL);
	CHECK_EQ(lt_cfg.buffer_size, 8u << 20);
	CHECK_EQ(lt_cfg.overflow, LT_OVERFLOW_BLOCK);
	CHECK_EQ(lt_cfg.clock, -1);
	CHECK_EQ(lt_cfg.quiet, 0);
	CHECK_EQ(lt_cfg.output[0], '\0');
	/* Every option's help text and default exist. */
	for (size_t i = 0; lt_options[i].name; i++) {
		CHECK(!strncmp(lt_options[i].name, "LIBTRACE_", 9));
		CHECK(lt_options[i].help && strlen(lt_options[i].help) > 10);
		CHECK(lt_options[i].def != NULL);
	}
	/* Sizes. */
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=256K", NULL), 0);
	CHECK_EQ(lt_cfg.buffer_size, 256u << 10);
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=2MiB", NULL), 0);
	CHECK_EQ(lt_cfg.buffer_size, 2u << 20);
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=1048576", NULL), 0);
	CHECK_EQ(lt_cfg.buffer_size, 1u << 20);
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=12X", NULL), 1);
	CHECK_EQ(lt_cfg.buffer_size, 8u << 20);
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=1K", NULL), 1); /* below the minimum */
	CHECK_EQ(lt_cfg.buffer_size, 8u << 20);
	CHECK_EQ(load("LIBTRACE_BUFFER_SIZE=99999999999999999999G", NULL), 1);
	/* Modules. */
	CHECK_EQ(load("LIBTRACE_MODULES=pthread,user", NULL), 0);
	CHECK_EQ(lt_cfg.modules, LT_MOD_PTHREAD | LT_MOD_USER);
	CHECK_EQ(load("LIBTRACE_MODULES=none", NULL), 0);
	CHECK_EQ(lt_cfg.modules, 0);
	CHECK_EQ(load("LIBTRACE_MODULES=PROC", NULL), 0);
	CHECK_EQ(lt_cfg.modules, LT_MOD_PROC);
	CHECK_EQ(load("LIBTRACE_MODULES=pthread,bogus", NULL), 1);
	CHECK_EQ(lt_cfg.modules, LT_MOD_ALL);
	/* Choices, booleans, integers. */
	CHECK_EQ(load("LIBTRACE_OVERFLOW=drop", "LIBTRACE_CLOCK=monotonic"), 0);
	CHECK_EQ(lt_cfg.overflow, LT_OVERFLOW_DROP);
	CHECK_EQ(lt_cfg.clock, LT_CLOCK_MONOTONIC);
	CHECK_EQ(load("LIBTRACE_OVERFLOW=sometimes", NULL), 1);
	CHECK_EQ(lt_cfg.overflow, LT_OVERFLOW_BLOCK);
	CHECK_EQ(load("LIBTRACE_QUIET=yes", "LIBTRACE_DEBUG=2"), 0);
	CHECK_EQ(lt_cfg.quiet, 1);
	CHECK_EQ(lt_cfg.debug, 2);
	CHECK_EQ(load("LIBTRACE_QUIET=maybe", "LIBTRACE_DEBUG=-1"), 2);
	CHECK_EQ(lt_cfg.quiet, 0);
	CHECK_EQ(lt_cfg.debug, 0);
	/* Durations: a unit is required (but for 0); 100us to 60s. */
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLE_PERIOD"), 10000000u);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=500us", NULL), 0);
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLE_PERIOD"), 500000u);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=1s", NULL), 0);
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLE_PERIOD"), 1000000000u);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=0", NULL), 0);
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLE_PERIOD"), 0u);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=10", NULL), 1); /* 10 what? */
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLE_PERIOD"), 10000000u);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=50us", NULL), 1); /* too fast */
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=2min", NULL), 1);
	CHECK_EQ(load("LIBTRACE_SAMPLE_PERIOD=-5ms", NULL), 1);
	/* Samplers, PAPI modules, call-site depth. */
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLERS"),
		 LT_SAMPLE_ENERGY | LT_SAMPLE_TEMPERATURE | LT_SAMPLE_MEMORY | LT_SAMPLE_CPU);
	CHECK_EQ(load("LIBTRACE_SAMPLERS=memory,cpu", NULL), 0);
	CHECK_EQ(lt_setting("LIBTRACE_SAMPLERS"), LT_SAMPLE_MEMORY | LT_SAMPLE_CPU);
	CHECK_EQ(load("LIBTRACE_SAMPLERS=pthread", NULL), 1); /* a module, not a sampler */
	CHECK_EQ(load("LIBTRACE_PAPI_MODULES=omp", NULL), 0);
	CHECK_EQ(lt_setting("LIBTRACE_PAPI_MODULES"), LT_MOD_OMP);
	CHECK_EQ(lt_cfg.callsite_depth, 1);
	CHECK_EQ(load("LIBTRACE_CALLSITE_DEPTH=32", NULL), 0);
	CHECK_EQ(lt_cfg.callsite_depth, 32);
	CHECK_EQ(load("LIBTRACE_CALLSITE_DEPTH=33", NULL), 1);
	CHECK_EQ(lt_cfg.callsite_depth, 1);
	/* Flight recorder mode and its signal: names, numbers, real-time offsets; never one
	 * that stops the process or reports a fault. */
	CHECK_EQ(lt_cfg.mode, LT_MODE_STREAM);
	CHECK_EQ(lt_cfg.flight_signal, 0);
	CHECK_EQ(load("LIBTRACE_MODE=flight", "LIBTRACE_FLIGHT_SIGNAL=SIGUSR1"), 0);
	CHECK_EQ(lt_cfg.mode, LT_MODE_FLIGHT);
	CHECK_EQ(lt_cfg.flight_signal, SIGUSR1);
	CHECK(!strcmp(lt_config_format(4, buf0, sizeof(buf0)), "LIBTRACE_MODE=flight"));
	CHECK(!strcmp(lt_config_format(5, buf0, sizeof(buf0)), "LIBTRACE_FLIGHT_SIGNAL=SIGUSR1"));
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=usr2", NULL), 0);
	CHECK_EQ(lt_cfg.flight_signal, SIGUSR2);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=SIGRTMIN+3", NULL), 0);
	CHECK_EQ(lt_cfg.flight_signal, SIGRTMIN + 3);
	CHECK(
	    !strcmp(lt_config_format(5, buf0, sizeof(buf0)), "LIBTRACE_FLIGHT_SIGNAL=SIGRTMIN+3"));
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=1", NULL), 0);
	CHECK_EQ(lt_cfg.flight_signal, SIGHUP);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=none", NULL), 0);
	CHECK_EQ(lt_cfg.flight_signal, 0);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=SIGKILL", NULL), 1);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=SIGSEGV", NULL), 1);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=9", NULL), 1);
	CHECK_EQ(load("LIBTRACE_FLIGHT_SIGNAL=SIGRTMAX+1", NULL), 1);
	CHECK_EQ(load("LIBTRACE_MODE=record", NULL), 1);
	CHECK_EQ(lt_cfg.mode, LT_MODE_STREAM);
	/* Output: kept as given; too long is refused. */
	CHECK_EQ(load("LIBTRACE_OUTPUT=/tmp/x y", NULL), 0);
	CHECK(!strcmp(lt_cfg.output, "/tmp/x y"));
	static char longval[5000] = "LIBTRACE_OUTPUT=";
	memset(longval + 16, 'a', sizeof(longval) - 17);
	CHECK_EQ(load(longval, NULL), 1);
	CHECK_EQ(lt_cfg.output[0], '\0');
	/* The meta file's rendering of each option names it. */
	CHECK_EQ(load("LIBTRACE_MODULES=user,proc", NULL), 0);
	char buf[256];
	CHECK(!strcmp(lt_config_format(1, buf, sizeof(buf)), "LIBTRACE_MODULES=proc,user"));
	for (size_t i = 0; lt_options[i].name; i++) {
		lt_config_format(i, buf, sizeof(buf));
		CHECK(!strncmp(buf, lt_options[i].name, strlen(lt_options[i].name)));
	}
	TEST_DONE();
}
