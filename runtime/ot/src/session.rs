//! [`Session`]: `T` lanes (a channel and an [`OtPack`] each) and chunked
//! parallel execution over them.
//!
//! A batch of `n` items is cut into `T` contiguous chunks by [`split`] (a
//! function of `n` and `T` only, so both parties cut alike); chunk `i` runs on
//! lane `i` in its own scoped thread. Roles alternate across chunks: in even
//! chunks `P0` is the OT sender, in odd chunks `P1` is ([`Chunk::sender`]), so
//! both directions of the link carry the bulk data. Protocols written per
//! chunk give results independent of `T` as long as each item's result does
//! not depend on which party sends its OTs (true for all protocols of the
//! paper, which are symmetric in that respect or re-randomise).
//!
//! # Randomness
//! A session has one root seed: from the operating system ([`Session::new`],
//! production) or given ([`Session::with_seed`], tests and replays). Lane `i`
//! gets the generator `Prg::derive(seed, "lane", i)` for its protocols and
//! `Prg::derive(seed, "lane-ot", i)` for its OT set-ups ([`Prg::derive`]), so
//! lanes never share a stream and a run is reproducible from its seed.
//!
//! The silent engine's LPN codes are keyed by a *public* seed that both
//! parties share ([`Session::with_lpn_seed`]): in a run, the session id that
//! the listening side draws and both hellos carry (`sci-runtime`'s `exec::link`);
//! lane `i`'s packs get [`lane_seed`]`(seed, i)`, so no two lanes (nor
//! sessions) run on the same codes.

use std::ops::Range;

use super::{OtKind, OtPack};
use sci_net::crypto::{Block, Prg, RandomnessError, random_block};
use sci_net::{Channel, Party, Stats};

/// One channel to the peer with its OT extension states and its generator.
#[derive(Debug)]
pub struct Lane {
    /// The channel.
    pub ch: Channel,
    /// The OT states used on this channel.
    pub ot: OtPack,
    /// The randomness of the protocols run on this lane (see the [module
    /// documentation](self)).
    pub prg: Prg,
}

/// The work of one chunk, handed to the closure of [`Session::run`].
#[derive(Debug)]
pub struct Chunk<'a> {
    /// Chunk number (0..T).
    pub index: usize,
    /// The items of this chunk.
    pub range: Range<usize>,
    /// Whether this party is the OT sender in this chunk (`P0` in even
    /// chunks, `P1` in odd ones).
    pub sender: bool,
    /// This party.
    pub party: Party,
    /// The lane of this chunk.
    pub lane: &'a mut Lane,
}

/// How a session cuts `0..n` over its lanes: the cost model's
/// [`sci_ir::params::lanes::split`], so prediction and run chunk alike.
pub use sci_ir::params::lanes::split;

/// The LPN seed of lane `lane` of a session whose public seed is `seed`
/// ([`Session::with_lpn_seed`]): `Prg::derive(seed, "sci/ferret/lane",
/// lane)`'s first block, so each lane's Ferret engines run on codes of their
/// own.
pub fn lane_seed(seed: Block, lane: u64) -> Block {
    Prg::derive(seed, "sci/ferret/lane", lane).next_block()
}

/// The per-party runtime context: `T` lanes to the peer.
#[derive(Debug)]
pub struct Session {
    party: Party,
    lanes: Vec<Lane>,
}

impl Session {
    /// A session over the given channels (lane `i` uses `channels[i]`, which
    /// must be connected to the peer's `channels[i]`), its randomness seeded
    /// from the operating system (one seed, see the [module
    /// documentation](self)).
    pub fn new(party: Party, channels: Vec<Channel>) -> Result<Self, RandomnessError> {
        Ok(Self::with_seed(party, channels, random_block()?))
    }

    /// [`Session::new`] with the given root seed instead of the OS's: the same
    /// seed and peer behaviour give the same transcript. For tests and
    /// replays only; a production session must not reuse a seed.
    pub fn with_seed(party: Party, channels: Vec<Channel>, seed: Block) -> Self {
        Session {
            party,
            lanes: channels
                .into_iter()
                .enumerate()
                .map(|(i, ch)| Lane {
                    ch,
                    ot: OtPack::new(Prg::derive(seed, "lane-ot", i as u64), OtKind::Iknp),
                    prg: Prg::derive(seed, "lane", i as u64),
                })
                .collect(),
        }
    }

    /// The same session with every lane's OTs on `kind` ([`OtPack::set_kind`];
    /// IKNP by default). Both parties must choose the same engine.
    pub fn with_ot(mut self, kind: OtKind) -> Self {
        for l in &mut self.lanes {
            l.ot.set_kind(kind);
        }
        self
    }

    /// The same session with every lane's OTs on `kind`, and on the silent engine lane
    /// `i`'s Ferret LPN set `ferret[i]` ([`OtPack::set_ferret_params`]; `sci-run` sizes
    /// them by the plan's OT demand, [`sci_ir::cost::ferret_params`]). Both parties
    /// must choose the same. Errors (nothing set up yet, so only) if `ferret` does not
    /// have one set per lane or a set does not chain.
    pub fn with_engine(
        self,
        kind: OtKind,
        ferret: &[super::ferret::FerretParams],
    ) -> Result<Self, super::OtError> {
        let mut s = self.with_ot(kind);
        if kind == OtKind::Silent {
            super::check(ferret.len() == s.lanes.len(), || {
                format!("{} Ferret sets for {} lanes", ferret.len(), s.lanes.len())
            })?;
            for (l, p) in s.lanes.iter_mut().zip(ferret) {
                l.ot.set_ferret_params(*p)?;
            }
        }
        Ok(s)
    }

