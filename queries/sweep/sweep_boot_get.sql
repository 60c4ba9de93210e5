-- The stored bootstrap sums (table sweep_boot, stallscan.sweep.boot) for one (n_boot, seed) over a grid of
-- $bins gap bins, in (policy, bin) order; $only_bins, when not NULL, keeps those bins only (an
-- incremental update reads the bins it changes).
SELECT policy, bin, h, o
FROM sweep_boot
WHERE n_boot = $n_boot AND seed = $seed AND bins = $bins
  AND ($only_bins IS NULL OR list_contains($only_bins, bin))
ORDER BY policy, bin;
