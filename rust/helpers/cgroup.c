// SPDX-License-Identifier: GPL-2.0

#include <linux/cgroup.h>

__rust_helper void rust_helper_css_put(struct cgroup_subsys_state *css)
{
	css_put(css);
}
