//! Reciprocal rank fusion: several rankings of the same items made one. An item at rank `r`
//! (from 0) of a ranking with share `s` scores `s / (k + r)`; its scores add up.

use std::collections::HashMap;

/// `rankings` (each a share and the items, best first) fused, best first; ties go to the
/// smaller item.
pub(crate) fn fuse<'r>(
    rankings: impl IntoIterator<Item = (f32, &'r [usize])>,
    k: f32,
) -> Vec<(usize, f32)> {
    let mut fused: HashMap<usize, f32> = HashMap::new();
    for (share, ranking) in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            *fused.entry(*item).or_default() += share / (k + rank as f32);
        }
    }
    let mut fused: Vec<(usize, f32)> = fused.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_ranks_add_up() {
        // 2: 1/(1+1) + 1/(1+0) = 1.5; 1: 1/(1+0) = 1; 3: 0.5/(1+1) = 0.25.
        let fused = fuse(
            [(1.0, &[1, 2][..]), (1.0, &[2][..]), (0.5, &[7, 3][..])],
            1.0,
        );
        let order: Vec<usize> = fused.iter().map(|(item, _)| *item).collect();
        assert_eq!(order, [2, 1, 7, 3]);
        assert!((fused[0].1 - 1.5).abs() < 1e-6);
        // Ties go to the smaller item.
        assert_eq!(fuse([(1.0, &[5][..]), (1.0, &[4][..])], 60.0)[0].0, 4);
    }
}
