// SPDX-License-Identifier: BSD-3-Clause
/* hip.c - the wrappers of the HIP runtime (being written). */
#include "gpu.h"
