// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos - what a Kokkos kernel costs on the Serial backend, to run with no tool, with an
 * empty tool and with libtrace.so; bench/kokkos.sh builds it and runs the three side by side.
 *
 *   labelled   parallel_for("empty", RangePolicy(0, 1), ...) of an empty functor: the
 *              begin and end callbacks and what Kokkos does around them (ns per kernel)
 *   unnamed    the same without a label: Kokkos names it after the functor's type
 *   region     pushRegion("phase") + popRegion()
 *
 *   kokkos [ITERS [REPS]]
 */
#include <Kokkos_Core.hpp>

#include "bench.h"

struct Empty {
	KOKKOS_INLINE_FUNCTION void operator()(const int) const {}
};

int main(int argc, char **argv)
{
	Kokkos::initialize(argc, argv);
	{
		long iters = argc > 1 ? atol(argv[1]) : 200000;
		int reps = argc > 2 ? atoi(argv[2]) : 11;
		if (reps > BENCH_MAX_REPS)
			reps = BENCH_MAX_REPS;
		bench_pin(0);
		Kokkos::RangePolicy<Kokkos::Serial> one(0, 1);
		BENCH("labelled parallel_for", iters, reps,
		      Kokkos::parallel_for("empty", one, Empty()));
		BENCH("unnamed parallel_for", iters, reps, Kokkos::parallel_for(one, Empty()));
		BENCH("pushRegion + popRegion", iters, reps, {
			Kokkos::Profiling::pushRegion("phase");
			Kokkos::Profiling::popRegion();
		});
	}
	Kokkos::finalize();
	return 0;
}
