/* The L2 room (l2.c): access policy windows. */
#ifndef PTXKIT_RUNTIME_L2_H
#define PTXKIT_RUNTIME_L2_H

#include "driver/driver.h"
#include "ptxkit.h"

/* L2 access policy windows (l2.c), shared by ptxkit_kernel_launch_ex and streams:
 * the checks every window gets, and its driver form. */
ptxkit_status access_window_check(ptxkit_context *ctx, const ptxkit_access_window *w);
void access_window_to_cu(const ptxkit_access_window *w, CUaccessPolicyWindow *out);

#endif
