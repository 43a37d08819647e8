// SPDX-License-Identifier: GPL-2.0

#include <linux/nodemask.h>

__rust_helper bool rust_helper_node_state(int node, enum node_states state)
{
	return node_state(node, state);
}
