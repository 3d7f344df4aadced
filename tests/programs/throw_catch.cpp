// SPDX-License-Identifier: BSD-3-Clause
/*
 * throw_catch - throws and catches N C++ exceptions through a few frames (default 20000)
 * and prints how many it caught: the program's unwinder must stay libgcc's when the stack
 * sampler has libunwind loaded.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) static void deep(int n)
{
	if (n == 0)
		throw std::runtime_error("x");
	deep(n - 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 20000, caught = 0;
	for (long i = 0; i < n; i++) {
		try {
			deep(3);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	std::printf("caught %ld\n", caught);
	return caught == n ? 0 : 1;
}
