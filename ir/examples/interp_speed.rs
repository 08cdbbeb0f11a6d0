//! Measures the reference interpreter on a LeNet-shaped CNN (1×1×8×8) and on a
//! SqueezeNet 1.1-shaped one (1×3×224×224), in f32 and in Z_2^37 at scale 12.
//!
//! `cargo run -p sci-ir --release --example interp_speed`

#[path = "../tests/common/mod.rs"]
mod common;

use sci_ir::{Encoding, interp};
use std::time::Instant;

fn time(label: &str, p: &sci_ir::Program, reps: u32) {
    let x = common::input_for(p, 1);
    let start = Instant::now();
    for _ in 0..reps {
        let out = interp::run(p, std::slice::from_ref(&x)).expect("the program runs");
        std::hint::black_box(out);
    }
    let per = start.elapsed() / reps;
    println!("{label:<40} {per:>12.3?} per run");
}

fn main() {
    let ring = Encoding::ring(37).expect("valid ring");
    time("lenet 8x8, f32", &common::lenet(Encoding::Real, 0), 100);
    time("lenet 8x8, Z_2^37 scale 12", &common::lenet(ring, 12), 100);
    let field = Encoding::field(2_305_843_009_213_693_951).expect("2^61 - 1 is prime");
    time(
        "lenet 8x8, Z_(2^61-1) scale 12",
        &common::lenet(field, 12),
        100,
    );
    time(
        "squeezenet 224x224, f32",
        &common::squeezenet(Encoding::Real, 0, 224),
        3,
    );
    time(
        "squeezenet 224x224, Z_2^37 scale 12",
        &common::squeezenet(ring, 12, 224),
        3,
    );
    time(
        "squeezenet 224x224, Z_(2^61-1) scale 12",
        &common::squeezenet(field, 12, 224),
        1,
    );
}
