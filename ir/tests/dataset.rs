//! Data sets: `.npz` archives as numpy writes them (stored and deflated, ZIP64
//! local headers), directories of `x.npy`/`y.npy`, and corrupt archives.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sci_ir::dataset::{Dataset, npz_members};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn npz_stored_and_compressed() {
    for f in ["stored.npz", "compressed.npz"] {
        let d = Dataset::load(data(f)).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(d.y, vec![0, 2, 1]);
        assert_eq!(d.x.shape, vec![3, 1, 2, 2]);
        let s = d.sample(1, &[1, 4]).unwrap();
        assert_eq!(s.as_f32().unwrap(), &[1.0, 1.25, 1.5, 1.75]);
        assert!(d.sample(3, &[1, 4]).is_err());
        assert!(d.sample(0, &[1, 5]).is_err());
    }
}

#[test]
fn directory_of_npy_files() {
    let d = Dataset::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/digits/val"))
        .unwrap();
    assert_eq!(d.x.shape[1..], [1, 8, 8]);
    assert_eq!(d.len(), d.x.shape[0]);
    assert!(d.y.iter().all(|&l| (0..10).contains(&l)));
}

#[test]
fn corrupt_archives_are_errors() {
    let good = std::fs::read(data("compressed.npz")).unwrap();
    for cut in 0..good.len() {
        assert!(npz_members(&good[..cut]).is_err(), "prefix of {cut} bytes");
    }
    let mut bad = good.clone();
    bad[60] ^= 0xFF; // inside the first member's deflate stream
    assert!(npz_members(&bad).is_err());
    let e = Dataset::load(data("README.md")).unwrap_err().to_string();
    assert!(e.contains("not a ZIP"), "{e}");
}

/// Positions of the central directory entries (signature `PK\x01\x02`) of an archive.
fn central_entries(b: &[u8]) -> Vec<usize> {
    (0..b.len().saturating_sub(4))
        .filter(|&i| &b[i..i + 4] == b"PK\x01\x02")
        .collect()
}

#[test]
fn a_member_is_inflated_once() {
    let good = std::fs::read(data("stored.npz")).unwrap();
    assert_eq!(npz_members(&good).unwrap().len(), 2);
    // The same name twice: y.npy renamed x.npy everywhere.
    let mut twice = good.clone();
    for i in 0..twice.len() - 5 {
        if &twice[i..i + 5] == b"y.npy" {
            twice[i..i + 5].copy_from_slice(b"x.npy");
        }
    }
    let e = npz_members(&twice).unwrap_err();
    assert!(e.contains("'x.npy' appears twice"), "{e}");
    // Two entries pointing at one local header: y's entry points at x's data.
    let mut shared = good.clone();
    let entries = central_entries(&shared);
    assert_eq!(entries.len(), 2);
    let first_local = shared[entries[0] + 42..entries[0] + 46].to_vec();
    shared[entries[1] + 42..entries[1] + 46].copy_from_slice(&first_local);
    let e = npz_members(&shared).unwrap_err();
    assert!(e.contains("share their data"), "{e}");
}

proptest! {
    #[test]
    fn mutated_archives_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        stored in any::<bool>(),
    ) {
        let mut b = std::fs::read(data(if stored { "stored.npz" } else { "compressed.npz" })).unwrap();
        for (i, v) in edits {
            let k = i.index(b.len());
            b[k] = v;
        }
        let _ = npz_members(&b);
    }
}

/// Members declaring more than `MAX_NPZ_BYTES` uncompressed in all (two of 4 GiB − 16
/// bytes here, each alone under the cap) are refused before anything is inflated.
#[test]
fn an_archive_declaring_too_many_bytes_is_refused_before_inflating() {
    let mut big = std::fs::read(data("compressed.npz")).unwrap();
    let entries = central_entries(&big);
    assert_eq!(entries.len(), 2);
    for at in entries {
        big[at + 24..at + 28].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    }
    let e = npz_members(&big).unwrap_err();
    assert!(e.contains("uncompressed in all"), "{e}");
    const { assert!(sci_ir::dataset::MAX_NPZ_BYTES < 2 * 0xFFFF_FFF0) };
}
