-- Store bootstrap sums (stallscan.sweep.boot): the rows of `sweep_boot_rows` (registered by the caller)
-- replace the rows with the same (n_boot, seed, bins, policy, bin); parameter only_these = false drops every
-- other stored row (a whole new set of sums). The table: one row per (n_boot, seed, policy, gap bin); h
-- and o hold, for every resample, the weighted count of the humans and of the automatic events the gap rule
-- decides in that bin (n_boot int64, little-endian); the row with bin = bins (one past the last bin) holds
-- the weighted fixed fn (h) and fp (o). They sum every session of sweep_bins: a change to sweep_bins
-- changes them in the same transaction, or drops them. A row of the caller's with keep = false (its sums
-- are all 0) only removes the stored one: a bin without a row sums to 0, while the row of bin = bins is
-- always kept (it marks the policy's set as stored).
CREATE TABLE IF NOT EXISTS sweep_boot (
    n_boot INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    policy VARCHAR NOT NULL,
    bins INTEGER NOT NULL,
    bin INTEGER NOT NULL,
    h BLOB NOT NULL,
    o BLOB NOT NULL
);
DELETE FROM sweep_boot s
WHERE NOT $only_these
   OR EXISTS (SELECT 1 FROM sweep_boot_rows r
              WHERE r.n_boot = s.n_boot AND r.seed = s.seed AND r.bins = s.bins AND r.policy = s.policy
                AND r.bin = s.bin);
INSERT INTO sweep_boot SELECT n_boot, seed, policy, bins, bin, h, o FROM sweep_boot_rows WHERE keep;
