//! Plan files: exact round trips, the client view and the program hash, a golden file,
//! clear errors for bad files, and fuzzing of the decoder (random bytes, truncations,
//! byte flips, and mutations that keep a valid checksum so they reach the protobuf
//! decoder and the type checker).

mod common;

use proptest::prelude::*;
use prost::Message;
use sci_ir::plan::{FORMAT_VERSION, InstrMsg, MAGIC, OpMsg, PublicMsg, TypeMsg};
use sci_ir::{Encoding, Plan, PlanError, Program, interp};
use sha2::{Digest, Sha256};

fn lenet() -> Program {
    common::lenet(Encoding::ring(37).unwrap(), 12)
}

fn round_trip(p: &Program) -> Vec<u8> {
    let bytes = Plan::new(p.clone()).to_bytes();
    let q = Plan::from_bytes(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(q.program(), p);
    assert_eq!(q.to_bytes(), bytes, "re-encoding differs");
    bytes
}

/// Wraps sections into a file with the current magic, version and a valid checksum.
fn seal(sections: u8, public: &[u8], secret: Option<&[u8]>) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(sections);
    out.extend_from_slice(&(public.len() as u64).to_le_bytes());
    out.extend_from_slice(public);
    if let Some(s) = secret {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    let sum: [u8; 32] = Sha256::digest(&out).into();
    out.extend_from_slice(&sum);
    out
}

/// Recomputes the checksum of a (possibly mutated) file.
fn reseal(bytes: &mut [u8]) {
    if bytes.len() >= 32 {
        let n = bytes.len() - 32;
        let sum: [u8; 32] = Sha256::digest(&bytes[..n]).into();
        bytes[n..].copy_from_slice(&sum);
    }
}

#[test]
fn representative_programs_round_trip() {
    for enc in [
        Encoding::ring(37).unwrap(),
        Encoding::ring(64).unwrap(),
        Encoding::ring(1).unwrap(),
        Encoding::field(65537).unwrap(),
        Encoding::Real,
    ] {
        let scale = if enc == Encoding::ring(1).unwrap() {
            0
        } else {
            4
        };
        if enc == Encoding::ring(1).unwrap() {
            continue; // weights in [-1, 1) do not fit a 1-bit ring at any scale ≥ 1
        }
        round_trip(&common::lenet(enc, scale));
    }
    round_trip(&common::squeezenet(Encoding::ring(41).unwrap(), 13, 33));
    let every = include_str!("snapshots/text__every_op.snap");
    let text = every.splitn(3, "---\n").nth(2).unwrap();
    round_trip(&Program::parse(text).unwrap());
}

#[test]
fn client_view_hides_weights_and_keeps_the_hash() {
    let p = lenet();
    let plan = Plan::new(p.clone());
    let cv = plan.client_view();
    assert!(cv.is_client_view());
    assert!(!plan.is_client_view());
    assert_eq!(plan.hash(), cv.hash());
    assert_eq!(plan.hash_hex().len(), 64);
    let full = plan.to_bytes();
    let client = cv.to_bytes();
    // The client file has no secret section: it decodes to the client view...
    let decoded = Plan::from_bytes(&client).unwrap();
    assert_eq!(decoded, cv);
    assert!(decoded.is_client_view());
    // ...and contains none of the weights: the conv1 weight bytes as the secret section
    // encodes them (zigzag varints) do not occur in it.
    assert!(client.len() < full.len());
    let w = p.const_data(match &p.instr(p.lookup("conv1.w").unwrap()).op {
        sci_ir::Op::Const { id, .. } => *id,
        _ => unreachable!(),
    });
    let ints: Vec<i64> = w.unwrap().to_signed().unwrap();
    let mut needle = Vec::new();
    for v in &ints {
        prost::encoding::encode_varint(((v << 1) ^ (v >> 63)) as u64, &mut needle);
    }
    assert!(full.windows(needle.len()).any(|x| x == needle));
    assert!(!client.windows(needle.len()).any(|x| x == needle));
    // The client cannot run it; the server's plan runs.
    let x = common::input_for(&p, 5);
    assert!(interp::run(decoded.program(), std::slice::from_ref(&x)).is_err());
    assert!(interp::run(plan.program(), &[x]).is_ok());
    // A different program has a different hash.
    let other = common::lenet(Encoding::ring(38).unwrap(), 12);
    assert_ne!(Plan::new(other).hash(), plan.hash());
}

/// The golden file pins the format: if this test fails after a change to the encoding,
/// bump `FORMAT_VERSION` and regenerate with `SCI_UPDATE_GOLDEN=1`.
#[test]
fn golden_plan_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/lenet_ring37.plan"
    );
    let bytes = Plan::new(lenet()).to_bytes();
    if std::env::var_os("SCI_UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &bytes).unwrap();
    }
    let golden = std::fs::read(path).expect("golden plan file (SCI_UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        bytes, golden,
        "plan encoding changed: bump FORMAT_VERSION and regenerate the golden file"
    );
    let loaded = Plan::load(path).unwrap();
    assert_eq!(loaded.program(), &lenet());
    assert_eq!(
        loaded.hash_hex(),
        Plan::new(lenet()).hash_hex(),
        "hash of the golden program"
    );
}

