//! The workspace's dev-only test kit (a dev-dependency of `sci-ir`,
//! `sci-passes`, `sci-compiler`, `sci-runtime` and `sci`, never a dependency of a library).
//!
//! - [`Lcg`]: the deterministic pseudo-random generator of test data.
//! - [`seed`]: the seed of the tests' protocol randomness, replayable from
//!   `SCI_TEST_SEED` and printed when a test fails.
//! - [`run2`]: both parties of a two-party test, in two threads.
//! - [`fuzz`]: the short run of each fuzz target over its committed corpus.
//! - [`process`]: `sci-run` processes listening on port 0, with the address they bound.
//!
//! It is a crate of its own, with no dependencies, rather than a `testkit`
//! feature of `sci-runtime`, because its users sit on both sides of the
//! runtime: `sci-ir` and `sci-passes` cannot depend on `sci-runtime`, and
//! `sci-runtime`'s own unit tests need it too (a crate that depended on
//! `sci-runtime` would give them a second, incompatible copy of its types).
//! What needs the runtime's types (contexts, sessions, shares) stays in the
//! runtime's test modules, built on this.

use std::sync::OnceLock;

pub mod fuzz;
pub mod process;

/// The environment variable that fixes the tests' protocol seed.
pub const SEED_VAR: &str = "SCI_TEST_SEED";

/// A 64-bit linear congruential generator (Knuth's MMIX constants):
/// deterministic test data without a dependency. Not for cryptography.
#[derive(Clone, Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The next 53-bit output (the state's high bits).
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    /// Uniform in [-1, 1), on a grid of 2^-23.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 29) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    /// `n` values of [`Lcg::f32`].
    pub fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }

    /// Uniform-ish in `[-m, m]` (`m ≥ 0`).
    pub fn int(&mut self, m: i64) -> i64 {
        (self.next_u64() % (2 * m as u64 + 1)) as i64 - m
    }

    /// Uniform-ish in `lo..=hi` (`lo ≤ hi`).
    pub fn in_range(&mut self, lo: i128, hi: i128) -> i128 {
        lo + (self.next_u64() as i128).rem_euclid(hi - lo + 1)
    }
}

/// The seed of this test process's protocol randomness: `SCI_TEST_SEED`
/// (decimal or `0x` hexadecimal) if set, else a fresh one (from the clock
/// and std's per-process random hash keys). The first call installs a panic
/// hook that prints `SCI_TEST_SEED=<seed>` after any panic message, so a
/// failing test can be replayed with the same randomness:
/// `SCI_TEST_SEED=<seed> cargo test --release <name>`.
///
/// # Panics
/// If `SCI_TEST_SEED` is set but not a number.
pub fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let seed = match std::env::var(SEED_VAR) {
            Ok(v) => parse_seed(&v).unwrap_or_else(|| panic!("{SEED_VAR}={v:?} is not a u64")),
            Err(_) => fresh_seed(),
        };
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            eprintln!("sci-testkit: replay this run with {SEED_VAR}={seed}");
        }));
        seed
    })
}

/// A seed as `SCI_TEST_SEED` spells it: decimal or `0x` hexadecimal.
fn parse_seed(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// A seed that differs between processes (not cryptographic: tests only).
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.finish()
}

/// Runs the two parties of a two-party test: `p1` on a scoped thread, `p0`
/// on this one, and returns both results. A panic of `p1` is re-raised here
/// with its own payload (so its message and the seed are printed once).
pub fn run2<A: Send, B: Send>(
    p0: impl FnOnce() -> A + Send,
    p1: impl FnOnce() -> B + Send,
) -> (A, B) {
    std::thread::scope(|s| {
        let h = s.spawn(p1);
        let a = p0();
        let b = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcg_is_deterministic_and_in_range() {
        let (mut a, mut b) = (Lcg(7), Lcg(7));
        for _ in 0..1000 {
            let x = a.f32();
            assert_eq!(x.to_bits(), b.f32().to_bits());
            assert!((-1.0..1.0).contains(&x));
            let i = a.int(5);
            assert_eq!(i, b.int(5));
            assert!((-5..=5).contains(&i));
            let r = a.in_range(-3, 9);
            assert_eq!(r, b.in_range(-3, 9));
            assert!((-3..=9).contains(&r));
        }
        assert_ne!(Lcg(1).next_u64(), Lcg(2).next_u64());
    }

    #[test]
    fn seeds_parse_and_repeat() {
        assert_eq!(parse_seed("42"), Some(42));
        assert_eq!(parse_seed(" 0xff "), Some(255));
        assert_eq!(parse_seed("x"), None);
        assert_eq!(seed(), seed());
    }

    #[test]
    fn run2_returns_both_results_and_reraises_a_panic() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (a, b) = run2(move || rx.recv().map(|v: u32| v + 1), move || tx.send(41));
        assert_eq!((a, b.is_ok()), (Ok(42), true));
        let r = std::panic::catch_unwind(|| run2(|| 0, || -> u32 { panic!("p1 fails") }));
        assert!(r.is_err());
    }
}
