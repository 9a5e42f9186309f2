//! A fixed-size sketch of per-host values (#27): the per-host state of a crawl of millions of
//! hosts in bounded memory. Hosts are known by a 64-bit fingerprint; each value is folded into
//! one cell in each of [`DEPTH`] rows, and a host's value is read as the least of its cells.
//! Folding with a merge that never lowers a cell (a sum of counts, the latest of slots) keeps
//! every cell at or above each value folded into it, so a read is never below a host's own
//! value; a collision can only raise it. Used by [`super::host_cap`] (counts, summed) and
//! [`super::polite`] (politeness slots, the latest). Pure and synchronous.

/// A host's fingerprint (a stable 64-bit hash of its name).
pub(super) type Fingerprint = fn(&str) -> u64;

/// Rows of a sketch: a value is the least of its cells, one per row.
const DEPTH: usize = 4;

/// `DEPTH` rows of `width` cells, allocated at the first fold.
pub(super) struct Sketch<T> {
    cells: Vec<T>,
    width: usize,
}

impl<T: Copy + Ord + Default> Sketch<T> {
    /// An empty sketch of `width` cells a row (rounded up to a power of two).
    pub(super) fn new(width: usize) -> Self {
        Sketch {
            cells: Vec::new(),
            width: width.max(1).next_power_of_two(),
        }
    }

    /// Nothing folded in yet.
    pub(super) fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The value of `fp`: the least of its cells (`T::default()` when nothing is folded).
    pub(super) fn get(&self, fp: u64) -> T {
        if self.is_empty() {
            return T::default();
        }
        (cells(fp, self.width).map(|i| self.cells[i]).min()).unwrap_or_default()
    }

    /// Folds `v` into each cell of `fp` with `merge(cell, v)`.
    pub(super) fn fold(&mut self, fp: u64, v: T, merge: impl Fn(T, T) -> T) {
        if self.is_empty() {
            self.cells = vec![T::default(); DEPTH * self.width];
        }
        self.update(fp, |c| merge(c, v));
    }

    /// Applies `f` to each cell of `fp` (nothing when nothing is folded).
    pub(super) fn update(&mut self, fp: u64, f: impl Fn(T) -> T) {
        if self.is_empty() {
            return;
        }
        for i in cells(fp, self.width) {
            self.cells[i] = f(self.cells[i]);
        }
    }
}

/// The cell of `fp` in each row of a sketch `width` cells wide (a power of two).
fn cells(fp: u64, width: usize) -> impl Iterator<Item = usize> {
    (0..DEPTH).map(move |row| {
        // Each row takes its own bits of a re-mixed fingerprint (splitmix64's finaliser).
        let mut z = fp.wrapping_add((row as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        row * width + (z as usize & (width - 1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_never_below_a_value_folded_in_and_is_exact_without_collisions() {
        let mut s: Sketch<u32> = Sketch::new(64);
        assert_eq!(s.get(7), 0);
        for fp in 0..500u64 {
            s.fold(fp, (fp % 9) as u32 + 1, u32::saturating_add);
        }
        assert!((0..500u64).all(|fp| s.get(fp) > (fp % 9) as u32));
        let mut wide: Sketch<u64> = Sketch::new(1 << 14);
        wide.fold(1, 40, u64::max);
        wide.fold(2, 30, u64::max);
        wide.fold(1, 10, u64::max);
        assert_eq!((wide.get(1), wide.get(2), wide.get(3)), (40, 30, 0));
        wide.update(1, |c| c.saturating_sub(5));
        assert_eq!(wide.get(1), 35);
    }
}
