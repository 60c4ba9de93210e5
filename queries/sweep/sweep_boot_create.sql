-- The bootstrap's per-resample sums of the stored sweep cells (stallscan.sweep.boot): per (n_boot, seed,
-- policy), the int64 matrices H and O (n_boot x gap bins: weighted humans / automatic events the gap rule
-- decides) and F (n_boot x 2: weighted fixed fn, fp) as little-endian bytes. They sum every session of
-- sweep_bins; a change to sweep_bins changes them in the same transaction, or drops them.
CREATE TABLE IF NOT EXISTS sweep_boot (
    n_boot INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    policy VARCHAR NOT NULL,
    bins INTEGER NOT NULL,
    h BLOB NOT NULL,
    o BLOB NOT NULL,
    f BLOB NOT NULL
);