#[test]
fn save_and_load() {
    let dir = std::env::temp_dir().join(format!("sci-ir-plan-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lenet.plan");
    let plan = Plan::new(lenet());
    plan.save(&path).unwrap();
    assert_eq!(Plan::load(&path).unwrap(), plan);
    std::fs::remove_dir_all(&dir).unwrap();
    let e = Plan::load(dir.join("missing.plan")).unwrap_err();
    assert!(matches!(e, PlanError::Io { .. }));
    assert!(e.to_string().contains("missing.plan"), "{e}");
}

#[test]
fn bad_files_give_clear_errors() {
    let good = Plan::new(lenet()).to_bytes();
    let err = |b: &[u8]| Plan::from_bytes(b).unwrap_err();
    assert!(matches!(err(b""), PlanError::Truncated { .. }));
    assert!(matches!(err(b"SCI-PLA"), PlanError::Truncated { .. }));
    let mut wrong = good.clone();
    wrong[0] = b'X';
    assert!(matches!(err(&wrong), PlanError::BadMagic));
    assert!(matches!(
        err(b"PK\x03\x04 not a plan at all"),
        PlanError::BadMagic
    ));
    let mut newer = good.clone();
    newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = err(&newer);
    assert!(matches!(e, PlanError::NewerVersion { .. }));
    assert!(e.to_string().contains("newer"), "{e}");
    let mut older = good.clone();
    older[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(err(&older), PlanError::OldVersion { .. }));
    // Every truncation is an error (never a panic).
    for n in 0..good.len() {
        assert!(Plan::from_bytes(&good[..n]).is_err(), "prefix of {n} bytes");
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(err(&trailing), PlanError::Trailing(1)));
    // Every single-byte corruption after the version is detected.
    for i in 12..good.len() {
        let mut b = good.clone();
        b[i] ^= 0x20;
        assert!(Plan::from_bytes(&b).is_err(), "flip at {i}");
    }
    let mut b = good.clone();
    let last = b.len() - 40;
    b[last] ^= 1;
    assert!(matches!(err(&b), PlanError::Checksum));
    // Unknown sections byte (with a valid checksum).
    let mut b = good.clone();
    b[12] = 7;
    reseal(&mut b);
    assert!(matches!(err(&b), PlanError::Invalid { .. }));
    // Garbage in the public part (valid checksum): a protobuf error.
    let e = err(&seal(0, &[0xff, 0xff, 0xff], None));
    assert!(
        matches!(
            e,
            PlanError::Decode {
                section: "public",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn ill_typed_programs_are_rejected() {
    let ty = |scale, owner| TypeMsg {
        encoding: 1,
        param: 16,
        scale,
        shape: vec![2],
        owner,
    };
    let instr = |name: &str, ty, opcode, operands: Vec<u32>| InstrMsg {
        name: name.into(),
        ty: Some(ty),
        op: Some(OpMsg {
            opcode,
            operands,
            label: name.into(),
            ..OpMsg::default()
        }),
        ..InstrMsg::default()
    };
    // x (scale 1) + y (scale 2): the type checker refuses, naming the value.
    let public = PublicMsg {
        mill_radix: 4,
        threads: 1,
        instrs: vec![
            instr("x", ty(1, 2), 0, vec![]),
            instr("y", ty(2, 2), 0, vec![]),
            instr("sum", ty(1, 2), 4, vec![0, 1]),
        ],
        consts: vec![],
        ..PublicMsg::default()
    };
    let e = Plan::from_bytes(&seal(0, &public.encode_to_vec(), None)).unwrap_err();
    assert!(matches!(e, PlanError::Program(_)), "{e}");
    assert!(e.to_string().contains("%sum = add"), "{e}");
    // A stored type that differs from the inferred one.
    let mut p2 = public.clone();
    p2.instrs[1].ty = Some(ty(1, 2));
    p2.instrs[2].ty = Some(ty(1, 3));
    let e = Plan::from_bytes(&seal(0, &p2.encode_to_vec(), None)).unwrap_err();
    assert!(
        e.to_string().contains("differs from the inferred type"),
        "{e}"
    );
    // An operand that refers forward; an unknown opcode; bad parameters.
    let mut p3 = p2.clone();
    p3.instrs[2].op.as_mut().unwrap().operands = vec![0, 2];
    assert!(Plan::from_bytes(&seal(0, &p3.encode_to_vec(), None)).is_err());
    let mut p4 = p2.clone();
    p4.instrs[2].op.as_mut().unwrap().opcode = 99;
    let e = Plan::from_bytes(&seal(0, &p4.encode_to_vec(), None)).unwrap_err();
    assert!(e.to_string().contains("unknown opcode 99"), "{e}");
    let mut p5 = p2.clone();
    p5.instrs[2].ty = Some(ty(1, 2));
    assert!(Plan::from_bytes(&seal(0, &p5.encode_to_vec(), None)).is_ok());
    p5.mill_radix = 0;
    let e = Plan::from_bytes(&seal(0, &p5.encode_to_vec(), None)).unwrap_err();
    assert!(matches!(e, PlanError::Params(_)), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_programs_round_trip(seed in any::<u64>()) {
        let p = common::random_program(seed, 40);
        let bytes = Plan::new(p.clone()).to_bytes();
        let q = Plan::from_bytes(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(q.to_bytes(), bytes);
        prop_assert_eq!(q.program(), &p);
        let cv = Plan::new(p).client_view();
        let c = Plan::from_bytes(&cv.to_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(c.hash(), q.hash());
    }

    #[test]
    fn decoder_never_panics_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Plan::from_bytes(&bytes);
        // The same bytes as the sections of a well-sealed file.
        let _ = Plan::from_bytes(&seal(0, &bytes, None));
        let _ = Plan::from_bytes(&seal(1, &bytes[..bytes.len() / 2], Some(&bytes[bytes.len() / 2..])));
    }

    #[test]
    fn decoder_never_panics_on_mutated_plans(
        seed in any::<u64>(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let good = Plan::new(common::random_program(seed, 25)).to_bytes();
        // Byte flips: detected by the checksum.
        let mut b = good.clone();
        for &(pos, x) in &flips {
            let i = pos % b.len();
            b[i] ^= x | 1;
        }
        prop_assert!(Plan::from_bytes(&b).is_err());
        // The same flips with the checksum recomputed reach the protobuf decoder and the
        // type checker: any result but a panic is fine.
        reseal(&mut b);
        let _ = Plan::from_bytes(&b);
        // Truncations.
        prop_assert!(Plan::from_bytes(&good[..cut % good.len()]).is_err());
        // Mutations of the decoded messages themselves, re-encoded and sealed.
        let public_len = u64::from_le_bytes(good[13..21].try_into().unwrap()) as usize;
        let mut msg = PublicMsg::decode(&good[21..21 + public_len]).unwrap();
        let mut r = common::Rng(seed);
        for _ in 0..3 {
            if msg.instrs.is_empty() { break; }
            let i = r.below(msg.instrs.len() as u64) as usize;
            let op = msg.instrs[i].op.get_or_insert_with(OpMsg::default);
            match r.below(5) {
                0 => op.opcode = r.below(26) as u32,
                1 => op.operands.push(r.below(40) as u32),
                2 => op.attrs.push(r.next() >> r.below(64)),
                3 => { op.attrs.pop(); }
                _ => msg.instrs[i].ty = None,
            }
        }
        let _ = Plan::from_bytes(&seal(0, &msg.encode_to_vec(), None));
    }
}

/// The public part of a plan file written by [`seal`]'s layout (sections byte 0 or 1).
fn public_part(bytes: &[u8]) -> PublicMsg {
    let len = u64::from_le_bytes(bytes[13..21].try_into().unwrap()) as usize;
    PublicMsg::decode(&bytes[21..21 + len]).unwrap()
}

/// SCI_HE plans record the backend, the BFV parameters and, per product with the
/// server's weights, that it runs by HE; all of it is covered by the hash, and a plan
/// whose records disagree with this build is refused with a message naming the problem.
#[test]
fn plans_record_the_backend() {
    use sci_ir::backend::{HE_DEGREE, HE_MODULI, he_prime};
    use sci_ir::{Backend, Params};
    let field = Encoding::field(he_prime(32).unwrap()).unwrap();
    let mut b = common::lenet(field, 12).to_builder();
    b.set_params(Params {
        backend: Backend::He,
        ..Params::default()
    });
    let he = b.finish().unwrap();
    assert!(he.check_secure().is_ok());
    let bytes = round_trip(&he);
    let public = public_part(&Plan::new(he.clone()).client_view().to_bytes());
    assert_eq!((public.backend, public.he_degree), (1, HE_DEGREE));
    assert_eq!(public.he_moduli, HE_MODULI);
    let products: Vec<usize> = he
        .ids()
        .filter(|&v| he.is_secure_product(v))
        .map(|v| v.index())
        .collect();
    assert_eq!(products.len(), 3, "lenet: two convolutions, one matmul");
    for (k, i) in public.instrs.iter().enumerate() {
        assert_eq!(
            i.backend,
            if products.contains(&k) { 2 } else { 0 },
            "{}",
            i.name
        );
    }
    // The same program over the field as an OT plan is not securely executable.
    let mut b = he.to_builder();
    b.set_params(Params::default());
    let e = b.finish().unwrap().check_secure().unwrap_err();
    assert!(e.to_string().contains("ot backend"), "{e}");
    // Tampered records: other BFV moduli, an OT product in an HE plan, unknown values.
    let client = Plan::new(he).client_view().to_bytes();
    let tamper = |f: &dyn Fn(&mut PublicMsg)| {
        let mut m = public_part(&client);
        f(&mut m);
        Plan::from_bytes(&seal(0, &m.encode_to_vec(), None))
            .unwrap_err()
            .to_string()
    };
    let e = tamper(&|m| m.he_moduli[0] += 2);
    assert!(e.contains("HE parameters") && e.contains("differ"), "{e}");
    let e = tamper(&|m| m.instrs[products[0]].backend = 1);
    assert!(e.contains("per-instruction backend 1"), "{e}");
    let e = tamper(&|m| m.backend = 7);
    assert!(e.contains("unknown backend 7"), "{e}");
    let e = tamper(&|m| m.backend = 0);
    assert!(e.contains("HE parameters in an OT plan"), "{e}");
    assert!(!bytes.is_empty());
}

/// RLWE plans and per-layer mixes of OT and RLWE on the ring: the plan's backend and
/// each product's round-trip (file, IR text), are covered by the hash, and records that
/// do not fit are refused.
#[test]
fn plans_record_a_per_layer_mix() {
    use sci_ir::{Backend, Params};
    let mut b = lenet().to_builder();
    b.set_params(Params {
        backend: Backend::Rlwe,
        ..Params::default()
    });
    let rlwe = b.finish().unwrap();
    assert!(rlwe.check_secure().is_ok());
    round_trip(&rlwe);
    let products: Vec<_> = rlwe.ids().filter(|&v| rlwe.is_secure_product(v)).collect();
    assert_eq!(products.len(), 3);
    let first = rlwe.ids().next().unwrap();
    let mut mixed = rlwe.clone();
    mixed.set_product_backend(products[1], Backend::Ot).unwrap();
    assert_eq!(mixed.product_backend(products[0]), Some(Backend::Rlwe));
    assert_eq!(mixed.product_backend(products[1]), Some(Backend::Ot));
    assert_eq!(mixed.product_backend(first), None);
    round_trip(&mixed);
    let text = mixed.to_text();
    assert!(
        text.contains("linear=rlwe") && text.contains(" linear=ot\n"),
        "{text}"
    );
    assert_eq!(Program::parse(&text).unwrap(), mixed);
    // Setting a product to the program's backend removes the record.
    let mut back = mixed.clone();
    back.set_product_backend(products[1], Backend::Rlwe)
        .unwrap();
    assert_eq!(back, rlwe);
    // The choice is covered by the hash; HE does not mix; non-products have none.
    assert_ne!(
        Plan::new(mixed.clone()).hash(),
        Plan::new(rlwe.clone()).hash()
    );
    let e = mixed
        .clone()
        .set_product_backend(products[0], Backend::He)
        .unwrap_err();
    assert!(e.to_string().contains("only OT and RLWE mix"), "{e}");
    let e = mixed
        .clone()
        .set_product_backend(first, Backend::Ot)
        .unwrap_err();
    assert!(e.to_string().contains("no product"), "{e}");
    let public = public_part(&Plan::new(mixed.clone()).client_view().to_bytes());
    assert_eq!(public.backend, 2);
    for (k, i) in public.instrs.iter().enumerate() {
        let want = match products.iter().position(|v| v.index() == k) {
            None => 0,
            Some(1) => 1,
            Some(_) => 3,
        };
        assert_eq!(i.backend, want, "{}", i.name);
    }
    let client = Plan::new(mixed).client_view().to_bytes();
    let tamper = |f: &dyn Fn(&mut PublicMsg)| {
        let mut m = public_part(&client);
        f(&mut m);
        Plan::from_bytes(&seal(0, &m.encode_to_vec(), None))
            .unwrap_err()
            .to_string()
    };
    let p0 = products[0].index();
    let e = tamper(&|m| m.instrs[p0].backend = 2);
    assert!(
        e.contains("per-instruction backend 2") && e.contains("mix"),
        "{e}"
    );
    let e = tamper(&|m| m.instrs[p0].backend = 0);
    assert!(e.contains("per-instruction backend 0"), "{e}");
    let e = tamper(&|m| m.instrs[0].backend = 3);
    assert!(e.contains("no such product"), "{e}");
    let e = tamper(&|m| m.instrs[p0].backend = 9);
    assert!(e.contains("per-instruction backend 9"), "{e}");
    let e = tamper(&|m| m.he_degree = 8192);
    assert!(e.contains("HE parameters in an RLWE plan"), "{e}");
}

/// Products of two secret operands record their backend: in an RLWE plan a `matmul`
/// runs by RLWE (code 3), an elementwise `mul` by OT (0, as every secret product of
/// an OT plan, so OT plans are unchanged); a `matmul` moved to OT writes 0, round-trips
/// (file, IR text) and changes the hash; HE and RLWE for a `mul` are refused.
#[test]
fn plans_record_the_backend_of_secret_products() {
    use sci_ir::Backend;
    let body = "
%x: client i32.12[2,3] = input \"x\"
%y: client i32.12[3,2] = input \"y\"
%m: client i32.24[2,2] = matmul %x, %y
%e: client i32.24[2,3] = mul %x, %x
%o: client i32.24[2,2] = output %m \"m\"
%p: client i32.24[2,3] = output %e \"e\"
";
    let parse = |params: &str| Program::parse(&format!("{params}\n{body}")).unwrap();
    let ot = parse("params mill_radix=4 threads=1");
    let rlwe = parse("params mill_radix=4 threads=1 linear=rlwe");
    let id = |p: &Program, n: &str| p.ids().find(|&v| p.name(v) == n).unwrap();
    let (m, e) = (id(&rlwe, "m"), id(&rlwe, "e"));
    assert_eq!(ot.secret_product_backend(m), Some(Backend::Ot));
    assert_eq!(rlwe.secret_product_backend(m), Some(Backend::Rlwe));
    assert_eq!(rlwe.secret_product_backend(e), Some(Backend::Ot));
    assert_eq!(rlwe.secret_product_backend(id(&rlwe, "x")), None);
    let codes = |p: &Program| -> Vec<u32> {
        public_part(&Plan::new(p.clone()).client_view().to_bytes())
            .instrs
            .iter()
            .map(|i| i.backend)
            .collect()
    };
    assert_eq!(codes(&ot), [0; 6]);
    assert_eq!(codes(&rlwe), [0, 0, 3, 0, 0, 0]);
    for p in [&ot, &rlwe] {
        round_trip(p);
        assert_eq!(&Program::parse(&p.to_text()).unwrap(), p);
    }
    let mut moved = rlwe.clone();
    moved.set_product_backend(m, Backend::Ot).unwrap();
    assert_eq!(moved.secret_product_backend(m), Some(Backend::Ot));
    assert_eq!(codes(&moved), [0; 6]);
    round_trip(&moved);
    let text = moved.to_text();
    assert!(text.contains("matmul %x, %y linear=ot"), "{text}");
    assert_eq!(Program::parse(&text).unwrap(), moved);
    assert_ne!(Plan::new(moved).hash(), Plan::new(rlwe.clone()).hash());
    let mut up = ot.clone();
    up.set_product_backend(m, Backend::Rlwe).unwrap();
    assert!(up.to_text().contains("linear=rlwe"));
    round_trip(&up);
    for (v, b) in [(e, Backend::Rlwe), (m, Backend::He)] {
        let err = rlwe.clone().set_product_backend(v, b).unwrap_err();
        assert!(err.to_string().contains("two secret operands"), "{err}");
    }
    // A file's record that does not run the product is refused.
    let client = Plan::new(rlwe).client_view().to_bytes();
    let mut msg = public_part(&client);
    msg.instrs[e.index()].backend = 3;
    let err = Plan::from_bytes(&seal(0, &msg.encode_to_vec(), None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("per-instruction backend 3"), "{err}");
}