    /// The same session with lane `i`'s pack given the LPN seed
    /// [`lane_seed`]`(seed, i)` ([`OtPack::set_lpn_seed`]): `seed` is public,
    /// the same for both parties and fresh per session (`sci-run` uses the
    /// session id). The silent engine needs it; IKNP ignores it. Errors if a
    /// lane's Ferret state is set up already.
    pub fn with_lpn_seed(mut self, seed: Block) -> Result<Self, super::OtError> {
        for (i, l) in self.lanes.iter_mut().enumerate() {
            l.ot.set_lpn_seed(lane_seed(seed, i as u64))?;
        }
        Ok(self)
    }

    /// The OT engine of the lanes.
    pub fn ot_kind(&self) -> OtKind {
        self.lanes.first().map_or(OtKind::Iknp, |l| l.ot.kind())
    }

    /// This party.
    pub fn party(&self) -> Party {
        self.party
    }

    /// Number of lanes `T`.
    pub fn threads(&self) -> usize {
        self.lanes.len()
    }

    /// All lanes (e.g. lane 0 for sequential work).
    pub fn lanes_mut(&mut self) -> &mut [Lane] {
        &mut self.lanes
    }

    /// Sum of the counters of all lanes. `rounds` is the maximum over lanes
    /// (lanes run in parallel), bytes are summed.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for l in &self.lanes {
            let c = l.ch.stats();
            s.bytes_sent += c.bytes_sent;
            s.bytes_recv += c.bytes_recv;
            s.rounds = s.rounds.max(c.rounds);
        }
        s
    }

    /// Runs every lane's OT set-ups now ([`OtPack::setup`]: IKNP and KK,
    /// or Ferret, both directions), lanes in parallel, so that later measurements
    /// exclude the base OTs. Both parties must call it at the same point.
    /// Cost per lane: 2·(32 + 128·32) + 2·(32 + 256·32) bytes.
    pub fn setup(&mut self) -> Result<(), super::OtError> {
        let t = self.threads();
        self.run(t, |c| c.lane.ot.setup(&mut c.lane.ch, c.party))
            .map(drop)
    }

    /// Runs `f` on each of the `T` chunks of `0..n` (see [`split`]), chunk
    /// `i` on lane `i` in its own thread (inline when `T = 1`). Returns the
    /// results in chunk order, or the first error in chunk order. Chunks with
    /// an empty range are still run (protocols are no-ops on 0 items), so both
    /// parties always run the same chunks.
    pub fn run<R, E, F>(&mut self, n: usize, f: F) -> Result<Vec<R>, E>
    where
        R: Send,
        E: Send,
        F: Fn(Chunk<'_>) -> Result<R, E> + Sync,
    {
        let party = self.party;
        let ranges = split(n, self.lanes.len());
        let chunk = |index: usize, range: Range<usize>, lane: &mut Lane| -> Result<R, E> {
            let sender = index.is_multiple_of(2) == (party == Party::Server);
            f(Chunk {
                index,
                range,
                sender,
                party,
                lane,
            })
        };
        if self.lanes.len() == 1 {
            return self
                .lanes
                .iter_mut()
                .zip(ranges)
                .enumerate()
                .map(|(i, (lane, r))| chunk(i, r, lane))
                .collect();
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = self
                .lanes
                .iter_mut()
                .zip(ranges)
                .enumerate()
                .map(|(i, (lane, r))| {
                    let chunk = &chunk;
                    s.spawn(move || chunk(i, r, lane))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_gets_its_own_lpn_seed() {
        let (a, b) = (Block(1), Block(2));
        assert_eq!(lane_seed(a, 0), lane_seed(a, 0));
        assert_ne!(lane_seed(a, 0), lane_seed(a, 1));
        assert_ne!(lane_seed(a, 0), lane_seed(b, 0));
        assert_ne!(lane_seed(a, 0), a);
        let (c0, c1) = sci_net::mem::pair(None);
        let s = Session::with_seed(Party::Server, vec![c0, c1], Block(9))
            .with_lpn_seed(a)
            .expect("nothing set up");
        let seeds: Vec<_> = s.lanes.iter().map(|l| l.ot.lpn_seed()).collect();
        assert_eq!(seeds, [Some(lane_seed(a, 0)), Some(lane_seed(a, 1))]);
    }

    #[test]
    fn split_is_balanced_and_covering() {
        for n in [0usize, 1, 5, 1025] {
            for t in [1usize, 2, 3, 8] {
                let r = split(n, t);
                assert_eq!(r.len(), t);
                assert_eq!(r[0].start, 0);
                assert_eq!(r[t - 1].end, n);
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                    assert!(w[0].len() >= w[1].len() && w[0].len() <= w[1].len() + 1);
                }
            }
        }
    }
}
