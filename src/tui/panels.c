/* panels.c: what the screen knows of each panel, one descriptor each (screen.h
 * tui_panel_desc): its draw function, its title, whether it shares the tabbed place of
 * the compact layout, how the arrows and paging keys move in it, what the help screen
 * says it shows, and where it sits in the two layouts (layout.c reads no panel by name). The panel
 * list itself, with the names and figures, is explore/panelfig.h's NS_PANELS. */
#include "tui/screen.h"

const tui_panel_desc tui_panels[TUI_PANEL_COUNT] = {
    [TUI_PANEL_INPUT] =
        {tui_draw_input, "1 Input", 0, TUI_NAV_CELLS,
         "x as the normalization sees it: rounded to the dtype setting (the footer then says "
         "'fp64, shown as fp32': stored in fp64, shown and computed in fp32). A rank 3 or 4 "
         "tensor is shown as rows of its last axis. Footer: mean, std (population) and rms "
         "of the stored values over all elements; n, min, "
         "max. The title names the file x came from, if it did.",
         .full = {0, 42}, .compact = {0, 40}, .partners = {TUI_PANEL_OUTPUT, TUI_PANEL_SPECTRUM}},
    [TUI_PANEL_SETTINGS] =
        {tui_draw_settings, "2 Settings", 1, TUI_NAV_LIST,
         "Every setting with its keys. A trailing * marks a default (the kind's; for acc, the "
         "dtype's). Up/Down pick a row; Left/Right (or Enter) press its keys. Axes are "
         "1-based: {2,3,4} is C,H,W of an (N,C,H,W) tensor.",
         .full = {0, 0}, .compact = {1, 0}, .partners = {TUI_PANEL_INPUT, TUI_PANEL_OUTPUT}},
    [TUI_PANEL_OUTPUT] =
        {tui_draw_output, "3 Output", 0, TUI_NAV_FLAT,
         "y for each element (the list follows the cursor, which it shares with the input), "
         "then y(x+b) and y(ax): the shift and scale probes; the bars are y, symmetric about "
         "0. stat k/n: the statistic (the group of elements normalized together) of the "
         "element under the cursor, k of n, with its mean, var and s, the denominator "
         "sqrt(var+eps) (std+eps with p; for rms, var is the mean square). max|y'-y|: the "
         "largest change a probe makes: invariant when it is within the dtype's rounding "
         "(32 ulps of the largest |y|), NOT invariant otherwise; with eps > 0 no map is exactly "
         "scale invariant, and the line says so.",
         .full = {1, 50}, .compact = {0, 0}, .partners = {TUI_PANEL_INPUT, TUI_PANEL_SPECTRUM}},
    [TUI_PANEL_SPECTRUM] =
        {tui_draw_spectrum, "4 Spectrum", 0, TUI_NAV_LIST,
         "The eigenvalues of J = dy/dx, three ways: the closed form and LAPACK on the analytic "
         "J (both of the exact fp64 map at the stored x), and LAPACK on a finite-difference J "
         "of the map on screen (its dtype, acc and algo, with a step that dtype resolves). "
         "ones: a statistic's (1,...,1) direction, removed by centering (0). radial: the "
         "direction x - mean: eps/s^3 (eps/s^2 with p), 0 when eps = 0. bulk: the other "
         "directions: 1/s. m: the multiplicity. ~ after a value: that method labels the "
         "eigenvector differently (a constant row has no radial direction). rank r of n: "
         "singular values above tol = 1e-10 x the largest.",
         .full = {1, 0}, .compact = {1, 50}, .partners = {TUI_PANEL_INPUT, TUI_PANEL_OUTPUT}},
    [TUI_PANEL_BATCH] =
        {tui_draw_batch, "5 Batch", 1, TUI_NAV_CELLS,
         "A B x D batch matrix, one example per row. BN: batch norm of each column over the "
         "rows (train mode: batch statistics); LN: layer norm of each row on its own. T: the "
         "target row whose BN output we watch; C: the companion row you edit. 'T col j: now "
         "(was before)': T's BN value with C as it is and as it was; FLIP: the sign changed "
         "though T did not. In eval mode (m) BN uses fixed running statistics and rows no "
         "longer affect each other; the panel says so.",
         .full = {2, 36}, .compact = {1, 0}, .partners = {TUI_PANEL_OUTPUT, TUI_PANEL_SETTINGS}},
    [TUI_PANEL_TRAIN] =
        {tui_draw_traineval, "6 Train/eval", 1, TUI_NAV_NONE,
         "Running statistics after B training batches of N values (B x N; N(mean, std) draws, "
         "or rows of the batch matrix): momentum (exponential, as PyTorch), cumulative "
         "(the average of the batches' unbiased n-1 variances, PyTorch's momentum=None) and "
         "exact (all values merged, population n). eval: a fresh batch and its own mean and "
         "var. gap: max|y(running) - y(own statistics)| on it.",
         .full = {2, 35}, .compact = {1, 0}, .partners = {TUI_PANEL_SETTINGS, TUI_PANEL_OUTPUT}},
    [TUI_PANEL_PRECISION] =
        {tui_draw_precision, "7 Precision", 1, TUI_NAV_NONE,
         "The variance of all elements of x (not per statistic) by raw moments "
         "(E[x^2] - E[x]^2), two-pass and Welford, in the dtype and acc, against fp64 two-pass "
         "of the stored values. rel err: the relative error. kept: decimal digits that agree "
         "(-log10 rel err, at most what acc holds); lost: what acc holds minus kept.",
         .full = {2, 0}, .compact = {1, 0}, .partners = {TUI_PANEL_INPUT, TUI_PANEL_OUTPUT}},
};
