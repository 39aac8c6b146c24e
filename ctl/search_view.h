/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_SEARCH_VIEW_H
#define SOAK_CTL_SEARCH_VIEW_H

#include "view.h"

/* After soakctl plot: when the run has a capacity search, its curve in
 * RUN-search.svg (or OUTPUT's stem with -search.svg); 0 when written or
 * there is none, else soakctl's exit status after saying why. */
int search_view_plot(const struct view_client *c, const struct view_plot_options *o);

#endif
