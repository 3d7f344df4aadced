// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos_app.cpp - a Kokkos program that uses every family of the profiling interface, for
 * tests/e2e/kokkos.sh.  Usage: kokkos_app N STEPS [leak]
 *
 * What it does, which the test checks in the archive:
 *   Views      "x", "y" (N doubles each), "grid" (10 x 20 ints), "y_host" (N doubles,
 *              HostSpace), each allocated and initialised once and freed at the end of the
 *              scope; with "leak", "leaky" (N doubles) allocated with new and never freed
 *   regions    "solve" (once) holding STEPS x "step", each holding one "axpy"
 *              parallel_for and one "dot" parallel_reduce
 *   kernels    "prefix" parallel_scan once; one unnamed lambda parallel_for; one unnamed
 *              parallel_for of a functor with a work tag (Functor/MyTag); "fill grid"
 *              parallel_for (MDRange), "sum grid" parallel_reduce and "1D"
 *              parallel_for once each
 *   deep copy  y_host <- y once (N * 8 bytes)
 *   section    "io" created, started and stopped 3 times, destroyed
 *   events     "checkpoint" twice
 *   metadata   "case" = "kokkos_app"
 * It prints its results, the same with and without a tool.
 */
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

struct MyTag {
};

struct Functor {
	Kokkos::View<double *> v;
	KOKKOS_INLINE_FUNCTION void operator()(MyTag, const int i) const
	{
		v(i) += 0.5;
	}
};

int main(int argc, char **argv)
{
	Kokkos::initialize(argc, argv);
	int status = 0;
	{
		const int n = argc > 1 ? atoi(argv[1]) : 1000;
		const int steps = argc > 2 ? atoi(argv[2]) : 5;
		const bool leak = argc > 3 && !strcmp(argv[3], "leak");
		Kokkos::Tools::declareMetadata("case", "kokkos_app");
		Kokkos::View<double *> x("x", n), y("y", n);
		Kokkos::View<int **> grid("grid", 10, 20);
		Kokkos::View<double *, Kokkos::HostSpace> y_host("y_host", n);
		if (leak) {
			auto *leaky = new Kokkos::View<double *>("leaky", n);
			(*leaky)(0) = 1.0;
		}
		Kokkos::parallel_for(
		    "fill grid", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {10, 20}),
		    KOKKOS_LAMBDA(int i, int j) { grid(i, j) = i * 20 + j; });
		Kokkos::parallel_for(
		    n, KOKKOS_LAMBDA(int i) {
			    x(i) = 1.0 + i % 7;
			    y(i) = 0.5 * (i % 3);
		    });
		double dot = 0.0;
		Kokkos::Profiling::pushRegion("solve");
		for (int s = 0; s < steps; s++) {
			Kokkos::Profiling::pushRegion("step");
			Kokkos::parallel_for(
			    "axpy", n, KOKKOS_LAMBDA(int i) { y(i) += 0.25 * x(i); });
			double d = 0.0;
			Kokkos::parallel_reduce(
			    "dot", n, KOKKOS_LAMBDA(int i, double &acc) { acc += x(i) * y(i); }, d);
			dot += d;
			Kokkos::Profiling::popRegion();
			if (s == 0 || s == steps - 1)
				Kokkos::Profiling::markEvent("checkpoint");
		}
		Kokkos::Profiling::popRegion();
		double last = 0.0;
		Kokkos::parallel_scan(
		    "prefix", n,
		    KOKKOS_LAMBDA(int i, double &acc, bool final) {
			    acc += x(i);
			    if (final)
				    y(i) = acc;
		    },
		    last);
		Kokkos::parallel_for(Kokkos::RangePolicy<MyTag>(0, n), Functor{x});
		Kokkos::parallel_for(
		    "1D", n, KOKKOS_LAMBDA(int i) { y(i) -= 0.0; }); /* a label, not a type */
		Kokkos::deep_copy(y_host, y);
		/* A host mirror of a host view is the view itself: a copy that moves nothing. */
		auto same = Kokkos::create_mirror_view(y_host);
		Kokkos::deep_copy(same, y_host);
		uint32_t io;
		Kokkos::Profiling::createProfileSection("io", &io);
		double check = 0.0;
		for (int r = 0; r < 3; r++) {
			Kokkos::Profiling::startSection(io);
			for (int i = 0; i < n; i += 97)
				check += y_host(i);
			Kokkos::Profiling::stopSection(io);
		}
		Kokkos::Profiling::destroyProfileSection(io);
		long cells = 0;
		Kokkos::parallel_reduce(
		    "sum grid", 10,
		    KOKKOS_LAMBDA(int i, long &acc) {
			    for (int j = 0; j < 20; j++)
				    acc += grid(i, j);
		    },
		    cells);
		printf("dot %.6f last %.6f check %.6f cells %ld x0 %.2f\n", dot, last, check, cells,
		       x(0)); /* Serial: the View is host memory */
		if (cells != 199 * 200 / 2)
			status = 1;
	}
	Kokkos::finalize();
	return status;
}
