//! The shipped MWC multiplier table is what the search produces, and its
//! entries really are good multipliers.

use warpmc_rng::multipliers::{self, SEARCH_START, TABLE_LEN, is_good_multiplier, search, table};

#[test]
fn table_has_the_documented_size_and_order() {
    let t = table();
    assert_eq!(t.len(), TABLE_LEN);
    assert!(t.windows(2).all(|w| w[0] > w[1]), "table must be strictly decreasing");
    assert!(t[0] <= SEARCH_START);
    // Clear of the collapsed-lattice zone just below 2^32.
    assert!(t.iter().all(|&a| (1u64 << 32) - u64::from(a) >= 1 << 24));
}

#[test]
fn table_starts_with_what_the_search_finds() {
    let first = search(SEARCH_START, 4096, |_| {});
    assert_eq!(first[..], table()[..4096]);
}

#[test]
fn table_windows_match_the_search_without_gaps() {
    // Restarting the search at an entry must reproduce the next entries: no
    // good multiplier is missing between them. Windows spread over the table,
    // the last one reaching its end.
    let t = table();
    for start in [10_000usize, 50_000, 90_001, TABLE_LEN - 700] {
        let window = search(t[start], 700, |_| {});
        assert_eq!(window[..], t[start..start + 700], "window at {start}");
    }
}

/// Primality checked by a separate implementation (primal-check) on a
/// sample spread over the whole table.
#[test]
fn sampled_entries_are_good_multipliers_by_an_independent_test() {
    let t = table();
    for i in (0..TABLE_LEN).step_by(97).chain([TABLE_LEN - 1]) {
        let a = u64::from(t[i]);
        assert!(primal_check::miller_rabin((a << 32) - 1), "a*2^32-1 composite for table[{i}] = {a}");
        assert!(primal_check::miller_rabin((a << 31) - 1), "a*2^31-1 composite for table[{i}] = {a}");
    }
}

#[test]
fn non_multipliers_between_entries_are_rejected() {
    let t = table();
    // Every a strictly between two consecutive entries near the start fails.
    for w in t[..64].windows(2) {
        for a in w[1] + 1..w[0] {
            assert!(!is_good_multiplier(a), "{a} is good but missing from the table");
        }
    }
}

/// The whole table, regenerated (about 20 s of two cores in release mode).
/// Run with `cargo test --release -- --ignored`, or `warpmc rng multipliers
/// --verify`.
#[test]
#[ignore = "slow: regenerates all 131072 multipliers"]
fn whole_table_matches_the_search() {
    assert_eq!(search(SEARCH_START, TABLE_LEN, |_| {})[..], table()[..]);
}

#[test]
fn period_is_a_times_2_pow_31_minus_1() {
    assert_eq!(multipliers::period(table()[0]), (u64::from(table()[0]) << 31) - 1);
}
