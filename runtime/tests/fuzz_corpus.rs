//! The short run of the fuzz targets `handshake`, `ot_setup`, `he` and `session` (see
//! docs/fuzzing.md): their committed corpus and seeded mutants of it
//! through the same entry functions as the cargo-fuzz targets, which must not panic.
//! Also: the committed client transcript of the `session` corpus still drives the
//! fuzzing server through a whole inference (else the corpus went stale), and the
//! ignored `write_seed_corpus`, which records the seeds of these four corpora.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sci_ir::{Encoding, Plan, Tensor};
use sci_runtime::crypto::Block;
use sci_runtime::exec::handshake::{self, Hello, Status};
use sci_runtime::exec::{ClientSession, report::Cost, serve_session};
use sci_runtime::fuzz_entry::{self, SESSION_ID, replay};
use sci_runtime::net::session::{PREAMBLE_LEN, SessionId, preamble};
use sci_runtime::net::{Channel, Party, Transport, mem};
use sci_runtime::ot::{OtKind, OtPack, Session};
use sci_runtime::proto::engine::Engine;
use sci_testkit::fuzz;

#[test]
fn handshake_corpus() {
    assert!(fuzz::replay("handshake", 6, 300, fuzz_entry::handshake) > 1000);
}

#[test]
fn ot_setup_corpus() {
    assert!(fuzz::replay("ot_setup", 7, 60, fuzz_entry::ot_setup) > 100);
}

#[test]
fn he_corpus() {
    assert!(fuzz::replay("he", 8, 20, fuzz_entry::he) > 20);
}

#[test]
fn session_corpus() {
    assert!(fuzz::replay("session", 9, 20, fuzz_entry::session) > 20);
}

/// Records what a transport receives (the peer's bytes) into a shared buffer.
struct Tap {
    inner: Channel,
    log: Arc<Mutex<Vec<u8>>>,
}

/// A transport over another channel that copies every byte it sends into a log.
struct Recording(Tap);

impl Transport for Recording {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.log.lock().unwrap().extend_from_slice(data);
        self.0
            .inner
            .send(data)
            .map_err(|e| io::Error::new(e.kind(), e.to_string()))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0
            .inner
            .flush()
            .map_err(|e| io::Error::new(e.kind(), e.to_string()))
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.0
            .inner
            .recv(buf)
            .map_err(|e| io::Error::new(e.kind(), e.to_string()))
    }
}

/// A channel to `peer`'s other end whose sent bytes are also appended to the log.
fn recording(peer: Channel) -> (Channel, Arc<Mutex<Vec<u8>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let ch = Channel::new(Box::new(Recording(Tap {
        inner: peer,
        log: log.clone(),
    })));
    (ch, log)
}

/// What a real client sends a `fuzz_entry::session` server: the bytes it sent while
/// running `inferences` inferences against a server with the fuzz target's seed.
fn client_transcript(inferences: u32) -> Vec<u8> {
    let program = fuzz_entry::session_program();
    let (server_ch, client_ch) = mem::pair(Some(Duration::from_secs(30)));
    let (mut client_ch, log) = recording(client_ch);
    let hash = Plan::new(program.clone()).hash();
    sci_testkit::run2(
        || {
            let hello = Hello {
                session: SESSION_ID,
                ..Hello::new(Party::Server, 1, OtKind::Iknp, hash, Status::Ready)
            };
            let mut ch = server_ch;
            handshake::handshake(&mut ch, &hello).expect("server handshake");
            let mut session = Session::with_seed(Party::Server, vec![ch], fuzz_entry::SESSION_SEED);
            session
                .run(0, |c| c.lane.ot.setup(&mut c.lane.ch, Party::Server))
                .expect("server OT set-up");
            let engine = Engine::new(session, program.params().mill_radix);
            let reports = serve_session(program, (engine, Cost::default()), &mut |_| {})
                .expect("server inferences");
            assert_eq!(reports.len(), inferences as usize);
        },
        || {
            let hello = Hello {
                inferences,
                ..Hello::new(Party::Client, 1, OtKind::Iknp, hash, Status::Ready)
            };
            handshake::handshake(&mut client_ch, &hello).expect("client handshake");
            let mut session = Session::with_seed(Party::Client, vec![client_ch], Block(77));
            session
                .run(0, |c| c.lane.ot.setup(&mut c.lane.ch, Party::Client))
                .expect("client OT set-up");
            let engine = Engine::new(session, program.params().mill_radix);
            let mut session = ClientSession::new((engine, Cost::default()));
            let enc = Encoding::ring(32).unwrap();
            for i in 0..inferences {
                let x = Tensor::signed(enc, vec![1, 4], &[256, -512, 77, i64::from(i)]).unwrap();
                session
                    .infer(program, vec![x], &mut |_| {})
                    .expect("client inference");
            }
            session.end().expect("ending the session");
        },
    );
    log.lock().unwrap().clone()
}

