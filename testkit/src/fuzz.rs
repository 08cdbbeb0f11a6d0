//! The short run of each fuzz target in the normal test suite: every file of the
//! committed corpus (`fuzz/corpus/<target>` at the repository root) and mutants of
//! it from a seeded generator go through the target's entry function, the same one
//! the cargo-fuzz target calls. A panic fails the test and names the input.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::PathBuf;

use crate::Lcg;

/// The corpus directory of fuzz target `target`.
pub fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fuzz")
        .join("corpus")
        .join(target)
}

/// The files of the corpus of `target` (name, bytes), sorted by name.
///
/// # Panics
/// If the directory cannot be read or is empty (a target must keep a corpus).
pub fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the corpus {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| {
            let path = e.expect("a corpus entry").path();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
            )
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files
}

/// A mutant of `input`: one to four edits, each a byte overwrite, a bit flip, an
/// insertion of random bytes, a deletion of a run, a truncation, or an
/// overwrite of a little-endian u32 with a boundary value (0, 1, 2^31, 2^32 − 1, …).
pub fn mutant(input: &[u8], rng: &mut Lcg) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.next_u64() % 4 {
        let at = |rng: &mut Lcg, len: usize| (rng.next_u64() as usize) % len.max(1);
        match rng.next_u64() % 6 {
            0 if !v.is_empty() => {
                let i = at(rng, v.len());
                v[i] = rng.next_u64() as u8;
            }
            1 if !v.is_empty() => {
                let i = at(rng, v.len());
                v[i] ^= 1 << (rng.next_u64() % 8);
            }
            2 => {
                let i = at(rng, v.len() + 1);
                let n = 1 + rng.next_u64() as usize % 16;
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                v.splice(i.min(v.len())..i.min(v.len()), bytes);
            }
            3 if !v.is_empty() => {
                let i = at(rng, v.len());
                let n = (1 + rng.next_u64() as usize % 16).min(v.len() - i);
                v.drain(i..i + n);
            }
            4 => v.truncate(at(rng, v.len() + 1)),
            _ if v.len() >= 4 => {
                const EDGES: [u32; 6] = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff];
                let i = at(rng, v.len() - 3);
                let e = EDGES[rng.next_u64() as usize % EDGES.len()];
                v[i..i + 4].copy_from_slice(&e.to_le_bytes());
            }
            _ => v.push(rng.next_u64() as u8),
        }
    }
    v
}

/// Feeds every corpus file of `target` and `mutants` mutants of each (from a
/// generator seeded by `seed`) to `entry`. Returns how many inputs ran.
///
/// # Panics
/// If `entry` panics: the message names the corpus file and the mutant, and the
/// failing input is written to `target/fuzz-failure-<target>` for replay.
pub fn replay(target: &str, seed: u64, mutants: usize, entry: impl Fn(&[u8])) -> usize {
    let mut rng = Lcg(seed);
    let mut ran = 0;
    for (name, bytes) in corpus(target) {
        for k in 0..=mutants {
            let input = if k == 0 {
                bytes.clone()
            } else {
                mutant(&bytes, &mut rng)
            };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| entry(&input))) {
                let out = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("..")
                    .join("target")
                    .join(format!("fuzz-failure-{target}"));
                let _ = std::fs::write(&out, &input);
                eprintln!(
                    "fuzz target {target}: {name} (mutant {k} of seed {seed}) panicked; input written to {}",
                    out.display()
                );
                resume_unwind(p);
            }
            ran += 1;
        }
    }
    ran
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutants_are_deterministic_and_differ() {
        let input = b"SCI-PLAN\x01\0\0\0\x01".to_vec();
        let (mut a, mut b) = (Lcg(3), Lcg(3));
        let ms: Vec<Vec<u8>> = (0..50).map(|_| mutant(&input, &mut a)).collect();
        assert_eq!(
            ms,
            (0..50).map(|_| mutant(&input, &mut b)).collect::<Vec<_>>()
        );
        assert!(ms.iter().filter(|m| **m != input).count() > 40);
        assert!(mutant(&[], &mut a).len() <= 16 * 4);
    }
}
