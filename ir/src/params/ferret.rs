//! The Ferret silent-OT engine's parameters (Yang, Weng, Lan, Zhang, Wang, "Ferret:
//! Fast Extension for coRRElated oT with small communication", CCS 2020): its LPN
//! parameter sets with regular noise, with their estimated security. One iteration with
//! `(n, k, t)`, `n = t·2^h`, consumes `k + t·h` COTs reserved from the previous one and
//! outputs `n`; the first (the bootstrapping set) consumes COTs of an IKNP extension.
//! Its price: `cost::ferret` (which also chooses the set for a lane's demand,
//! `cost::ferret::params_for`).

/// One LPN parameter set with regular noise: `t` GGM trees of `2^log_leaves`
/// leaves give `n = t·2^log_leaves` outputs from a secret of `k` COTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LpnParams {
    /// LPN dimension (the COTs of the LPN secret).
    pub k: usize,
    /// Noise weight: the number of GGM trees.
    pub t: usize,
    /// Depth of each GGM tree (`h`): `2^h` leaves.
    pub log_leaves: u32,
}

impl LpnParams {
    /// Outputs of one iteration, `t·2^h`.
    pub const fn n(&self) -> usize {
        self.t << self.log_leaves
    }

    /// COTs one iteration consumes: `k` for the LPN secret and `h` per tree.
    pub const fn reserve(&self) -> usize {
        self.k + self.t * self.log_leaves as usize
    }

    /// Bytes the COT sender sends in one iteration: `t·(2h + 1)` blocks.
    pub const fn iteration_bytes(&self) -> u64 {
        16 * (self.t as u64) * (2 * self.log_leaves as u64 + 1)
    }
}

/// The engine's parameters: the bootstrapping iteration (its reserve from
/// IKNP) and the iteration run every time the COTs run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FerretParams {
    /// The first iteration, whose `n` must cover `main.reserve()`.
    pub boot: LpnParams,
    /// Every later iteration; its `n` must exceed its own reserve.
    pub main: LpnParams,
}

/// The production parameter sets, regular-noise primal-LPN sets from emp-ot
/// (the reference implementation of Ferret's authors): main `n = 10,608,640
/// = 1295·2^13`, `k = 589,824`, `t = 1295` (Ferret's paper had `n =
/// 10,805,248`, `k = 589,760`, `t = 1319`); bootstrapping `n = 607,232 =
/// 593·2^10`, `k = 69,454`, `t = 593`, taken from emp-ot's 2021
/// `ferret-setup` branch (not its master), so it predates the algebraic
/// attacks on regular syndrome decoding (Briaud and Øygarden, "A New
/// Algebraic Approach to the Regular Syndrome Decoding Problem and
/// Implications for PCG Constructions", Eurocrypt 2023), after which emp-ot
/// master revised its smaller sets (its current `b10` and `b13`).
///
/// **Estimated security** (bits, the minimum over the attacks the estimator
/// covers: ISD, Pooled Gauss, low-weight parity check and the algebraic
/// attacks on regular noise), with the estimator of Liu, Wang, Yang and Yu
/// ("The Hardness of LPN over Any Integer Ring and Field for PCG
/// Applications", Eurocrypt 2024; `github.com/1234wangtr/Code_estimators`,
/// commit `41e013c`; `scripts/lpn-estimate.py` runs it). The bootstrapping
/// set's figure was re-run on 2026-12-06 and agrees; on the main set that run
/// stopped in the estimator's algebraic attack (`decimal.InvalidOperation`),
/// so its figure is the earlier run's (issue 26):
///
/// | set | `n` | `k` | `t` | bits |
/// |---|---|---|---|---|
/// | main ([`FERRET`]`.main`) | 10,608,640 | 589,824 | 1295 | 150.4 |
/// | bootstrapping ([`FERRET`]`.boot`, all of [`FERRET_SMALL`]) | 607,232 | 69,454 | 593 | 135.8 |
/// | for comparison: emp-ot master's `b13` | | | | 140.7 |
/// | for comparison: emp-ot master's `b10` | | | | 128.6 |
///
/// Every set sci uses is at or above 128 bits, so the sets are kept.
/// Iterating a set does not lower its figure: each iteration draws a fresh
/// LPN secret (the previous iteration's reserved COTs) and fresh regular
/// noise.
pub const FERRET: FerretParams = FerretParams {
    boot: LpnParams {
        k: 69_454,
        t: 593,
        log_leaves: 10,
    },
    main: LpnParams {
        k: 589_824,
        t: 1295,
        log_leaves: 13,
    },
};

/// The small-demand set: emp-ot's bootstrapping set for every iteration
/// (`{boot: B, main: B}` with `B` = [`FERRET`]`.boot`). Its set-up is
/// [`FERRET`]'s bootstrapping, after which 531,848 COTs are available (the
/// production set leaves 573 and runs its first 10.6-million-COT iteration
/// at the 574th), and each further iteration outputs 607,232 COTs (531,848
/// handed out) for 199,248 bytes: 3 bits per COT instead of 0.45, but ≈ 17×
/// less computation and memory per iteration than the main set's.
///
/// Security: `B` is estimated at 135.8 bits (see [`FERRET`]'s table); every
/// iteration of Ferret draws a fresh LPN secret and fresh regular noise, so
/// iterating `B` stays at that figure, as the main set does when iterated.
pub const FERRET_SMALL: FerretParams = FerretParams {
    boot: FERRET.boot,
    main: FERRET.boot,
};

impl FerretParams {
    /// Whether the sets chain: `boot` covers `main`'s reserve, `main` covers
    /// its own with COTs to spare, and every set has at least one leaf level
    /// and a secret of at least `D = 10` COTs.
    pub fn valid(&self) -> bool {
        let ok = |p: &LpnParams| p.t >= 1 && (1..=24).contains(&p.log_leaves) && p.k >= 10;
        ok(&self.boot)
            && ok(&self.main)
            && self.boot.n() >= self.main.reserve()
            && self.main.n() > self.main.reserve()
    }

    /// COTs the set-up leaves available to hand out: `boot.n − main.reserve`.
    pub const fn first_available(&self) -> usize {
        self.boot.n() - self.main.reserve()
    }

    /// COTs each later iteration hands out: `main.n − main.reserve`.
    pub const fn per_iteration(&self) -> usize {
        self.main.n() - self.main.reserve()
    }

    /// Iterations after the set-up to hand out `m` COTs in all.
    pub fn iterations(&self, m: usize) -> usize {
        m.saturating_sub(self.first_available())
            .div_ceil(self.per_iteration())
    }
}