/// The server's messages of `OtPack::setup` as a real peer sends them, recorded.
fn ot_transcript(party: Party) -> Vec<u8> {
    let (a, b) = mem::pair(Some(Duration::from_secs(30)));
    let (mut peer, log) = recording(b);
    let mut ours = a;
    sci_testkit::run2(
        || {
            OtPack::new(sci_runtime::crypto::Prg::new(Block(0x0f0f)), OtKind::Iknp)
                .setup(&mut ours, party)
                .expect("set-up")
        },
        || {
            OtPack::new(sci_runtime::crypto::Prg::new(Block(5)), OtKind::Iknp)
                .setup(&mut peer, party.other())
                .expect("peer set-up")
        },
    );
    log.lock().unwrap().clone()
}

/// A server replaying the committed client transcript (and a fresh one) runs its
/// inference to the end, so the `session` target reaches the executor's protocols, not
/// just the handshake, and the corpus has not gone stale.
#[test]
fn a_recorded_client_transcript_drives_a_whole_session() {
    let committed = fuzz::corpus("session")
        .into_iter()
        .find(|(n, _)| n == "seed-one-inference")
        .expect("the committed seed")
        .1;
    for transcript in [committed, client_transcript(1)] {
        replay_session(&transcript);
    }
}

/// Replays `transcript` to a `fuzz_entry::session` server through its one inference
/// and the end of the session, which must succeed.
fn replay_session(transcript: &[u8]) {
    let program = fuzz_entry::session_program();
    let mut ch = replay(transcript);
    handshake::handshake(&mut ch, &fuzz_entry::server_hello()).expect("handshake");
    let mut session = Session::with_seed(Party::Server, vec![ch], fuzz_entry::SESSION_SEED);
    session
        .run(0, |c| c.lane.ot.setup(&mut c.lane.ch, Party::Server))
        .expect("OT set-up");
    let engine = Engine::new(session, program.params().mill_radix);
    let reports = serve_session(program, (engine, Cost::default()), &mut |_| {})
        .expect("the replayed session");
    assert_eq!(reports.len(), 1, "the replayed session's inferences");
}

/// Writes the seeds of the `handshake`, `ot_setup`, `he` and `session` corpora:
/// `cargo test --release -p sci-runtime --test fuzz_corpus -- --ignored`.
#[test]
#[ignore = "writes fuzz/corpus; run by hand when a message format changes"]
fn write_seed_corpus() {
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = fuzz::corpus_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    for (i, (party, threads, inferences, ot, status)) in [
        (Party::Client, 1, 1, OtKind::Iknp, Status::Ready),
        (Party::Client, 4, 360, OtKind::Silent, Status::Ready),
        (Party::Server, 2, 0, OtKind::Iknp, Status::Ready),
        (
            Party::Client,
            1,
            1,
            OtKind::Iknp,
            Status::Abort(handshake::AbortReason::InputRejected),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut bytes = preamble(SessionId::NONE, 0).to_vec();
        let hello = Hello {
            inferences,
            ..Hello::new(party, threads, ot, [i as u8; 32], status)
        };
        bytes.extend_from_slice(&hello.to_bytes());
        write("handshake", &format!("seed-hello-{i}"), &bytes);
    }
    let mut lane = preamble(SessionId([9; 16]), 3).to_vec();
    lane.extend_from_slice(b"\x16\x03\x01\0\x05hello");
    write("handshake", "seed-tls-after-preamble", &lane);
    assert_eq!(lane.len(), PREAMBLE_LEN + 10);
    for (role, party) in [(0u8, Party::Server), (1, Party::Client)] {
        let mut bytes = vec![role];
        bytes.extend_from_slice(&ot_transcript(party));
        write(
            "ot_setup",
            &format!("seed-{party:?}").to_lowercase(),
            &bytes,
        );
    }
    let ct = fuzz_entry::he_ciphertext_seed();
    let mut two = vec![0u8];
    two.extend_from_slice(&ct);
    two.extend_from_slice(&ct);
    write("he", "seed-two-ciphertexts", &two);
    let mut key = vec![1u8];
    key.extend_from_slice(&ct);
    write("he", "seed-ciphertext-as-keys", &key);
    write("session", "seed-one-inference", &client_transcript(1));
    write("session", "seed-two-inferences", &client_transcript(2));
}
