// SPDX-License-Identifier: GPL-2.0

#include <linux/huge_mm.h>

__rust_helper void rust_helper_mod_mthp_stat(int order, enum mthp_stat_item item, int delta)
{
	mod_mthp_stat(order, item, delta);
}
