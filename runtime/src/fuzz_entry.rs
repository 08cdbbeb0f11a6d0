//! Entry points of the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer) for everything
//! a peer can send: the lane preamble and the hello of a new connection, the OT
//! set-up, HE ciphertexts and keys, and a whole server session. The fuzz targets and
//! the stable-Rust test `tests/fuzz_corpus.rs` call the same functions, so the
//! committed corpus (`fuzz/corpus/<target>`) is replayed by `cargo test`.
//!
//! The peer's bytes are replayed from the input by a [`Replay`] transport: every read
//! takes the next input bytes (the end of the input is the peer closing the
//! connection), every write is discarded. Each function accepts any bytes and returns
//! normally whether or not the run gets far; a panic is the bug a fuzzer finds.

use std::sync::OnceLock;

use sci_ir::{Plan, Program};

use crate::crypto::{Block, Prg};
use crate::exec::handshake::{self, Hello, Status};
use crate::exec::{report::Cost, serve_session};
use crate::net::Party;
use crate::net::session::{PREAMBLE_LEN, SessionId, parse_preamble};
use crate::ot::{OtKind, OtPack, Session};
use crate::proto::engine::Engine;

pub use sci_he::fuzz_entry::{he, he_ciphertext_seed};
pub use sci_net::replay::{Replay, replay};

/// What a new connection to a listening server sends first: a lane preamble
/// ([`crate::net::session`]) and, on lane 0, the hello, which is checked against a
/// server's hello as [`handshake::handshake`] does.
pub fn handshake(data: &[u8]) {
    let Some((pre, rest)) = data.split_first_chunk::<PREAMBLE_LEN>() else {
        return;
    };
    let _ = parse_preamble(pre);
    let mut ch = replay(rest);
    if let Ok(theirs) = Hello::read(&mut ch) {
        let ours = Hello::new(
            Party::Server,
            theirs.threads,
            theirs.ot,
            [0; 32],
            Status::Ready,
        );
        let _ = handshake::check(&ours, &theirs);
        let _ = theirs.to_bytes();
    }
}

/// The OT set-up of one lane ([`OtPack::setup`]: base OTs, then the IKNP and KK13
/// set-ups) against the recorded peer; the first byte picks this side's role (even:
/// the server).
pub fn ot_setup(data: &[u8]) {
    let Some((&role, rest)) = data.split_first() else {
        return;
    };
    let party = if role % 2 == 0 {
        Party::Server
    } else {
        Party::Client
    };
    let mut pack = OtPack::new(Prg::new(Block(0x0f0f)), OtKind::Iknp);
    let _ = pack.setup(&mut replay(rest), party);
}

/// The small program of [`session`]: a client input of 4 values, a server matrix
/// product with bias, truncation, ReLU, a revealed output and an argmax.
pub const SESSION_PROGRAM: &str = "params mill_radix=4 threads=1
%x: client i32.8[1,4] = input \"x\"
%w: server i32.8[4,3] = const [12, -40, 255, 3, 7, -99, 0, 128, -1, 64, 31, -200]
%b: server i32.16[3] = const [1000, -2000, 300]
%fc: shared i32.16[1,3] = matmul %x, %w, %b
%t: shared i32.8[1,3] = trunc %fc s=8
%r: shared i32.8[1,3] = relu %t
%y: client i32.8[1,3] = output %r \"y\"
%k: shared i32.0[1] = argmax %t axis=1
%class: client i32.0[1] = output %k \"class\"
";

/// The program of [`SESSION_PROGRAM`], parsed once.
pub fn session_program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| Program::parse(SESSION_PROGRAM).expect("the session program parses"))
}

/// The session id the server of [`session`] hands out.
pub const SESSION_ID: SessionId = SessionId([0x5c; 16]);

/// The server's hello of the recorded session: one lane, [`SESSION_ID`], the plan of
/// [`session_program`].
pub fn server_hello() -> Hello {
    Hello {
        session: SESSION_ID,
        ..Hello::new(
            Party::Server,
            1,
            session_program().params().ot,
            Plan::new(session_program().clone()).hash(),
            Status::Ready,
        )
    }
}

/// The root seed of the server of [`session`] (fixed, so a recorded client transcript
/// replays in full).
pub const SESSION_SEED: Block = Block(0x5e55_1011);

/// The server's side of a whole one-lane session of [`session_program`] against the
/// recorded client: handshake, OT set-up, then the session's inferences, each started
/// by the client's control byte ([`crate::exec::session`]), every message of the
/// executor's protocols included.
pub fn session(data: &[u8]) {
    let program = session_program();
    let mut ch = replay(data);
    let hello = server_hello();
    if handshake::handshake(&mut ch, &hello).is_err() {
        return;
    }
    let mut session = Session::with_seed(Party::Server, vec![ch], SESSION_SEED);
    let setup: Result<Vec<()>, _> =
        session.run(0, |c| c.lane.ot.setup(&mut c.lane.ch, Party::Server));
    if setup.is_err() {
        return;
    }
    let engine = Engine::new(session, program.params().mill_radix);
    let _ = serve_session(program, (engine, Cost::default()), &mut |_| {});
}
